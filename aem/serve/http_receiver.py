"""OTLP/HTTP receiver (``POST /v1/traces``) plus ``/healthz``, ``/readyz`` and ``/metrics``.

Why the stdlib ``ThreadingHTTPServer``: receiving is cheap next to evaluating (its parse
ceiling, ≈ 450 k spans/s on 2 cores, was the highest of the paths we measured), it
adds no dependency, and the limits that matter are enforced here explicitly: body size
before reading (413), gzip inflated in bounded steps, every member (a bomb is 413, not an
OOM), content type (415), bearer token (401), and concurrent decodes (503 beyond
``receiver_workers``, so memory stays bounded under a flood).

Why the order of the checks: nothing an unauthenticated client sends can hold what
others need. The accept loop only accepts (the TLS handshake runs in the connection's own
thread, under ``tls_handshake_timeout_seconds``); connections are capped per client
address and in all; headers must arrive within ``header_timeout_seconds`` and the body
within ``body_timeout_seconds`` (:class:`Deadlines` closes a connection that overstays,
however slowly it drips); the token and content type are checked from the headers before
a body byte is read; and the body is read *before* taking one of the ``receiver_workers``
decode slots, so a slow sender never holds a slot.

Error bodies are ``google.rpc.Status`` in the request's encoding, as OTLP/HTTP specifies.
"""

from __future__ import annotations

import hmac
import logging
import math
import socket
import ssl
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from aem.foundation.model import SourceRef
from aem.serve.handshakes import HandshakeGate
from aem.serve.intake import Accepted, BadRequest, Busy, Intake, TooLarge
from aem.serve.ops import CONTENT_TYPE as METRICS_CONTENT_TYPE
from aem.serve.ops import ServeMetrics
from aem.serve.settings import ServeSettings, UnusableSetting, host_port
from aem.sinks.http import shut_socket

log = logging.getLogger("aem.serve.http")

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


class HttpError(Exception):
    def __init__(self, status: int, message: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


GZIP_MAGIC = b"\x1f\x8b"


def inflate(body: bytes, limit: int) -> bytes:
    """Gunzip every member (``gzip -c a b`` is one body) up to ``limit`` bytes in all.

    More is a gzip bomb (413); garbage, truncation or trailing non-gzip bytes are 400 —
    never a silently ignored remainder.
    """
    parts: list[bytes] = []
    total = 0
    rest = body
    while True:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out = inflater.decompress(rest, limit - total + 1)
        except zlib.error as exc:
            raise HttpError(400, f"body is not valid gzip: {exc}") from exc
        total += len(out)
        if total > limit or inflater.unconsumed_tail:
            raise HttpError(413, f"gzip body inflates beyond {limit:,} bytes; refused")
        if not inflater.eof:
            raise HttpError(400, "gzip body is truncated")
        parts.append(out)
        rest = inflater.unused_data
        if not rest:
            return b"".join(parts)
        if not rest.startswith(GZIP_MAGIC):
            raise HttpError(400, f"{len(rest):,} bytes after the last gzip member are not gzip")


class Deadlines:
    """Per-connection deadlines, enforced by one reaper thread.

    Why not only socket timeouts: a timeout bounds one ``recv``; a client dripping one
    byte just under it would hold the connection forever. A deadline bounds the whole
    phase (handshake, headers, body) whatever the pace.
    """

    def __init__(self, on_expired: Callable[[str], None], tick: float = 0.25) -> None:
        self._lock = threading.Lock()
        self._due: dict[int, tuple[float, socket.socket, str]] = {}
        self._on_expired = on_expired
        self._tick = tick
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="http-deadlines", daemon=True)
        self._thread.start()

    def set(self, sock: socket.socket, seconds: float, phase: str) -> None:
        with self._lock:
            self._due[id(sock)] = (time.monotonic() + seconds, sock, phase)

    def clear(self, sock: socket.socket) -> None:
        with self._lock:
            self._due.pop(id(sock), None)

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self._tick):
            now = time.monotonic()
            with self._lock:
                expired = [(k, s, p) for k, (due, s, p) in self._due.items() if due <= now]
                for key, _, _ in expired:
                    del self._due[key]
            for _, sock, phase in expired:
                self._on_expired(phase)
                shut_socket(sock)


class ReceiverHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: OtlpHttpServer

    def log_message(self, format: str, *args: object) -> None:
        log.debug(format % args, extra={"client": self.client_address[0]})

    def handle_one_request(self) -> None:
        # The wait for the next request on a kept-alive connection, and its headers,
        # together get header_timeout_seconds.
        self.server.deadlines.set(self.connection, self.server.header_timeout, "headers")
        try:
            super().handle_one_request()
        except OSError:
            self.close_connection = True  # the deadline shut it, or the client went away

    # ---- plumbing --------------------------------------------------------------------
    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.server.deadlines.clear(self.connection)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _send_status(
        self, status: int, message: str, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        # google.rpc.Status code: the HTTP → gRPC mapping is informative only; use UNKNOWN(2)
        # except for the retryable ones clients look at.
        code = {429: 8, 503: 14, 401: 16, 413: 3, 415: 3, 400: 3, 408: 4}.get(status, 2)
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
        try:
            self._check_headers(content_type)
            body = self._read_body()
            answer = self._decode_and_accept(body, content_type)
        except HttpError as exc:
            self._reject(exc, reply_type)
            return
        except Busy as exc:
            self._send_status(
                503 if exc.unavailable else 429,
                str(exc),
                reply_type,
                {"Retry-After": str(max(1, math.ceil(exc.retry_after)))},
            )
            return
        self._send(200, self._encode_answer(answer, reply_type), reply_type)

    def _reject(self, exc: HttpError, reply_type: str) -> None:
        reason = {
            401: "unauthenticated",
            408: "body_timeout",
            413: "too_large",
            415: "unsupported_media_type",
            411: "length_required",
            404: "not_found",
            503: "too_many_requests",
        }.get(exc.status, "bad_request")
        self.server.metrics.requests_rejected.labels("http", reason).inc()
        self._send_status(exc.status, str(exc), reply_type, exc.headers)

    def _check_headers(self, content_type: str) -> None:
        """Everything decidable from the headers, before a body byte is read.

        A refused request's body is not read: the connection is closed instead, so a
        client that is refused cannot make the server wait for (or buffer) its body.
        """
        if self.path.split("?", 1)[0] != "/v1/traces":
            self.close_connection = True
            raise HttpError(404, f"no such path {self.path!r}; OTLP traces go to /v1/traces")
        token = self.server.token
        if token is not None:
            given = self.headers.get("Authorization") or ""
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                self.close_connection = True
                raise HttpError(
                    401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"}
                )
        if content_type not in (PROTOBUF, JSON):
            self.close_connection = True
            raise HttpError(
                415, f"Content-Type {content_type or '(none)'!r} is not {PROTOBUF} or {JSON}"
            )
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding not in ("gzip", "identity"):
            self.close_connection = True
            raise HttpError(415, f"Content-Encoding {encoding!r} is not supported (gzip only)")

    def _decode_and_accept(self, body: bytes, content_type: str) -> Accepted:
        """Inflate, decode and accept under one of the ``receiver_workers`` slots."""
        if not self.server.slots.acquire(blocking=False):
            raise HttpError(
                503,
                "too many concurrent requests; retry later",
                headers={"Retry-After": self.server.retry_after},
            )
        try:
            encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
            if encoding == "gzip":
                body = inflate(body, self.server.max_decompressed)
            origin = f"http:{self.client_address[0]}"
            intake = self.server.intake
            try:
                if content_type == PROTOBUF:
                    return intake.receive_protobuf(body, "http", origin)
                try:
                    document = orjson.loads(body)
                except orjson.JSONDecodeError as exc:
                    raise BadRequest(f"body is not valid JSON: {exc}") from exc
                del body
                spans, issues = intake.decode_json(document, SourceRef(origin))
                return intake.accept(spans, issues, "http", origin)
            except TooLarge as exc:
                raise HttpError(413, str(exc)) from exc
            except BadRequest as exc:
                raise HttpError(400, str(exc)) from exc
        finally:
            self.server.slots.release()

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            raise HttpError(411, "chunked bodies are not accepted; send Content-Length")
        raw = self.headers.get("Content-Length")
        if raw is None:
            self.close_connection = True
            raise HttpError(411, "Content-Length is required")
        # ASCII digits only: headers are decoded as latin-1, and str.isdigit() also says
        # yes to '²' or '٣', which int() then refuses (or reads as another number).
        if not (raw.isascii() and raw.isdigit()):
            self.close_connection = True
            raise HttpError(400, f"Content-Length {raw[:40]!r} is not a decimal number")
        length = int(raw)
        if length > self.server.max_body:
            # Not read: the connection is closed instead, so a huge body costs nothing.
            self.close_connection = True
            raise HttpError(
                413, f"body of {length:,} bytes exceeds the limit of {self.server.max_body:,}"
            )
        self.server.deadlines.set(self.connection, self.server.body_timeout, "body")
        try:
            body = self.rfile.read(length)
        except OSError:
            body = b""
        if len(body) < length:
            self.close_connection = True
            raise HttpError(
                408,
                f"body not received within {self.server.body_timeout:g} s "
                f"({len(body):,} of {length:,} bytes)",
            )
        self.server.deadlines.clear(self.connection)
        return body

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
        # An IPv6 literal (``::1``) needs an IPv6 socket: the class default is IPv4 only.
        if ":" in settings.host:
            self.address_family = socket.AF_INET6
        address = host_port(settings.host, settings.http_port)
        try:
            super().__init__((settings.host.strip("[]"), settings.http_port), ReceiverHandler)
        except OSError as exc:
            raise UnusableSetting("http_port", f"cannot listen on {address}: {exc}") from exc
        self.intake = intake
        self.metrics = metrics
        self.readiness = readiness
        self.token = settings.bearer_token.get_secret_value() if settings.bearer_token else None
        self.max_body = settings.max_request_bytes
        self.max_decompressed = settings.max_decompressed_bytes
        self.retry_after = str(max(1, math.ceil(settings.retry_after_seconds)))
        self.slots = threading.BoundedSemaphore(settings.receiver_workers)
        self.header_timeout = settings.header_timeout_seconds
        self.body_timeout = settings.body_timeout_seconds
        self.handshake_timeout = settings.tls_handshake_timeout_seconds
        self.max_connections = settings.max_connections
        self.max_per_client = settings.max_connections_per_client
        self._conn_lock = threading.Lock()
        self._per_client: Counter[str] = Counter()
        self.deadlines = Deadlines(self._expired)
        self.handshakes = HandshakeGate(
            settings.max_tls_handshakes, settings.max_tls_handshakes_per_client
        )
        self.tls: ssl.SSLContext | None = None
        if settings.tls_cert_file and settings.tls_key_file:
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            try:
                self.tls.load_cert_chain(settings.tls_cert_file, settings.tls_key_file)
            except OSError as exc:  # ssl.SSLError included
                self.server_close()
                raise UnusableSetting(
                    "tls_cert_file", f"cannot load the certificate and key: {exc}"
                ) from exc
        metrics.gauge(
            "aem_http_connections", "open HTTP connections", lambda: self._per_client.total()
        )
        metrics.gauge(
            "aem_tls_handshakes_in_flight",
            "TLS handshakes under way (cap max_tls_handshakes)",
            lambda: self.handshakes.in_flight,
        )

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def _expired(self, phase: str) -> None:
        self.metrics.requests_rejected.labels("http", f"{phase}_timeout").inc()

    # ---- the accept loop: count and hand off, nothing that can wait on a client ----------
    def process_request(self, request: Any, client_address: Any) -> None:
        client = str(client_address[0])
        with self._conn_lock:
            full = self._per_client.total() >= self.max_connections
            over = self._per_client[client] >= self.max_per_client
            if not (full or over):
                self._per_client[client] += 1
        refused = (
            ("too_many_connections" if full else "client_connection_cap") if full or over else None
        )
        if refused is None and self.tls is not None:
            refused = self.handshakes.take(client)
            if refused is not None:
                self._release(client)
        if refused is not None:
            self.metrics.requests_rejected.labels("http", refused).inc()
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self._release(client)
            if self.tls is not None:
                self.handshakes.release(client)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._release(str(client_address[0]))

    def _release(self, client: str) -> None:
        with self._conn_lock:
            self._per_client[client] -= 1
            if self._per_client[client] <= 0:
                del self._per_client[client]

    # ---- the connection's own thread ------------------------------------------------------
    def finish_request(self, request: Any, client_address: Any) -> None:
        """TLS handshake (bounded) here, in the connection's thread, then the handler."""
        request.settimeout(max(self.header_timeout, self.body_timeout))
        conn = request
        if self.tls is not None:
            try:
                conn = self._handshake(request, str(client_address[0]))
            finally:
                self.handshakes.release(str(client_address[0]))
            if conn is None:
                return
        try:
            ReceiverHandler(conn, client_address, self)
        finally:
            self.deadlines.clear(conn)
            if conn is not request:
                conn.close()

    def _handshake(self, request: socket.socket, client: str) -> ssl.SSLSocket | None:
        """The TLS handshake under its deadline; None (and the socket closed) on failure.

        The deadline is set on the wrapped socket: ``wrap_socket`` detaches the plain one
        (its descriptor moves), so a deadline kept on it could not shut anything and the
        handshake ran until the socket timeout instead.
        """
        conn = self.tls.wrap_socket(  # type: ignore[union-attr]
            request, server_side=True, do_handshake_on_connect=False
        )
        self.deadlines.set(conn, self.handshake_timeout, "tls_handshake")
        try:
            conn.do_handshake()
        except (OSError, ValueError) as exc:
            log.debug("TLS handshake failed", extra={"client": client, "error": str(exc)})
            conn.close()
            return None
        finally:
            self.deadlines.clear(conn)
        return conn

    def server_close(self) -> None:
        deadlines = getattr(self, "deadlines", None)  # absent when the bind itself failed
        if deadlines is not None:
            deadlines.stop()
        super().server_close()


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
