"""docs/integrations/mlflow.md run end to end against a real MLflow server.

The guide's own blocks are what runs: the ``pip install`` and ``mlflow server`` lines, the
``mlflow experiments create`` line, the exporter variables, the ``aem.toml`` block, the
``aem audit --from … --sink …`` line and the Python snippet that reads the verdicts back —
only the port is swapped for a free one, so an edit of the guide that breaks a step breaks
this test. The ``aem audit`` line is run through the same parts the command joins (its
``--from`` URL opened as a span source, the ``[sinks.<name>]`` table as the sink's
settings), since the command's ``--from`` lands with the backends branch.

Skipped only when MLflow is not installed (``make mlflow`` failed) or does not start.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

import aem
from aem.sinks.mlflow import LABEL_NAME, MlflowSettings, MlflowSink, assessments, turn_name
from aem.sinks.records import verdict_items
from tests.mlflow.auditing import audit_source
from tests.mlflow.kit import MLFLOW_START_SECONDS, MLFLOW_VENV
from tests.serve.conftest import ROOT, SAMPLES, free_port, send, stop_process_group, wait_http

pytestmark = pytest.mark.slow

GUIDE = ROOT / "docs" / "integrations" / "mlflow.md"
SAMPLE = SAMPLES / "weather_openllmetry.otlp.jsonl"


def guide_blocks(port: str) -> list[tuple[str, str]]:
    """``(language, text)`` of every fenced block of the guide, the port swapped."""
    text = re.sub(r"\b5000\b", port, GUIDE.read_text())
    return re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)


def _block(blocks: list[tuple[str, str]], language: str, needle: str) -> str:
    found = [body for lang, body in blocks if lang == language and needle in body]
    assert len(found) == 1, f"the guide has no single {language} block with {needle!r}"
    return found[0]


def _without_pythonpath() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.fixture
def port() -> str:
    return str(free_port())


@pytest.fixture
def work(tmp_path: Path, port: str) -> Iterator[Path]:
    """A work directory with the guide's MLflow server running in it."""
    if not (MLFLOW_VENV / "bin" / "mlflow").exists():
        pytest.skip(f"MLflow is not installed at {MLFLOW_VENV} (`make mlflow` failed)")
    blocks = guide_blocks(port)
    assert "pip install mlflow" in _block(blocks, "sh", "pip install")
    line = _block(blocks, "sh", "mlflow server").strip()
    work = tmp_path / "work"
    work.mkdir()
    (work / ".venv-mlflow").symlink_to(MLFLOW_VENV)
    log = tmp_path / "mlflow.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["bash", "-c", line],
            cwd=work,
            stdout=out,
            stderr=out,
            env=_without_pythonpath(),
            start_new_session=True,
        )
    try:
        if not wait_http(f"http://127.0.0.1:{port}/health", proc, MLFLOW_START_SECONDS):
            pytest.skip(f"MLflow did not start ({line}):\n{log.read_text()[-1500:]}")
        assert (work / "mlflow.db").is_file()  # the SQLite store where the guide says
        yield work
    finally:
        stop_process_group(proc)


def _run_sh(line: str, work: Path) -> str:
    done = subprocess.run(
        ["bash", "-c", line],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=180,
        env=_without_pythonpath(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout + done.stderr


def test_the_guide_from_traces_in_mlflow_to_verdicts_in_mlflow(
    work: Path, port: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = guide_blocks(port)
    created = _run_sh(_block(blocks, "sh", "experiments create").strip(), work)
    assert "with id 1" in created, created

    exports = dict(
        re.findall(r"^export (\w+)=(\S+)$", _block(blocks, "sh", "OTEL_EXPORTER"), flags=re.M)
    )
    assert exports["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] == "http/protobuf"
    for name, value in exports.items():
        monkeypatch.setenv(name, value)
    sent = send("http", exports["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"], [SAMPLE])
    assert sent["returncode"] == 0 and sent["failed"] == 0, sent

    config = tomllib.loads(_block(blocks, "toml", "[sinks.mlflow]"))
    (work / "aem.toml").write_text(_block(blocks, "toml", "[sinks.mlflow]"))
    args = shlex.split(_block(blocks, "sh", "aem audit").strip())
    assert args[:2] == ["aem", "audit"]
    option = dict(zip(args[2::2], args[3::2], strict=True))
    assert (work / option["--config"]).is_file()
    table = config["sinks"][option["--sink"]]
    sink = MlflowSink.from_settings(MlflowSettings.model_validate(table))
    report = audit_source(option["--from"])
    items = [i for s in report.sessions for i in verdict_items(s, completed_at=0.0)]
    assert items, "the sample gives verdicts"
    try:
        assert sink.deliver(items) == [i.key for i in items]
    finally:
        sink.close()

    snippet = _block(blocks, "python", "a.source.source_id")
    (work / "read.py").write_text(snippet)
    printed = _run_sh(".venv-mlflow/bin/python read.py", work)
    rows = {tuple(line.split("\t")[:3]) for line in printed.splitlines() if "\t" in line}
    # per turn on its span, per trace (no span id) the worst of its turns, per session on
    # its first trace (the sample's trace has no MLflow session: none written)
    expected = {
        (body["assessment_name"], body.get("span_id") or "None", str(body["feedback"]["value"]))
        for i in items
        for body in assessments(i)
        if body["assessment_name"] != "aem.session"
    }
    assert rows == expected
    assert {(n, v) for n, s, v in rows if s == "None"} >= {(LABEL_NAME, "ok")}
    # the guide's count: items delivered, assessments held (no aem.session: no MLflow session)
    held = [line for line in printed.splitlines() if "\t" in line]
    assert f"{len(items)} items become {len(held)} assessments" in " ".join(
        GUIDE.read_text().split()
    )
    assert len(held) == sum(len(assessments(i)) for i in items) - 1
    turn = next(i for i in items if i.kind == "turn")
    assert (turn_name(turn.payload["turn_id"], LABEL_NAME), turn.payload["span_id"],
            turn.payload["label"]) in rows  # fmt: skip


def test_the_guide_loads_recorded_files_as_otlp_json_and_protobuf(work: Path, port: str) -> None:
    """The guide's ``curl`` block: a recorded OTLP/JSON file posted line by line and an OTLP
    protobuf file posted whole; audited from MLflow they give the report of the files."""
    blocks = guide_blocks(port)
    _run_sh(_block(blocks, "sh", "experiments create").strip(), work)
    (work / "sample_traces").symlink_to(SAMPLES)
    pb_sample = SAMPLES / "weather_genai.otlp.jsonl"
    (work / "run.pb").write_bytes(_as_protobuf(pb_sample))
    _run_sh(_block(blocks, "sh", "application/x-protobuf"), work)
    json_sample = SAMPLES / "multi_agent.otlp.jsonl"
    assert str(json_sample.relative_to(ROOT)) in _block(blocks, "sh", "application/json")
    from_mlflow = audit_source(f"mlflow://127.0.0.1:{port}/my-agent")
    from_files = aem.audit_paths([str(json_sample), str(pb_sample)])
    assert from_mlflow.model_dump_json() == from_files.model_dump_json()
    assert {s.session_id for s in from_mlflow.sessions} == {"research-31", "weather-genai"}


def _as_protobuf(path: Path) -> bytes:
    """A recorded OTLP/JSON file as one OTLP protobuf request: ids are hex in OTLP/JSON,
    base64 in protobuf's own JSON mapping, so they are turned before parsing."""
    request = ExportTraceServiceRequest()
    for line in path.read_text().splitlines():
        document = json.loads(line)
        for rs in document["resourceSpans"]:
            for span in (sp for ss in rs["scopeSpans"] for sp in ss["spans"]):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        link[key] = base64.b64encode(bytes.fromhex(link[key])).decode()
        part = ExportTraceServiceRequest()
        json_format.Parse(json.dumps(document), part)
        request.resource_spans.extend(part.resource_spans)
    return request.SerializeToString()
