"""How many TLS handshakes may be in flight, per client address and in all.

Why a cap of its own, below the connection caps: a handshake is the one phase an
unauthenticated client controls completely, and each one holds a thread until its
deadline. Without a cap forty addresses each holding their share of connections in the
handshake filled ``max_connections``, and the HTTPS port — ``/healthz`` and ``/metrics``
included — stopped answering anyone. With it a client address holds at most a few
handshakes, the whole server a bounded number, and connections beyond are closed at
accept, before a thread or a byte of TLS is spent on them.
"""

from __future__ import annotations

import threading
from collections import Counter


class HandshakeGate:
    """Counts handshakes in flight; :meth:`take` refuses beyond either cap."""

    def __init__(self, max_total: int, max_per_client: int) -> None:
        self._max_total = max_total
        self._max_per_client = max_per_client
        self._lock = threading.Lock()
        self._per_client: Counter[str] = Counter()

    def take(self, client: str) -> str | None:
        """Count one handshake of ``client``; the refusal reason when a cap is reached."""
        with self._lock:
            if self._per_client.total() >= self._max_total:
                return "tls_handshakes_full"
            if self._per_client[client] >= self._max_per_client:
                return "client_tls_handshake_cap"
            self._per_client[client] += 1
            return None

    def release(self, client: str) -> None:
        """The handshake of ``client`` is over (done, failed or timed out)."""
        with self._lock:
            self._per_client[client] -= 1
            if self._per_client[client] <= 0:
                del self._per_client[client]

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self._per_client.total()
