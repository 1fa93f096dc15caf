"""A passing truthfulness verdict says what was checked: "every stated value is
supported" only when values were read and judged; otherwise that nothing was stated, or
that the text is in a language whose values AEM does not read."""

from __future__ import annotations

from aem.foundation.model import MetricResult
from aem.metrics.truthfulness import Truthfulness
from aem.testing import make_session, make_tool_call, make_turn, run_metric

LOOKUP = make_tool_call("get_booking", {"id": "BK-2291"}, result={"total": 240, "id": "BK-2291"})


def _verdict(answer: str) -> MetricResult:
    session = make_session(LOOKUP, make_turn("answer", text=answer))
    return run_metric(Truthfulness(), session)[-1]


def test_values_read_and_supported_are_said_supported() -> None:
    verdict = _verdict("Your booking BK-2291 costs $240 in total.")
    assert verdict.outcome == "pass"
    assert verdict.explanation.startswith("every stated value is supported")


def test_an_answer_without_values_says_there_was_nothing_to_check() -> None:
    verdict = _verdict("Your booking is confirmed; have a good trip.")
    assert verdict.outcome == "pass"
    assert verdict.explanation == "states no value to check"


def test_an_answer_in_an_unread_language_says_no_value_was_read() -> None:
    for answer in (
        "Votre réservation est confirmée pour mardi prochain, merci beaucoup.",
        "您的预订已确认，下周二见。",
    ):
        verdict = _verdict(answer)
        assert verdict.outcome == "pass", answer
        assert verdict.explanation.startswith("no value read: the text is in a language"), answer
        assert "en, de, es, ru" in verdict.explanation


def test_a_wrong_value_in_a_read_language_still_fails() -> None:
    assert _verdict("Ihre Buchung BK-2291 kostet insgesamt 250 $.").outcome == "fail"
