"""A run's evaluations and what is computed from them: pass rate, mean, judge errors, gates.

Why computed, never stored: a summary is a pure function of the evaluation rows, so an
extra evaluation added later cannot leave a stale figure behind. Pass rate and mean count
only ``pass`` and ``fail``: a ``skip`` (the case lacks the fields, or the judge cannot
score it) counts nowhere, an ``unverified`` (nothing proven wrong, nothing confirmed: no
judge decided the claims) is counted apart and nowhere else, and an ``error`` (a judge
error) is excluded and makes the run *not fully evaluated*.

Why a run can be *not evaluable*: a pass rate over the few evaluations a failing judge
let through proves nothing about the rest. So a gate whose check has more judge errors
than half its evaluations (passed + failed + judge errors) is not evaluable — neither met
nor failed — and neither is a run in which nothing was decided (no pass and no fail).
The command line gives such a run an exit code of its own (4), distinct from ok and from
a gate that failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aem.foundation.denominator import Denominator
from aem.foundation.model import Outcome

GATE_ALL = "all"


@dataclass(frozen=True)
class Evaluation:
    case_id: str
    case_type: str | None
    check: str
    judge: str | None
    threshold: float | None
    outcome: Outcome
    score: float | None
    explanation: str
    usage: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckSummary:
    check: str
    passed: int
    failed: int
    errors: int
    skipped: int
    mean_score: float | None
    unverified: int = 0

    @property
    def pass_rate(self) -> float | None:
        judged = self.passed + self.failed
        return self.passed / judged if judged else None


def denominator(evaluations: list[Evaluation], check: str) -> Denominator:
    """What ``check``'s pass rate (``all``: every check's) is over, skips with reasons."""
    rows = [e for e in evaluations if check == GATE_ALL or e.check == check]
    return Denominator.of(
        [e.outcome.value for e in rows],
        [
            (e.explanation or "no reason given") if check != GATE_ALL else e.check
            for e in rows
            if e.outcome is Outcome.SKIP
        ],
    )


def summarize(evaluations: list[Evaluation], check: str) -> CheckSummary:
    """Counts and mean over ``evaluations`` of ``check`` (``all``: every check)."""
    rows = [e for e in evaluations if check == GATE_ALL or e.check == check]
    judged = [e for e in rows if e.outcome in (Outcome.PASS, Outcome.FAIL)]
    scores = [e.score for e in judged if e.score is not None]
    return CheckSummary(
        check=check,
        passed=sum(e.outcome is Outcome.PASS for e in rows),
        failed=sum(e.outcome is Outcome.FAIL for e in rows),
        errors=sum(e.outcome is Outcome.ERROR for e in rows),
        skipped=sum(e.outcome is Outcome.SKIP for e in rows),
        mean_score=sum(scores) / len(scores) if scores and check != GATE_ALL else None,
        unverified=sum(e.outcome is Outcome.UNVERIFIED for e in rows),
    )


@dataclass(frozen=True)
class PassRateGate:
    check: str
    minimum: float
    pass_rate: float | None
    judge_errors: int = 0
    decided: int = 0  # passed + failed

    @property
    def evaluable(self) -> bool:
        """Judged at all, and by a judge that failed on at most half the evaluations."""
        return self.decided > 0 and self.judge_errors * 2 <= self.decided + self.judge_errors

    @property
    def not_evaluable_reason(self) -> str | None:
        if self.evaluable:
            return None
        if self.decided == 0:
            return f"no evaluation of {self.check} passed or failed"
        total = self.decided + self.judge_errors
        return (
            f"{self.judge_errors} of {total} evaluations of {self.check} are judge errors "
            "(more than half)"
        )

    @property
    def ok(self) -> bool:
        return (
            self.evaluable and self.pass_rate is not None and self.pass_rate >= self.minimum - 1e-12
        )

    @property
    def status(self) -> str:
        """``ok``, ``below`` (a proven miss) or ``not evaluable``."""
        return "ok" if self.ok else "below" if self.evaluable else "not evaluable"


def gate_results(evaluations: list[Evaluation], gates: dict[str, float]) -> list[PassRateGate]:
    """Each declared gate against the run's pass rate for its check (``all``: overall)."""
    found = []
    for check, minimum in gates.items():
        summary = summarize(evaluations, check)
        decided = summary.passed + summary.failed
        found.append(PassRateGate(check, minimum, summary.pass_rate, summary.errors, decided))
    return found


@dataclass(frozen=True)
class NotRun:
    """Evaluations of one check skipped for one reason: a check that did not run there."""

    check: str
    reason: str
    cases: int


def not_run(evaluations: list[Evaluation]) -> list[NotRun]:
    """The skipped evaluations grouped by check and reason, most cases first."""
    counts: dict[tuple[str, str], int] = {}
    for e in evaluations:
        if e.outcome is Outcome.SKIP:
            key = (e.check, e.explanation)
            counts[key] = counts.get(key, 0) + 1
    found = [NotRun(check, reason, n) for (check, reason), n in counts.items()]
    return sorted(found, key=lambda item: (-item.cases, item.check, item.reason))


@dataclass
class RunResult:
    """One run (or one extra evaluation of it) as ``show`` and ``--json`` present it."""

    run_id: int
    test: str
    pass_no: int
    judge: str | None
    evaluations: list[Evaluation]
    checks: list[str]
    gates: dict[str, float]
    no_answer: list[str] = field(default_factory=list)

    @property
    def summaries(self) -> list[CheckSummary]:
        return [summarize(self.evaluations, c) for c in self.checks]

    @property
    def overall(self) -> CheckSummary:
        return summarize(self.evaluations, GATE_ALL)

    @property
    def fully_evaluated(self) -> bool:
        return self.overall.errors == 0

    @property
    def gates_passed(self) -> bool:
        return all(g.ok for g in gate_results(self.evaluations, self.gates))

    @property
    def nothing_evaluated(self) -> bool:
        """No evaluation passed or failed: the run checked nothing."""
        overall = self.overall
        return overall.passed + overall.failed == 0

    @property
    def status(self) -> str:
        """``below gate`` when an evaluable gate is missed (a proof), else ``not
        evaluable`` when a gate is not or nothing was decided, else ``ok``."""
        gates = gate_results(self.evaluations, self.gates)
        if any(g.status == "below" for g in gates):
            return "below gate"
        if self.nothing_evaluated or any(not g.evaluable for g in gates):
            return "not evaluable"
        return "ok"

    def not_evaluable_reasons(self) -> list[str]:
        """Why the run is not evaluable (empty when it is)."""
        reasons = [
            r for g in gate_results(self.evaluations, self.gates) if (r := g.not_evaluable_reason)
        ]
        if self.nothing_evaluated:
            reasons.insert(0, "nothing was evaluated: no evaluation passed or failed")
        return reasons

    def as_json(self) -> dict[str, Any]:
        overall = self.overall
        return {
            "run": self.run_id,
            "test": self.test,
            "evaluation": self.pass_no,
            "judge": self.judge,
            "pass_rate": overall.pass_rate,
            "fully_evaluated": self.fully_evaluated,
            "status": self.status,
            "not_evaluable": self.not_evaluable_reasons(),
            "judge_errors": overall.errors,
            "unverified": overall.unverified,
            "skipped": overall.skipped,
            "not_run": [
                {"check": n.check, "cases": n.cases, "reason": n.reason}
                for n in not_run(self.evaluations)
            ],
            "no_answer": self.no_answer,
            "checks": [
                {
                    "check": s.check,
                    "pass_rate": s.pass_rate,
                    "mean_score": s.mean_score,
                    "passed": s.passed,
                    "failed": s.failed,
                    "judge_errors": s.errors,
                    "skipped": s.skipped,
                    "unverified": s.unverified,
                }
                for s in self.summaries
            ],
            "gates": [
                {
                    "check": g.check,
                    "minimum": g.minimum,
                    "pass_rate": g.pass_rate,
                    "ok": g.ok,
                    "status": g.status,
                    "judge_errors": g.judge_errors,
                    "reason": g.not_evaluable_reason,
                }
                for g in gate_results(self.evaluations, self.gates)
            ],
            "evaluations": [
                {
                    "case": e.case_id,
                    "type": e.case_type,
                    "check": e.check,
                    "judge": e.judge,
                    "score": e.score,
                    "threshold": e.threshold,
                    "verdict": e.outcome.value,
                    "explanation": e.explanation,
                }
                for e in self.evaluations
            ],
        }
