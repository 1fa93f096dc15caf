"""``aem serve`` through the console script: OTLP/JSON in over HTTP, verdicts out as JSONL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLES
from tests.serve.conftest import post_otlp_json, stop_with_sigterm

pytestmark = pytest.mark.slow


def _wait_for(path: Path, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size:
            return json.loads(path.read_text())
        time.sleep(0.2)
    raise AssertionError(f"{path} never appeared")


def test_aem_serve_evaluates_what_it_receives(tmp_path: Path) -> None:
    ports = tmp_path / "ports.json"
    verdicts = tmp_path / "verdicts.jsonl"
    command = [
        sys.executable, "-c", "from aem.cli import main; main()", "serve",
        "--set", "serve.grpc_port=-1",
        "--set", "serve.http_port=0",
        "--set", f'serve.ports_file="{ports}"',
        "--set", f'serve.spool_path="{tmp_path / "spool.sqlite"}"',
        "--set", f'serve.sinks.jsonl.path="{verdicts}"',
        "--set", "serve.session_idle_seconds=0.5",
        "--cases", str(SAMPLES / "cases.jsonl"),
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        port = _wait_for(ports)["http"]
        post_otlp_json(port, (SAMPLES / "parallel_tools.otlp.jsonl").read_text().splitlines())
        deadline = time.monotonic() + 60
        rows: list[dict] = []
        while time.monotonic() < deadline and not any(r.get("label") == "root_cause" for r in rows):
            time.sleep(0.3)
            if verdicts.exists():
                rows = [json.loads(x) for x in verdicts.read_text().splitlines() if x.strip()]
        [root] = [r for r in rows if r.get("label") == "root_cause" and r["kind"] == "turn"]
        # the rejected get_hotels call is also the expected call never made (tool_choice)
        assert root["failed_metrics"] == ["tool_execution", "tool_choice"]
        assert {r.get("session_id") for r in rows} == {"trip-planner-7"}
        spans = {
            json.loads(x)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"]: x
            for x in (SAMPLES / "parallel_tools.otlp.jsonl").read_text().splitlines()
        }
        assert '"get_hotels"' in spans[root["span_id"]]  # the verdict points at the failing span
    finally:
        returncode = stop_with_sigterm(server)
    assert returncode == 0, server.stderr.read() if server.stderr else ""
