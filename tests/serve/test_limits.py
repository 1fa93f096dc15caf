"""Memory bounded by decoded bytes, and traces that never end, through the real server.

Attack requests are small on the wire (gzip of one huge attribute, or one endless trace
each) and come from 127.0.0.2 / 127.0.0.3; the well-behaved exporter on 127.0.0.1 must
still get its session accepted and evaluated."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import sqlite3
import time

import httpx
import pytest

from tests.serve.conftest import metric, send, wait_for
from tests.serve.expected import SAMPLES

pytestmark = pytest.mark.slow

GOOD_FILE = SAMPLES / "weather_openinference.otlp.jsonl"  # session "weather-oi"
MiB = 1024 * 1024


def endless_span(trace_id: str, blob: int = 0) -> bytes:
    """One gzip'd OTLP/JSON request: a child span of a trace whose root never comes.

    ``blob`` bytes of attribute values, in attributes of 500 kB (the decoder truncates
    one value at 1 MB; many values of one span are what expands)."""
    sizes = [500_000] * (blob // 500_000) + ([blob % 500_000] if blob % 500_000 else [])
    span = {
        "traceId": trace_id,
        "spanId": os.urandom(8).hex(),
        "parentSpanId": "ab" * 8,
        "name": "step",
        "startTimeUnixNano": "1",
        "endTimeUnixNano": "2",
        "attributes": [
            {"key": f"blob{i}", "value": {"stringValue": "a" * n}} for i, n in enumerate(sizes)
        ],
    }
    doc = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [span]}]}]}
    return gzip.compress(json.dumps(doc).encode())


def post(port: int, body: bytes, source: str) -> tuple[int, str]:
    """POST from loopback address ``source`` (the server caps per client address)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        conn.request(
            "POST",
            "/v1/traces",
            body,
            {"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def _verdict_sessions(serve) -> set[str]:
    return {line["session_id"] for line in serve.verdicts()}


def test_memory_is_bounded_by_decoded_bytes(serve_factory) -> None:
    serve = serve_factory(
        "serve",
        "--max-bytes-in-flight", str(4 * MiB),
        "--max-request-decoded-bytes", str(2 * MiB),
        "--max-session-bytes", str(MiB),
        "--session-idle-seconds", "30",
    )  # fmt: skip
    port = serve.ports["http"]
    # 20 requests of ~3 KB on the wire that decode into 3 MB each: refused, nothing kept.
    bomb = endless_span(os.urandom(16).hex(), 3 * MiB)
    assert len(bomb) < 10_000
    for _ in range(20):
        status, text = post(port, bomb, "127.0.0.2")
        assert status == 413 and "decodes into" in text, text
    with sqlite3.connect(serve.spool) as conn:
        assert conn.execute("SELECT count(*) FROM spans").fetchone()[0] == 0
    # Endless traces of 600 kB each, and one trace that grows past max_session_bytes: the
    # heaviest open sessions are evicted (evaluated now, cut); bytes stay under the cap.
    peak = 0.0
    bodies = [endless_span(os.urandom(16).hex(), 600_000) for _ in range(10)]
    grower = os.urandom(16).hex()
    bodies += [endless_span(grower, 600_000), endless_span(grower, 600_000)]
    for body in bodies:
        while (status := post(port, body, "127.0.0.2")[0]) == 429:
            time.sleep(0.2)  # pushed back while evaluation frees bytes
        assert status == 200
        peak = max(peak, metric(serve.http, "aem_bytes_in_flight"))
    assert peak <= 4 * MiB
    wait_for(lambda: metric(serve.http, "aem_sessions_evicted_total") >= 2, timeout=30,
             what="evictions")  # fmt: skip
    ok = send("http", f"{serve.http}/v1/traces", [GOOD_FILE])
    assert ok["failed"] == 0, ok["stderr"]
    wait_for(lambda: "weather-oi" in _verdict_sessions(serve), timeout=60, what="good verdicts")
    with sqlite3.connect(serve.spool) as conn:
        cut = dict(conn.execute("SELECT session_id, cut FROM done_sessions"))
    assert cut.get(grower) == 1  # evicted whole session, marked cut
    assert sum(cut.values()) >= 2
    assert metric(serve.http, "aem_bytes_in_flight") <= 4 * MiB
    assert serve.stop() == 0


def test_endless_traces_are_capped_per_client_and_readiness_says_saturated(serve_factory) -> None:
    serve = serve_factory(
        "serve",
        "--max-open-sessions-per-client", "20",
        "--max-open-sessions", "30",
        # Long enough that no endless session ends while the caps are being filled and
        # read back (at 6 s, a loaded machine saw /readyz saturated and the gauge not).
        "--session-max-lifetime-seconds", "20",
    )  # fmt: skip
    port = serve.ports["http"]
    answers = [post(port, endless_span(os.urandom(16).hex()), "127.0.0.2") for _ in range(25)]
    assert [s for s, _ in answers] == [200] * 20 + [429] * 5
    assert "open sessions" in answers[-1][1]
    assert metric(serve.http, "aem_clients_at_session_cap") == 1
    assert httpx.get(f"{serve.http}/readyz").status_code == 200  # one client is not all
    # The well-behaved client is not locked out by the first attacker.
    ok = send("http", f"{serve.http}/v1/traces", [GOOD_FILE])
    assert ok["failed"] == 0, ok["stderr"]
    # A second address fills the overall cap: now /readyz says saturated.
    second = [post(port, endless_span(os.urandom(16).hex()), "127.0.0.3")[0] for _ in range(15)]
    assert 200 in second and second[-1] == 429
    ready = httpx.get(f"{serve.http}/readyz")
    assert ready.status_code == 503 and "saturated" in ready.text
    assert metric(serve.http, "aem_saturated") == 1
    assert metric(serve.http, "aem_requests_rejected_total", transport="http",
                  reason="client_session_cap") == 5  # fmt: skip
    assert metric(serve.http, "aem_requests_rejected_total", transport="http",
                  reason="session_cap") >= 1  # fmt: skip
    # Endless sessions end at their maximum lifetime (evaluated, cut); ready again.
    wait_for(lambda: metric(serve.http, "aem_sessions_open_admitted") == 0, timeout=60,
             what="endless sessions cut")  # fmt: skip
    # Closed is not yet evaluated: the first evaluation may still be loading the model.
    cut = 20 + second.count(200)
    wait_for(lambda: metric(serve.http, "aem_sessions_cut_total") >= cut, timeout=60,
             what="endless sessions evaluated as cut")  # fmt: skip
    assert metric(serve.http, "aem_sessions_cut_total") == cut
    assert httpx.get(f"{serve.http}/readyz").status_code == 200
    assert metric(serve.http, "aem_clients_at_session_cap") == 0
    wait_for(lambda: "weather-oi" in _verdict_sessions(serve), timeout=60,
             what="the well-behaved client's verdicts")  # fmt: skip
    assert post(port, endless_span(os.urandom(16).hex()), "127.0.0.2")[0] == 200
    assert serve.stop() == 0
