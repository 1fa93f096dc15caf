"""The audit job: trace files in, one :class:`AuditReport` out, memory bounded.

Sessions are evaluated as soon as the assembler closes them, so only the sessions still
open (and the small per-session reports) are in memory, however large the input. With
``workers`` above 1 they are evaluated in worker processes (:mod:`aem.engines.pool`)
while this process reads on; the report is the same byte for byte. Files become sessions
through :class:`collectors.reading.SessionReading` (as for dataset tests), sessions
become outcomes through an engine (:mod:`aem.engines.seam`); this module only joins them.

What the readers could not use is never silently absent from a verdict: :func:`skipped_input`
counts the files, records and spans the report's input issues say were skipped, and where,
so the command line can say so (and exit 2 under ``--strict``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from aem.cases import Case
from aem.engines import available_cores
from aem.engines.remaining import RemainingWork
from aem.engines.seam import (
    EVALUATION_ERROR,
    DeferredEngine,
    Deliver,
    InProcessEngine,
    SessionEngine,
    SessionOutcome,
)
from aem.evaluate import Evaluator, build_report
from aem.foundation.model import AuditReport, ClosedSession, InputIssue, SessionReport
from aem.metrics.registry import ResolvedMetrics, resolve
from aem.settings import AemConfig
from collectors.backends import SourceWindow, SpanSource
from collectors.readers import DEFAULT_MAX_RECORD_BYTES, find_trace_files
from collectors.reading import SessionReading

__all__ = [
    "DEFAULT_MAX_RECORD_BYTES",
    "AuditProgress",
    "Outcomes",
    "SkippedInput",
    "audit_paths",
    "skipped_input",
    "unevaluated",
]

# Input issue kinds (collectors.readers) that mean a whole file, or the rest of one, was
# not read, and those that mean one record (a line, a document) was dropped. Notes about
# a record that was kept (a byte-order mark, replaced bytes) are neither.
SKIPPED_FILE_KINDS = frozenset({"unreadable", "not_regular_file"})
SKIPPED_RECORD_KINDS = frozenset(
    {"record_too_large", "bad_json", "truncated_json", "not_traces", "not_otlp"}
)


@dataclass
class AuditProgress:
    """Callbacks for a progress display; every one is optional."""

    on_file_start: Callable[[str, int, int], None] | None = None
    on_session: Callable[[SessionReport], None] | None = None
    issues: list[InputIssue] = field(default_factory=list)


class Outcomes:
    """Reports, and evaluation errors placed among the issues exactly where evaluating in
    this process would have appended them (the report must not depend on ``workers``)."""

    def __init__(self, issues: list[InputIssue], progress: AuditProgress) -> None:
        self.issues = issues
        self.progress = progress
        self.reports: list[SessionReport] = []
        self.inserted = 0

    def position(self) -> int:
        """Issues appended so far that are not evaluation errors placed here."""
        return len(self.issues) - self.inserted

    def add(self, outcome: SessionOutcome, position: int) -> None:
        if isinstance(outcome, InputIssue):
            self.issues.insert(position + self.inserted, outcome)
            self.inserted += 1
            return
        self.reports.append(outcome)
        if self.progress.on_session:
            self.progress.on_session(outcome)


def audit_paths(
    paths: Iterable[str],
    *,
    cases: Mapping[str, Case] | None = None,
    config: AemConfig | ResolvedMetrics | None = None,
    progress: AuditProgress | None = None,
    on_closed: Callable[[ClosedSession], None] | None = None,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    workers: int | None = 1,
    sources: Sequence[SpanSource] = (),
    window: SourceWindow | None = None,
    select: Callable[[ClosedSession], bool] | None = None,
) -> AuditReport:
    """Read every trace file under ``paths``, evaluate every session, rank root causes.

    ``sources`` (backends opened by :func:`collectors.backends.open_source`) are read
    instead of files when given, their spans restricted to ``window``; ``select`` keeps
    only the closed sessions it accepts (an incremental audit skips the ones it has
    already evaluated unchanged).

    ``on_closed`` sees each session's spans as it closes (scorecards total pipeline steps
    from them) without the audit holding on to spans it has evaluated. A record above
    ``max_record_bytes`` is reported and skipped without being held in memory. ``workers``
    above 1 evaluates in that many worker processes; ``None`` in one per core, started only
    once evaluating here has taken :data:`HERE_SECONDS` and at least
    :data:`POOL_MIN_SECONDS` are estimated to be left (a short audit starts none). The
    report does not change.
    ``config`` may be what the loader resolved (:func:`aem.config.load_resolved`): its
    metrics are then used as they are, not resolved again.
    """
    resolved = config if isinstance(config, ResolvedMetrics) else resolve(config or AemConfig())
    config = resolved.config
    progress = progress or AuditProgress()
    issues: list[InputIssue] = []
    outcomes = Outcomes(issues, progress)
    paths = list(paths)
    engine = _engine(workers, resolved, cases, outcomes.add, _remaining(workers, paths, sources))
    reading = SessionReading(
        config.assembly,
        issues,
        max_record_bytes=max_record_bytes,
        on_file_start=progress.on_file_start,
    )
    submit = _submitter(engine, outcomes, on_closed, select)
    groups = reading.sources(sources, window or SourceWindow()) if sources else reading.files(paths)
    try:
        for sessions in groups:
            submit(sessions)
        engine.finish()
    finally:
        engine.close()
    report = build_report(
        outcomes.reports,
        issues,
        spans_read=reading.spans_read,
        unsupported=config.verdicts.unsupported,
    )
    report.peak_open_sessions = reading.peak_open
    return report


# With the worker count left to AEM: evaluation this long here before worker processes
# start. Starting them costs about as much (a forkserver, AEM imported and the model
# loaded once per worker), so a short audit is done before a pool would be ready, and a
# long one loses at most this much of its parallel time.
HERE_SECONDS = 1.0
# ... and only when at least this much evaluation is estimated to be left (from the share
# of the input read, :mod:`aem.engines.remaining`): below it the pool's start (a worker
# building its evaluator and loading the model, the cores it takes from this process on a
# busy machine) is not won back. A 25-session tau-bench audit is about 5 s of evaluation.
POOL_MIN_SECONDS = 8.0


def _remaining(
    workers: int | None, paths: list[str], sources: Sequence[SpanSource]
) -> RemainingWork | None:
    """With the worker count left to AEM and files to read: what tells, from the share
    of their bytes read, how much evaluation is left (a backend's size is unknown)."""
    if workers is not None or sources:
        return None
    return RemainingWork(find_trace_files(paths)[0], POOL_MIN_SECONDS)


def _engine(
    workers: int | None,
    resolved: ResolvedMetrics,
    cases: Mapping[str, Case] | None,
    deliver: Deliver,
    remaining: RemainingWork | None = None,
) -> SessionEngine:
    """Evaluation here for one worker, in a process pool for more (each worker resolves
    the configuration once), here first and then in a pool when the count is left to
    AEM and enough work is left (``remaining``), its workers forked from this process
    after it has loaded what they need. The metrics were resolved before either: a
    plug-in that cannot load fails the audit before it starts."""
    if workers is not None and workers <= 1:
        return _here(resolved, cases, deliver)
    from aem.engines.pool import PoolEngine

    if workers is not None:
        return PoolEngine(workers, resolved.config, cases, deliver)
    cores = available_cores()
    if cores <= 1:
        return _here(resolved, cases, deliver)
    return DeferredEngine(
        _here(resolved, cases, deliver),
        lambda: PoolEngine(cores, resolved.config, cases, deliver, fork=True),
        HERE_SECONDS,
        remaining.worth_pool if remaining is not None else None,
    )


def _here(
    resolved: ResolvedMetrics, cases: Mapping[str, Case] | None, deliver: Deliver
) -> InProcessEngine:
    evaluator = Evaluator(resolved.config, cases, list(resolved.metrics))
    return InProcessEngine(evaluator, deliver)


def _submitter(
    engine: SessionEngine,
    outcomes: Outcomes,
    on_closed: Callable[[ClosedSession], None] | None,
    select: Callable[[ClosedSession], bool] | None = None,
) -> Callable[[list[ClosedSession]], None]:
    """What the reader calls with each group of closed sessions."""

    def submit(sessions: list[ClosedSession]) -> None:
        if select is not None:
            sessions = [s for s in sessions if select(s)]
        if not sessions:
            return
        if on_closed is not None:
            for session in sessions:
                on_closed(session)
        engine.submit(sessions, outcomes.position())

    return submit


@dataclass(frozen=True)
class SkippedInput:
    """What an audit did not read: files (or their rest), records, spans, and where; and
    the sessions it read but could not evaluate (their evaluation raised)."""

    files: list[str]
    records: list[str]
    spans: int
    sessions: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.files or self.records or self.spans or self.sessions)

    def summary(self, shown: int = 5) -> str:
        """``1 session not evaluated (s); 2 files (a, b), 1 record (c:4), 3 spans
        skipped``, at most ``shown`` places each."""
        parts = []
        for count, noun, places in (
            (len(self.files), "file", self.files),
            (len(self.records), "record", self.records),
        ):
            if count:
                parts.append(f"{count} {noun}{'s' * (count != 1)} ({_listed(places, shown)})")
        if self.spans:
            parts.append(f"{self.spans} span{'s' * (self.spans != 1)}")
        said = [", ".join(parts) + " skipped"] if parts else []
        if self.sessions:
            count = len(self.sessions)
            said.insert(
                0,
                f"{count} session{'s' * (count != 1)} not evaluated "
                f"({_listed(self.sessions, shown)})",
            )
        return "; ".join(said)


def _listed(places: list[str], shown: int) -> str:
    """``a, b, 3 more``: the first ``shown`` of ``places`` and how many were left out."""
    more = f", {len(places) - shown} more" if len(places) > shown else ""
    return ", ".join(places[:shown]) + more


def unevaluated(report: AuditReport) -> list[InputIssue]:
    """The ``evaluation_error`` issues of ``report``: sessions read but not evaluated."""
    return [i for i in report.issues if i.kind == EVALUATION_ERROR and i.session_id]


def skipped_input(report: AuditReport) -> SkippedInput:
    """The files, records and spans ``report``'s input issues say were not read, and
    the sessions whose evaluation raised."""
    files = [i.where() or "-" for i in report.issues if i.kind in SKIPPED_FILE_KINDS]
    records = [i.where() or "-" for i in report.issues if i.kind in SKIPPED_RECORD_KINDS]
    sessions = [str(i.session_id) for i in unevaluated(report)]
    return SkippedInput(files, records, report.skipped.total_spans_skipped, sessions)
