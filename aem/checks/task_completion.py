"""``check.task_completion``: does the agent do what the reference answer or judge
instruction describes? The same result in other words passes; an instruction is checked
point by point.

Scored 0–10 by the test's judge (prompt ``aem/judges/prompts/task_completion.v1.txt``); see
:mod:`aem.checks.llm` for what the verdicts mean.
"""

from __future__ import annotations

from aem.checks.fields import TASK_COMPLETION
from aem.checks.llm import LlmCheck


class TaskCompletionCheck(LlmCheck):
    name = TASK_COMPLETION
