"""Deterministic comparison: formats that must match, near misses that must not."""

from __future__ import annotations

import pytest

from aem.compare import CompareSettings, SemanticComparator, compare, parse_date, parse_number

SAME = [
    # numbers across formats, units and currencies
    ("1 234,50", 1234.5, "number"),
    ("1,234.5", "1234.5", "number"),
    ("1.234,5", 1234.5, "number"),
    ("1.2k", 1200, "number"),
    ("12 %", "12%", "number"),
    ("$1,200", 1200, "number"),
    ("€5", "5 EUR", "number"),
    ("5 kg", 5, "number"),
    ("5", 5, "number"),
    (5, 5.0, "number"),
    ("120.50", 120.5, "number"),
    ("1.5M", 1_500_000, "number"),
    # dates, periods, ranges
    ("2026-03-01", "March 1, 2026", "date"),
    ("01.03.2026", "2026-03-01", "date"),
    ("1 March 2026", "2026-03-01", "date"),
    ("2026-03", "March 2026", "period"),
    ("03/2026", "2026-03", "period"),
    ("Mar 2026", "2026/03", "period"),
    ("Q1 2026", "2026-Q1", "period"),
    ("Q1 2026", "2026-01-01..2026-03-31", "period"),
    ("2026-03", "2026-03-01..2026-03-31", "period"),
    ("2026-03", "2026-03-01 to 2026-03-31", "period"),
    ("2026-03", {"start": "2026-03-01", "end": "2026-03-31"}, "period"),
    ({"from": "2026-03-01", "to": "2026-03-31"}, "March 2026", "period"),
    ("2026-03-01T10:00:00Z", "2026-03-01T10:00:00+00:00", "date"),
    ("2026-03-01T12:00:00+02:00", "2026-03-01T10:00:00Z", "date"),
    # identifiers
    ("ORD-42", "ord 42", "id"),
    ("ORD-42", "ORD_42", "id"),
    ("ORD-0042", "ORD-42", "id"),
    ("ORD0042", "ord-42", "id"),
    ("#W2378156", "w2378156", "id"),
    # booleans and enums
    ("yes", True, "bool"),
    ("no", False, "bool"),
    ("True", "yes", "bool"),
    ("Economy", " economy ", "enum"),
    # structures
    ({"a": 1, "b": "ORD-42"}, {"b": "ord 42", "a": "1.0"}, "json"),
    ([1, 2, 3], [3, 1, 2], "json"),
    ('{"items": [{"sku": "A-1", "qty": 2}]}', {"items": [{"qty": "2", "sku": "a1"}]}, "json"),
    # exact
    (None, None, "exact"),
    ("same text", "same text", "exact"),
]

DIFFERENT = [
    ("1234.5", "1243.5", "number"),
    ("$1,200", "$1,300", "number"),
    ("5 kg", "5 lb", "number"),
    (5, "five apples", "number"),
    ("March 2025", "March 2026", "period"),
    ("2026-03", "2026-04", "period"),
    ("2026-03", "2026-03-01", "period"),
    ("2026-03", "2026-03-01..2026-03-30", "period"),
    ("2026-03-01", "2026-03-02", "date"),
    ("2026-03-01T10:00:00Z", "2026-03-01T10:00:01Z", "date"),
    ("2026-03-01", "not a date", "date"),
    ("ORD-42", "ORD-43", "id"),
    ("ORD-42", "ORD-420", "id"),
    ("ORD-42", "INV-42", "id"),
    ("yes", False, "bool"),
    ("economy", "business", "enum"),
    ([1, 2], [1, 2, 2], "json"),
    ({"a": 1}, {"a": 1, "b": 2}, "json"),
    ({"a": 1}, [1], "json"),
    (None, "", "exact"),
]


@pytest.mark.parametrize(("expected", "actual", "kind"), SAME)
def test_equivalent_forms_are_the_same(expected: object, actual: object, kind: str) -> None:
    result = compare(expected, actual)
    assert result.same, result.reason
    assert result.kind == kind
    assert result.score == 1.0


@pytest.mark.parametrize(("expected", "actual", "kind"), DIFFERENT)
def test_near_misses_differ(expected: object, actual: object, kind: str) -> None:
    result = compare(expected, actual)
    assert not result.same, result.reason
    assert result.kind == kind
    assert result.score < 1.0


@pytest.mark.parametrize(("expected", "actual", "kind"), SAME[:5] + DIFFERENT[:5])
def test_comparison_is_symmetric_in_verdict(expected: object, actual: object, kind: str) -> None:
    assert compare(expected, actual).same == compare(actual, expected).same
    assert compare(actual, expected).kind == kind


def test_number_reason_names_values_delta_and_tolerance() -> None:
    result = compare("1 234,50", 1234.5)
    assert result.reason == "1 234,50 == 1234.5 (|Δ|=0 ≤ abs_tol 0.005)"
    assert result.threshold == 0.005


def test_number_tolerances_come_from_settings() -> None:
    loose = SemanticComparator(CompareSettings(number_abs_tol=1.0))
    assert loose.compare(100, 100.9).same
    assert loose.compare(100, 100.9).threshold == 1.0
    assert not SemanticComparator().compare(100, 100.9).same
    relative = SemanticComparator(CompareSettings(number_abs_tol=0, number_rel_tol=0.01))
    result = relative.compare(1000, 1009)
    assert result.same and "rel_tol" in result.reason and result.threshold == pytest.approx(10.09)


def test_units_one_side_only_are_ignored_but_conflicting_units_differ() -> None:
    assert compare("$1,200", 1200).same
    assert not compare("$5", "€5").same
    lenient = CompareSettings(number_units_must_agree=False)
    assert compare("$5", "€5", settings=lenient).same


def test_ambiguous_comma_setting() -> None:
    assert parse_number("1,234").value == 1234.0  # type: ignore[union-attr]
    assert parse_number("1,234", "decimal").value == 1.234  # type: ignore[union-attr]
    assert parse_number("1234,56").value == 1234.56  # type: ignore[union-attr]


def test_slash_dates_follow_day_first_setting_unless_unambiguous() -> None:
    us, eu = CompareSettings(), CompareSettings(slash_dates_day_first=True)
    assert compare("01/03/2026", "2026-01-03", settings=us).same
    assert compare("01/03/2026", "2026-03-01", settings=eu).same
    assert compare("13/01/2026", "2026-01-13", settings=us).same  # 13 cannot be a month


def test_date_against_instant_is_configurable() -> None:
    assert compare("2026-03-01", "2026-03-01T23:59:00").same
    strict = CompareSettings(date_matches_datetime=False)
    assert not compare("2026-03-01", "2026-03-01T23:59:00", settings=strict).same


def test_time_tolerance_from_settings() -> None:
    loose = CompareSettings(time_tol_seconds=60)
    result = compare("2026-03-01T10:00:00Z", "2026-03-01T10:00:30Z", settings=loose)
    assert result.same and result.threshold == 60


def test_leading_zeros_in_ids_are_configurable() -> None:
    strict = CompareSettings(id_ignore_leading_zeros=False)
    assert compare("ORD-0042", "ORD-42").same
    assert not compare("ORD-0042", "ORD-42", settings=strict).same


def test_lists_in_order_when_configured() -> None:
    ordered = CompareSettings(list_order_matters=True)
    assert compare([1, 2], [2, 1]).same
    assert not compare([1, 2], [2, 1], settings=ordered).same


def test_json_reason_points_at_the_bad_key() -> None:
    result = compare({"order": {"id": "ORD-42", "qty": 2}}, {"order": {"id": "ORD-43", "qty": 2}})
    assert not result.same
    assert result.reason.startswith("order: id: 'ORD-42' != 'ORD-43'")
    assert 0 < result.score < 1


def test_forced_kind_reads_both_values_that_way() -> None:
    comparator = SemanticComparator()
    assert comparator.compare("0042", "42", kind="id").kind == "id"
    assert comparator.compare("0042", "42", kind="exact").same is False
    assert comparator.compare("42", "forty-two", kind="number").same is False
    with pytest.raises(ValueError, match="unknown kind"):
        comparator.compare(1, 1, kind="colour")


def test_deterministic_kinds_never_load_the_model() -> None:
    comparator = SemanticComparator()
    for expected, actual, _ in SAME + DIFFERENT:
        comparator.compare(expected, actual)
    assert not comparator.model_loaded


def test_text_without_embeddings_needs_normalised_equality() -> None:
    comparator = SemanticComparator(CompareSettings(embed_free_text=False))
    assert comparator.compare("The flight is Delayed.", "the flight is delayed").same
    result = comparator.compare("The flight is delayed", "Your flight departs late")
    assert not result.same and result.kind == "text"
    assert not comparator.model_loaded


def test_parse_date_rejects_impossible_dates() -> None:
    assert parse_date("2026-02-30") is None
    assert parse_date("2026-13") is None
