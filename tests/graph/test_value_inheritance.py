"""Inheritance along values: a turn that passes its own checks but consumes what a failed
turn was wrong about — restates its value in another format or language, passes it as an
argument, relays a failed sub-agent's answer — is ``prior_action_failed``, and the report
says which value it took from which turn.

Sessions are evaluated whole (the real metrics), so the disputed value is the one the
failed turn's own evidence names, not one a test chose.
"""

from __future__ import annotations

import networkx as nx

from aem.evaluate import evaluate_session
from aem.foundation.model import Label, SessionReport
from aem.propagation import inherit_along_values, propagate_failures
from aem.testing import make_session, make_tool_call, make_turn

RECORD = {"reference": "INV-20417", "amount": 25.0, "currency": "EUR", "status": "open"}


def _labels(report: SessionReport) -> dict[str, str]:
    return {t.turn_id: str(t.label) for t in report.turns}


def _relay(parent_says: str, *, wrong: bool = True) -> SessionReport:
    """t1 the sub-agent's look-up, t2 its answer (30 € when wrong), t3 the parent's call
    that received it, t4 the parent's answer to the user."""
    amount = "30,00 €" if wrong else "25,00 €"
    said = f"Rechnung INV-20417: der Betrag ist {amount}."
    session = make_session(
        make_tool_call("get_invoice", {"reference": "INV-20417"}, result=RECORD, context="sub"),
        make_turn("answer", text=said, context="sub"),
        make_tool_call("ask_billing", {"task": "amount of INV-20417"}, result=said),
        make_turn("answer", text=parent_says),
        edges=[("t1", "t2", "tool_result"), ("t2", "t3", "subagent_result"), ("t3", "t4")],
    )
    return evaluate_session(session)


def test_a_relayed_wrong_amount_is_inherited_by_the_relay_and_the_answer() -> None:
    report = _relay("You owe €30.00 for invoice INV-20417.")
    assert _labels(report) == {
        "t1": "ok",
        "t2": "root_cause",
        "t3": "prior_action_failed",
        "t4": "prior_action_failed",
    }
    assert [t.inherited_from for t in report.turns[2:]] == [["t2"], ["t2"]]
    # The relay passed its own checks: it inherits by the edge, which says so. The answer
    # fails its own check too (the look-up is among what it saw), and keeps both.
    [relay] = report.inheritances
    assert (relay.source, relay.target, relay.kind) == ("t2", "t3", "relays")
    assert relay.reason == "relays the answer of t2 ('30,00 €')"
    assert report.turns[3].failed_metrics


def test_an_invented_confirmation_repeated_by_the_parent_is_inherited_with_its_value() -> None:
    """The sub-agent claims a failed booking done with an id; the parent only repeats the
    id (no claim of its own to fail): it inherits, naming the id and where it came from."""
    claimed = "Booked for 12 May 2026, confirmation BK-7781."
    session = make_session(
        make_tool_call("book_slot", {"slot": "S-4"}, error="booking service timed out"),
        make_turn("answer", text=claimed, context="sub"),
        make_turn("reasoning", text="The specialist answered.", turn_id="t3"),
        make_turn("answer", text="Your reference is BK-7781."),
        edges=[("t1", "t2", "tool_result"), ("t2", "t3", "history"), ("t3", "t4", "history")],
    )
    report = evaluate_session(session)
    labels = _labels(report)
    assert labels["t1"] == "root_cause" and labels["t2"] == "prior_action_failed"
    assert any("success claimed" in m.explanation for m in report.turns[1].metrics)
    assert labels["t3"] == "ok"  # it repeats nothing
    assert labels["t4"] == "prior_action_failed"
    [edge] = [i for i in report.inheritances if i.target == "t4"]
    assert edge.reason == "restates 'BK-7781' from t2" and report.turns[3].inherited_from == ["t1"]


def test_an_answer_that_does_not_repeat_the_wrong_value_stays_ok() -> None:
    report = _relay("Your invoice INV-20417 is open; I am checking the amount.")
    assert _labels(report)["t4"] == "ok"
    assert {i.target for i in report.inheritances} == {"t3"}


def test_a_right_relay_inherits_nothing() -> None:
    report = _relay("You owe €25.00 for invoice INV-20417.", wrong=False)
    assert set(_labels(report).values()) == {"ok"} and report.inheritances == []


def test_a_value_passed_as_an_argument_is_inherited_as_one() -> None:
    graph = nx.DiGraph([("t1", "t2"), ("t2", "t3")])
    turns = [
        make_turn("answer", text="The fee is 30,00 €.", turn_id="t1"),
        make_tool_call("pay_fee", {"amount": "EUR 30.00"}, turn_id="t2"),
        make_tool_call("pay_fee", {"amount": "EUR 31.00"}, turn_id="t3"),
    ]
    labels = propagate_failures(graph, {"t1"})
    edges = inherit_along_values(graph, labels, turns, {"t1": ["30,00 €"]})
    assert [(e.target, e.kind, e.reason) for e in edges] == [
        ("t2", "argument", "passes '30,00 €' from t1")
    ]
    assert labels["t2"] == (Label.PRIOR_ACTION_FAILED, ["t1"])
    assert labels["t3"] == (Label.OK, [])


def test_a_turn_the_failure_does_not_reach_inherits_nothing() -> None:
    graph = nx.DiGraph([("t1", "t2")])
    graph.add_node("t3")
    turns = [
        make_turn("answer", text="Room 417.", turn_id="t1"),
        make_turn("answer", text="Okay.", turn_id="t2"),
        make_turn("answer", text="Room 417 it is.", turn_id="t3"),
    ]
    labels = propagate_failures(graph, {"t1"})
    assert inherit_along_values(graph, labels, turns, {"t1": ["417"]}) == []
    assert labels["t3"] == (Label.OK, [])


def test_a_turn_that_fails_itself_keeps_its_own_label_and_sources() -> None:
    graph = nx.DiGraph([("t1", "t2")])
    turns = [
        make_turn("answer", text="30 EUR", turn_id="t1"),
        make_turn("answer", text="30 EUR", turn_id="t2"),
    ]
    labels = propagate_failures(graph, {"t1", "t2"})
    assert inherit_along_values(graph, labels, turns, {"t1": ["30 EUR"]}) == []
    assert labels["t2"] == (Label.PRIOR_ACTION_FAILED, ["t1"])
