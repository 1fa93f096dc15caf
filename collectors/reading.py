"""Spans in, closed sessions out: the one way files (or spans held in memory) become
sessions for ``aem audit``, dataset tests and :func:`aem.sessions_from_spans`.

Why once: every one of them promises sessions "assembled exactly as ``aem audit``
assembles them". Written once, they cannot drift: the same readers (every bad record the
same issue), the same span clock, the same ``[assembly]`` limits (``idle_spans``,
``max_session_spans``), the same points at which complete sessions leave the assembler.

Why in ``collectors``: the audit, the dataset tests and the library API all import it,
and it needs nothing above the assembler and the readers. The ``[assembly]`` settings
come in as any object with their two attributes (:class:`AssemblyLimits`), so this
module does not import the configuration.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from aem.foundation.model import ClosedSession, InputIssue, SpanRecord
from collectors.assembler import SessionAssembler
from collectors.backends.base import SourceWindow, SpanSource
from collectors.readers import DEFAULT_MAX_RECORD_BYTES, find_trace_files, read_batches

# Closing sessions costs a pass over the open ones: do it every so many spans.
_POP_EVERY_SPANS = 2_000


class AssemblyLimits(Protocol):
    """What reading takes from ``[assembly]`` (:class:`aem.config.AssemblySettings`)."""

    @property
    def idle_spans(self) -> int: ...

    @property
    def span_limit(self) -> int | None: ...


class SessionReading:
    """Spans in input order in; each group of sessions out as soon as they close.

    The clock is the span counter: a session whose root span ended is complete after
    ``idle_spans`` further spans without one of its own. ``spans_read`` and
    ``peak_open`` (the most sessions open at once) are kept for the report; every issue
    (a bad record, a late span, a walk that could not enter a directory) is appended to
    ``issues`` at the point of the input where it was found.
    """

    def __init__(
        self,
        assembly: AssemblyLimits,
        issues: list[InputIssue],
        *,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        on_file_start: Callable[[str, int, int], None] | None = None,
    ) -> None:
        self.issues = issues
        self.max_record_bytes = max_record_bytes
        self.on_file_start = on_file_start
        self.assembler = SessionAssembler(
            idle=assembly.idle_spans,
            on_issue=issues.append,
            max_session_spans=assembly.span_limit,
        )
        self.spans_read = 0
        self.peak_open = 0
        self._check_every = max(1, min(_POP_EVERY_SPANS, assembly.idle_spans))

    def files(self, paths: Iterable[str]) -> Iterator[list[ClosedSession]]:
        """Every trace file under ``paths``, in order, then the sessions still open."""
        files, walk_issues = find_trace_files(paths)
        self.issues.extend(walk_issues)
        for number, path in enumerate(files, start=1):
            if self.on_file_start:
                self.on_file_start(path, number, len(files))
            for batch in read_batches(path, max_record_bytes=self.max_record_bytes):
                self.issues.extend(batch.issues)
                yield from self.spans(batch.spans)
        yield self.drain()

    def sources(
        self, sources: Iterable[SpanSource], window: SourceWindow
    ) -> Iterator[list[ClosedSession]]:
        """Every page of every backend source, in order, then the sessions still open.

        The same clock and the same checks as :meth:`files`: a page is to a backend what
        a batch of records is to a file, so the same spans close the same sessions.
        """
        for source in sources:
            for batch in source.batches(window, self.issues):
                yield from self.spans(batch)
        yield self.drain()

    def spans(self, spans: Iterable[SpanRecord]) -> Iterator[list[ClosedSession]]:
        """Add ``spans``; the sessions complete at each check (often none)."""
        for span in spans:
            self.spans_read += 1
            self.assembler.add(span, self.spans_read)
            if self.spans_read % self._check_every == 0:
                self.peak_open = max(self.peak_open, self.assembler.open_sessions)
                yield self.assembler.pop_complete(self.spans_read)

    def drain(self) -> list[ClosedSession]:
        """The end of the input: every session still open."""
        self.peak_open = max(self.peak_open, self.assembler.open_sessions)
        return self.assembler.drain()


def assemble_all(
    spans: Iterable[SpanRecord],
    span_limit: int | None,
    on_issue: Callable[[InputIssue], None] | None = None,
) -> list[ClosedSession]:
    """Spans that form one whole input (held in memory, or one session's spans gathered
    by Ray) as sessions: none closes before the last span, so none is split, and each
    holds at most ``span_limit`` spans, as in :class:`SessionReading`."""
    assembler = SessionAssembler(idle=math.inf, on_issue=on_issue, max_session_spans=span_limit)
    for clock, span in enumerate(spans, start=1):
        assembler.add(span, clock)
    return assembler.drain()
