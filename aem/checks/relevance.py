"""``check.relevance``: does the answer address the question asked? Style, politeness and
length do not count; a reference, if given, only tells the judge what the question
wants.

Scored 0–10 by the test's judge (prompt ``aem/judges/prompts/relevance.v1.txt``); see
:mod:`aem.checks.llm` for what the verdicts mean.
"""

from __future__ import annotations

from aem.checks.fields import RELEVANCE
from aem.checks.llm import LlmCheck


class RelevanceCheck(LlmCheck):
    name = RELEVANCE
