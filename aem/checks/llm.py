"""What the three LLM checks share: a judge scores the final answer 0–10 on one rubric.

The verdict is ``pass`` at or above the threshold (1–10, default 7), ``fail`` below it,
``error`` when the judge failed (a judge error: excluded from pass rate and mean),
``skip`` when the case lacks the check's fields or the judge cannot honestly score it.
A missing answer scores 0 without asking anyone: the rubric's 0 is "no answer".

Which judge: a test injects its own (fixed per test); in ``aem audit`` the check uses
``metrics."<check>".judge`` and, with none set, says ``skip`` — an audit never calls a
model, nor invents a score, unless told to.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import ClassVar

from pydantic import Field

from aem.checks.answer import NO_ANSWER, answer_turn, landing_turn
from aem.checks.fields import missing_fields
from aem.checks.json_schema import CHECK_PRECEDENCE
from aem.judges.base import Judge, JudgeConfigError, JudgeRequest, JudgeVerdict
from aem.judges.settings import EMBEDDED
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result
from aem.model import Evidence, MetricResult, Outcome, Turn

DEFAULT_THRESHOLD = 7.0


class LlmCheckSettings(MetricSettings):
    threshold: float = Field(
        default=DEFAULT_THRESHOLD, ge=1, le=10, description="judge score (0–10) that passes"
    )
    judge: str | None = Field(
        default=None,
        description="judge used when the check runs in aem audit / serve (none: skip); "
        "tests choose their own",
    )
    recommended_judges: list[str] = Field(
        default_factory=lambda: [EMBEDDED],
        description="judges offered for this check; a new test takes the first configured",
    )


def verdict_result(name: str, turn: Turn, verdict: JudgeVerdict, threshold: float) -> MetricResult:
    """A judge's verdict as the check's result on ``turn``."""
    why = f"judge: {verdict.judge} — {verdict.explanation}"
    evidence = [
        Evidence(
            span_id=turn.span_ids[0] if turn.span_ids else None,
            field="judge",
            actual=verdict.judge,
            detail=json.dumps(verdict.usage, sort_keys=True) if verdict.usage else None,
        )
    ]
    if verdict.status == "error":
        return result(name, turn, Outcome.ERROR, why, threshold=threshold, evidence=evidence)
    if verdict.status == "skip" or verdict.score is None:
        return result(name, turn, Outcome.SKIP, why, threshold=threshold, evidence=evidence)
    outcome = Outcome.PASS if verdict.score >= threshold else Outcome.FAIL
    return result(
        name, turn, outcome, why, score=verdict.score, threshold=threshold, evidence=evidence
    )


class LlmCheck(BaseMetric[LlmCheckSettings]):
    """Base of the LLM checks; a subclass only sets ``name``."""

    name: ClassVar[str]
    precedence = CHECK_PRECEDENCE
    Settings = LlmCheckSettings

    def __init__(self, settings: LlmCheckSettings | None = None, judge: Judge | None = None):
        super().__init__(settings)
        self.judge = judge

    def _judge(self, context: MetricContext) -> Judge | None:
        """The injected judge, else the configured one (built once), else None."""
        if self.judge is None and self.settings.judge is not None:
            from aem.judges.registry import build_judge

            factory: Callable[[], object] = context.comparator_factory or (
                lambda: context.comparator
            )
            self.judge = build_judge(self.settings.judge, context.config, factory)  # type: ignore[arg-type]
        return self.judge

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        turn, case = landing_turn(context), context.case
        if turn is None or case is None:
            return
        threshold = self.settings.threshold
        skip = missing_fields(self.name, case)
        if skip:
            yield result(self.name, turn, Outcome.SKIP, skip)
            return
        answer = answer_turn(context)
        if answer is None or not (answer.text or "").strip():
            yield result(self.name, turn, Outcome.FAIL, NO_ANSWER, score=0.0, threshold=threshold)
            return
        try:
            judge = self._judge(context)
        except JudgeConfigError as exc:
            yield result(self.name, answer, Outcome.ERROR, f"judge error: {exc}")
            return
        if judge is None:
            why = f'no judge configured (set metrics."{self.name}".judge, e.g. "{EMBEDDED}")'
            yield result(self.name, answer, Outcome.SKIP, why)
            return
        request = JudgeRequest(
            check=self.name,
            question=case.question or "",
            answer=answer.text or "",
            reference_answer=case.reference_answer,
            judge_instruction=case.judge_instruction,
        )
        yield verdict_result(self.name, answer, judge.judge(request), threshold)
