"""Evaluate sessions: metrics per turn → propagation → the three output layers.

``evaluate_session`` is pure (no I/O): the audit command, live mode and library users
all call it, so a verdict is the same whichever way the spans arrived.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from aem.cases import Case
from aem.compare.core import lazy_comparator
from aem.compare.extract import values_memoised
from aem.compare.relative_days import set_session_day
from aem.evidence import day_of_session
from aem.foundation.gcpause import cyclic_gc_paused
from aem.foundation.model import (
    AuditReport,
    ClosedSession,
    Inheritance,
    InputIssue,
    Label,
    MetricResult,
    Outcome,
    RootCause,
    Session,
    SessionReport,
    SkippedSummary,
    Turn,
    TurnEdge,
    TurnVerdict,
)
from aem.graph import TurnGraph, session_graph
from aem.metrics.base import OBSERVATION, Metric, MetricContext, role_of
from aem.metrics.registry import resolve_metrics
from aem.propagation import (
    ValueEdge,
    doubts_reaching,
    inherit_along_values,
    propagate_failures,
)
from aem.ranking import categorize, rank_categories, rank_root_causes, signature, suspect_rank
from aem.services import services_from
from aem.settings import AemConfig

if TYPE_CHECKING:
    from aem.compare import SemanticComparator


class Evaluator:
    """Holds what is expensive to set up once (metrics, the comparator and its model)."""

    def __init__(
        self,
        config: AemConfig | None = None,
        cases: Mapping[str, Case] | None = None,
        metrics: list[Metric] | None = None,
        *,
        comparator: Callable[[], SemanticComparator] | None = None,
    ) -> None:
        self.config = config or AemConfig()
        self.cases = dict(cases or {})
        self.metrics = metrics if metrics is not None else resolve_metrics(self.config)
        # Shared by every session this evaluator scores (so is its embedding cache: a
        # sentence two sessions share is encoded once per run); made when a text first
        # needs it, unless the caller gives one (one model for several evaluators).
        self.comparator = comparator or lazy_comparator(self.config.compare)

    def build(self, closed: ClosedSession) -> Session:
        """Turns and link keys from a closed session's spans (dialects mapped here)."""
        from collectors.sessions import build_session

        return build_session(closed, max_turns=self.config.assembly.turn_limit)

    @cyclic_gc_paused()
    @values_memoised()
    def evaluate(self, session: ClosedSession | Session) -> SessionReport:
        """Build (when given a closed session), score every turn, propagate, report
        (the cyclic collector paused meanwhile, :mod:`aem.foundation.gcpause`; each text's values
        extracted once, :func:`aem.compare.extract.values_memoised`)."""
        if isinstance(session, ClosedSession):
            session = self.build(session)
        graph = session_graph(session)
        case = self.cases.get(session.session_id)
        _add_session_turn(session, case, graph)
        services = services_from(self.config, self.comparator)
        context = MetricContext(session=session, case=case, services=services, graph=graph)
        set_session_day(day_of_session(session, context.task_texts))  # computed once, kept
        by_turn = self._run_metrics(context)
        observations = {m.name for m in self.metrics if role_of(m) == OBSERVATION}
        by_id = {t.turn_id: t for t in session.turns}
        labels, ranks, value_edges = _labels(graph, session.turns, by_turn, observations)
        verdicts = [
            _verdict(
                turn,
                *labels.get(turn.turn_id, (Label.OK, [])),
                by_turn.get(turn.turn_id, []),
                session.public_span_ids,
            )
            for turn in session.turns
        ]
        return SessionReport(
            session_id=session.session_id,
            session_key=session.session_key,
            session_key_fallback=session.fallback,
            trace_ids=session.trace_ids,
            case_found=case is not None,
            cut=session.cut,
            **_structure(session),
            turns=verdicts,
            edges=turn_edges(graph, session.turns),
            inheritances=[_inheritance(e) for e in value_edges],
            root_causes=[
                self._root_cause(by_id[v.turn_id], v, v.failed_metrics, observations)
                for v in verdicts
                if v.label is Label.ROOT_CAUSE
            ],
            issues=session.issues,
            unchecked_turns=sum(1 for v in verdicts if not v.checked),
            observations=[
                self._root_cause(by_id[v.turn_id], v, noted, set())
                for v in verdicts
                if (noted := [m for m in v.failed_metrics if m in observations])
            ],
            suspects=[
                self._root_cause(by_id[v.turn_id], v, _unverified_metrics(v), observations)
                for v in sorted(verdicts, key=lambda v: ranks.get(v.turn_id) or 0)
                if v.label is Label.SUSPECT
            ],
            doubts=[
                self._root_cause(by_id[v.turn_id], v, _unverified_metrics(v), observations)
                for v in verdicts
                if v.label is Label.OK and v.turn_id in ranks and ranks[v.turn_id] is None
            ],
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

    def _root_cause(
        self, turn: Turn, verdict: TurnVerdict, failed: list[str], left_out: set[str]
    ) -> RootCause:
        """A flagged turn, named by its first failed metric outside ``left_out``."""
        failed_metrics = [m for m in failed if m not in left_out]
        explanation = next(
            (m.explanation for m in verdict.metrics if m.name == failed_metrics[0]), None
        )
        category = categorize(
            failed_metrics[0],
            turn.kind.value,
            turn.name,
            self.config.taxonomy,
            explanation=explanation,
        )
        return RootCause(
            turn_id=turn.turn_id,
            span_ids=verdict.span_ids,
            kind=turn.kind,
            name=turn.name,
            metrics=failed_metrics,
            category=category,
            signature=signature(failed_metrics[0], turn.kind.value, turn.name, category),
            agent=turn.agent,
        )


def _structure(session: Session) -> dict[str, Any]:
    """How the session's exchanges were bounded, how many, and how many runs it holds."""
    return {
        "boundaries": session.boundaries,
        "conversation_turns": session.conversation_turns,
        "runs": session.runs,
    }


def _labels(
    graph: TurnGraph,
    turns: list[Turn],
    by_turn: Mapping[str, list[MetricResult]],
    observations: set[str],
) -> tuple[dict[str, tuple[Label, list[str]]], dict[str, int | None], list[ValueEdge]]:
    """Each turn's label, the suspect rank of each turn in doubt (None: a doubt that
    reached no user) and the inheritances along values.

    Only a cause's failure makes a root cause or propagates (an observation's failure is
    reported on its turn and ranked apart); only a doubt that reached the user (an answer,
    a state-changing call: :func:`aem.ranking.suspect_rank`), or whose value such a turn
    repeats (:func:`aem.propagation.doubts_reaching`), makes a suspect."""

    def having(outcome: Outcome) -> set[str]:
        return {
            tid
            for tid, results in by_turn.items()
            if any(r.outcome is outcome and r.name not in observations for r in results)
        }

    by_id = {t.turn_id: t for t in turns}
    ranks = {tid: suspect_rank(by_id[tid]) for tid in having(Outcome.UNVERIFIED) if tid in by_id}
    suspected = {tid for tid, rank in ranks.items() if rank is not None}
    # A doubt whose value a turn that reached the user repeats is a suspect after all.
    doubted = {
        tid: [c.claim for r in by_turn[tid] if r.name not in observations for c in r.unverified]
        for tid, rank in ranks.items()
        if rank is None
    }
    for tid in doubts_reaching(graph, turns, doubted, suspected | _facing(turns)):
        ranks[tid] = 1
        suspected.add(tid)
    labels = propagate_failures(graph, having(Outcome.FAIL), suspected)
    edges = inherit_along_values(graph, labels, turns, _disputed(by_turn, labels, observations))
    return labels, ranks, edges


def _facing(turns: list[Turn]) -> set[str]:
    """The turns that reached the user or changed state (:func:`aem.ranking.suspect_rank`
    not None), whatever their verdict."""
    return {t.turn_id for t in turns if suspect_rank(t) is not None}


def _inheritance(edge: ValueEdge) -> Inheritance:
    return Inheritance(
        source=edge.source, target=edge.target, kind=edge.kind, value=edge.value, reason=edge.reason
    )


def _disputed(
    by_turn: Mapping[str, list[MetricResult]],
    labels: Mapping[str, tuple[Label, list[str]]],
    left_out: set[str],
) -> dict[str, list[str]]:
    """Per failed turn, the values its failure is about: what its failed metrics' evidence
    says the turn stated (``actual``), the values a later turn can inherit along."""
    failing = (Label.ROOT_CAUSE, Label.PRIOR_ACTION_FAILED)
    return {
        tid: [
            str(e.actual)
            for r in results
            if r.outcome is Outcome.FAIL and r.name not in left_out
            for e in r.evidence
            if e.actual is not None and e.field != "status"
        ]
        for tid, results in by_turn.items()
        if labels.get(tid, (Label.OK, []))[0] in failing
    }


def _unverified_metrics(verdict: TurnVerdict) -> list[str]:
    """The metrics that left a turn ``unverified``: what a suspect is ranked by."""
    return [m.name for m in verdict.metrics if m.outcome is Outcome.UNVERIFIED]


def turn_edges(graph: TurnGraph, turns: list[Turn]) -> list[TurnEdge]:
    """The graph's edges as the report carries them, ordered by source then target turn
    (so the same session always lists them the same way)."""
    order = {turn.turn_id: position for position, turn in enumerate(turns)}
    edges = [
        TurnEdge(source=link.source, target=link.target, kind=link.reason)
        for link in graph.edges
        if link.source in order and link.target in order
    ]
    edges.sort(key=lambda e: (order[e.source], order[e.target]))
    return edges


def _verdict(
    turn: Turn,
    label: Label,
    inherited: list[str],
    metrics: list[MetricResult],
    public: Mapping[str, str],
) -> TurnVerdict:
    """A turn's verdict, with span ids as the trace wrote them (``public``: a span id two
    traces of the session share carries its trace as a suffix inside the session only)."""
    for metric in metrics:
        for item in metric.evidence:
            if item.span_id is not None:
                item.span_id = public.get(item.span_id, item.span_id)
    return TurnVerdict(
        turn_id=turn.turn_id,
        span_ids=[public.get(s, s) for s in turn.span_ids],
        trace_id=turn.trace_id,
        kind=turn.kind,
        name=turn.name,
        label=label,
        inherited_from=inherited,
        agent=turn.agent,
        metrics=metrics,
    )


def _add_session_turn(session: Session, case: Case | None, graph: TurnGraph) -> None:
    """A case that expects calls of a session without a single turn still gets a verdict:
    a session-level turn on the root span gives ``tool_choice`` somewhere to put it."""
    if case is None or not case.expected_tool_calls or session.turns:
        return
    turn = session.session_turn
    if turn is not None:
        session.turns.append(turn)
        graph.add_turn(turn)


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
    unsupported: Literal["suspect", "fail"] = "suspect",
) -> AuditReport:
    """The JSON report: sessions, ranked root causes, and every input problem counted.

    A session's issues are listed on its report; an issue about a session that has no
    report (its evaluation raised, ``evaluation_error``) is listed at the top level, or
    it would be in no list at all and the session would vanish from the report.
    """
    sessions = sorted(reports, key=lambda r: r.session_id)
    reported = {r.session_id for r in sessions}
    given = list(issues)
    top = [i for i in given if i.session_id is None or i.session_id not in reported]
    all_issues = list(given)
    for report in sessions:
        all_issues.extend(report.issues)
        top.extend(i for i in report.issues if i.session_id is None)
    by_kind: dict[str, int] = {}
    for issue in all_issues:
        by_kind[issue.kind] = by_kind.get(issue.kind, 0) + 1
    ranking = rank_root_causes(sessions)
    return AuditReport(
        sessions=sessions,
        ranking=ranking,
        categories=rank_categories(sessions, ranking),
        issues=top,
        skipped=SkippedSummary(
            total_spans_skipped=sum(i.spans_skipped for i in all_issues), by_kind=by_kind
        ),
        sessions_with_root_cause=sum(1 for r in sessions if r.root_causes),
        sessions_with_suspect_only=sum(1 for r in sessions if r.suspects and not r.root_causes),
        sessions_with_doubts_only=sum(
            1 for r in sessions if r.doubts and not r.suspects and not r.root_causes
        ),
        suspects=rank_root_causes(
            r.model_copy(update={"root_causes": r.suspects}) for r in sessions
        ),
        unsupported=unsupported,
        observations=rank_root_causes(
            r.model_copy(update={"root_causes": r.observations}) for r in sessions
        ),
        spans_read=spans_read,
        unverified_claims=sum(
            len(m.unverified) for r in sessions for t in r.turns for m in t.metrics
        ),
        outcomes=outcome_counts(sessions),
    )


def outcome_counts(sessions: Iterable[SessionReport]) -> dict[str, dict[str, int]]:
    """Per metric (by name), how many of its results had each outcome; metrics and
    outcomes in a stable order so the same run always writes the same report."""
    counts: dict[str, dict[str, int]] = {}
    for report in sessions:
        for turn in report.turns:
            for metric in turn.metrics:
                row = counts.setdefault(metric.name, {})
                row[metric.outcome.value] = row.get(metric.outcome.value, 0) + 1
    order = {o.value: i for i, o in enumerate(Outcome)}
    return {
        name: dict(sorted(counts[name].items(), key=lambda kv: order[kv[0]]))
        for name in sorted(counts)
    }
