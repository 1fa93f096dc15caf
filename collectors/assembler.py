"""Group spans into agent sessions as they arrive, and say when a session is complete.

One implementation serves both the audit path (files: the clock is a span counter) and
live mode (the clock is ``time.monotonic()``): a session is complete when every trace
in it has a root span that ended and no span of it arrived for ``idle`` clock units, or
when ``max_lifetime`` passed since its first span (then it is marked ``cut``).

Session key, first hit wins, in the order the registered dialects declare
(``docs/dialects.md``): ``gen_ai.conversation.id`` → ``session.id`` →
``traceloop.association.properties.session_id`` → ``langfuse.session.id`` → … → the trace
id (flagged as a fallback). Spans of one trace share the trace's key even when only some
of them carry it; traces with the same key form one session.

A span arriving after its session was evaluated is *late*: counted, reported, not merged
(the verdict is out). With ``revisions=True`` (``aem serve``) a NEW trace naming an
evaluated session instead opens that session again, to be evaluated as a revision: a
developer iterating on an agent reuses one conversation id for new runs. Spans of an
evaluated trace, and anything after a cut, stay late either way (see
:class:`SessionAssembler`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from aem.foundation.model import ClosedSession, InputIssue, SpanRecord
from collectors.dialects.registry import session_keys
from collectors.limits import DEFAULT_MAX_SESSION_SPANS

FALLBACK_KEY = "trace_id"
# Spans held for one session; the rest are counted, not kept, and the session is
# evaluated on the first ones and marked cut. Configured by [assembly] max_session_spans.


def session_key_of(span: SpanRecord) -> tuple[int, str, str] | None:
    """``(rank, key name, value)`` of the best session attribute on a span, if any.

    Rank 0 is the best key any dialect declares, so a trace keyed at rank 0 is settled.
    """
    attributes = span.attributes
    resource = span.resource
    for priority, key in enumerate(session_keys()):
        value = attributes.get(key)
        if value is None:
            value = resource.get(key)
        if value is not None and value != "":
            return priority, key, str(value)
    return None


@dataclass(slots=True)
class _Trace:
    trace_id: str
    spans: list[SpanRecord] = field(default_factory=list)
    key: tuple[int, str, str] | None = None
    root_ended: bool = False
    first_seen: float = 0.0
    last_seen: float = 0.0
    dropped: int = 0  # spans past the session's span limit: counted, not kept

    @property
    def session_id(self) -> str:
        return self.key[2] if self.key else self.trace_id


class SessionAssembler:
    """Collect spans by trace, traces by session key; hand out complete sessions.

    ``revisions``: whether a new trace (its id never closed) naming a session that was
    evaluated and not cut opens that session again instead of being late. Off for files
    (``aem audit``: a file's session is whole, a second part under its id is an anomaly to
    count); on for ``aem serve``, where the same conversation id comes back with new runs
    and each return deserves a verdict. Never reopened, in either mode: a closed *trace*
    (its spans are stragglers or re-sends of a run already evaluated) and a session that
    was *cut* (byte budget, lifetime, ``max_session_spans``: further spans are the same run
    past its limit — reopening would evaluate a 1 M-span stream as endless revisions).

    >>> from aem.foundation.model import SpanRecord
    >>> asm = SessionAssembler(idle=2)
    >>> asm.add(SpanRecord("a" * 32, "b" * 16, None, "root", end_unix_nano=5,
    ...                    attributes={"session.id": "s1"}), now=0)
    >>> asm.pop_complete(now=1), [s.session_id for s in asm.pop_complete(now=2)]
    ([], ['s1'])
    """

    def __init__(
        self,
        idle: float,
        max_lifetime: float | None = None,
        on_issue: Callable[[InputIssue], None] | None = None,
        *,
        remember_closed: int = 100_000,
        max_session_spans: int | Literal["default"] | None = "default",
        revisions: bool = False,
    ) -> None:
        self.idle = idle
        self.revisions = revisions
        # "default" reads the module's limit when built; None holds every span.
        self.max_session_spans = (
            DEFAULT_MAX_SESSION_SPANS if max_session_spans == "default" else max_session_spans
        )
        self._held: dict[str, int] = {}  # spans kept per open session id
        self.max_lifetime = max_lifetime
        self.on_issue = on_issue
        self._traces: dict[str, _Trace] = {}
        # Ids of evaluated sessions/traces, to tell late spans from new sessions; bounded so
        # a long-running server does not grow without limit (oldest forgotten first). A
        # session's value says whether it was cut: a cut session is never reopened.
        self.remember_closed = remember_closed
        self._closed_traces: OrderedDict[str, bool] = OrderedDict()
        self._closed_sessions: OrderedDict[str, bool] = OrderedDict()
        self.late_spans = 0
        self.spans_added = 0

    @property
    def open_sessions(self) -> int:
        return len({t.session_id for t in self._traces.values()})

    @property
    def open_spans(self) -> int:
        return sum(len(t.spans) for t in self._traces.values())

    def add(self, span: SpanRecord, now: float) -> None:
        trace = self._traces.get(span.trace_id)
        if trace is None:
            key = session_key_of(span)
            session_id = key[2] if key else span.trace_id
            if span.trace_id in self._closed_traces or (
                key is not None and self._refuses(session_id)
            ):
                self._late(span, session_id)
                return
            trace = self._traces[span.trace_id] = _Trace(span.trace_id, first_seen=now, key=key)
        elif trace.key is None or trace.key[0] > 0:
            key = session_key_of(span)
            if key is not None and (trace.key is None or key[0] < trace.key[0]):
                if self._refuses(key[2]) and key[2] != trace.session_id:
                    self._late_trace(trace, span, key[2])
                    return
                self._move_held(trace, key)
        self._keep(trace, span)
        trace.last_seen = now
        if span.parent_span_id is None and span.end_unix_nano:
            trace.root_ended = True
        self.spans_added += 1

    def _refuses(self, session_id: str) -> bool:
        """Whether a new trace naming ``session_id`` is late: its session was evaluated,
        and it may not be reopened (revisions off, or the session was cut)."""
        if session_id not in self._closed_sessions:
            return False
        return not self.revisions or self._closed_sessions[session_id]

    def _keep(self, trace: _Trace, span: SpanRecord) -> None:
        """Hold the span, unless its session already holds the most spans it may."""
        held = self._held.get(trace.session_id, 0)
        if self.max_session_spans is not None and held >= self.max_session_spans:
            trace.dropped += 1
            return
        trace.spans.append(span)
        self._held[trace.session_id] = held + 1

    def _move_held(self, trace: _Trace, key: tuple[int, str, str]) -> None:
        """A better session key moves the trace (and its held spans) to another session."""
        old = trace.session_id
        trace.key = key
        if old != trace.session_id and trace.spans:
            self._held[old] -= len(trace.spans)
            if not self._held[old]:
                del self._held[old]
            self._held[trace.session_id] = self._held.get(trace.session_id, 0) + len(trace.spans)

    def _late_trace(self, trace: _Trace, span: SpanRecord, session_id: str) -> None:
        """A trace whose session key arrives after that session was evaluated (its first
        spans carried no key) and may not reopen it (:meth:`_refuses`): all its spans are
        late, not a second session of that id."""
        del self._traces[trace.trace_id]
        self._remember(self._closed_traces, trace.trace_id)
        held = self._held.get(trace.session_id, 0) - len(trace.spans)
        if held > 0:
            self._held[trace.session_id] = held
        else:
            self._held.pop(trace.session_id, None)
        self.spans_added -= len(trace.spans)  # held no longer: in flight counts drop them
        for late in [*trace.spans, span]:
            self._late(late, session_id)

    def _late(self, span: SpanRecord, session_id: str) -> None:
        self.late_spans += 1
        if self.on_issue is not None:
            self.on_issue(
                InputIssue.at_span(
                    "late_span",
                    f"span {span.span_id} arrived after session {session_id!r} "
                    "was evaluated; counted, not merged",
                    span,
                    session_id=session_id,
                    spans_skipped=1,
                )
            )

    def _remember(self, closed: OrderedDict[str, bool], key: str, cut: bool = False) -> None:
        closed[key] = cut
        closed.move_to_end(key)  # a session closed again (a revision) is remembered anew
        while len(closed) > self.remember_closed:
            closed.popitem(last=False)

    def _group(self) -> dict[str, list[_Trace]]:
        groups: dict[str, list[_Trace]] = {}
        for trace in self._traces.values():
            groups.setdefault(trace.session_id, []).append(trace)
        return groups

    def pop_complete(self, now: float) -> list[ClosedSession]:
        """Sessions that are complete at ``now``; they leave the assembler."""
        done: list[ClosedSession] = []
        for session_id, traces in self._group().items():
            last = max(t.last_seen for t in traces)
            first = min(t.first_seen for t in traces)
            cut = self.max_lifetime is not None and now - first >= self.max_lifetime
            complete = all(t.root_ended for t in traces) and now - last >= self.idle
            if complete or cut:
                done.append(self._close(session_id, traces, cut=cut and not complete))
        return done

    def drain(self) -> list[ClosedSession]:
        """Every session still open (end of input, or shutdown)."""
        return [self._close(sid, traces, cut=False) for sid, traces in self._group().items()]

    def _close(self, session_id: str, traces: list[_Trace], *, cut: bool) -> ClosedSession:
        for trace in traces:
            del self._traces[trace.trace_id]
            self._remember(self._closed_traces, trace.trace_id)
        dropped = sum(t.dropped for t in traces)
        self._remember(self._closed_sessions, session_id, cut=cut or dropped > 0)
        self._held.pop(session_id, None)
        keys = [t.key for t in traces if t.key is not None]
        key_name = min(keys)[1] if keys else FALLBACK_KEY
        ordered = sorted(traces, key=lambda t: t.first_seen)
        spans = [span for trace in ordered for span in trace.spans]
        if not dropped:
            return ClosedSession(session_id, key_name, not keys, spans, cut=cut)
        return ClosedSession(
            session_id,
            key_name,
            not keys,
            spans,
            cut=True,
            issues=[self._cut_issue(session_id, spans, dropped)],
        )

    def _cut_issue(self, session_id: str, spans: list[SpanRecord], dropped: int) -> InputIssue:
        """Why a session was evaluated on its first spans only: the limit, by name."""
        first = spans[0] if spans else None
        return InputIssue(
            kind="session_cut",
            message=(
                f"session {session_id!r} has {len(spans) + dropped} spans, over the limit of "
                f"{self.max_session_spans} (max_session_spans); the first {len(spans)} "
                f"were evaluated, {dropped} were counted and skipped"
            ),
            source=first.origin.source if first and first.origin else None,
            session_id=session_id,
            trace_id=first.trace_id if first else None,
            spans_skipped=dropped,
        )
