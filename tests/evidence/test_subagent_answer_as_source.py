"""A sub-agent's last answer is a source for the agent that called it, as a tool's result
is: the parent repeating what it was told is supported (the doubt stays where the value
was first stated), while an agent's own earlier words support nothing."""

from __future__ import annotations

from aem.evaluate import evaluate_session
from aem.foundation.model import SessionReport
from aem.testing import make_session, make_turn

TOLD = "The premium for a three-year term is €1,284.60."


def _report(parent_says: str, *, returns: bool = True) -> SessionReport:
    """t1 the sub-agent's answer (worked out with no look-up: a suspect), t2 the parent's
    answer to the user, which received it."""
    sub = make_turn("answer", text=TOLD, context="quote")
    if returns:
        sub = sub.model_copy(update={"returns_to_context": ""})
    parent = make_turn("answer", text=parent_says)
    return evaluate_session(make_session(sub, parent, edges=[("t1", "t2", "subagent_result")]))


def _truthfulness(report: SessionReport, turn_id: str) -> str:
    turn = next(t for t in report.turns if t.turn_id == turn_id)
    verdict = next(r for r in turn.metrics if r.name == "correctness.truthfulness")
    return str(verdict.outcome)


def test_the_parent_repeating_its_sub_agent_is_supported_and_the_doubt_stays_at_the_source() -> (
    None
):
    report = _report("Your premium is €1,284.60 for three years.")
    assert _truthfulness(report, "t1") == "unverified"
    assert _truthfulness(report, "t2") == "pass"


def test_a_value_the_sub_agent_did_not_say_is_still_a_doubt_of_the_parent() -> None:
    report = _report("Your premium is €1,348.80 for three years.")
    assert _truthfulness(report, "t2") == "unverified"


def test_an_agent_s_own_earlier_words_support_nothing() -> None:
    report = _report("Your premium is €1,284.60 for three years.", returns=False)
    assert _truthfulness(report, "t2") == "unverified"
