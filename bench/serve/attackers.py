"""Hostile clients on raw sockets, for the hardening tests and the bench under attack.

Why raw sockets: every real HTTP client library finishes its request promptly; the
attacks that matter are exactly the ones a library will not do — never finishing a TLS
handshake, dripping headers or a body one byte at a time, hoarding connections. Each
attacker is a thread that keeps attacking (reconnecting when the server cuts it off)
until stopped, and counts how often it was cut off.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time


def connect(port: int, source: str = "127.0.0.1", timeout: float = 5.0) -> socket.socket:
    """A TCP connection to 127.0.0.1:``port`` from loopback address ``source``.

    Why a source address: the server caps connections and sessions per client address;
    an attacker on 127.0.0.2 is another client than the well-behaved one on 127.0.0.1.
    """
    sock = socket.create_connection(
        ("127.0.0.1", port), timeout=timeout, source_address=(source, 0)
    )
    return sock


def closed_by_peer(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` (EOF or reset) within ``within`` seconds."""
    sock.settimeout(within)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
        return True
    except TimeoutError:
        return False
    return False


class Attacker(threading.Thread):
    """Base: attack in a loop until :meth:`stop`; ``cut_off`` counts server hang-ups."""

    def __init__(
        self,
        port: int,
        source: str = "127.0.0.2",
        pace: float = 0.2,
        *,
        tls: bool = False,
        reconnect: float = 1.0,
    ) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.source = source
        self.pace = pace
        self.tls = tls
        # A slow client is slow to come back too; reconnecting at once would be a
        # connection flood, another attack (bounded by the connection caps).
        self.reconnect = reconnect
        self.cut_off = 0
        self.connections = 0
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=10)

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                sock = connect(self.port, self.source)
                if self.tls:  # complete the handshake, then misbehave inside TLS
                    context = ssl.create_default_context()
                    context.check_hostname = False
                    context.verify_mode = ssl.CERT_NONE
                    sock = context.wrap_socket(sock)
            except OSError:
                self._stop_event.wait(self.pace)
                continue
            self.connections += 1
            try:
                self.attack(sock)
            except OSError:
                self.cut_off += 1
                self._stop_event.wait(self.reconnect)
            finally:
                sock.close()

    def attack(self, sock: socket.socket) -> None:
        raise NotImplementedError

    def _drip(self, sock: socket.socket, data: bytes) -> None:
        """Send ``data`` one byte per ``pace``; a closed connection raises OSError."""
        for i in range(len(data)):
            if self._stop_event.is_set():
                return
            sock.sendall(data[i : i + 1])
            if closed_by_peer(sock, self.pace):
                raise ConnectionResetError("server closed the connection")


class SlowHeaders(Attacker):
    """Sends a request line and headers one byte at a time, forever."""

    def attack(self, sock: socket.socket) -> None:
        request = (
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            + b"X-Padding: " + b"a" * 10_000 + b"\r\n\r\n"
        )  # fmt: skip
        self._drip(sock, request)


class SlowBody(Attacker):
    """Complete headers (with ``token`` if given), then the body one byte at a time."""

    def __init__(
        self,
        port: int,
        source: str = "127.0.0.2",
        pace: float = 0.2,
        *,
        tls: bool = False,
        token: str = "",
        reconnect: float = 1.0,
    ) -> None:
        super().__init__(port, source, pace, tls=tls, reconnect=reconnect)
        self.token = token

    def attack(self, sock: socket.socket) -> None:
        auth = f"Authorization: Bearer {self.token}\r\n".encode() if self.token else b""
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            + auth + b"Content-Length: 1000000\r\n\r\n"
        )  # fmt: skip
        self._drip(sock, b"\x0a" * 1_000_000)


class IdleConnection(Attacker):
    """Connects and sends nothing (on a TLS port: a handshake that never starts)."""

    def attack(self, sock: socket.socket) -> None:
        while not self._stop_event.is_set():
            if closed_by_peer(sock, self.pace):
                raise ConnectionResetError("server closed the connection")
