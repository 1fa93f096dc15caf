"""Fake Phoenix and MLflow servers on loopback that answer as the real APIs do — and, when
a test asks, as a hostile or broken server would.

Why fakes with the real shapes: the sources must be bounded against what a server can do
(an endless or 1 GB body, a byte every few seconds, a cursor that comes back, a page
nested 100,000 levels deep, records that are not spans), and a real Phoenix or MLflow
cannot be made to do any of it. Each fake is ``http.server`` in a daemon thread on
127.0.0.1, port 0, speaking the routes the sources call:

- Phoenix: ``GET /v1/projects/{project}/spans`` with ``limit``, ``sort`` (``id``: the
  order spans were stored, ``start_time``), ``order=asc``, ``start_time``/``end_time``
  and a cursor that pages "at or after" the span it names, each span with its
  ``id`` (``base64("Span:<row id>")``, as Phoenix's GlobalID);
- MLflow 3: ``GET /api/2.0/mlflow/experiments/get-by-name``, ``POST
  /api/3.0/mlflow/traces/search`` (oldest first, the ``trace.timestamp_ms`` window, page
  tokens) and ``GET /api/3.0/mlflow/traces/batchGet`` (trace infos and OTLP-shaped spans
  with base64 ids, as MLflow answers them).

A test makes a page hostile with ``fake.hostile[page] = answer``: ``answer(handler)``
writes the whole answer (see :func:`endless`, :func:`drip`, :func:`declared`,
:func:`raw`, :func:`json_answer`); ``fake.sent`` counts the bytes the hostile answers
wrote, so a test can show what the client read stayed under its cap.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from aem.foundation.model import SpanRecord
from bench.backends.scaled import renamed
from collectors.readers import read_batches
from tests.collectors.test_backend_sources import phoenix_span
from tests.serve.conftest import SAMPLES
from tests.serve.sender import to_readable

WEATHER = SAMPLES / "weather_genai.otlp.jsonl"
Answer = Callable[[BaseHTTPRequestHandler], None]


def weather_session(seed: str, conversation: str, start_ns: int | None = None) -> list[SpanRecord]:
    """The weather sample as a session of its own (new ids), moved to start at
    ``start_ns`` when given."""
    spans = [s for batch in read_batches(str(WEATHER)) for s in batch.spans]
    first = min(s.start_unix_nano for s in spans)
    shift = 0 if start_ns is None else start_ns - first
    return renamed(spans, seed, conversation=conversation, shift_ns=shift)


# ---- hostile answers ------------------------------------------------------------------


class Counter:
    """Bytes written by hostile answers (shared by one fake's handler threads)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def add(self, count: int) -> None:
        with self._lock:
            self.bytes += count


def _write(handler: BaseHTTPRequestHandler, data: bytes) -> bool:
    """``False`` once the client has gone (the answer then ends)."""
    try:
        handler.wfile.write(data)
        handler.wfile.flush()
    except OSError:
        return False
    counter: Counter = handler.server.counter  # type: ignore[attr-defined]
    counter.add(len(data))
    return not counter.stop.is_set()


def _head(handler: BaseHTTPRequestHandler, length: int | None = None) -> None:
    handler.close_connection = True  # the body ends when the connection does
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    if length is not None:
        handler.send_header("Content-Length", str(length))
    handler.end_headers()


def endless(prefix: bytes = b'{"data": [') -> Answer:
    """A 200 whose body never ends (no length: it runs until the connection closes)."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        _head(handler)
        chunk = b" " * 65_536
        if _write(handler, prefix):
            while _write(handler, chunk):
                pass

    return answer


def declared(size: int = 1 << 30) -> Answer:
    """A 200 that declares ``size`` bytes (1 GiB) and starts sending them."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        _head(handler, size)
        chunk = b" " * 65_536
        sent = 0
        while sent < size and _write(handler, chunk):
            sent += len(chunk)

    return answer


def drip(every: float = 1.0, *, headers_too: bool = False) -> Answer:
    """A byte every ``every`` seconds: of the body, or (``headers_too``) from the status
    line on, so not even the headers are ever whole."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        counter: Counter = handler.server.counter  # type: ignore[attr-defined]
        handler.close_connection = True
        if headers_too:
            stream = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 10**6
        else:
            _head(handler)
            stream = b'{"data": [' + b" " * 10**6
        for byte in stream:
            if not _write(handler, bytes([byte])) or counter.stop.wait(every):
                return

    return answer


def raw(body: bytes, status: int = 200) -> Answer:
    """``body`` as it is, with its length."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        _write(handler, body)

    return answer


def json_answer(body: Any) -> Answer:
    return raw(json.dumps(body).encode())


def deep(levels: int = 100_000) -> bytes:
    """A JSON document nested ``levels`` deep (Python's json gives up at about 1,000)."""
    return b"[" * levels + b"]" * levels


# ---- the servers ----------------------------------------------------------------------


class _Fake:
    """A ``ThreadingHTTPServer`` on loopback serving ``self.route``."""

    def __init__(self) -> None:
        self.hostile: dict[Any, Answer] = {}
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                fake.serve(self, None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                fake.serve(self, json.loads(self.rfile.read(length) or b"{}"))

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.counter = Counter()  # type: ignore[attr-defined]
        self.port = self.server.server_address[1]

    @property
    def sent(self) -> int:
        """Bytes the hostile answers wrote."""
        return int(self.server.counter.bytes)  # type: ignore[attr-defined]

    def serve(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        parts = urlsplit(handler.path)
        query = parse_qs(parts.query)
        self.requests.append({"path": parts.path, "query": query, "body": body})
        self.route(handler, parts.path, query, body)

    def route(
        self, handler: BaseHTTPRequestHandler, path: str, query: dict[str, list[str]], body: Any
    ) -> None:
        raise NotImplementedError

    def __enter__(self) -> Any:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.counter.stop.set()  # type: ignore[attr-defined]
        self.server.shutdown()
        self.server.server_close()


def _iso(unix_nano: int) -> str:
    seconds, nanos = divmod(unix_nano, 1_000_000_000)
    moment = datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=nanos // 1000)
    return moment.isoformat()


def _unix_nano(text: str) -> int:
    moment = datetime.fromisoformat(text)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return int(moment.replace(microsecond=0).timestamp()) * 10**9 + moment.microsecond * 1000


def global_id(row: int) -> str:
    """Phoenix's GlobalID of a span row: ``base64("Span:<row>")``."""
    return base64.b64encode(f"Span:{row}".encode()).decode()


def phoenix_record(span: SpanRecord, row: int) -> dict[str, Any]:
    """A span as Phoenix's REST API answers it, its global id numbered by ``row`` (the
    order Phoenix stored it in, which ``--since last`` follows)."""
    return {**phoenix_span(span), "id": global_id(row)}


class FakePhoenix(_Fake):
    """Phoenix's span route over the records ``store`` received, in that order.

    ``hostile[n]`` answers the ``n``-th page of a read (counted from the cursor);
    ``next_cursor(n, real)`` may replace the cursor a page answers.
    """

    def __init__(self, project: str = "default", page_size: int = 4) -> None:
        super().__init__()
        self.project = project
        self.records: list[dict[str, Any]] = []
        self.page_size = page_size
        self.next_cursor: Callable[[int, str | None], Any] = lambda page, real: real

    def url(self, **query: Any) -> str:
        tail = "&".join(f"{k}={v}" for k, v in {"page_size": self.page_size, **query}.items())
        return f"phoenix://127.0.0.1:{self.port}/{self.project}?{tail}"

    def store(self, spans: list[SpanRecord]) -> None:
        """Spans arriving at Phoenix now (each gets the next row id)."""
        for span in spans:
            self.records.append(phoenix_record(span, len(self.records) + 1))

    def store_record(self, record: dict[str, Any]) -> None:
        """A record as it is (a poison one), with the next row id."""
        self.records.append({**record, "id": global_id(len(self.records) + 1)})

    def route(
        self, handler: BaseHTTPRequestHandler, path: str, query: dict[str, list[str]], body: Any
    ) -> None:
        if path != f"/v1/projects/{self.project}/spans":
            json_answer({"detail": "not found"})(handler)
            return
        ordered = self._ordered(query)
        limit = int(query.get("limit", ["100"])[0])
        offset = self._offset(ordered, query.get("cursor", [None])[0], query)
        page = offset // limit + 1
        if page in self.hostile:
            self.hostile[page](handler)
            return
        data = ordered[offset : offset + limit]
        rest = ordered[offset + limit :]
        real = self._cursor(rest[0], query) if rest else None
        json_answer({"data": data, "next_cursor": self.next_cursor(page, real)})(handler)

    def _ordered(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        records = [r for r in self.records if self._in_window(r, query)]
        if query.get("sort", ["id"])[0] == "start_time":
            records.sort(key=lambda r: (_start(r), _row(r)))
        return records

    @staticmethod
    def _in_window(record: dict[str, Any], query: dict[str, list[str]]) -> bool:
        start = _start(record)
        since, until = query.get("start_time"), query.get("end_time")
        return (not since or start >= _unix_nano(since[0])) and (
            not until or start < _unix_nano(until[0])
        )

    @staticmethod
    def _cursor(record: dict[str, Any], query: dict[str, list[str]]) -> str:
        if query.get("sort", ["id"])[0] == "start_time":
            return base64.b64encode(json.dumps([_start(record), _row(record)]).encode()).decode()
        return str(record["id"])

    def _offset(
        self, ordered: list[dict[str, Any]], cursor: str | None, query: dict[str, list[str]]
    ) -> int:
        """Where a cursor points: the first record at or after it (Phoenix's rule)."""
        if not cursor:
            return 0
        try:
            if query.get("sort", ["id"])[0] == "start_time":
                key = tuple(json.loads(base64.b64decode(cursor)))
                return sum(1 for r in ordered if (_start(r), _row(r)) < key)
            row = int(base64.b64decode(cursor).decode().split(":")[1])
            return sum(1 for r in ordered if _row(r) < row)
        except (ValueError, IndexError):
            return len(ordered)  # a cursor it never gave: nothing more


def _start(record: Any) -> int:
    value = record.get("start_time") if isinstance(record, dict) else None
    return _unix_nano(value) if isinstance(value, str) else 0


def _row(record: Any) -> int:
    if not isinstance(record, dict):
        return 0
    return int(base64.b64decode(record["id"]).decode().split(":")[1])


def otlp_spans(spans: list[SpanRecord]) -> Iterator[dict[str, Any]]:
    """Spans as MLflow's batchGet gives them: OTLP proto JSON, snake_case, base64 ids."""
    request = encode_spans([to_readable(s) for s in spans])
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield MessageToDict(span, preserving_proto_field_name=True)


class FakeMlflow(_Fake):
    """MLflow's trace search and batchGet over the traces ``store`` received.

    ``hostile[("search", n)]`` answers the ``n``-th search page;
    ``hostile[("batch", trace_id)]`` answers any batchGet that asks for that trace;
    ``broken[trace_id]`` replaces that trace's record in batchGet answers;
    ``next_token(n, real)`` may replace the page token a search page answers.
    """

    def __init__(self, experiment: str = "agents", search_page: int = 2) -> None:
        super().__init__()
        self.experiment = experiment
        self.search_page = search_page
        self.traces: dict[str, dict[str, Any]] = {}
        self.broken: dict[str, Any] = {}
        self.next_token: Callable[[int, str | None], Any] = lambda page, real: real

    def url(self, **query: Any) -> str:
        tail = "&".join(f"{k}={v}" for k, v in query.items())
        return f"mlflow://127.0.0.1:{self.port}/{self.experiment}" + (f"?{tail}" if tail else "")

    def store(self, spans: list[SpanRecord]) -> None:
        """Spans arriving at MLflow now, filed per trace (``tr-`` + the OTel trace id)."""
        for span in spans:
            trace = self.traces.setdefault(
                f"tr-{span.trace_id}",
                {"info": {"trace_id": f"tr-{span.trace_id}", "tags": {}}, "spans": []},
            )
            trace["spans"].append(span)
            trace["info"]["tags"].update({k: v for k, v in span.resource.items()})
            first = min(s.start_unix_nano for s in trace["spans"])
            trace["info"]["request_time"] = _iso(first)
            trace["start_ms"] = first // 1_000_000

    def route(
        self, handler: BaseHTTPRequestHandler, path: str, query: dict[str, list[str]], body: Any
    ) -> None:
        if path.endswith("/experiments/get-by-name"):
            found = query.get("experiment_name") == [self.experiment]
            answer = {"experiment": {"experiment_id": "1"}} if found else {"error_code": "X"}
            (json_answer(answer) if found else raw(json.dumps(answer).encode(), 404))(handler)
        elif path.endswith("/traces/search"):
            self._search(handler, body)
        elif path.endswith("/traces/batchGet"):
            self._batch_get(handler, query.get("trace_ids", []))
        else:
            raw(b'{"error_code": "ENDPOINT_NOT_FOUND"}', 404)(handler)

    def _search(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        since, until = _window(body.get("filter", ""))
        ordered = sorted(
            (t for t in self.traces.values() if since <= t["start_ms"] < until),
            key=lambda t: (t["start_ms"], t["info"]["trace_id"]),
        )
        offset = _offset(body.get("page_token"), len(self.traces))
        size = int(body.get("max_results") or self.search_page)
        size = min(size, self.search_page)
        page = offset // size + 1
        if ("search", page) in self.hostile:
            self.hostile[("search", page)](handler)
            return
        chosen = ordered[offset : offset + size]
        more = offset + size < len(ordered)
        real = base64.b64encode(str(offset + size).encode()).decode() if more else None
        answer = {"traces": [t["info"] for t in chosen], "next_page_token": None}
        answer["next_page_token"] = self.next_token(page, real)
        json_answer(answer)(handler)

    def _batch_get(self, handler: BaseHTTPRequestHandler, trace_ids: list[str]) -> None:
        for trace_id in trace_ids:
            if ("batch", trace_id) in self.hostile:
                self.hostile[("batch", trace_id)](handler)
                return
        found = []
        for trace_id in trace_ids:
            if trace_id in self.broken:
                found.append(self.broken[trace_id])
            elif trace_id in self.traces:
                trace = self.traces[trace_id]
                spans = list(otlp_spans(trace["spans"]))
                found.append({"trace_info": trace["info"], "spans": spans})
        json_answer({"traces": found})(handler)


class EndlessMlflow(FakeMlflow):
    """An MLflow whose search answers a new page of ``search_page`` traces for ever, each
    trace a session of its own (the weather sample renamed): a hostile experiment no
    bound in pages alone ends before it has filled memory."""

    def __init__(self, search_page: int = 100) -> None:
        super().__init__(search_page=search_page)
        self._sample = weather_session("endless", "endless")
        self._lock = threading.Lock()
        self.pages = 0

    def _search(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        with self._lock:
            self.pages += 1
            page = self.pages
        infos = [{"trace_id": f"tr-{page}-{n}", "tags": {}} for n in range(self.search_page)]
        json_answer({"traces": infos, "next_page_token": f"page-{page}"})(handler)

    def _batch_get(self, handler: BaseHTTPRequestHandler, trace_ids: list[str]) -> None:
        found = []
        for trace_id in trace_ids:
            spans = renamed(self._sample, trace_id, conversation=f"conv-{trace_id}")
            info = {"trace_id": trace_id, "tags": dict(spans[0].resource)}
            found.append({"trace_info": info, "spans": list(otlp_spans(spans))})
        json_answer({"traces": found})(handler)


def _offset(token: Any, past_the_end: int) -> int:
    """Where a page token points (one the fake never gave: past the end)."""
    if token is None:
        return 0
    try:
        return int(base64.b64decode(str(token), validate=True))
    except ValueError:
        return past_the_end


def _window(text: str) -> tuple[int, int]:
    """The ``trace.timestamp_ms`` bounds of the filter the MLflow source sends."""
    since, until = -(2**63), 2**63
    for clause in filter(None, (c.strip() for c in text.split("AND"))):
        _, op, value = clause.split()
        if op == ">=":
            since = int(value)
        elif op == "<":
            until = int(value)
    return since, until


def elapsed(call: Callable[[], Any]) -> tuple[Any, float]:
    """``call()`` and the seconds it took."""
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started
