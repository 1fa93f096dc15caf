"""Values stated in free text, as truthfulness reads them."""

from __future__ import annotations

from datetime import date

from aem.compare import extract_values
from aem.compare.extract import values_memoised
from aem.compare.settings import CompareSettings


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


def test_times_of_day_and_days_without_a_year_are_values_of_their_own() -> None:
    """Seen on tau-bench answers: "08:30 PM" was read as the number 8 and "May 26" as
    26, neither of which any record holds (``20:30:00``, ``2024-05-26``)."""
    text = "Departs 08:30 PM (20:30:00), lands 12:05 a.m.; on May 26, not May 26, 2024 or 3:1"
    values = extract_values(text)
    assert [(v.kind, v.value) for v in values] == [
        ("time", "time:20:30"),
        ("time", "time:20:30"),
        ("time", "time:00:05"),
        ("day", "day:05-26"),
        ("date", (date(2024, 5, 26), date(2024, 5, 26))),
        ("number", 3.0),
    ]
    assert [v.value for v in extract_values("26th of May, 26 мая")] == ["day:05-26"] * 2
    # "may" the verb and an impossible day are no days
    assert {v.kind for v in extract_values("you may 5 times; Feb 30")} == {"number"}


def test_an_hour_with_am_or_pm_is_a_time() -> None:
    """Seen on tau-bench: the user asked for flights "after 11am"; the agent's "after
    11:00 AM" is the same time."""
    assert [v.value for v in extract_values("after 11am, before 7 p.m., not 11:00")] == [
        "time:11:00",
        "time:19:00",
        "time:11:00",
    ]


def test_memoised_extraction_reads_as_plain_extraction() -> None:
    """Within ``values_memoised`` a text is extracted once per reading settings; each
    caller still gets its own list, and settings that read the text differently are
    not confused with each other."""
    text = "Refund $1,200.50 for ORD-42 in March 2026"
    decimal = CompareSettings(ambiguous_comma="decimal")
    with values_memoised():
        first = extract_values(text)
        first.clear()
        again = extract_values(text)
        as_thousands = extract_values("1,500 kg")
        as_decimal = extract_values("1,500 kg", decimal)
    assert again == extract_values(text) and again
    assert [v.value for v in as_thousands] == [1500.0]
    assert [v.value for v in as_decimal] == [1.5]
