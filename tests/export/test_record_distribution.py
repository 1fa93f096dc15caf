"""An agent records its traces with ``aem-record`` alone: the evaluator is not installed.

``record/`` is a distribution of its own so that recording needs only the OpenTelemetry
SDK. These tests hold it to that: importing ``aem_record`` loads none of AEM's heavy
dependencies; ``pip install ./record`` into an empty virtualenv installs it without them;
the span recorded there is read back by AEM's own reader; and the old import path,
``aem.export.otlp_json``, still gives the same exporter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import aem_record
import pytest

from aem.export import otlp_json as old_path
from collectors.readers import read_batches

ROOT = Path(__file__).resolve().parents[2]
# What the agent's runtime must never have to carry to record a trace.
HEAVY = ("aem", "collectors", "torch", "sentence_transformers", "numpy", "pydantic", "networkx")
PIP_SECONDS = 480  # a cold pip cache on a shared 2-core machine

# Runs inside the fresh virtualenv: a real SDK pipeline, the ids it made as hex on stdout.
RECORDING = """
import json, sys
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Status, StatusCode
from aem_record import OtlpJsonFileExporter

provider = TracerProvider(resource=Resource.create({"service.name": "recorded-alone"}))
provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(sys.argv[1])))
tracer = provider.get_tracer("agent")
with tracer.start_as_current_span("invoke_agent weather") as root:
    with tracer.start_as_current_span("execute_tool get_weather") as tool:
        tool.set_attribute("gen_ai.tool.name", "get_weather")
        tool.set_status(Status(StatusCode.ERROR, "timeout"))
provider.shutdown()
ids = {s.name: format(s.get_span_context().span_id, "016x") for s in (root, tool)}
ids["trace"] = format(root.get_span_context().trace_id, "032x")
ids["modules"] = sorted(name for name in sys.modules if "." not in name)
print(json.dumps(ids))
"""


def _modules_after(statement: str) -> set[str]:
    """Top-level modules a fresh interpreter holds after ``statement``."""
    probe = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env
    ).stdout
    return {name.split(".")[0] for name in json.loads(out)}


def test_importing_the_recorder_loads_none_of_the_evaluator() -> None:
    loaded = _modules_after("from aem_record import OtlpJsonFileExporter")
    assert "opentelemetry" in loaded  # the probe did import it
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_the_old_import_path_gives_the_same_exporter() -> None:
    assert old_path.OtlpJsonFileExporter is aem_record.OtlpJsonFileExporter
    assert old_path.otlp_json is aem_record.otlp_json


def _pip(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--retries", "1", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=PIP_SECONDS,
    )


def _install_alone(target: Path) -> Path:
    """A virtualenv without system site packages holding ``./record``; its python.

    Skips only when pip cannot reach a package index at all (the SDK itself cannot be
    had); any other failure of the install is the distribution's and fails the test.
    """
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(target)
    python = target / "bin" / "python"
    installed = _pip(python, str(ROOT / "record"), cwd=target)
    if installed.returncode != 0:
        probe = _pip(python, "--dry-run", "--no-deps", "opentelemetry-sdk", cwd=target)
        if probe.returncode != 0:
            pytest.skip(f"pip cannot reach a package index: {probe.stderr.strip()[-300:]}")
        pytest.fail(f"pip install ./record failed:\n{installed.stderr[-2000:]}")
    return python


@pytest.mark.slow
def test_a_fresh_venv_records_a_trace_aem_reads(tmp_path: Path) -> None:
    python = _install_alone(tmp_path / "agent-venv")
    (site_packages,) = (tmp_path / "agent-venv" / "lib").glob("python3*/site-packages")
    assert {p.name for p in site_packages.iterdir()}.isdisjoint(HEAVY)

    trace_file = tmp_path / "traces.jsonl"
    (tmp_path / "agent.py").write_text(RECORDING, encoding="utf-8")
    ran = subprocess.run(
        [str(python), "-I", "agent.py", str(trace_file)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    made = json.loads(ran.stdout)
    assert set(made["modules"]).isdisjoint(HEAVY)

    # One SimpleSpanProcessor export per ended span: two lines, each a request AEM accepts.
    batches = list(read_batches(str(trace_file)))
    assert [b.issues for b in batches] == [[], []]
    spans = {s.name: s for b in batches for s in b.spans}
    root, tool = spans["invoke_agent weather"], spans["execute_tool get_weather"]
    assert root.trace_id == tool.trace_id == made["trace"]
    assert (root.span_id, tool.span_id) == (made["invoke_agent weather"], made[tool.name])
    assert tool.parent_span_id == root.span_id and root.parent_span_id is None
    assert tool.attributes["gen_ai.tool.name"] == "get_weather"
    assert (tool.status_code, tool.status_message) == (2, "timeout")
    assert root.resource["service.name"] == "recorded-alone"
