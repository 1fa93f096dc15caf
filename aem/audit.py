"""The audit job: trace files in, one :class:`AuditReport` out, memory bounded.

Sessions are evaluated as soon as the assembler closes them, so only the sessions still
open (and the small per-session reports) are in memory, however large the input. With
``workers`` above 1 they are evaluated in worker processes (:mod:`aem.engines.pool`)
while this process reads on; the report is the same byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from aem.cases import Case
from aem.config import AemConfig
from aem.evaluate import Evaluator, build_report
from aem.model import AuditReport, ClosedSession, InputIssue, SessionReport
from collectors.assembler import SessionAssembler
from collectors.readers import DEFAULT_MAX_RECORD_BYTES, find_trace_files, read_batches

_POP_EVERY_SPANS = 2_000

# What evaluating one closed session gives: its report, or why it could not be evaluated.
Outcome = SessionReport | InputIssue
# Where an engine hands an outcome, with the issue position recorded when it was submitted.
Deliver = Callable[[Outcome, int], None]


@dataclass
class AuditProgress:
    """Callbacks for a progress display; every one is optional."""

    on_file_start: Callable[[str, int, int], None] | None = None
    on_session: Callable[[SessionReport], None] | None = None
    issues: list[InputIssue] = field(default_factory=list)


class SessionEngine(Protocol):
    """Evaluates closed sessions and delivers every outcome, in submission order."""

    def submit(self, sessions: list[ClosedSession], position: int) -> None: ...

    def finish(self) -> None: ...

    def close(self) -> None: ...


class InProcessEngine:
    """``--workers 1``: evaluate each session here, as it is submitted."""

    def __init__(self, evaluator: Evaluator, deliver: Deliver) -> None:
        self.evaluator = evaluator
        self.deliver = deliver

    def submit(self, sessions: list[ClosedSession], position: int) -> None:
        for session in sessions:
            self.deliver(evaluate_closed(self.evaluator, session), position)

    def finish(self) -> None:
        """Nothing is pending: every session was evaluated when submitted."""

    def close(self) -> None:
        """Nothing to release."""


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

    def add(self, outcome: Outcome, position: int) -> None:
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
    config: AemConfig | None = None,
    progress: AuditProgress | None = None,
    on_closed: Callable[[ClosedSession], None] | None = None,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    workers: int = 1,
) -> AuditReport:
    """Read every trace file under ``paths``, evaluate every session, rank root causes.

    ``on_closed`` sees each session's spans as it closes (scorecards total pipeline steps
    from them) without the audit holding on to spans it has evaluated. A record above
    ``max_record_bytes`` is reported and skipped without being held in memory. ``workers``
    above 1 evaluates in that many worker processes; the report does not change.
    """
    config = config or AemConfig()
    progress = progress or AuditProgress()
    issues: list[InputIssue] = []
    outcomes = Outcomes(issues, progress)
    engine = _engine(workers, config, cases, outcomes.add)
    try:
        clock, peak_open = _read(
            paths,
            config,
            progress,
            issues,
            max_record_bytes,
            _submitter(engine, outcomes, on_closed),
        )
        engine.finish()
    finally:
        engine.close()
    report = build_report(outcomes.reports, issues, spans_read=clock)
    report.peak_open_sessions = peak_open
    return report


def _engine(
    workers: int, config: AemConfig, cases: Mapping[str, Case] | None, deliver: Deliver
) -> SessionEngine:
    """Evaluation here for one worker, in a process pool for more. The evaluator is built
    here either way: a plug-in that cannot load fails the audit before it starts."""
    evaluator = Evaluator(config, cases)
    if workers <= 1:
        return InProcessEngine(evaluator, deliver)
    from aem.engines.pool import PoolEngine

    return PoolEngine(workers, config, cases, deliver)


def _submitter(
    engine: SessionEngine,
    outcomes: Outcomes,
    on_closed: Callable[[ClosedSession], None] | None,
) -> Callable[[list[ClosedSession]], None]:
    """What the reader calls with each group of closed sessions."""

    def submit(sessions: list[ClosedSession]) -> None:
        if not sessions:
            return
        if on_closed is not None:
            for session in sessions:
                on_closed(session)
        engine.submit(sessions, outcomes.position())

    return submit


def _read(
    paths: Iterable[str],
    config: AemConfig,
    progress: AuditProgress,
    issues: list[InputIssue],
    max_record_bytes: int,
    submit: Callable[[list[ClosedSession]], None],
) -> tuple[int, int]:
    """Read every file, hand closed sessions to ``submit``; (spans read, peak open)."""
    assembler = SessionAssembler(
        idle=config.assembly.idle_spans,
        on_issue=issues.append,
        max_session_spans=config.assembly.span_limit,
    )
    files, walk_issues = find_trace_files(paths)
    issues.extend(walk_issues)
    clock = 0
    peak_open = 0
    # Closing sessions costs a pass over the open ones: do it every so many spans.
    check_every = max(1, min(_POP_EVERY_SPANS, config.assembly.idle_spans))
    for number, path in enumerate(files, start=1):
        if progress.on_file_start:
            progress.on_file_start(path, number, len(files))
        for batch in read_batches(path, max_record_bytes=max_record_bytes):
            issues.extend(batch.issues)
            for span in batch.spans:
                clock += 1
                assembler.add(span, clock)
                if clock % check_every == 0:
                    peak_open = max(peak_open, assembler.open_sessions)
                    submit(assembler.pop_complete(clock))
    peak_open = max(peak_open, assembler.open_sessions)
    submit(assembler.drain())
    return clock, peak_open


def evaluate_closed(evaluator: Evaluator, session: ClosedSession) -> Outcome:
    """One session's report, or an ``evaluation_error`` issue when evaluating it raised:
    the same in this process and in a worker, so neither path can end the audit early."""
    try:
        return evaluator.evaluate(session)
    except Exception as exc:  # one session must not end the audit
        return evaluation_error(session, exc)


def evaluation_error(session: ClosedSession, exc: Exception) -> InputIssue:
    """A session whose evaluation raised, as an issue naming where its first span came
    from: the other sessions are still evaluated, and the run still ends with a report.
    The decoder refuses what it knows would raise; this is for what it does not know."""
    origin = next((s.origin for s in session.spans if s.origin is not None), None)
    return InputIssue(
        kind="evaluation_error",
        message=(
            f"session {session.session_id!r} not evaluated: {type(exc).__name__}: {exc}"[:2000]
        ),
        source=origin.source if origin else None,
        line=origin.line if origin else None,
        session_id=session.session_id,
        spans_skipped=len(session.spans),
    )
