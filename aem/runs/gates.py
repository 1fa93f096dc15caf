"""Run-level gates: ``--gate groundedness=0.85`` passes a run when the share of cases
that passed reaches the threshold.

Why per case, not per turn: the product question is "of the control questions, how many
did the agent answer well" — eight questions with one failure is 0.875 and passes at
0.85, two failures is 0.75 and fails. A case's verdict is its worst result of the metric
(any ``fail`` fails it); a case whose results are all ``skip`` is not counted; a judge
``error`` is reported and left out of the denominator, never counted as a pass or a fail;
an ``unverified`` case (claims nothing proves wrong and nothing confirms, no judge to
decide them) is counted apart and left out too: doubt never fails a gate.

The ``groundedness`` gate is the seed's quality criterion over every question type: a
``happy`` / ``edge`` case is judged by ``groundedness``, an ``oos`` case by ``refusal``
(its honest "I don't know"). Any other metric name gates that metric alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from aem.cases import Case
from aem.foundation.denominator import Denominator
from aem.foundation.model import (
    AuditReport,
    GateResult,
    GateRow,
    MetricResult,
    Outcome,
    SessionReport,
)
from aem.metrics.registry import ResolvedMetrics

# The metrics a gate counts: the groundedness criterion includes the oos refusal.
GATE_METRICS: dict[str, tuple[str, ...]] = {"groundedness": ("groundedness", "refusal")}


class GateError(ValueError):
    """A ``--gate`` that cannot be used; the message says why."""


def parse_gate(spec: str, known: Iterable[str]) -> tuple[str, float]:
    """``"groundedness=0.85"`` → ``("groundedness", 0.85)``; the metric must exist."""
    name, sep, raw = spec.partition("=")
    name = name.strip()
    if not sep or not name:
        raise GateError(f"--gate {spec!r}: expected METRIC=THRESHOLD, e.g. groundedness=0.85")
    try:
        threshold = float(raw)
    except ValueError as exc:
        raise GateError(f"--gate {spec!r}: threshold {raw!r} is not a number") from exc
    if not 0.0 <= threshold <= 1.0:
        raise GateError(f"--gate {spec!r}: the threshold is a share of cases, 0..1")
    names = set(known)
    if name not in names:
        raise GateError(
            f"--gate {spec!r}: no metric named {name!r} (known: {', '.join(sorted(names))})"
        )
    return name, threshold


def _case_verdict(results: list[MetricResult]) -> MetricResult | None:
    """The result that decides the case: the first fail, else the first error, else the
    first unverified, else the first pass; None when every result skipped."""
    for outcome in (Outcome.FAIL, Outcome.ERROR, Outcome.UNVERIFIED, Outcome.PASS):
        found = next((r for r in results if r.outcome is outcome), None)
        if found is not None:
            return found
    return None


def gate_metrics(metric: str) -> tuple[str, ...]:
    """The metrics whose results a gate on ``metric`` counts."""
    return GATE_METRICS.get(metric, (metric,))


def case_result(session: SessionReport, metric: str) -> MetricResult | None:
    """The result that stands for the case in a gate on ``metric`` (a skip when every
    result skipped); None when the metric gave the session no result at all. The dataset
    tests record this result as the case's ``groundedness`` evaluation."""
    names = gate_metrics(metric)
    results = [m for turn in session.turns for m in turn.metrics if m.name in names]
    if not results:
        return None
    return _case_verdict(results) or results[0]


def _row(session: SessionReport, metric: str, case: Case | None) -> GateRow | None:
    chosen = case_result(session, metric)
    if chosen is None:
        return None
    return GateRow(
        session_id=session.session_id,
        type=case.type if case is not None else None,
        metric=chosen.name,
        turn_id=chosen.turn_id,
        verdict=chosen.outcome,
        explanation=chosen.explanation,
    )


def evaluate_gate(
    report: AuditReport,
    metric: str,
    threshold: float,
    cases: Mapping[str, Case] | None = None,
    max_unmeasured: float | None = None,
) -> GateResult:
    """The gate over ``report``'s sessions; ``cases`` gives each row its type.

    ``max_unmeasured`` (``--gate-unmeasured``) also fails the gate when more than that
    share of the sessions could not be scored (judge errors, unverified, skipped, or no
    result of the metric): a score over a few decided cases is not a verdict on the run.
    """
    rows = [
        row
        for session in report.sessions
        if (row := _row(session, metric, (cases or {}).get(session.session_id))) is not None
    ]
    skipped = [r for r in rows if r.verdict is Outcome.SKIP]
    counted = Denominator.of(
        [r.verdict.value for r in rows] + ["skip"] * (len(report.sessions) - len(rows)),
        [r.explanation or "no reason given" for r in skipped]
        + [f"no result of {metric}"] * (len(report.sessions) - len(rows)),
    )
    score = counted.rate
    share = counted.unmeasured_share
    too_little = max_unmeasured is not None and (share is None or share > max_unmeasured)
    return GateResult(
        metric=metric,
        threshold=threshold,
        score=score,
        passed=score is not None and score >= threshold and not too_little,
        total=counted.decided,
        cases_passed=counted.passed,
        cases_failed=counted.failed,
        errors=counted.errors,
        skipped=len(skipped),
        unverified=counted.unverified,
        not_scored=len(report.sessions) - len(rows),
        skip_reasons=Counter(r.explanation or "no reason given" for r in skipped),
        unmeasured_share=share,
        max_unmeasured=max_unmeasured,
        rows=rows,
    )


def apply_gates(
    report: AuditReport,
    gates: Iterable[tuple[str, float]],
    cases: Mapping[str, Case] | None,
    max_unmeasured: float | None = None,
) -> list[GateResult]:
    """Evaluate every gate and keep the results on the report (its ``gates`` key)."""
    report.gates = [
        evaluate_gate(report, name, threshold, cases, max_unmeasured) for name, threshold in gates
    ]
    return report.gates


def parse_gates(specs: Iterable[str], resolved: ResolvedMetrics) -> list[tuple[str, float]]:
    """Every ``--gate`` checked against the metrics this run's configuration runs."""
    known = [metric.name for metric in resolved.metrics]
    return [parse_gate(spec, known) for spec in specs]
