"""Evaluate sessions: metrics per turn → propagation → the three output layers.

``evaluate_session`` is pure (no I/O): the audit command, live mode and library users
all call it, so a verdict is the same whichever way the spans arrived.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aem.cases import Case
from aem.config import AemConfig
from aem.graph import attach_graph
from aem.metrics.base import OBSERVATION, Metric, MetricContext, role_of
from aem.metrics.registry import resolve_metrics
from aem.model import (
    AuditReport,
    ClosedSession,
    InputIssue,
    Label,
    MetricResult,
    Outcome,
    RootCause,
    Session,
    SessionReport,
    SkippedSummary,
    Turn,
    TurnVerdict,
)
from aem.propagation import propagate_failures
from aem.ranking import categorize, rank_root_causes, signature


class Evaluator:
    """Holds what is expensive to set up once (metrics, the comparator and its model)."""

    def __init__(
        self,
        config: AemConfig | None = None,
        cases: Mapping[str, Case] | None = None,
        metrics: list[Metric] | None = None,
    ) -> None:
        self.config = config or AemConfig()
        self.cases = dict(cases or {})
        self.metrics = metrics if metrics is not None else resolve_metrics(self.config)
        self._comparator: Any = None

    def comparator(self) -> Any:
        if self._comparator is None:
            from aem.compare import SemanticComparator

            self._comparator = SemanticComparator(self.config.compare)
        return self._comparator

    def build(self, closed: ClosedSession) -> Session:
        """Turns and link keys from a closed session's spans (dialects mapped here)."""
        from collectors.sessions import build_session

        return build_session(closed)

    def evaluate(self, session: ClosedSession | Session) -> SessionReport:
        """Build (when given a closed session), score every turn, propagate, report."""
        if isinstance(session, ClosedSession):
            session = self.build(session)
        graph = session.graph if session.graph is not None else attach_graph(session)
        case = self.cases.get(session.session_id)
        context = MetricContext(
            session=session, case=case, config=self.config, comparator_factory=self.comparator
        )
        by_turn = self._run_metrics(context)
        # Only a cause's failure makes a root cause or propagates; an observation's failure
        # is reported on its turn and nothing more.
        observations = {m.name for m in self.metrics if role_of(m) == OBSERVATION}
        failed = {
            tid
            for tid, results in by_turn.items()
            if any(r.outcome is Outcome.FAIL and r.name not in observations for r in results)
        }
        labels = propagate_failures(graph, failed)
        verdicts: list[TurnVerdict] = []
        root_causes: list[RootCause] = []
        for turn in session.turns:
            label, inherited = labels.get(turn.turn_id, (Label.OK, []))
            verdict = TurnVerdict(
                turn_id=turn.turn_id,
                span_ids=turn.span_ids,
                trace_id=turn.trace_id,
                kind=turn.kind,
                name=turn.name,
                label=label,
                inherited_from=inherited,
                metrics=by_turn.get(turn.turn_id, []),
            )
            verdicts.append(verdict)
            if label is Label.ROOT_CAUSE:
                root_causes.append(self._root_cause(turn, verdict, observations))
        return SessionReport(
            session_id=session.session_id,
            session_key=session.session_key,
            session_key_fallback=session.fallback,
            trace_ids=session.trace_ids,
            case_found=case is not None,
            cut=session.cut,
            turns=verdicts,
            root_causes=root_causes,
            issues=session.issues,
        )

    def _run_metrics(self, context: MetricContext) -> dict[str, list[MetricResult]]:
        """Every metric's results, grouped by turn in metric order."""
        session = context.session
        by_turn: dict[str, list[MetricResult]] = {t.turn_id: [] for t in session.turns}
        for metric in self.metrics:
            try:
                produced = list(metric.evaluate(context))
            except Exception as exc:  # a broken plug-in must not sink the session
                produced = [
                    MetricResult(
                        name=metric.name,
                        turn_id=turn.turn_id,
                        outcome=Outcome.ERROR,
                        explanation=f"metric raised {type(exc).__name__}: {exc}",
                    )
                    for turn in session.turns
                ]
            for item in produced:
                by_turn.setdefault(item.turn_id, []).append(item)
        return by_turn

    def _root_cause(self, turn: Turn, verdict: TurnVerdict, observations: set[str]) -> RootCause:
        """A root-cause turn, named by its first failed cause metric."""
        failed_metrics = [m for m in verdict.failed_metrics if m not in observations]
        category = categorize(failed_metrics[0], turn.kind.value, turn.name, self.config.taxonomy)
        return RootCause(
            turn_id=turn.turn_id,
            span_ids=turn.span_ids,
            kind=turn.kind,
            name=turn.name,
            metrics=failed_metrics,
            category=category,
            signature=signature(failed_metrics[0], turn.kind.value, turn.name, category),
        )


def evaluate_session(
    session: Session,
    *,
    cases: Mapping[str, Case] | None = None,
    config: AemConfig | None = None,
) -> SessionReport:
    """Evaluate one assembled session (see :class:`Evaluator` to reuse set-up)."""
    return Evaluator(config, cases).evaluate(session)


def build_report(
    reports: Iterable[SessionReport],
    issues: Iterable[InputIssue] = (),
    *,
    spans_read: int = 0,
) -> AuditReport:
    """The JSON report: sessions, ranked root causes, and every input problem counted."""
    sessions = sorted(reports, key=lambda r: r.session_id)
    all_issues = list(issues)
    for report in sessions:
        all_issues.extend(report.issues)
    by_kind: dict[str, int] = {}
    for issue in all_issues:
        by_kind[issue.kind] = by_kind.get(issue.kind, 0) + 1
    return AuditReport(
        sessions=sessions,
        ranking=rank_root_causes(sessions),
        issues=[i for i in all_issues if i.session_id is None],
        skipped=SkippedSummary(
            total_spans_skipped=sum(i.spans_skipped for i in all_issues), by_kind=by_kind
        ),
        sessions_with_root_cause=sum(1 for r in sessions if r.root_causes),
        spans_read=spans_read,
    )
