"""What the LLM checks share: a judge scores the final answer 0–10 on one rubric.

A judged check is one class: its ``name``, its ``case_fields``, its ``prompt`` (what to
judge, as text; the shared 0–10 ``rubric`` goes before it) and, if the embedded judge
can score it, its ``embedded_scoring``. The check sends all of it in the request, so no
judge keeps a table of checks::

    class PolitenessCheck(LlmCheck):
        name = "team.politeness"
        case_fields = (CaseField("question", str), CaseField("tone", str))
        prompt = "Check: politeness. Does the answer keep to the case's tone? ..."

Every declared field beyond the question, the reference answer and the judge instruction
reaches the judge as a data block named after the field.

The verdict is ``pass`` at or above the threshold (1–10, default 7), ``fail`` below it,
``error`` when the judge failed (a judge error: excluded from pass rate and mean),
``skip`` when the case lacks the check's fields or the judge cannot honestly score it.
In a test a missing answer scores 0 without asking anyone: the rubric's 0 is "no
answer". In an audit it is a ``skip``: a session that ends on a tool call gave nothing
to judge, and a precondition is never a fail (:mod:`aem.checks.base`).

Which judge: a test injects its own (fixed per test); in ``aem audit`` the check runs
only where its ``[metrics."<check>"]`` table asks for it, uses ``metrics."<check>".judge``
and, with none set, says ``skip`` — an audit never calls a model, nor invents a score,
unless told to.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, ClassVar

from pydantic import Field

from aem.cases import Case, CaseField, CaseFieldError, CaseFields, declared_fields
from aem.checks.answer import NO_ANSWER, answer_turn, landing_turn
from aem.checks.base import BaseCheck
from aem.foundation.model import MetricResult, Outcome
from aem.judges.base import Judge, JudgeConfigError, JudgeRequest, verdict_of
from aem.judges.prompts import prompt_text
from aem.judges.settings import EMBEDDED
from aem.judges.verdicts import usage_detail, verdict_result
from aem.metrics.base import MetricContext, MetricSettings, result

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


# The request's own fields; any other declared field travels as an extra data block.
_REQUEST_FIELDS = ("question", "reference_answer", "judge_instruction")
# What a check of the answer to the question reads: the question, and a reference or an
# instruction when the case has them (they tell the judge what the question wants).
QUESTION_FIELDS = (
    CaseField("question", str),
    CaseField("reference_answer", str, required=False),
    CaseField("judge_instruction", str, required=False),
)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class LlmCheck(BaseCheck[LlmCheckSettings]):
    """Base of the judged checks; a subclass sets ``name``, ``case_fields``, ``prompt``."""

    name: ClassVar[str]
    case_fields: ClassVar[CaseFields]
    prompt: ClassVar[str]
    rubric: ClassVar[str] = prompt_text("rubric")
    embedded_scoring: ClassVar[str | None] = None
    Settings = LlmCheckSettings
    threshold_unit = "/10"
    judged = True
    # Scored 0-10; by the embedded default unless its settings name a judge
    # (aem.foundation.provenance).
    evaluator_type = "embedding"
    score_range = (0.0, 10.0)

    @classmethod
    def judge_request(cls, case: Case, answer: str) -> JudgeRequest:
        """What the judge is asked about ``answer`` to ``case``: the check's instructions
        and fields."""
        extra = tuple(
            (f.name, _as_text(f.value(case)))
            for f in declared_fields(cls.case_fields)
            if f.name not in _REQUEST_FIELDS and f.given(case)
        )
        return JudgeRequest(
            check=cls.name,
            question=case.question or "",
            answer=answer,
            reference_answer=case.reference_answer,
            judge_instruction=case.judge_instruction,
            instructions=cls.rubric + "\n" + cls.prompt,
            extra=extra,
            embedded_scoring=cls.embedded_scoring,
        )

    def __init__(self, settings: LlmCheckSettings | None = None, judge: Judge | None = None):
        super().__init__(settings)
        self.judge = judge

    def _judge(self, context: MetricContext) -> Judge | None:
        """The injected judge, else the configured one (built once), else None."""
        if self.judge is None and self.settings.judge is not None:
            self.judge = context.services.judge(self.settings.judge)
        return self.judge

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        turn, case = landing_turn(context), context.case
        if turn is None or case is None or not self.asked(context):
            return
        threshold = self.settings.threshold
        skip = self.skip_reason(case)
        if skip:
            yield result(self.name, turn, Outcome.SKIP, skip)
            return
        answer = answer_turn(context)
        if answer is None or not (answer.text or "").strip():
            yield self.unmet(turn, NO_ANSWER, threshold)
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
        try:
            request = self.judge_request(case, answer.text or "")
        except CaseFieldError as exc:  # a field of the wrong type: this case's error only
            yield result(self.name, answer, Outcome.ERROR, str(exc))
            return
        verdict = verdict_of(judge, request)
        yield verdict_result(
            self.name, answer, verdict, threshold=threshold, detail=usage_detail(verdict)
        )
