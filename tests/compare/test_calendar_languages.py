"""Dates and relative days read back in every read language, rendered by babel's own rules.

Property tests: a date written the way CLDR writes it in English, German, Spanish or
Russian (full, long, medium) reads back as that day; the day after reads as another one.
Relative days ("tomorrow", "nächsten Dienstag", "el próximo martes") read as the day they
name on the session's day, and not at all when their readings disagree.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from babel import Locale
from babel.dates import format_date
from hypothesis import given, settings
from hypothesis import strategies as st

from aem.compare.extract import extract_values, values_memoised
from aem.compare.relative_days import resolve, set_session_day
from aem.foundation.vocabulary import READ_LANGUAGES, language_of

DAYS = st.dates(min_value=date(1990, 1, 1), max_value=date(2040, 12, 31))


def _plain(text: str) -> str:
    return text.replace("\u202f", " ").replace("\xa0", " ")


def _dates(text: str) -> list[date]:
    found = []
    for value in extract_values(text):
        if value.kind == "date" and isinstance(value.value, tuple):
            first = value.value[0]
            found.append(first.date() if hasattr(first, "date") else first)
    return found


@pytest.mark.parametrize("language", READ_LANGUAGES)
@pytest.mark.parametrize("style", ["full", "long", "medium"])
@settings(max_examples=40, deadline=None)
@given(day=DAYS)
def test_a_rendered_date_reads_back_as_its_day(language: str, style: str, day: date) -> None:
    text = f"On {_plain(format_date(day, style, locale=language))} at 10:00."
    assert _dates(text) == [day]
    moved = day + timedelta(days=1)
    assert _dates(f"On {_plain(format_date(moved, style, locale=language))}.") != [day]


@pytest.mark.parametrize("language", READ_LANGUAGES)
@settings(max_examples=30, deadline=None)
@given(today=DAYS, ahead=st.integers(min_value=1, max_value=13))
def test_a_weekday_relative_phrase_names_one_day_or_none(
    language: str, today: date, ahead: int
) -> None:
    """CLDR's "next <weekday>" is read only where its week reading and its everyday
    reading (the coming such day) are one day."""
    target = today + timedelta(days=ahead)
    key = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")[target.weekday()]
    phrase = str(Locale.parse(language)._data["date_fields"][key]["relative"][1])
    found = resolve(phrase, today)
    coming = today + timedelta(days=(target.weekday() - today.weekday()) % 7 or 7)
    next_week = today + timedelta(days=7 - today.weekday() + target.weekday())
    assert found == (coming if coming == next_week else None)


def test_relative_days_are_read_only_on_a_known_session_day() -> None:
    text = "Ihr Termin ist morgen um 9 Uhr. Guten Morgen!"
    assert _dates(text) == []  # no session day: nothing to bind "morgen" to
    with values_memoised():
        set_session_day(date(2026, 5, 7))
        assert _dates(text) == [date(2026, 5, 8)]  # "Morgen" of the greeting is no day
        assert _dates("Su cita es el próximo martes.") == [date(2026, 5, 12)]
        assert _dates("Приходите в следующий вторник или через 3 дня.") == [
            date(2026, 5, 12),
            date(2026, 5, 10),
        ]


def test_a_date_beside_a_relative_phrase_is_read_as_the_date() -> None:
    with values_memoised():
        set_session_day(date(2026, 5, 7))
        values = extract_values("am nächsten Dienstag, 21. Juli 2026 um 08:00 Uhr")
    assert [(v.kind, v.raw) for v in values] == [
        ("date", "Dienstag, 21. Juli 2026"),
        ("time", "08:00"),
    ]


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Your appointment is on May 12 with the doctor.", "en"),
        ("Ihr Termin ist am 12. Mai bei der Ärztin.", "de"),
        ("Su cita es el 12 de mayo con la doctora.", "es"),
        ("Ваша запись на 12 мая, врач вас примет.", "ru"),
        ("12:30 10,00 €", None),
    ],
)
def test_the_language_of_a_sentence(text: str, language: str | None) -> None:
    assert language_of(text) == language
