"""A fail needs a contradiction or a structural fact; what the trace cannot support is a
suspect. One generated session per binding class: the bound value proves a contradiction,
the same value unbound is ``unverified``, a worked-out value passes quoting how."""

from __future__ import annotations

import json
from typing import Any

import pytest

from aem.evaluate import Evaluator
from aem.foundation.model import Label, MetricResult, Outcome, Turn
from aem.metrics.groundedness import Groundedness
from aem.metrics.truthfulness import Truthfulness
from aem.settings import AemConfig
from aem.testing import make_case, make_session, make_tool_call, make_turn, run_metric
from tests.groundedness_kit import evaluate, rag_session, results

STRICT = AemConfig.model_validate({"verdicts": {"unsupported": "fail"}})


def _truth(*turns: Turn, config: AemConfig | None = None, **fields: Any) -> MetricResult:
    """Truthfulness on the last turn of ``turns``; ``fields`` go to the session."""
    case_fields = fields.pop("case", None)
    session = make_session(*turns, **fields)
    case = make_case(**case_fields) if case_fields else None
    return run_metric(Truthfulness(), session, case, config)[-1]


def _answer(text: str, **kw: Any) -> Turn:
    return make_turn("answer", text=text, **kw)


FLIGHTS = {
    "flights": [
        {"flight": "SK101", "date": "May 6", "departs": "11:30"},
        {"flight": "SK102", "date": "May 6", "departs": "15:00"},
        {"flight": "SK103", "date": "May 6", "departs": "18:00"},
    ]
}


@pytest.mark.parametrize(
    ("turns", "stated", "bound"),
    [
        # written arithmetic, checked for every number (11 is not "distinctive")
        ([_answer("So 2+3=11.")], "11", "5"),
        # the call whose every argument the sentence restates
        (
            [
                make_tool_call("add", {"a": 2, "b": 3}, result=5),
                _answer("The sum of 2 and 3 is 11."),
            ],
            "11",
            "5",
        ),
        (
            [
                make_tool_call("get_refund", {"order_id": "ORD-1"}, result={"refund": 45}),
                _answer("The refund for ORD-1 is $40."),
            ],
            "$40",
            "45",
        ),
        # the field of the record the sentence names by its id
        (
            [
                make_tool_call("search", {"to": "Oslo"}, result=FLIGHTS),
                _answer("SK101 leaves at 9:00."),
            ],
            "9:00",
            "11:30",
        ),
        # the one measurement of a unit in what the calls returned
        (
            [
                make_tool_call("weather", {"city": "Oslo"}, result={"now": "rain, 14C"}),
                _answer("It is 4C in Oslo."),
            ],
            "4C",
            "14C",
        ),
        # a count against the list its noun names
        (
            [
                make_tool_call("search", {"to": "Oslo"}, result=FLIGHTS),
                _answer("I found 4 flights."),
            ],
            "4",
            "3",
        ),
    ],
)
def test_a_bound_value_that_differs_is_a_contradiction_quoting_both(
    turns: list[Turn], stated: str, bound: str
) -> None:
    verdict = _truth(*turns)
    assert verdict.outcome is Outcome.FAIL, verdict.explanation
    assert f"'{stated}'" in verdict.explanation and bound in verdict.explanation
    assert verdict.evidence and verdict.evidence[0].expected  # where the bound value came from


@pytest.mark.parametrize(
    ("turns", "stated"),
    [
        # a count whose noun names no list ("options" for a list of flights)
        (
            [
                make_tool_call("search", {"to": "Oslo"}, result=FLIGHTS),
                _answer("I found 4 options."),
            ],
            "4",
        ),
        # three rows hold a departure time, and the sentence names none of them
        (
            [
                make_tool_call("search", {"to": "Oslo"}, result=FLIGHTS),
                _answer("It leaves at 9:00."),
            ],
            "9:00",
        ),
        # an amount nothing states and no record binds
        (
            [make_tool_call("search", {"to": "Oslo"}, result=FLIGHTS), _answer("Seats cost $417.")],
            "$417",
        ),
    ],
)
def test_the_same_values_unbound_are_suspects_not_failures(turns: list[Turn], stated: str) -> None:
    verdict = _truth(*turns)
    assert verdict.outcome in (Outcome.UNVERIFIED, Outcome.PASS), verdict.explanation
    if verdict.outcome is Outcome.UNVERIFIED:
        assert stated in [c.claim for c in verdict.unverified]
    assert verdict.evidence == []
    strict = _truth(*turns, config=STRICT)
    assert strict.outcome in (Outcome.FAIL, Outcome.PASS)


def test_a_worked_out_value_passes_quoting_its_derivation() -> None:
    prices = {"flights": [{"flight": "HAT105", "price": 105}, {"flight": "HAT190", "price": 190}]}
    verdict = _truth(
        make_tool_call("get_reservation", {"id": "ZFA04Y"}, result=prices),
        _answer("The total for HAT105 and HAT190 is $295."),
    )
    assert verdict.outcome is Outcome.PASS and "$295 = 105 + 190" in verdict.explanation


def test_a_case_fact_binds_by_name_or_near_miss_never_by_shape() -> None:
    case = {"facts": {"employee_id": "E-5521"}}
    slip = _truth(_answer("Filed for employee E-5512."), case=case)
    assert slip.outcome is Outcome.FAIL and "E-5512" in slip.explanation
    other = _truth(_answer("Report X-417 was filed for you."), case=case)
    assert other.outcome is not Outcome.FAIL, other.explanation
    named = _truth(make_tool_call("file_report", {"employee_id": "X-417"}), case=case)
    assert named.outcome is Outcome.FAIL and "employee_id" in named.explanation


def test_a_near_miss_of_an_id_the_user_states_is_a_contradiction() -> None:
    verdict = _truth(
        _answer("Your expense report E-5512 is approved."),
        user_inputs=["What happened to my expense report E-5521?"],
    )
    assert verdict.outcome is Outcome.FAIL and "E-5521" in verdict.explanation


TOLD = json.dumps([{"role": "system", "content": "Today is 2026-04-10."}])


@pytest.mark.parametrize(
    ("asked", "stated", "outcome"),
    [
        ("Sum my expenses for last quarter.", "Last quarter means Q1 2025.", Outcome.FAIL),
        ("Sum my expenses for last quarter.", "Last quarter means Q1 2026.", Outcome.PASS),
        ("Сколько я потратил за прошлый месяц?", "Считаю расходы за March 2025.", Outcome.FAIL),
        ("Покажи расходы за март.", "Считаю расходы за March 2026.", Outcome.PASS),
    ],
)
def test_a_relative_period_binds_to_the_sessions_date(
    asked: str, stated: str, outcome: Outcome
) -> None:
    verdict = _truth(make_turn("reasoning", text=stated, seen_inputs=[TOLD]), user_inputs=[asked])
    assert verdict.outcome is outcome, verdict.explanation


def test_a_call_s_start_and_end_are_held_to_the_users_period_together() -> None:
    call = make_tool_call("get_expenses", {"start_date": "2025-01-01", "end_date": "2025-03-31"})
    told = make_turn("reasoning", text="Fetching them.", seen_inputs=[TOLD])
    verdict = run_metric(
        Truthfulness(), make_session(told, call, user_inputs=["My expenses for last quarter?"])
    )[-1]
    assert verdict.outcome is Outcome.FAIL and "2026-01-01..2026-03-31" in verdict.explanation


def test_the_agents_own_earlier_words_support_nothing() -> None:
    """A plan stated a turn earlier ("the refund is $417") does not support the answer
    that repeats it: both are left unverified, and both are suspects — the answer is what
    the user was told, the plan where its value came from (a plan's doubt no answer
    repeats would be a doubt on its step only)."""
    history = json.dumps(
        [
            {"role": "user", "content": "What is my refund?"},
            {"role": "assistant", "content": "I think the refund is $417."},
        ]
    )
    session = make_session(
        make_turn("reasoning", text="I think the refund is $417."),
        _answer("Your refund is $417.", seen_inputs=[history]),
        user_inputs=["What is my refund?"],
    )
    report = Evaluator(AemConfig(), {}, [Truthfulness()]).evaluate(session)
    labels = [t.label for t in report.turns]
    assert labels == [Label.SUSPECT, Label.SUSPECT]
    assert report.turns[1].metrics[0].outcome is Outcome.UNVERIFIED
    assert report.root_causes == [] and [s.turn_id for s in report.suspects] == ["t1", "t2"]
    assert report.doubts == []


def test_a_russian_duration_contradicting_the_passage_fails_groundedness() -> None:
    docs = ["Returns are accepted within 14 days of delivery."]
    for answer in (
        "Возврат возможен в течение 30 дней [1].",
        "Returns are accepted within 30 days [1].",
    ):
        (found,) = results(evaluate(rag_session(answer, docs), [Groundedness()]), "groundedness")
        assert found.outcome is Outcome.FAIL and "30" in found.explanation, answer


def test_a_wrong_sum_after_the_call_that_made_it_fails_groundedness_too() -> None:
    session = rag_session("The sum is 2 + 3 = 11.", tool_result="5", question="What is 2 + 3?")
    (found,) = results(evaluate(session, [Groundedness()]), "groundedness")
    assert found.outcome is Outcome.FAIL and "'11'" in found.explanation


def test_strict_teams_get_support_as_proof_back_and_the_report_says_so() -> None:
    turns = (
        make_tool_call("search", {"to": "Oslo"}, result=FLIGHTS),
        _answer("Seats cost $417."),
    )
    default = Evaluator(AemConfig(), {}, [Truthfulness()]).evaluate(make_session(*turns))
    strict = Evaluator(STRICT, {}, [Truthfulness()]).evaluate(make_session(*turns))
    assert [t.label for t in default.turns] == [Label.OK, Label.SUSPECT]
    assert [t.label for t in strict.turns] == [Label.OK, Label.ROOT_CAUSE]


@pytest.mark.parametrize(
    ("stated", "outcome"),
    [
        ("Totals for Q1 2025 are ready.", Outcome.FAIL),
        ("Totals for March 2025 are ready.", Outcome.UNVERIFIED),  # a month binds no quarter
        ("Totals for Q1 2026 are ready.", Outcome.PASS),
    ],
)
def test_a_case_period_binds_the_same_span_in_another_year(stated: str, outcome: Outcome) -> None:
    verdict = _truth(_answer(stated), case={"facts": {"period": "2026-Q1"}})
    assert verdict.outcome is outcome, verdict.explanation
