"""The one value-support rule: each structural derivation, token-boundary matching, and
truthfulness and groundedness agreeing on the same value (``aem.evidence.judge_value``)."""

from __future__ import annotations

from typing import Any

from aem.compare.extract import extract_claims
from aem.compare.settings import CompareSettings
from aem.evidence import SeenValues, ValueVerdict, judge_value
from aem.foundation.model import MetricResult, Turn
from aem.metrics.groundedness import Groundedness
from aem.metrics.truthfulness import Truthfulness
from aem.testing import make_session, make_tool_call, make_turn, run_metric

SETTINGS = CompareSettings()


def _verdict(answer: str, stated: str, *seen: str | tuple[str, str]) -> ValueVerdict:
    """The rule's verdict on the value ``stated`` (its raw text) of ``answer``."""
    values = extract_claims(answer, SETTINGS)
    (value,) = [v for v in values if v.raw == stated]
    evidence = SeenValues.gather(seen, SETTINGS)
    return judge_value(value, evidence, SETTINGS, text=answer, own=values)


def _truthful(*turns: Turn) -> MetricResult:
    return run_metric(Truthfulness(), make_session(*turns))[-1]


def _grounded(*turns: Turn) -> MetricResult:
    return run_metric(Groundedness(), make_session(*turns))[-1]


def _result(rows: Any) -> str:
    import json

    return json.dumps(rows)


FLIGHTS = _result(
    {
        "flights": [
            {"flight": f"HAT{n}", "price": p} for n, p in ((101, 177), (202, 146), (303, 180))
        ]
    }
)


def test_a_count_is_the_length_of_the_returned_list() -> None:
    verdict = _verdict("I found 3 flights for you.", "3", ("t1 search result", FLIGHTS))
    assert verdict.status == "derived" and "3 items in t1 search result 'flights'" in verdict.quote
    verdict = _verdict("I found 5 flights for you.", "5", ("t1 search result", FLIGHTS))
    assert verdict.status == "unverified"


def test_a_count_that_is_no_list_length_is_unsupported_not_coincidence() -> None:
    rows = _result({"flights": [{"seat": 1}, {"seat": 2}], "gates": [1, 2, 5, 6]})
    verdict = _verdict("There are 4 flights.", "4", ("t1 search result", rows))
    assert verdict.status == "unverified"  # 4 is the gates list's length, not the flights'


def test_a_count_in_words_and_in_russian() -> None:
    rows = _result([{"title": "a"}, {"title": "b"}, {"title": "c"}])
    for answer, stated in (("Here are three options.", "three"), ("Есть три варианта.", "три")):
        verdict = _verdict(answer, stated, ("t1 search result", rows))
        assert verdict.status == "derived" and "3 items in t1 search result" in verdict.quote


def test_a_count_of_retrieved_documents() -> None:
    docs = [("t1 documents", "Refunds take a week."), ("t1 documents", "Returns are free.")]
    verdict = _verdict("Two articles cover this.", "Two", *docs)
    assert verdict.status == "derived" and "2 documents in t1 documents" in verdict.quote
    verdict = _verdict("Two passengers travel.", "Two", *docs)
    assert verdict.status != "derived"  # documents count as documents, not passengers


def test_a_count_of_what_nothing_lists_is_no_proof() -> None:
    """ "Compare the two menus" in a plan: nothing the turn saw enumerates menus, so the
    count can be neither supported nor failed; a duration is no list length either."""
    for answer, stated in (("Compare the two menus.", "two"), ("It took 27 years.", "27")):
        verdict = _verdict(answer, stated, ("t1 search result", FLIGHTS))
        assert verdict.status == "not checkable", answer


def test_a_total_of_n_amounts_the_answer_lists() -> None:
    answer = "Flights: $177, $146 and $180. The total is $503."
    verdict = _verdict(answer, "$503", "nothing")
    assert verdict.status == "derived" and verdict.quote.startswith("$503 = $177 + $146 + $180")
    assert _verdict(answer.replace("$503", "$513"), "$513", "nothing").status == "unverified"


def test_a_total_of_one_whole_column() -> None:
    verdict = _verdict("Your trip costs $503 in total.", "$503", ("t1 get result", FLIGHTS))
    assert verdict.status == "derived" and "'flights.price'" in verdict.quote
    # two of three rows adding up is coincidence, not the total of the column
    verdict = _verdict("Your trip costs $323 in total.", "$323", ("t1 get result", FLIGHTS))
    assert verdict.status == "unverified"


def test_a_pair_from_different_sources_is_no_total() -> None:
    verdict = _verdict("The total is $364.", "$364", ("t1 text", "You paid $121."), "Fee $243.")
    assert verdict.status == "unverified"


def test_a_remainder_of_a_stated_balance() -> None:
    answer = "The booking is $329, so you will have $171 remaining on the $500 certificate."
    verdict = _verdict(answer, "$171", "nothing")
    assert verdict.status == "derived" and "$500 - $329" in verdict.quote


def test_the_last_share_of_a_split_is_the_total_less_the_others() -> None:
    wallet = ("t1 get_wallet result", '{"voucher": {"amount": 90}, "card": {"last4": "4242"}}')
    total = ("t2 price result", '{"total": 240}')
    answer = "Payment:\n- Voucher: €90\n- Card: €150\n\nShall I go ahead?"
    verdict = _verdict(answer, "€150", wallet, total)
    assert verdict.status == "derived" and "240 - €90" in verdict.quote, verdict.quote
    # Shares that do not add up to a seen total, a share nothing holds, or amounts
    # outside one list prove nothing.
    assert _verdict(answer.replace("€150", "€160"), "€160", wallet, total).open
    other = "Payment:\n- Voucher: €80\n- Card: €160"
    assert _verdict(other, "€160", wallet, total).open
    # The answer's own total is the one the split makes, not an older one in view.
    restated = "The total is now €260.\n\n- Voucher: €90\n- Card: €150"
    assert _verdict(restated, "€150", wallet, total).open
    prose = "The voucher pays €90.\n\nThe card pays €150."
    assert _verdict(prose, "€150", wallet, total).open


def test_a_product_of_a_count_and_a_per_unit_value() -> None:
    policy = "Each passenger may check 2 free bags per passenger."
    answer = "With two passengers you get 4 free bags."
    verdict = _verdict(answer, "4", policy)
    assert verdict.status == "derived" and "two passenger" in verdict.quote
    assert _verdict(answer.replace("4 free", "6 free"), "6", policy).status == "unverified"


def test_ranges_in_four_spellings_are_the_same_values() -> None:
    for answer in ("3–5 days", "3-5 days", "3 to 5 days", "от 3 до 5 дней"):
        for seen in ("Delivery takes 3-5 days.", "Доставка от 3 до 5 дней."):
            verdict = _verdict(f"Delivery: {answer}.", "3", seen)
            assert verdict.status in ("supported", "not checkable"), (answer, seen)
            ends = [v for v in extract_claims(answer, SETTINGS) if v.kind == "number"]
            assert [float(v.value) for v in ends] == [3.0, 5.0], answer  # type: ignore[arg-type]


def test_number_words_read_as_numbers() -> None:
    values = extract_claims("twelve seats, a dozen eggs, двадцать дней", SETTINGS)
    assert [float(v.value) for v in values] == [12.0, 12.0, 20.0]  # type: ignore[arg-type]


def test_values_match_at_token_boundaries() -> None:
    assert _verdict("It is 4C outside.", "4C", "Forecast: 14C.").status == "unverified"
    assert _verdict("It is 14C outside.", "14C", "Forecast: 14C.").status == "supported"


def test_a_decimal_amount_is_an_amount_and_a_long_run_an_id() -> None:
    assert _verdict("Total 60520.00 JPY.", "60520.00 JPY", '{"total": 60520}').status == (
        "supported"
    )
    # a tracking number is checked digit for digit, not within the relative tolerance
    assert _verdict("Tracking 1234567.", "1234567", "Tracking 1234568.").status == "unverified"
    assert _verdict("Tracking 1234567.", "1234567", "ref 1234567 sent").rule == "verbatim"


def test_a_date_with_a_year_must_match_the_year() -> None:
    assert _verdict("Due March 1, 2025.", "March 1, 2025", "Due March 1, 2024.").open
    assert not _verdict("Due March 1, 2025.", "March 1, 2025", "due on 1 March").open


def test_a_time_written_with_a_day_offset_moves_the_record_to_the_next_day() -> None:
    # The date is what the call asked for; the result's arrival is written "+1".
    search = ("t1 search_trains arguments", '{"from": "Lyon", "date": "2026-06-12"}')
    rows = ("t1 search_trains result", '[{"train": "NX9", "arrival": "00:10:00+1"}]')
    assert _verdict("NX9 arrives June 13, 2026.", "June 13, 2026", search, rows).status == (
        "supported"
    )
    assert _verdict("NX9 arrives June 14, 2026.", "June 14, 2026", search, rows).open
    # Without the offset the next day is nobody's record; an ISO zone offset is no day.
    same_day = ("t1 search_trains result", '[{"train": "NX9", "arrival": "23:50:00"}]')
    assert _verdict("NX9 arrives June 13, 2026.", "June 13, 2026", search, same_day).open
    zoned = ("t1 search_trains result", '[{"train": "NX9", "arrival": "23:50+01:00"}]')
    assert _verdict("NX9 arrives June 13, 2026.", "June 13, 2026", search, zoned).open
    # Another call's offset moves no date of this one.
    other = ("t2 search_buses result", '[{"bus": "B1", "arrival": "00:30+1"}]')
    assert _verdict("NX9 arrives June 13, 2026.", "June 13, 2026", search, same_day, other).open


def test_both_metrics_read_the_day_offset_of_a_call_result() -> None:
    call = make_tool_call(
        "search_trains",
        {"from": "Lyon", "date": "2026-06-12"},
        result=[{"train": "NX9", "arrival": "00:10:00+1"}],
    )
    # The record holds no date field: a wrong day binds to nothing, so it is a doubt.
    for day, expected in (("June 13, 2026", "pass"), ("June 15, 2026", "unverified")):
        turns = (call, make_turn("answer", text=f"Train NX9 arrives on {day}."))
        truthful, grounded = _truthful(*turns), _grounded(*turns)
        assert truthful.outcome == expected, truthful.explanation
        assert grounded.outcome == expected, grounded.explanation


def test_a_value_under_the_same_key_is_contradicted() -> None:
    record = '{"reservation": {"total_price": 480, "fee": 20}}'
    verdict = _verdict("Total price: $503.", "$503", ("t1 get result", record))
    assert verdict.status == "contradicted" and verdict.rule == "labelled_field"
    assert "total_price in t1 get result gives 480" in verdict.quote


def test_a_small_integer_counting_nothing_is_not_checkable() -> None:
    verdict = _verdict("Step 2: confirm the booking.", "2", "nothing")
    assert verdict.status == "not checkable" and not verdict.open


def test_both_metrics_agree_on_a_small_integer() -> None:
    call = make_tool_call("search_flights", {"to": "Seattle", "date": "May 3"}, result=FLIGHTS)
    for answer, fails in (
        ("There are 3 flights to Seattle on May 3.", False),
        ("There are 5 flights to Seattle on May 3.", True),
    ):
        turns = (call, make_turn("answer", text=answer))
        truthful, grounded = _truthful(*turns), _grounded(*turns)
        assert (truthful.outcome == "fail") is fails, truthful.explanation
        assert (grounded.outcome == "fail") is fails, grounded.explanation
    numbering = (call, make_turn("answer", text="Step 2: flight HAT101 to Seattle is $177."))
    assert _truthful(*numbering).outcome != "fail"
    assert _grounded(*numbering).outcome != "fail"
