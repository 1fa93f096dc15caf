"""Values stated in free text, as truthfulness reads them."""

from __future__ import annotations

from datetime import date

from aem.compare import extract_values


def test_extracts_kinds_values_and_spans() -> None:
    text = "Refunded $1,200.50 for ORD-0042 in March 2026 (12 % of 10k)."
    values = extract_values(text)
    assert [(v.kind, v.raw) for v in values] == [
        ("number", "$1,200.50"),
        ("id", "ORD-0042"),
        ("period", "March 2026"),
        ("number", "12 %"),
        ("number", "10k"),
    ]
    for v in values:
        assert text[v.start : v.end] == v.raw
    assert values[0].value == 1200.5 and values[0].unit == "USD"
    assert values[1].value == "ord-42"
    assert values[2].value == (date(2026, 3, 1), date(2026, 3, 31))
    assert values[4].value == 10000.0


def test_dates_are_not_split_into_numbers() -> None:
    values = extract_values("between 2026-03-01 and 01.03.2026")
    assert [(v.kind, v.raw) for v in values] == [
        ("date", "2026-03-01"),
        ("date", "01.03.2026"),
    ]


def test_ranges_join_into_one_period() -> None:
    (value,) = extract_values("refunds from 2026-03-01 to 2026-03-31")
    assert value.kind == "period"
    assert value.value == (date(2026, 3, 1), date(2026, 3, 31))


def test_european_numbers_and_quarters() -> None:
    values = extract_values("Total 1 234,50 EUR in Q1 2026")
    assert [(v.kind, v.value) for v in values] == [
        ("number", 1234.5),
        ("period", (date(2026, 1, 1), date(2026, 3, 31))),
    ]


def test_ordinals_and_plain_words_are_not_ids() -> None:
    assert extract_values("the 1st flight is fine") == []
