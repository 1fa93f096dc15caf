"""kill -9 in the middle of a stream, and a downstream that is down for a while: every
acknowledged span's session is evaluated exactly once, every verdict arrives, none twice."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

from tests.serve.conftest import free_port, send, wait_for
from tests.serve.downstream import Downstream
from tests.serve.expected import (
    CASES,
    assert_same_verdicts,
    delivered_verdicts,
    expected_verdicts,
    sample_files,
    sessions_in,
)

pytestmark = pytest.mark.slow


def _done_sessions(spool) -> dict[str, int]:
    with sqlite3.connect(spool) as conn:
        return dict(conn.execute("SELECT session_id, spans FROM done_sessions"))


def test_kill_9_then_restart_evaluates_every_acknowledged_session_once(serve_factory) -> None:
    files = sample_files()
    first, second = files[:3], files[3:]
    # Idle 4 s: the second half is acknowledged but still open when the process dies.
    serve = serve_factory("serve", "--cases", str(CASES), "--session-idle-seconds", "4")
    assert send("grpc", serve.grpc, first)["failed"] == 0
    wait_for(
        lambda: len(_done_sessions(serve.spool)) == sessions_in(first),
        timeout=60,
        what="first half evaluated",
    )
    assert send("http", f"{serve.http}/v1/traces", second)["failed"] == 0
    serve.kill9()
    assert len(_done_sessions(serve.spool)) == sessions_in(first)  # the rest died open

    again = serve_factory("serve", "--cases", str(CASES), reuse_spool=serve.spool)
    expected = expected_verdicts(files)
    wait_for(
        lambda: len(_done_sessions(again.spool)) == sessions_in(files),
        timeout=60,
        what="open sessions rebuilt from the spool and evaluated",
    )
    wait_for(lambda: len(again.verdicts()) >= len(expected), timeout=30, what="verdicts")
    assert again.stop() == 0
    # Whole sessions (every span), each once; verdicts equal a clean run's, none twice.
    spans_per_session = Counter()
    for path in files:
        spans_per_session[path] = sum(1 for line in path.read_text().splitlines() if line)
    assert sum(_done_sessions(again.spool).values()) == sum(spans_per_session.values())
    assert_same_verdicts(delivered_verdicts(again.verdicts()), expected)
    with sqlite3.connect(again.spool) as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone()[0] == 0


def test_downstream_down_then_up_gets_every_verdict_once(serve_factory) -> None:
    port = free_port()
    serve = serve_factory(
        "serve",
        "--cases",
        str(CASES),
        "--otlp-endpoint",
        f"http://127.0.0.1:{port}",
        "--otlp-timeout-seconds",
        "1",
    )
    files = sample_files()
    assert send("grpc", serve.grpc, files)["failed"] == 0
    wait_for(
        lambda: len(_done_sessions(serve.spool)) == sessions_in(files), timeout=60, what="evaluated"
    )

    def failing_outbox() -> bool:
        with sqlite3.connect(serve.spool) as conn:
            pending, failed_attempts = conn.execute(
                "SELECT count(*), coalesce(sum(attempts), 0) FROM outbox "
                "WHERE sink='otlp' AND delivered_at IS NULL"
            ).fetchone()
        return pending > 0 and failed_attempts > 0

    # down: nothing delivered, failed attempts counted and retried
    wait_for(failing_outbox, timeout=30, what="failed delivery attempts")

    downstream = Downstream(port).start()
    try:
        expected = expected_verdicts(files)
        metrics = sum(1 for k in expected if k[2] != "aem.label")
        turns = len(expected) - metrics
        received = downstream.received
        wait_for(
            lambda: len(received.events) >= metrics and len(received.spans) >= turns,
            timeout=60,
            what="delivery after the downstream came back",
        )
        assert serve.stop() == 0  # flushes the outbox; nothing more may arrive
        keys = [e["attributes"]["aem.idempotency_key"] for e in received.events]
        keys += [s["attributes"]["aem.idempotency_key"] for s in received.spans]
        assert len(keys) == len(set(keys)) == len(expected)
    finally:
        downstream.stop()
