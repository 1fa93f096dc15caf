"""The audit job: trace files in, one :class:`AuditReport` out, memory bounded.

Sessions are evaluated as soon as the assembler closes them, so only the sessions still
open (and the small per-session reports) are in memory, however large the input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from aem.cases import Case
from aem.config import AemConfig
from aem.evaluate import Evaluator, build_report
from aem.model import AuditReport, ClosedSession, InputIssue, SessionReport
from collectors.assembler import SessionAssembler
from collectors.readers import DEFAULT_MAX_RECORD_BYTES, find_trace_files, read_batches

_POP_EVERY_SPANS = 2_000


@dataclass
class AuditProgress:
    """Callbacks for a progress display; every one is optional."""

    on_file_start: Callable[[str, int, int], None] | None = None
    on_session: Callable[[SessionReport], None] | None = None
    issues: list[InputIssue] = field(default_factory=list)


def audit_paths(
    paths: Iterable[str],
    *,
    cases: Mapping[str, Case] | None = None,
    config: AemConfig | None = None,
    progress: AuditProgress | None = None,
    on_closed: Callable[[ClosedSession], None] | None = None,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
) -> AuditReport:
    """Read every trace file under ``paths``, evaluate every session, rank root causes.

    ``on_closed`` sees each session's spans as it closes (scorecards total pipeline steps
    from them) without the audit holding on to spans it has evaluated. A record above
    ``max_record_bytes`` is reported and skipped without being held in memory.
    """
    config = config or AemConfig()
    progress = progress or AuditProgress()
    evaluator = Evaluator(config, cases)
    issues: list[InputIssue] = []
    assembler = SessionAssembler(idle=config.assembly.idle_spans, on_issue=issues.append)
    reports: list[SessionReport] = []

    def evaluate_all(sessions: list[ClosedSession]) -> None:
        for session in sessions:
            if on_closed is not None:
                on_closed(session)
            try:
                report = evaluator.evaluate(session)
            except Exception as exc:  # one session must not end the audit
                issues.append(evaluation_error(session, exc))
                continue
            reports.append(report)
            if progress.on_session:
                progress.on_session(report)

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
                    evaluate_all(assembler.pop_complete(clock))
    peak_open = max(peak_open, assembler.open_sessions)
    evaluate_all(assembler.drain())
    report = build_report(reports, issues, spans_read=clock)
    report.peak_open_sessions = peak_open
    return report


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
