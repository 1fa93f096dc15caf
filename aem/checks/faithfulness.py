"""``check.faithfulness``: is the answer free of invented facts? An honest "I don't know"
is faithful; an answer contradicting the reference scores low.

Scored 0–10 by the test's judge (prompt ``aem/judges/prompts/faithfulness.v1.txt``); see
:mod:`aem.checks.llm` for what the verdicts mean.
"""

from __future__ import annotations

from aem.checks.fields import FAITHFULNESS
from aem.checks.llm import LlmCheck


class FaithfulnessCheck(LlmCheck):
    name = FAITHFULNESS
