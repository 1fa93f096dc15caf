"""Two serve instances behind a router that shards by session (as the Collector's
``load_balancing`` exporter does, docs/deploy.md): every session is evaluated exactly once,
whole, by one instance."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.live.conftest import send, wait_for
from tests.live.expected import (
    CASES,
    assert_same_verdicts,
    delivered_verdicts,
    expected_verdicts,
    sample_files,
)

pytestmark = pytest.mark.slow

SESSION_KEYS = ("session.id", "gen_ai.conversation.id")


def route_key(resource_attributes, trace_id: bytes) -> str:
    """The session id when the resource carries one (``groupbyattrs``), else the trace id."""
    for kv in resource_attributes:
        if kv.key in SESSION_KEYS:
            return kv.value.string_value
    return trace_id.hex()


class Router(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, backends: list[str]) -> None:
        super().__init__(("127.0.0.1", 0), RouterHandler)
        self.backends = backends
        self.routed: dict[str, set[int]] = defaultdict(set)


class RouterHandler(BaseHTTPRequestHandler):
    server: Router

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        request = ExportTraceServiceRequest.FromString(
            self.rfile.read(int(self.headers["Content-Length"]))
        )
        shards: dict[int, ExportTraceServiceRequest] = {}
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    key = route_key(rs.resource.attributes, span.trace_id)
                    n = int(hashlib.sha256(key.encode()).hexdigest(), 16) % len(
                        self.server.backends
                    )
                    self.server.routed[key].add(n)
                    out = shards.setdefault(n, ExportTraceServiceRequest())
                    target_rs = out.resource_spans.add(resource=rs.resource)
                    target_rs.scope_spans.add(scope=ss.scope).spans.append(span)
        status = 200
        for n, part in shards.items():
            r = httpx.post(
                f"{self.server.backends[n]}/v1/traces",
                content=part.SerializeToString(),
                headers={"Content-Type": "application/x-protobuf"},
                timeout=30,
            )
            status = max(status, r.status_code)
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


def test_two_instances_each_session_once_and_whole(serve_factory) -> None:
    a = serve_factory("a", "--cases", str(CASES))
    b = serve_factory("b", "--cases", str(CASES))
    router = Router([a.http, b.http])
    thread = threading.Thread(target=router.serve_forever, daemon=True)
    thread.start()
    try:
        files = sample_files()
        endpoint = f"http://127.0.0.1:{router.server_address[1]}/v1/traces"
        assert send("http", endpoint, files)["failed"] == 0
        expected = expected_verdicts(files)
        wait_for(
            lambda: len(a.verdicts()) + len(b.verdicts()) >= len(expected),
            timeout=90,
            what="verdicts from both instances",
        )
        assert a.stop() == 0 and b.stop() == 0
    finally:
        router.shutdown()
        router.server_close()
    assert all(len(shards) == 1 for shards in router.routed.values())
    assert {n for shards in router.routed.values() for n in shards} == {0, 1}  # both used

    sessions = {}
    for serve in (a, b):
        with sqlite3.connect(serve.spool) as conn:
            for session_id, spans in conn.execute("SELECT session_id, spans FROM done_sessions"):
                assert session_id not in sessions, f"{session_id} evaluated twice"
                sessions[session_id] = spans
    assert sum(sessions.values()) == sum(
        1 for path in files for line in path.read_text().splitlines() if line
    )
    both = a.verdicts() + b.verdicts()
    assert_same_verdicts(delivered_verdicts(both), expected)
