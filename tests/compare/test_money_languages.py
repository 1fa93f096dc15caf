"""Money read back as babel renders it in every read language: amount and currency."""

from __future__ import annotations

import pytest
from babel.numbers import format_currency
from hypothesis import given, settings
from hypothesis import strategies as st

from aem.compare.extract import extract_values
from aem.vocabulary import READ_LANGUAGES

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
