"""Admission by decoded bytes and open sessions: what one client, or all, may hold.

Why bytes and not span counts: an OTLP request of a few kilobytes on the wire can inflate
into megabytes of attribute values once decompressed and decoded, so a span counter says
nothing about memory. Every accepted span is weighed (its spool encoding's length) and
the weight stays charged until its session is evaluated — the ingest queue, the open
sessions, the evaluation queue and the ``spans`` table of the spool all hold exactly
these spans, so one number bounds them all.

Why sessions per client: traces that never end pin memory until the maximum session
lifetime. Capping open sessions per client address keeps one client from locking
everyone else out; the overall cap bounds the rest and is what ``/readyz`` reports as
saturation. A request that would open sessions beyond a cap is pushed back whole; spans
of sessions already open are always admitted (else a session could never finish).

Open sessions heavier than ``max_session_bytes``, and the heaviest open sessions while
they hold more than half of ``max_bytes_in_flight``, are evicted: the pipeline evaluates
them at once, marked ``cut``, which frees their bytes for everyone else.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from aem.foundation.model import SpanRecord
from collectors.assembler import session_key_of


@dataclass(frozen=True)
class BudgetLimits:
    max_bytes: int
    max_session_bytes: int
    max_sessions: int
    max_sessions_per_client: int


class OverBudget(Exception):
    """No room for the request now; ``reason`` is the metric label of the refusal."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(slots=True)
class _Session:
    client: str
    traces: set[str] = field(default_factory=set)
    bytes: int = 0


@dataclass(slots=True)
class Admission:
    """What one request added, so a failed spool write can take it back exactly."""

    new_traces: list[str]
    trace_bytes: dict[str, int]


def client_of(origin: str) -> str:
    """The client address of a span origin (``http:1.2.3.4``, ``grpc:ipv4:1.2.3.4:5678``)."""
    transport, _, rest = origin.partition(":")
    if transport != "grpc":
        return rest
    family, _, address = rest.partition(":")
    if family == "ipv6":
        return address.rsplit(":", 1)[0].strip("[]")
    return address.rsplit(":", 1)[0] if family == "ipv4" else rest


class Budget:
    """Thread-safe ledger of decoded bytes and open sessions (one per server)."""

    def __init__(self, limits: BudgetLimits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._trace_session: dict[str, str] = {}
        self._trace_bytes: dict[str, int] = {}
        self._sessions: dict[str, _Session] = {}
        self._per_client: Counter[str] = Counter()
        self._evict: set[str] = set()
        self.bytes_in_flight = 0  # accepted, not yet evaluated
        self.open_bytes = 0  # the part of it in sessions not yet handed to evaluation

    # ---- reading (metrics, readiness) --------------------------------------------------
    @property
    def open_sessions(self) -> int:
        return len(self._sessions)

    def clients_at_cap(self) -> int:
        cap = self.limits.max_sessions_per_client
        with self._lock:
            return sum(1 for n in self._per_client.values() if n >= cap)

    def saturation(self) -> str | None:
        """Why the server cannot take new sessions right now, or None."""
        if len(self._sessions) >= self.limits.max_sessions:
            return f"open sessions at the cap ({self.limits.max_sessions:,})"
        if self.bytes_in_flight >= self.limits.max_bytes * 0.95:
            return f"decoded bytes in flight near the cap ({self.limits.max_bytes:,})"
        return None

    # ---- admitting -----------------------------------------------------------------------
    def admit(
        self, client: str, spans: Sequence[SpanRecord], sizes: Sequence[int], *, force: bool = False
    ) -> Admission:
        """Charge a request, or raise :class:`OverBudget` (nothing charged).

        ``force`` (replay of the spool at start) charges without checking: those spans
        were acknowledged before and must be evaluated.
        """
        per_trace: dict[str, int] = {}
        keyed: dict[str, str] = {}
        for span, size in zip(spans, sizes, strict=True):
            per_trace[span.trace_id] = per_trace.get(span.trace_id, 0) + size
            if span.trace_id not in keyed:
                key = session_key_of(span)
                if key is not None:
                    keyed[span.trace_id] = key[2]
        total = sum(per_trace.values())
        with self._lock:
            new_traces = [t for t in per_trace if t not in self._trace_session]
            sessions_of = {t: keyed.get(t, "\0" + t) for t in new_traces}
            new_sessions = {s for s in sessions_of.values() if s not in self._sessions}
            if not force:
                self._check(client, total, len(new_sessions))
            for trace_id, session_id in sessions_of.items():
                entry = self._sessions.get(session_id)
                if entry is None:
                    entry = self._sessions[session_id] = _Session(client)
                    self._per_client[client] += 1
                entry.traces.add(trace_id)
                self._trace_session[trace_id] = session_id
            for trace_id, size in per_trace.items():
                self._charge(trace_id, size)
            self.bytes_in_flight += total
            self.open_bytes += total
        return Admission(new_traces, per_trace)

    def _check(self, client: str, total: int, new_sessions: int) -> None:
        limits = self.limits
        if self.bytes_in_flight + total > limits.max_bytes and self.bytes_in_flight > 0:
            raise OverBudget(
                "memory_budget",
                f"decoded spans in flight would exceed {limits.max_bytes:,} bytes; "
                "evaluation is behind, retry later",
            )
        if not new_sessions:
            return
        if self._per_client[client] + new_sessions > limits.max_sessions_per_client:
            raise OverBudget(
                "client_session_cap",
                f"client {client} holds {self._per_client[client]:,} open sessions "
                f"(cap {limits.max_sessions_per_client:,}); retry once some have ended",
            )
        if len(self._sessions) + new_sessions > limits.max_sessions:
            raise OverBudget(
                "session_cap",
                f"{len(self._sessions):,} sessions open (cap {limits.max_sessions:,}); retry later",
            )

    def _charge(self, trace_id: str, size: int) -> None:
        self._trace_bytes[trace_id] = self._trace_bytes.get(trace_id, 0) + size
        session_id = self._trace_session[trace_id]
        entry = self._sessions[session_id]
        entry.bytes += size
        if entry.bytes > self.limits.max_session_bytes:
            self._evict.add(session_id)

    def rollback(self, admission: Admission) -> None:
        """Undo :meth:`admit` for a request that was not acknowledged after all."""
        with self._lock:
            for trace_id, size in admission.trace_bytes.items():
                if trace_id not in self._trace_session:
                    continue
                self._trace_bytes[trace_id] -= size
                self._sessions[self._trace_session[trace_id]].bytes -= size
                self.bytes_in_flight -= size
                self.open_bytes -= size
            self._drop_traces(admission.new_traces, keep_bytes=False)

    # ---- closing -------------------------------------------------------------------------
    def close_traces(self, trace_ids: Iterable[str]) -> int:
        """Traces left the open sessions (evaluation queue, or dropped as late).

        Returns their bytes, which stay charged until :meth:`release` (after evaluation).
        """
        with self._lock:
            return self._drop_traces(list(trace_ids), keep_bytes=True)

    def _drop_traces(self, trace_ids: list[str], *, keep_bytes: bool) -> int:
        freed = 0
        for trace_id in trace_ids:
            session_id = self._trace_session.pop(trace_id, None)
            size = self._trace_bytes.pop(trace_id, 0)
            if session_id is None:
                continue
            freed += size
            entry = self._sessions[session_id]
            entry.traces.discard(trace_id)
            entry.bytes -= size
            if keep_bytes:
                self.open_bytes -= size
            if not entry.traces:
                del self._sessions[session_id]
                self._evict.discard(session_id)
                self._per_client[entry.client] -= 1
                if self._per_client[entry.client] <= 0:
                    del self._per_client[entry.client]
        return freed

    def release(self, size: int) -> None:
        """Bytes of evaluated (or dropped) spans leave the budget."""
        with self._lock:
            self.bytes_in_flight -= size

    def evictions(self) -> list[list[str]]:
        """Trace ids of the open sessions to evaluate now, marked cut (see module doc)."""
        with self._lock:
            chosen = [s for s in self._evict if s in self._sessions]
            self._evict.clear()
            budget = self.limits.max_bytes // 2
            held = self.open_bytes - sum(self._sessions[s].bytes for s in chosen)
            if held > budget:
                rest = sorted(
                    (s for s in self._sessions if s not in chosen),
                    key=lambda s: self._sessions[s].bytes,
                    reverse=True,
                )
                for session_id in rest:
                    if held <= budget:
                        break
                    chosen.append(session_id)
                    held -= self._sessions[session_id].bytes
            return [sorted(self._sessions[s].traces) for s in chosen]
