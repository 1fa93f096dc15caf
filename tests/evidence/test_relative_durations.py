"""A phrase like "in 5 days" states a day and a duration: a source holding either supports it.

A repair desk's record says ``"eta_days": 5``; the answer says "expect it back in 5
days" (or "in 5 Tagen", "dentro de 5 días", "через 5 дней"). Read only as the day five
days on, nothing the turn saw held that day, so every correct answer was a suspect. The
duration is tried once nothing bound the day: another day a source gives still
contradicts it, and another count is still a suspect. "Within 5 days" is a bound, not
the day in five days, and is not read as one.
"""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest
from babel.dates import format_timedelta
from babel.units import format_unit

from aem.compare.extract import extract_values, values_memoised
from aem.compare.relative_days import find_relative_days, set_session_day, stated_duration
from aem.evaluate import Evaluator
from aem.foundation.model import MetricResult, Outcome
from aem.foundation.vocabulary import READ_LANGUAGES
from aem.metrics.truthfulness import Truthfulness
from aem.settings import AemConfig
from aem.testing import make_session, make_tool_call, make_turn

TOLD = json.dumps([{"role": "system", "content": "Today is 2026-12-06."}])
IN_FIVE_DAYS = {
    "en": "Ticket INC-20931 is open; expect the laptop back in {n} days.",
    "de": "Ticket INC-20931 ist offen; Sie bekommen den Laptop in {n} Tagen zurück.",
    "es": "El ticket INC-20931 está abierto; tendrá el portátil dentro de {n} días.",
    "ru": "Заявка INC-20931 открыта; ноутбук вернут через {n} дней.",
}


def _truth(answer: str, result: dict[str, object]) -> MetricResult:
    call = make_tool_call(
        "create_repair_ticket",
        {"serial": "SN-48213-KX"},
        result={"ticket_id": "INC-20931", **result},
    )
    turn = make_turn("answer", text=answer, seen_inputs=[TOLD])
    # The evaluator sets the session's day ("Today is …"), which relative days are read on.
    report = Evaluator(AemConfig(), {}, [Truthfulness()]).evaluate(make_session(call, turn))
    return report.turns[-1].metrics[0]


@pytest.mark.parametrize("language", sorted(IN_FIVE_DAYS))
@pytest.mark.parametrize(
    "result", [{"eta_days": 5}, {"repair": {"days_to_return": 5}}, {"note": "back in 5 days"}]
)
def test_the_duration_a_source_holds_supports_in_n_days(
    language: str, result: dict[str, object]
) -> None:
    verdict = _truth(IN_FIVE_DAYS[language].format(n=5), result)
    assert verdict.outcome is Outcome.PASS, verdict.explanation


@pytest.mark.parametrize("language", sorted(IN_FIVE_DAYS))
def test_another_count_is_still_a_suspect(language: str) -> None:
    verdict = _truth(IN_FIVE_DAYS[language].format(n=9), {"eta_days": 5})
    assert verdict.outcome is Outcome.UNVERIFIED, verdict.explanation


def test_a_key_that_only_contains_the_unit_s_letters_supports_nothing() -> None:
    verdict = _truth(IN_FIVE_DAYS["de"].format(n=5), {"stage": 5})  # "stage" holds "tage"
    assert verdict.outcome is Outcome.UNVERIFIED, verdict.explanation


def test_weeks_are_supported_by_their_days() -> None:
    verdict = _truth("Expect the laptop back in 2 weeks.", {"eta_days": 14})
    assert verdict.outcome is Outcome.PASS, verdict.explanation


def test_the_day_a_source_gives_still_contradicts_in_n_days() -> None:
    """The record gives the day (2026-12-11 is in five days): "in 9 days" is another day,
    a proof, even though the record also holds a nine."""
    verdict = _truth(
        IN_FIVE_DAYS["en"].format(n=9), {"ready_on": "2026-12-11", "eta_days": 5, "bay": 9}
    )
    assert verdict.outcome is Outcome.FAIL, verdict.explanation


@pytest.mark.parametrize(
    "text",
    [
        "Returns are accepted within 5 days.",
        "Ihr Termin 5 Tage vorher absagen.",  # "Termin" ends with "in"
    ],
)
def test_in_n_days_is_read_only_as_whole_words(text: str) -> None:
    with values_memoised():
        set_session_day(date(2026, 12, 6))
        days = [v for v in extract_values(text) if v.kind == "date"]
    assert days == []


def test_stated_duration_reads_the_phrase_and_nothing_else() -> None:
    assert stated_duration("через 3 дня") == (3, "day")
    assert stated_duration("in 2 Wochen") == (2, "week")
    assert stated_duration("within 5 days") is None
    assert stated_duration("morgen") is None


@pytest.mark.parametrize("language", READ_LANGUAGES)
@pytest.mark.parametrize("days", [1, 2, 5, 14, 21])
def test_babel_s_in_n_days_reads_back_as_its_day_and_its_duration(language: str, days: int) -> None:
    """The phrase as CLDR writes it ("in 2 Wochen", "через 5 дней") is the day that many
    days on, and states the count babel wrote it with."""
    today = date(2026, 12, 6)
    said = format_timedelta(timedelta(days=days), add_direction=True, locale=language)
    [(day, start, end)] = list(find_relative_days(f"Ok: {said}.", today))
    assert day == today + timedelta(days=days) and f"Ok: {said}."[start:end] == said
    count, unit = stated_duration(said) or (0, "")
    assert count * (7 if unit == "week" else 1) == days


@pytest.mark.parametrize("language", READ_LANGUAGES)
@pytest.mark.parametrize("count", [2, 5, 11])
def test_a_count_of_days_as_babel_writes_it_supports_in_n_days(language: str, count: int) -> None:
    """The source writes the duration in its own language ("5 Tage", "11 дней"); the
    answer says it ahead in another ("in 5 days")."""
    note = format_unit(count, "duration-day", length="long", locale=language)
    answer = IN_FIVE_DAYS["en"].replace("5", "{n}").format(n=count)
    assert _truth(answer, {"note": f"repair time {note}"}).outcome is Outcome.PASS
    other = IN_FIVE_DAYS["en"].replace("5", "{n}").format(n=count + 1)
    assert _truth(other, {"note": f"repair time {note}"}).outcome is Outcome.UNVERIFIED
