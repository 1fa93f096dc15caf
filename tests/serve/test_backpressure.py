"""Overload: clients sending faster than evaluation get RESOURCE_EXHAUSTED (with RetryInfo)
and 429 (with Retry-After), queues stay within their bounds, and no acknowledged span is
lost: every session whose spans were acknowledged is evaluated, whole."""

from __future__ import annotations

import sqlite3
import threading
import time

import grpc
import httpx
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from bench.serve.workload import session_copies
from tests.serve.conftest import wait_for

pytestmark = pytest.mark.slow

SESSIONS = 56
QUEUE, IN_FLIGHT = 30, 60


def _gauge(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise KeyError(name)


def test_overload_pushes_back_and_loses_nothing(serve_factory) -> None:
    serve = serve_factory(
        "serve",
        "--ingest-queue-spans",
        str(QUEUE),
        "--max-spans-in-flight",
        str(IN_FLIGHT),
        "--eval-queue-sessions",
        "1",
        "--session-idle-seconds",
        "0.5",
        "--retry-after-seconds",
        "0.2",
    )
    sessions = list(session_copies(SESSIONS, prefix="bp"))
    acked: dict[str, int] = {}
    pushed_back = {"grpc": 0, "http": 0, "retry_info": 0, "retry_after": 0}
    lock = threading.Lock()

    def grpc_client(part: list[tuple[str, list[bytes]]]) -> None:
        with grpc.insecure_channel(serve.grpc) as channel:
            export = channel.unary_unary(
                "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
            )
            for session, requests in part:
                for body in requests:
                    while True:
                        try:
                            export(body, timeout=10)
                            break
                        except grpc.RpcError as exc:
                            assert exc.code() is grpc.StatusCode.RESOURCE_EXHAUSTED, exc
                            status = rpc_status.from_call(exc)
                            info = error_details_pb2.RetryInfo()
                            assert status is not None and status.details[0].Unpack(info)
                            with lock:
                                pushed_back["grpc"] += 1
                                pushed_back["retry_info"] += 1
                            time.sleep(info.retry_delay.ToNanoseconds() / 1e9)
                    with lock:
                        acked[session] = acked.get(session, 0) + 1

    def http_client(part: list[tuple[str, list[bytes]]]) -> None:
        with httpx.Client(base_url=serve.http, timeout=10) as client:
            for session, requests in part:
                for body in requests:
                    while True:
                        r = client.post(
                            "/v1/traces",
                            content=body,
                            headers={"Content-Type": "application/x-protobuf"},
                        )
                        if r.status_code == 200:
                            break
                        assert r.status_code == 429, r.text
                        with lock:
                            pushed_back["http"] += 1
                            pushed_back["retry_after"] += "Retry-After" in r.headers
                        time.sleep(0.2)
                    with lock:
                        acked[session] = acked.get(session, 0) + 1

    parts = [sessions[0::3], sessions[1::3], sessions[2::3]]
    threads = [
        threading.Thread(target=grpc_client, args=(parts[0],)),
        threading.Thread(target=grpc_client, args=(parts[1],)),
        threading.Thread(target=http_client, args=(parts[2],)),
    ]
    for t in threads:
        t.start()
    peaks = {"ingest": 0.0, "in_flight": 0.0}
    while any(t.is_alive() for t in threads):
        text = httpx.get(f"{serve.http}/metrics").text
        peaks["ingest"] = max(peaks["ingest"], _gauge(text, "aem_queue_depth_ingest_spans"))
        peaks["in_flight"] = max(peaks["in_flight"], _gauge(text, "aem_spans_in_flight"))
        time.sleep(0.05)
    for t in threads:
        t.join()

    assert pushed_back["grpc"] > 0 and pushed_back["http"] > 0, pushed_back
    assert pushed_back["retry_info"] == pushed_back["grpc"]
    assert pushed_back["retry_after"] == pushed_back["http"]
    largest_request = 1  # the samples ship one span per request
    assert peaks["ingest"] <= QUEUE
    assert peaks["in_flight"] <= IN_FLIGHT + QUEUE + largest_request

    def done() -> dict[str, int]:
        with sqlite3.connect(serve.spool) as conn:
            return dict(conn.execute("SELECT session_id, spans FROM done_sessions"))

    wait_for(lambda: len(done()) == SESSIONS, timeout=90, what="every session evaluated")
    assert done() == acked  # every acknowledged span evaluated, in its whole session
    text = httpx.get(f"{serve.http}/metrics").text
    assert 'aem_requests_rejected_total{reason="queue_full",transport="grpc"}' in text
    assert serve.stop() == 0
