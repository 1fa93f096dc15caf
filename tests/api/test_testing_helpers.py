"""``aem.testing``'s in-memory sink: a team tests what ``aem serve`` sends, in-process.

The server here is the real ``LiveServer`` (real HTTP receiver, spool, pipeline, outbox);
only the destination is in memory.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from aem.serve.server import LiveServer, default_evaluator
from aem.serve.settings import ServeSettings
from aem.testing import InMemorySink
from tests.conftest import SAMPLES
from tests.serve.conftest import post_otlp_json

pytestmark = pytest.mark.slow


def _post_sample(port: int, name: str) -> None:
    post_otlp_json(port, (SAMPLES / name).read_text().splitlines())


def _wait(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_in_memory_sink_receives_verdicts_and_survives_a_failed_delivery(
    tmp_path: Path,
) -> None:
    sink = InMemorySink()
    sink.fail_next = 1  # the outbox must retry, not drop
    settings = ServeSettings(
        grpc_port=-1,
        http_port=0,
        spool_path=tmp_path / "spool.sqlite",
        session_idle_seconds=0.3,
        delivery_retry_initial_seconds=0.1,
    )
    server = LiveServer(settings, evaluate=default_evaluator(None, None), sinks=[sink])
    server.start()
    try:
        _post_sample(server.ports["http"], "parallel_tools.otlp.jsonl")
        _wait(lambda: any(p["label"] == "root_cause" for p in sink.payloads("turn")))
    finally:
        server.stop()
    [root] = [p for p in sink.payloads("turn") if p["label"] == "root_cause"]
    assert root["session_id"] == "trip-planner-7" and root["failed_metrics"] == ["tool_execution"]
    failed = [p for p in sink.payloads("metric") if p["outcome"] == "fail"]
    assert {p["name"] for p in failed} == {"tool_execution"}
    assert sink.fail_next == 0 and sink.closed
    keys = [item.key for item in sink.items]
    assert len(keys) == len(set(keys))  # the retried batch arrived once
