"""``check.relevance``: does the answer address the question asked? Style, politeness and
length do not count; a reference, if given, only tells the judge what the question
wants.

Scored 0–10 by the test's judge (prompt ``aem/judges/prompts/relevance.v1.txt``); see
:mod:`aem.checks.llm` for what the verdicts mean.
"""

from __future__ import annotations

from aem.checks.llm import QUESTION_FIELDS, LlmCheck
from aem.judges.prompts import prompt_text

RELEVANCE = "check.relevance"


class RelevanceCheck(LlmCheck):
    name = RELEVANCE
    case_fields = QUESTION_FIELDS
    prompt = prompt_text("relevance")
    embedded_scoring = "relevance"
    summary = (
        "whether the agent answers the question asked; style, politeness "
        "and length do not count (judge, 0-10)"
    )
