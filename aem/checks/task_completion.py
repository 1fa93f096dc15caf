"""``check.task_completion``: does the agent do what the reference answer or judge
instruction describes? The same result in other words passes; an instruction is checked
point by point.

Scored 0–10 by the test's judge (prompt ``aem/judges/prompts/task_completion.v1.txt``); see
:mod:`aem.checks.llm` for what the verdicts mean.
"""

from __future__ import annotations

from aem.cases import AnyOf, CaseField
from aem.checks.llm import LlmCheck
from aem.judges.prompts import prompt_text

TASK_COMPLETION = "check.task_completion"


class TaskCompletionCheck(LlmCheck):
    name = TASK_COMPLETION
    case_fields = (
        AnyOf(CaseField("reference_answer", str), CaseField("judge_instruction", str)),
        CaseField("question", str, required=False),
    )
    prompt = prompt_text("task_completion")
    embedded_scoring = "task_completion"
    summary = (
        "whether the agent did what the reference answer or judge "
        "instruction describes; other words for the same result pass (judge, 0-10)"
    )
