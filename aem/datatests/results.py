"""A run's evaluations and what is computed from them: pass rate, mean, judge errors, gates.

Why computed, never stored: a summary is a pure function of the evaluation rows, so an
extra evaluation added later cannot leave a stale figure behind. Pass rate and mean count
only ``pass`` and ``fail``: a ``skip`` (the case lacks the fields, or the judge cannot
score it) counts nowhere, an ``unverified`` (nothing proven wrong, nothing confirmed: no
judge decided the claims) is counted apart and nowhere else, and an ``error`` (a judge
error) is excluded and makes the run *not fully evaluated*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aem.model import Outcome

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

    @property
    def ok(self) -> bool:
        return self.pass_rate is not None and self.pass_rate >= self.minimum - 1e-12


def gate_results(evaluations: list[Evaluation], gates: dict[str, float]) -> list[PassRateGate]:
    """Each declared gate against the run's pass rate for its check (``all``: overall)."""
    return [PassRateGate(c, m, summarize(evaluations, c).pass_rate) for c, m in gates.items()]


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

    def as_json(self) -> dict[str, Any]:
        overall = self.overall
        return {
            "run": self.run_id,
            "test": self.test,
            "evaluation": self.pass_no,
            "judge": self.judge,
            "pass_rate": overall.pass_rate,
            "fully_evaluated": self.fully_evaluated,
            "judge_errors": overall.errors,
            "unverified": overall.unverified,
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
                {"check": g.check, "minimum": g.minimum, "pass_rate": g.pass_rate, "ok": g.ok}
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
