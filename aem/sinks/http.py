"""One bounded HTTP request for the sinks: a whole-request deadline and a response size cap.

Why not an HTTP client library's timeouts: they bound one read (or one connect), so a
downstream that drips a byte just under the read timeout holds a delivery — and with it
the server's shutdown — for as long as it likes; and the libraries read a response body
whole, so a downstream answering 200 with an endless body took the server to 3 GB in ten
seconds. Here every phase (connect, TLS, request, status line, headers, body) shares one
deadline, enforced by a timer that shuts the socket whatever the phase, and the response
is read only up to ``max_response_bytes``. ``h11`` (already installed with ``httpx``)
parses HTTP/1.1, so the framing rules (chunked, lengths) are not ours to get wrong.

Each request has its own connection (``Connection: close``): sinks deliver batches, so
the handshake is small next to the batch, and no connection outlives a failed request.
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import h11

from aem.sinks.base import DeliveryError

# Enough for any acknowledgement a sink reads (OTLP partial success, Phoenix's ids of a
# batch); a downstream that says more is not read further.
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
_HEADER_BYTES = 64 * 1024
_READ = 65536


class ResponseRefused(DeliveryError):
    """The downstream's answer was too slow or too large to read; the batch is retried."""


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes

    def text(self, limit: int = 200) -> str:
        return self.body[:limit].decode("utf-8", errors="replace")


def shut_socket(sock: socket.socket) -> None:
    """Wake a read blocked on ``sock`` from another thread (a duplicate descriptor is
    shut, so the TLS layer and the owner's socket object stay usable for closing)."""
    try:
        dup = socket.socket(fileno=os.dup(sock.fileno()))
    except OSError:
        return
    try:
        dup.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        dup.close()


class BoundedHttp:
    """Requests to one base URL, each finished (or refused) within ``deadline_seconds``.

    Most sinks only POST; the MLflow sink also reads (GET) and updates (PATCH, DELETE)
    assessments, and every one of those is bounded the same way."""

    def __init__(
        self,
        base_url: str,
        *,
        deadline_seconds: float,
        headers: Mapping[str, str] | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        what: str = "downstream",
    ) -> None:
        url = urlsplit(base_url.rstrip("/"))
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"{what}: {base_url!r} is not an http(s) URL")
        self._tls = ssl.create_default_context() if url.scheme == "https" else None
        self._host = url.hostname
        self._port = url.port or (443 if self._tls else 80)
        self._prefix = url.path
        self._authority = url.netloc.rpartition("@")[2]
        self._headers = dict(headers or {})
        self.deadline_seconds = deadline_seconds
        self.max_response_bytes = max_response_bytes
        self._what = what
        self._lock = threading.Lock()
        self._in_flight: set[socket.socket] = set()
        self._closed = False

    def post(self, path: str, body: bytes, content_type: str) -> Response:
        """The downstream's status and body; :class:`DeliveryError` when it is unreachable,
        :class:`ResponseRefused` when its answer overstays the deadline or the size cap."""
        return self.request("POST", path, body, content_type)

    def request(
        self, method: str, path: str, body: bytes = b"", content_type: str | None = None
    ) -> Response:
        """:meth:`post` for any method (``content_type`` only when there is a body)."""
        deadline = time.monotonic() + self.deadline_seconds
        try:
            sock = socket.create_connection((self._host, self._port), timeout=self._left(deadline))
        except OSError as exc:
            raise DeliveryError(f"{self._what} unreachable: {exc}") from exc
        timer = threading.Timer(self.deadline_seconds, shut_socket, (sock,))
        timer.daemon = True
        timer.start()
        try:
            return self._exchange(sock, (method, path), body, content_type, deadline)
        finally:
            timer.cancel()
            with self._lock:
                self._in_flight.discard(sock)
            sock.close()

    def _left(self, deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ResponseRefused(
                f"{self._what}: no complete answer within {self.deadline_seconds:g} s"
            )
        return left

    def _exchange(
        self,
        raw: socket.socket,
        target: tuple[str, str],
        body: bytes,
        content_type: str | None,
        deadline: float,
    ) -> Response:
        try:
            sock = self._secure(raw, deadline)
            with self._lock:
                if self._closed:
                    raise DeliveryError(f"{self._what}: sink closed")
                self._in_flight.add(sock)
            conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=_HEADER_BYTES)
            method, path = target
            request = h11.Request(
                method=method,
                target=self._prefix + path,
                headers=self._request_headers(body, content_type),
            )
            sock.settimeout(self._left(deadline))
            sock.sendall(conn.send(request) + conn.send(h11.Data(data=body)))
            sock.sendall(conn.send(h11.EndOfMessage()))
            return self._read(sock, conn, deadline)
        except ResponseRefused:
            raise
        except (OSError, h11.ProtocolError) as exc:
            if time.monotonic() >= deadline:  # the timer shut it: say why, not "reset"
                raise ResponseRefused(
                    f"{self._what}: no complete answer within {self.deadline_seconds:g} s"
                ) from exc
            raise DeliveryError(f"{self._what} failed: {type(exc).__name__}: {exc}") from exc

    def _secure(self, sock: socket.socket, deadline: float) -> socket.socket:
        if self._tls is None:
            return sock
        sock.settimeout(self._left(deadline))
        return self._tls.wrap_socket(sock, server_hostname=self._host)

    def _request_headers(self, body: bytes, content_type: str | None) -> list[tuple[str, str]]:
        typed = [("Content-Type", content_type)] if content_type else []
        return [
            ("Host", self._authority),
            *typed,
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
            ("User-Agent", "aem-sink"),
            *self._headers.items(),
        ]

    def _read(self, sock: socket.socket, conn: h11.Connection, deadline: float) -> Response:
        status: int | None = None
        parts: list[bytes] = []
        size = 0
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                sock.settimeout(self._left(deadline))
                conn.receive_data(sock.recv(_READ))
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                size += len(event.data)
                if size > self.max_response_bytes:
                    raise ResponseRefused(
                        f"{self._what} answered {status} with a body over "
                        f"{self.max_response_bytes:,} bytes; not read further"
                    )
                parts.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                assert status is not None
                return Response(status, b"".join(parts))
            elif isinstance(event, h11.ConnectionClosed):
                raise DeliveryError(f"{self._what} closed the connection before answering")

    def close(self) -> None:
        """Refuse new requests and cut the ones in flight (shutdown must not wait on a
        downstream)."""
        with self._lock:
            self._closed = True
            in_flight = list(self._in_flight)
        for sock in in_flight:
            shut_socket(sock)
