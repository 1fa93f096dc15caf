"""Settling a pull: read on until the backend stopped receiving, and say what still looks open.

Why: a backend stores spans some time after the agent sent them (Phoenix queues its
inserts; an exporter batches for seconds), and a root span ends last. A pull right after
an agent ran read 132 of 429 spans, exited 0 and said only "orphan_span=1".

What ``aem audit --from … --settle SECONDS`` does, simple enough to state in a sentence:
when a span read started in the last :data:`LOOKBACK_SECONDS` (the backend is in use), the
pull reads again the spans that started in that time (or the pull's window, if
narrower), adding those it had not read, ``SECONDS`` after the previous read began and
not before the newest span is ``SECONDS`` old — until a re-read adds nothing (settled),
or :func:`max_wait` has passed (not settled, said). A read of spans that all started
earlier makes no request more; a read a bound stopped is not extended. The spans a
re-read adds join their sessions as any span would: the sessions of a backend read stay
open until the read ends. What it cannot see: a run none of whose spans is stored yet,
in a project idle for the lookback, looks like no run at all.

After the read, a session *looks unfinished* when a span of it has a parent that was not
read (an orphan: its parent may not be stored yet) or ended less than ``SECONDS`` before
the last read. Neither proves the read missed something; both are said, with how to wait,
and ``--strict`` makes them exit 2.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from aem.foundation.model import InputIssue, SpanRecord
from collectors.backends.base import FUTURE_TOLERANCE_NANOS as FUTURE
from collectors.backends.base import SourceWindow, SpanSource

NANOS = 1_000_000_000
DEFAULT_SETTLE_SECONDS = 5.0  # a pull reads on until its newest span is this old
LOOKBACK_SECONDS = 600.0  # a re-read asks for the spans that started this long before it
MIN_MAX_WAIT_SECONDS = 30.0  # the wait ends after max(this, 6 x settle)

# Told before each wait: the source, the newest end's age and the pause, in seconds.
Waiting = Callable[[str, float, float], None]


def max_wait(settle_seconds: float) -> float:
    """How long a pull reads on at most, waiting for its backend to settle."""
    return max(MIN_MAX_WAIT_SECONDS, 6 * settle_seconds)


def _key(span: SpanRecord) -> tuple[str, str, int]:
    return span.trace_id, span.span_id, span.end_unix_nano


@dataclass
class Watched:
    """What the reads of one pull saw, and how waiting for the backend went.

    ``newest_end``: each trace's newest span end; ``recent``: the spans that started
    within :data:`LOOKBACK_SECONDS` of the read (a re-read adds only spans not in it).
    """

    settle_seconds: float = DEFAULT_SETTLE_SECONDS
    on_wait: Waiting | None = None
    clock: Callable[[], int] = time.time_ns
    sleep: Callable[[float], None] = time.sleep
    read_at: int = 0  # when the latest read (or re-read) began
    newest_end: dict[str, int] = field(default_factory=dict)
    recent: set[tuple[str, str, int]] = field(default_factory=set)
    in_use: bool = False  # a span read started within the lookback
    rereads: int = 0
    added: int = 0
    waited_seconds: float = 0.0
    settled: bool = True

    def note(self, spans: Sequence[SpanRecord]) -> list[SpanRecord]:
        """Record ``spans``; those a re-read had read already are left out."""
        since = self.read_at - int(LOOKBACK_SECONDS * NANOS)
        fresh = []
        for span in spans:
            key = _key(span)
            if key in self.recent:
                continue
            if span.start_unix_nano >= since:
                self.recent.add(key)
                # A start dated by a wrong clock (2099) is no sign the backend is in use.
                self.in_use = self.in_use or span.start_unix_nano < self.read_at + FUTURE
            end = span.end_unix_nano
            # A span dated by a wrong clock (reported as future_start) is never "recent".
            if end > self.newest_end.get(span.trace_id, 0) and end < self.read_at + FUTURE:
                self.newest_end[span.trace_id] = end
            fresh.append(span)
        return fresh

    def newest(self) -> int | None:
        return max(self.newest_end.values(), default=None)

    def recent_traces(self) -> set[str]:
        """Traces with a span that ended less than the settle time before the last read."""
        bound = self.read_at - int(self.settle_seconds * NANOS)
        return {trace for trace, end in self.newest_end.items() if end > bound}

    def summary(self, source: str) -> str | None:
        """What waiting came to, a line for the run to say (None: it did not wait)."""
        if self.settled and not self.rereads:
            return None
        if self.settled:
            return (
                f"{source}: read again {self.rereads} time(s) over {self.waited_seconds:.1f} s "
                f"until the backend settled (--settle {self.settle_seconds:g}): "
                f"{self.added} span(s) more"
            )
        return (
            f"{source}: the backend had not settled after {self.waited_seconds:.0f} s "
            f"({self.rereads} re-read(s), {self.added} span(s) more; spans still arriving, or "
            "ending later than the wait allows); what was read is audited"
        )


class WatchedSource:
    """A source whose read is watched (:class:`Watched`) and, at its end, extended until
    the backend settled (module docstring); everything else is the source's own."""

    def __init__(self, source: SpanSource, watched: Watched) -> None:
        self._source = source
        self.watched = watched

    @property
    def name(self) -> str:
        return self._source.name

    def batches(self, window: SourceWindow, issues: list[InputIssue]) -> Iterator[list[SpanRecord]]:
        watched = self.watched
        watched.read_at = watched.clock()
        before = len(issues)
        for batch in self._source.batches(window, issues):
            yield watched.note(batch)
        stopped = any(i.kind == "unreadable" for i in issues[before:])
        if watched.settle_seconds > 0 and not stopped:
            yield from self._settle(window, issues)

    def _settle(self, window: SourceWindow, issues: list[InputIssue]) -> Iterator[list[SpanRecord]]:
        """Re-read the recent spans, each re-read ``settle`` seconds after the previous
        read began, until one adds nothing and the newest span is settle-old, or
        :func:`max_wait` passed; no request when no span read started recently."""
        watched = self.watched
        if not watched.in_use:
            return
        settle = watched.settle_seconds
        start = watched.clock()
        deadline = start + int(max_wait(settle) * NANOS)
        added: int | None = None  # spans the latest re-read added (None: none yet)
        while True:
            now, newest = watched.clock(), watched.newest() or 0
            until_quiet = max(0.0, (newest + settle * NANOS - now) / NANOS)
            if added == 0 and until_quiet == 0:
                break
            # The count must hold still over a whole settle time, not only the newest age.
            pause = max(until_quiet, settle - (now - watched.read_at) / NANOS)
            if now + int(pause * NANOS) > deadline:
                watched.settled = False
                break
            self._tell(newest, now, pause)
            watched.sleep(pause)
            added = 0
            for batch in self._reread(window, issues):
                added += len(batch)
                yield batch
        watched.waited_seconds = (watched.clock() - start) / NANOS

    def _tell(self, newest: int, now: int, pause: float) -> None:
        watched = self.watched
        if watched.on_wait is not None:
            watched.on_wait(self.name, (now - newest) / NANOS, pause)

    def _reread(self, window: SourceWindow, issues: list[InputIssue]) -> Iterator[list[SpanRecord]]:
        """The spans started within the lookback (and ``window``) not read before."""
        watched = self.watched
        watched.read_at = watched.clock()
        watched.rereads += 1
        since = watched.read_at - int(LOOKBACK_SECONDS * NANOS)
        if window.since_unix_nano is not None:
            since = max(since, window.since_unix_nano)
        for batch in self._source.batches(SourceWindow(since, window.until_unix_nano), issues):
            fresh = watched.note(batch)
            watched.added += len(fresh)
            if fresh:
                yield fresh

    def __getattr__(self, attribute: str) -> object:
        return getattr(self._source, attribute)


@dataclass(frozen=True)
class Unfinished:
    """Sessions of a read that look unfinished, by why (a session may be in both)."""

    orphaned: list[str]
    recent: list[str]
    settle_seconds: float
    sessions: int

    @property
    def count(self) -> int:
        return len(set(self.orphaned) | set(self.recent))

    def summary(self, shown: int = 3) -> str:
        parts = []
        if self.orphaned:
            parts.append(f"{len(self.orphaned)} with a span whose parent was not read")
        if self.recent:
            parts.append(
                f"{len(self.recent)} with spans that ended less than "
                f"{self.settle_seconds:g} s before the read"
            )
        named = sorted(set(self.orphaned) | set(self.recent))
        more = f", {len(named) - shown} more" if len(named) > shown else ""
        return (
            f"{self.count} of {self.sessions} session(s) look unfinished "
            f"({'; '.join(parts)}: {', '.join(named[:shown])}{more}); the agent may still be "
            "running or the backend still storing its spans: run again later, or with a "
            f"larger --settle (now {self.settle_seconds:g} s)"
        )


def unfinished(
    sessions: Sequence[tuple[str, Sequence[str]]],
    issues: Sequence[InputIssue],
    watched: Watched,
) -> Unfinished:
    """Which of ``sessions`` (id, trace ids) look unfinished after a read ``watched``."""
    recent_traces = watched.recent_traces()
    ids = {session_id for session_id, _ in sessions}
    orphaned = sorted(
        {str(i.session_id) for i in issues if i.kind == "orphan_span" and i.session_id in ids}
    )
    recent = sorted(
        session_id for session_id, traces in sessions if recent_traces.intersection(traces)
    )
    return Unfinished(orphaned, recent, watched.settle_seconds, len(sessions))


__all__ = [
    "DEFAULT_SETTLE_SECONDS",
    "LOOKBACK_SECONDS",
    "Unfinished",
    "Watched",
    "WatchedSource",
    "max_wait",
    "unfinished",
]
