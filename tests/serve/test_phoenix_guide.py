"""docs/integrations/phoenix.md run end to end against a real Phoenix server.

The guide's own code blocks are what runs: the ``phoenix serve`` line, the ``aem.toml``
blocks, the ``aem serve`` command and the two exporter endpoints of the Python snippet —
only the port numbers are swapped for free ones, so an edit of the guide that breaks a
step breaks this test. Phoenix lives in its own virtualenv (``make phoenix`` builds
``.venv-phoenix``: its pins conflict with AEM's), is started with its data in a temporary
directory and telemetry off, and is stopped by its process id. What arrived is read back
through Phoenix's REST API (``/v1/projects/default/spans`` and ``…/span_annotations``) and
compared with ``aem audit`` on the same sample.

Skipped only when Phoenix is not installed (``make phoenix`` failed) or does not start.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import run_audit
from tests.phoenix_kit import wait_for
from tests.serve.conftest import ROOT, SAMPLES, free_port, send, stop_process_group, wait_http

pytestmark = pytest.mark.slow

GUIDE = ROOT / "docs" / "integrations" / "phoenix.md"
PHOENIX_VENV = Path(os.environ.get("AEM_PHOENIX_VENV", ROOT / ".venv-phoenix"))
SAMPLE = SAMPLES / "parallel_tools.otlp.jsonl"
# The guide's ports, each swapped for a free one.
GUIDE_PORTS = ("6006", "4317", "4319", "4320")
PHOENIX_START_SECONDS = 300  # its first start runs migrations; CI machines are shared


def guide_blocks(ports: dict[str, str]) -> list[tuple[str, str]]:
    """``(language, text)`` of every fenced block of the guide, ports swapped."""
    text = GUIDE.read_text()
    for old, new in ports.items():
        text = re.sub(rf"\b{old}\b", new, text)
    return re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)


def _block(blocks: list[tuple[str, str]], language: str, needle: str) -> str:
    found = [body for lang, body in blocks if lang == language and needle in body]
    assert len(found) == 1, f"the guide has no single {language} block with {needle!r}"
    return found[0]


def _tail(path: Path, chars: int = 1500) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else ""


@pytest.fixture
def ports() -> dict[str, str]:
    return {old: str(free_port()) for old in GUIDE_PORTS}


@pytest.fixture
def phoenix(tmp_path: Path, ports: dict[str, str]) -> Iterator[str]:
    """The guide's ``phoenix serve`` line, run from a work directory; its base URL."""
    executable = PHOENIX_VENV / "bin" / "phoenix"
    if not executable.exists():
        pytest.skip(f"Phoenix is not installed at {PHOENIX_VENV} (`make phoenix` failed)")
    blocks = guide_blocks(ports)
    assert "pip install arize-phoenix" in _block(blocks, "sh", "pip install")
    line = _block(blocks, "sh", "phoenix serve").strip()
    work = tmp_path / "work"
    work.mkdir()
    (work / ".venv-phoenix").symlink_to(PHOENIX_VENV)
    log = tmp_path / "phoenix.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["bash", "-c", line], cwd=work, stdout=out, stderr=out, start_new_session=True
        )
    try:
        base = f"http://127.0.0.1:{ports['6006']}"
        if not wait_http(f"{base}/healthz", proc, PHOENIX_START_SECONDS):
            pytest.skip(f"Phoenix did not start ({line}):\n{_tail(log)}")
        assert (work / "phoenix-data").is_dir()  # PHOENIX_WORKING_DIR as the guide sets it
        yield base
    finally:
        stop_process_group(proc)


@pytest.fixture
def aem_serve(tmp_path: Path, ports: dict[str, str], phoenix: str) -> Iterator[Path]:
    """The guide's ``aem.toml`` (both blocks) and ``aem serve`` command; the work dir."""
    blocks = guide_blocks(ports)
    work = tmp_path / "work"
    config = _block(blocks, "toml", "[serve.sinks.phoenix]")
    config += "\n" + _block(blocks, "toml", "[serve.sinks.otlp]")
    (work / "aem.toml").write_text(config)
    shutil.copy(SAMPLES / "cases.jsonl", work / "cases.jsonl")
    argv = shlex.split(_block(blocks, "sh", "aem serve").strip())
    assert argv[0] == "aem"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "XDG_DATA_HOME": str(tmp_path / "data"),  # the default spool, off the real home
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    log = tmp_path / "aem.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "aem.cli", *argv[1:]],
            cwd=work,
            stdout=out,
            stderr=out,
            env=env,
            start_new_session=True,
        )
    try:
        ready = f"http://127.0.0.1:{ports['4320']}/readyz"
        assert wait_http(ready, proc, 240), f"aem serve did not start:\n{_tail(log)}"
        assert (tmp_path / "data" / "aem" / "serve-spool.sqlite").exists()
        yield log
    finally:
        stop_process_group(proc)


def _get(url: str, **params: Any) -> list[dict[str, Any]]:
    response = httpx.get(url, params=params, timeout=30)
    response.raise_for_status()
    data: list[dict[str, Any]] = response.json()["data"]
    return data


def test_the_phoenix_guide_end_to_end(
    phoenix: str, aem_serve: Path, ports: dict[str, str], tmp_path: Path
) -> None:
    _, expected, _ = run_audit(str(SAMPLE), "--cases", str(SAMPLES / "cases.jsonl"))
    [session] = expected["sessions"]
    turns_by_span: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for turn in session["turns"]:
        turns_by_span[turn["span_ids"][0]].append(turn)
    [cause] = session["root_causes"]
    root_span = cause["span_ids"][0]
    assert len(turns_by_span[root_span]) == 1

    # Step 3: the agent's spans go to both endpoints of the guide's exporter snippet.
    endpoints = re.findall(r'endpoint="([^"]+)"', _block(guide_blocks(ports), "python", "OTLP"))
    assert endpoints == [f"{phoenix}/v1/traces", f"http://127.0.0.1:{ports['4320']}/v1/traces"]
    for endpoint in endpoints:
        sent = send("http", endpoint, [SAMPLE])
        assert sent["returncode"] == 0 and sent["failed"] == 0, sent

    # Phoenix holds the agent's spans …
    spans_url = f"{phoenix}/v1/projects/default/spans"
    agent_ids = {s for ids in (t["span_ids"] for t in session["turns"]) for s in ids}
    spans = wait_for(
        lambda: _get(spans_url, limit=1000),
        lambda got: agent_ids <= {s["context"]["span_id"] for s in got},
        60,
    )
    assert agent_ids <= {s["context"]["span_id"] for s in spans}

    # … AEM's verdicts as annotations (after session_idle_seconds, 10 s by default) …
    annotations_url = f"{phoenix}/v1/projects/default/span_annotations"
    wanted = sorted(turns_by_span)

    def fetch() -> list[dict[str, Any]]:
        return _get(annotations_url, span_ids=wanted, limit=1000)

    def labelled(got: list[dict[str, Any]]) -> bool:
        return {a["span_id"] for a in got if a["name"] == "aem.label"} == set(wanted)

    annotations = wait_for(fetch, labelled, 120)
    assert labelled(annotations), f"annotations: {annotations}\n{_tail(aem_serve)}"
    by_key = {(a["span_id"], a["name"]): a for a in annotations}
    assert all(a["identifier"] == "aem" and a["annotator_kind"] == "CODE" for a in annotations)
    assert by_key[(root_span, "aem.label")]["result"]["label"] == "root_cause"
    failed = by_key[(root_span, cause["metrics"][0])]["result"]
    assert failed["label"] == "fail" and failed["explanation"]
    for span_id, turns in turns_by_span.items():
        labels = {t["label"] for t in turns}
        assert by_key[(span_id, "aem.label")]["result"]["label"] in labels
        if len(turns) == 1:
            for metric in turns[0]["metrics"]:
                assert by_key[(span_id, metric["name"])]["result"]["label"] == metric["outcome"]

    # … and AEM's evaluation spans (OTLP sink, spans only), each in a trace of its own that
    # names the span it judges (Phoenix drops span links, so the attributes say it).
    def evaluations(got: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {
            s["attributes"]["aem.evaluated_span_id"]: s
            for s in got
            if s["name"].startswith("evaluate ")
        }

    spans = wait_for(
        lambda: _get(spans_url, limit=1000), lambda got: set(wanted) <= set(evaluations(got)), 60
    )
    found = evaluations(spans)
    assert set(wanted) <= set(found), sorted(found)
    assert found[root_span]["attributes"]["aem.evaluated_trace_id"] == session["trace_ids"][0]
    assert found[root_span]["context"]["trace_id"] != session["trace_ids"][0]
    assert found[root_span]["parent_id"] is None
    # Spans only: AEM never tried to export logs (Phoenix would refuse them, forever).
    assert "/v1/logs" not in _tail(tmp_path / "phoenix.log", 10_000_000)
