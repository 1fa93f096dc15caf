"""``check.faithfulness``: is the answer free of invented facts? An honest "I don't know"
is faithful; an answer contradicting the reference scores low.

Scored 0–10 by the test's judge (prompt ``aem/judges/prompts/faithfulness.v1.txt``); see
:mod:`aem.checks.llm` for what the verdicts mean.
"""

from __future__ import annotations

from aem.checks.llm import QUESTION_FIELDS, LlmCheck
from aem.judges.prompts import prompt_text

FAITHFULNESS = "check.faithfulness"


class FaithfulnessCheck(LlmCheck):
    name = FAITHFULNESS
    case_fields = QUESTION_FIELDS
    prompt = prompt_text("faithfulness")
    embedded_scoring = "faithfulness"
    summary = (
        "no invented facts: claims rest on the question, the reference or "
        'well-known facts; an honest "I don\'t know" is faithful (judge, 0-10)'
    )
