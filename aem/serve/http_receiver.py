"""OTLP/HTTP receiver (``POST /v1/traces``) plus ``/healthz``, ``/readyz`` and ``/metrics``.

Why the stdlib ``ThreadingHTTPServer``: receiving is cheap next to evaluating (its parse
ceiling, ≈ 450 k spans/s on 2 cores, was the highest of the paths we measured), it
adds no dependency, and the limits that matter are enforced here explicitly: body size
before reading (413), gzip inflated in bounded steps (a bomb is 413, not an OOM),
content type (415), bearer token (401), and concurrent requests (503 beyond
``receiver_workers``, so memory stays bounded under a flood).

Error bodies are ``google.rpc.Status`` in the request's encoding, as OTLP/HTTP specifies.
"""

from __future__ import annotations

import hmac
import logging
import math
import ssl
import threading
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from aem.model import SourceRef
from aem.serve.intake import Accepted, BadRequest, Busy, Intake
from aem.serve.ops import CONTENT_TYPE as METRICS_CONTENT_TYPE
from aem.serve.ops import ServeMetrics
from aem.serve.settings import ServeSettings

log = logging.getLogger("aem.serve.http")

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class HttpError(Exception):
    def __init__(self, status: int, message: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


def inflate(body: bytes, limit: int) -> bytes:
    """Gunzip at most ``limit`` bytes; more is a gzip bomb (413), garbage is 400."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise HttpError(400, f"body is not valid gzip: {exc}") from exc
    if len(out) > limit or inflater.unconsumed_tail:
        raise HttpError(413, f"gzip body inflates beyond {limit:,} bytes; refused")
    if not inflater.eof:
        raise HttpError(400, "gzip body is truncated")
    return out


class ReceiverHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: OtlpHttpServer

    def log_message(self, format: str, *args: object) -> None:
        log.debug(format % args, extra={"client": self.client_address[0]})

    # ---- plumbing --------------------------------------------------------------------
    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_status(
        self, status: int, message: str, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        # google.rpc.Status code: the HTTP → gRPC mapping is informative only; use UNKNOWN(2)
        # except for the retryable ones clients look at.
        code = {429: 8, 503: 14, 401: 16, 413: 3, 415: 3, 400: 3}.get(status, 2)
        if content_type == PROTOBUF:
            body = status_pb2.Status(code=code, message=message).SerializeToString()
        else:
            content_type = JSON
            body = orjson.dumps({"code": code, "message": message})
        self._send(status, body, content_type, headers)

    # ---- routes ---------------------------------------------------------------------
    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            self._send(200, b"ok\n", "text/plain")
        elif path == "/readyz":
            ready, why = self.server.readiness()
            self._send(200 if ready else 503, (why + "\n").encode(), "text/plain")
        elif path == "/metrics":
            self._send(200, self.server.metrics.render(), METRICS_CONTENT_TYPE)
        else:
            self._send_status(404, f"no such path {path!r}", JSON)

    def do_POST(self) -> None:
        content_type = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        reply_type = PROTOBUF if content_type == PROTOBUF else JSON
        if not self.server.slots.acquire(blocking=False):
            self.close_connection = True
            self.server.metrics.requests_rejected.labels("http", "too_many_requests").inc()
            self._send_status(
                503,
                "too many concurrent requests; retry later",
                reply_type,
                {"Retry-After": self.server.retry_after, "Connection": "close"},
            )
            return
        try:
            answer = self._export(content_type)
        except HttpError as exc:
            reason = {
                401: "unauthenticated",
                413: "too_large",
                415: "unsupported_media_type",
                411: "length_required",
                404: "not_found",
            }.get(exc.status, "bad_request")
            self.server.metrics.requests_rejected.labels("http", reason).inc()
            self._send_status(exc.status, str(exc), reply_type, exc.headers)
            return
        except Busy as exc:
            self._send_status(
                503 if exc.unavailable else 429,
                str(exc),
                reply_type,
                {"Retry-After": str(max(1, math.ceil(exc.retry_after)))},
            )
            return
        finally:
            self.server.slots.release()
        self._send(200, self._encode_answer(answer, reply_type), reply_type)

    def _export(self, content_type: str) -> Accepted:
        if self.path.split("?", 1)[0] != "/v1/traces":
            self._discard_body()
            raise HttpError(404, f"no such path {self.path!r}; OTLP traces go to /v1/traces")
        token = self.server.token
        if token is not None:
            given = self.headers.get("Authorization") or ""
            if not hmac.compare_digest(given, f"Bearer {token}"):
                self._discard_body()
                raise HttpError(
                    401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"}
                )
        body = self._read_body()
        if content_type not in (PROTOBUF, JSON):
            raise HttpError(
                415, f"Content-Type {content_type or '(none)'!r} is not {PROTOBUF} or {JSON}"
            )
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding == "gzip":
            body = inflate(body, self.server.max_decompressed)
        elif encoding != "identity":
            raise HttpError(415, f"Content-Encoding {encoding!r} is not supported (gzip only)")
        origin = SourceRef(f"http:{self.client_address[0]}")
        try:
            if content_type == PROTOBUF:
                spans, issues = self.server.intake.decode_protobuf(body, origin)
            else:
                try:
                    document = orjson.loads(body)
                except orjson.JSONDecodeError as exc:
                    raise BadRequest(f"body is not valid JSON: {exc}") from exc
                spans, issues = self.server.intake.decode_json(document, origin)
        except BadRequest as exc:
            raise HttpError(400, str(exc)) from exc
        return self.server.intake.accept(spans, issues, "http")

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            raise HttpError(411, "chunked bodies are not accepted; send Content-Length")
        raw = self.headers.get("Content-Length")
        if raw is None or not raw.isdigit():
            self.close_connection = True
            raise HttpError(411, "Content-Length is required")
        length = int(raw)
        if length > self.server.max_body:
            # Not read: the connection is closed instead, so a huge body costs nothing.
            self.close_connection = True
            raise HttpError(
                413,
                f"body of {length:,} bytes exceeds the limit of {self.server.max_body:,}",
                headers={"Connection": "close"},
            )
        return self.rfile.read(length)

    def _discard_body(self) -> None:
        raw = self.headers.get("Content-Length") or ""
        if raw.isdigit() and int(raw) <= self.server.max_body:
            self.rfile.read(int(raw))
        else:
            self.close_connection = True

    @staticmethod
    def _encode_answer(answer: Accepted, reply_type: str) -> bytes:
        if reply_type == PROTOBUF:
            response = ExportTraceServiceResponse()
            if answer.rejected_spans or answer.error_message:
                response.partial_success.rejected_spans = answer.rejected_spans
                response.partial_success.error_message = answer.error_message
            return response.SerializeToString()
        if not (answer.rejected_spans or answer.error_message):
            return b"{}"
        return orjson.dumps(
            {
                "partialSuccess": {
                    "rejectedSpans": str(answer.rejected_spans),
                    "errorMessage": answer.error_message,
                }
            }
        )


class OtlpHttpServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self,
        settings: ServeSettings,
        intake: Intake,
        metrics: ServeMetrics,
        readiness: Callable[[], tuple[bool, str]],
    ) -> None:
        super().__init__((settings.host, settings.http_port), ReceiverHandler)
        self.intake = intake
        self.metrics = metrics
        self.readiness = readiness
        self.token = settings.bearer_token.get_secret_value() if settings.bearer_token else None
        self.max_body = settings.max_request_bytes
        self.max_decompressed = settings.max_decompressed_bytes
        self.retry_after = str(max(1, math.ceil(settings.retry_after_seconds)))
        self.slots = threading.BoundedSemaphore(settings.receiver_workers)
        if settings.tls_cert_file and settings.tls_key_file:
            tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            tls.load_cert_chain(settings.tls_cert_file, settings.tls_key_file)
            self.socket = tls.wrap_socket(self.socket, server_side=True)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


def start_http(
    settings: ServeSettings,
    intake: Intake,
    metrics: ServeMetrics,
    readiness: Callable[[], tuple[bool, str]],
) -> tuple[OtlpHttpServer, threading.Thread]:
    server = OtlpHttpServer(settings, intake, metrics, readiness)
    thread = threading.Thread(target=server.serve_forever, name="http-receiver", daemon=True)
    thread.start()
    return server, thread
