"""One sentence splitter for claims and bindings, and a record's ISO start binding the time
said of it. (Case facts bound only by name: tests/bench/test_bench_domains.py, whose
sessions pass a ``date_of_birth`` beside a case's ``date`` fact.)"""

from __future__ import annotations

import pytest
from babel.numbers import format_currency
from hypothesis import given, settings
from hypothesis import strategies as st

from aem.compare.extract import extract_values
from aem.compare.settings import CompareSettings
from aem.evidence.bindings import Call, contradiction
from aem.evidence.claims import sentence_pieces, split_claims


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("Termin am 22. Juli bei Dr. Weber. Es kostet 25 €.", 2),
        ("Le atenderá Dra. María Gómez. Gracias por todo.", 2),
        ("Запись на 11 сент. 2026 г. в 09:30. Вас примет Анна.", 2),
        ("Contact J. Smith today. The fee is $25. Thanks a lot.", 3),
        ("We meet in May. It costs $5.", 2),  # a whole month name ends a sentence
    ],
)
def test_titles_ordinals_and_abbreviations_end_no_sentence(text: str, pieces: int) -> None:
    assert len(sentence_pieces(text)) == pieces
    assert all(not claim.text.endswith(("Dr.", "22.", "Dra.")) for claim in split_claims(text))


def test_an_iso_start_binds_the_time_said_of_its_record() -> None:
    settings = CompareSettings()
    text = "Your appointment APT-20417 is on May 12, 2026 at 10:30 with Dr. Weber."
    record = {"reference": "APT-20417", "start": "2026-05-12T09:30:00", "doctor": "Dr. Weber"}
    time = next(v for v in extract_values(text, settings) if v.kind == "time")
    found = contradiction(time, text, [Call("t2 get_appointment", {}, record)], settings)
    assert found is not None and found.bound == "2026-05-12T09:30:00"
    right = text.replace("10:30", "09:30")
    time = next(v for v in extract_values(right, settings) if v.kind == "time")
    assert contradiction(time, right, [Call("t2 get_appointment", {}, record)], settings) is None


@pytest.mark.parametrize("locale", ["en", "de", "es", "ru"])
@pytest.mark.parametrize("currency", ["EUR", "USD", "RUB"])
@settings(max_examples=25, deadline=None)
@given(
    a=st.integers(min_value=1, max_value=99_999),
    b=st.integers(min_value=1, max_value=99_999),
    off=st.integers(min_value=1, max_value=500),
)
def test_written_sums_of_money_are_arithmetic_in_any_locale(
    locale: str, currency: str, a: int, b: int, off: int
) -> None:
    """A sum written with amounts as babel renders them is checked like "25 + 15 = 40"."""
    settings_ = CompareSettings()

    def money(cents: int) -> str:
        return format_currency(cents / 100, currency, locale=locale).replace("\xa0", " ")

    for total, wrong in ((a + b, False), (a + b + off, True)):
        text = f"{money(a)} + {money(b)} = {money(total)}"
        result = extract_values(text, settings_)[-1]
        found = contradiction(result, text, [], settings_)
        assert (found is not None) is wrong, text


@pytest.mark.parametrize(
    "template",
    [
        "3 nights × {} = {}",
        "3 Tage × {} = {}",
        "3 noches x {} = {}",
        "3 ночи * {} = {}",
    ],
)
def test_a_count_with_its_noun_is_an_operand(template: str) -> None:
    settings_ = CompareSettings()
    for total, wrong in (("$135.00", False), ("$145.00", True)):
        text = template.format("$45.00", total)
        found = contradiction(extract_values(text, settings_)[-1], text, [], settings_)
        assert (found is not None) is wrong, text
