"""The turn a check's verdict lands on: the session's final answer to the user.

Why the answer turn: a check judges what the user was told, and a verdict on that turn
takes part in propagation — when an earlier turn already failed, the check's failure
is labelled ``prior_action_failed`` and points at it.
"""

from __future__ import annotations

from aem.foundation.model import Turn
from aem.metrics.context import MetricContext

NO_ANSWER = "no answer: the session has no final answer to the user"


def answer_turn(context: MetricContext) -> Turn | None:
    """The final answer to the user, if the agent gave one."""
    return context.answers[-1] if context.answers else None


def landing_turn(context: MetricContext) -> Turn | None:
    """Where a check's verdict goes: the final answer, else the session's last turn."""
    return answer_turn(context) or context.final_turn
