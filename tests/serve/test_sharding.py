"""Two serve instances behind a router that shards by session (as the Collector's
``load_balancing`` exporter does, docs/deploy.md): every session is evaluated exactly once,
whole, by one instance — also a session whose traces would hash to different instances."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.serve.conftest import send, wait_for
from tests.serve.expected import (
    CASES,
    SAMPLES,
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


def shard(key: str, backends: int) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % backends


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
                    n = shard(key, len(self.server.backends))
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


@contextmanager
def routing(backends: list[str]) -> Iterator[Router]:
    router = Router(backends)
    thread = threading.Thread(target=router.serve_forever, daemon=True)
    thread.start()
    try:
        yield router
    finally:
        router.shutdown()
        router.server_close()


def _endpoint(router: Router) -> str:
    return f"http://127.0.0.1:{router.server_address[1]}/v1/traces"


def _done_sessions(spool) -> dict[str, int]:
    with sqlite3.connect(spool) as conn:
        return dict(conn.execute("SELECT session_id, spans FROM done_sessions"))


def test_two_instances_each_session_once_and_whole(serve_factory) -> None:
    a = serve_factory("a", "--cases", str(CASES))
    b = serve_factory("b", "--cases", str(CASES))
    with routing([a.http, b.http]) as router:
        files = sample_files()
        assert send("http", _endpoint(router), files)["failed"] == 0
        expected = expected_verdicts(files)
        wait_for(
            lambda: len(a.verdicts()) + len(b.verdicts()) >= len(expected),
            timeout=90,
            what="verdicts from both instances",
        )
        assert a.stop() == 0 and b.stop() == 0
    assert all(len(shards) == 1 for shards in router.routed.values())
    assert {n for shards in router.routed.values() for n in shards} == {0, 1}  # both used

    sessions: dict[str, int] = {}
    for serve in (a, b):
        for session_id, spans in _done_sessions(serve.spool).items():
            assert session_id not in sessions, f"{session_id} evaluated twice"
            sessions[session_id] = spans
    assert sum(sessions.values()) == sum(
        1 for path in files for line in path.read_text().splitlines() if line
    )
    both = a.verdicts() + b.verdicts()
    assert_same_verdicts(delivered_verdicts(both), expected)


SESSION = "weather-oi"  # session.id on every span of weather_openinference


def two_trace_session(path) -> tuple[str, str]:
    """Write ``weather_openinference`` as a conversation of two traces — the second a later
    user message with new trace and span ids — with ``session.id`` on every resource (what
    ``groupbyattrs`` does in the Collector). The second trace id is chosen to hash to the
    other instance than the first, so routing by trace id would split the session."""
    lines = [json.loads(x) for x in (SAMPLES / "weather_openinference.otlp.jsonl").open()]
    first = lines[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    second = next(
        t
        for t in (hashlib.sha256(f"second-{i}".encode()).hexdigest()[:32] for i in range(64))
        if shard(t, 2) != shard(first, 2)
    )

    def new_id(span_id: str) -> str:
        return hashlib.sha256(f"second-{span_id}".encode()).hexdigest()[:16]

    later = 120 * 10**9  # the next user message, two minutes on
    out = []
    for copy in (False, True):
        for line in json.loads(json.dumps(lines)):  # deep copy
            for rs in line["resourceSpans"]:
                rs["resource"]["attributes"].append(
                    {"key": "session.id", "value": {"stringValue": SESSION}}
                )
                for span in (sp for ss in rs["scopeSpans"] for sp in ss["spans"]):
                    if not copy:
                        continue
                    span["traceId"] = second
                    span["spanId"] = new_id(span["spanId"])
                    if span.get("parentSpanId"):
                        span["parentSpanId"] = new_id(span["parentSpanId"])
                    for field in ("startTimeUnixNano", "endTimeUnixNano"):
                        span[field] = str(int(span[field]) + later)
                    for event in span.get("events", []):
                        event["timeUnixNano"] = str(int(event["timeUnixNano"]) + later)
            out.append(json.dumps(line))
    path.write_text("\n".join(out) + "\n")
    return first, second


def test_session_of_two_traces_routed_whole_to_one_instance(serve_factory, tmp_path) -> None:
    conversation = tmp_path / "weather_two_traces.otlp.jsonl"
    traces = set(two_trace_session(conversation))
    spans = sum(1 for line in conversation.read_text().splitlines() if line)
    a = serve_factory("a", "--cases", str(CASES))
    b = serve_factory("b", "--cases", str(CASES))
    with routing([a.http, b.http]) as router:
        assert send("http", _endpoint(router), [conversation])["failed"] == 0
        expected = expected_verdicts([conversation])  # aem audit of the same file
        wait_for(
            lambda: len(a.verdicts()) + len(b.verdicts()) >= len(expected),
            timeout=60,
            what="verdicts",
        )
        assert a.stop() == 0 and b.stop() == 0
    assert dict(router.routed) == {SESSION: {shard(SESSION, 2)}}  # by session, not trace
    owner, other = (a, b) if shard(SESSION, 2) == 0 else (b, a)
    # Evaluated once, on one instance, with every span of both traces ...
    assert _done_sessions(owner.spool) == {SESSION: spans}
    assert _done_sessions(other.spool) == {} and other.verdicts() == []
    # ... and whole: its verdicts cover turns of both traces, as a file audit sees them.
    assert {line["trace_id"] for line in owner.verdicts() if line["kind"] != "session"} == traces
    [whole] = [line for line in owner.verdicts() if line["kind"] == "session"]
    assert {t["trace_id"] for t in whole["traces"]} == traces  # one verdict over both traces
    assert_same_verdicts(delivered_verdicts(owner.verdicts()), expected)
