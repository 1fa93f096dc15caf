"""Money read back as babel renders it in every read language: amount and currency."""

from __future__ import annotations

import pytest
from babel.numbers import format_currency
from hypothesis import given, settings
from hypothesis import strategies as st

from aem.compare.extract import extract_values
from aem.foundation.vocabulary import READ_LANGUAGES

CENTS = st.integers(min_value=1, max_value=99_999_999)


def _money(text: str) -> list[tuple[float, str | None]]:
    return [
        (round(float(v.value), 2), v.unit)  # type: ignore[arg-type]
        for v in extract_values(text)
        if v.kind == "number"
    ]


@pytest.mark.parametrize("language", READ_LANGUAGES)
@pytest.mark.parametrize("currency", ["EUR", "USD", "GBP", "RUB", "CHF"])
@settings(max_examples=30, deadline=None)
@given(cents=CENTS)
def test_an_amount_reads_back_with_its_currency(language: str, currency: str, cents: int) -> None:
    written = format_currency(cents / 100, currency, locale=language).replace("\xa0", " ")
    assert _money(f"Total: {written}.") == [(round(cents / 100, 2), currency)], written
    other = format_currency((cents + 100) / 100, currency, locale=language).replace("\xa0", " ")
    assert _money(f"Total: {other}.") != [(round(cents / 100, 2), currency)]


@pytest.mark.parametrize("language", READ_LANGUAGES)
@pytest.mark.parametrize("currency", ["EUR", "USD", "GBP", "RUB"])
def test_a_currency_named_in_words_is_money(language: str, currency: str) -> None:
    """CLDR's display name of a currency, singular or plural ("19 euros", "12 Euro",
    "20 US dollars", "435 российских рублей"), makes the number an amount of it."""
    from babel import Locale

    name = Locale.parse(language).currencies[currency]
    assert _money(f"Es kostet 19 {name}.") == [(19.0, currency)]


def test_a_word_that_also_weighs_is_no_currency() -> None:
    assert _money("Add 5 pounds of flour.") == [(5.0, None)]
