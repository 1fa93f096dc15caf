"""Property tests: every way of writing a value means that value; a changed value does not."""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from aem.compare import compare

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip
cents = st.integers(min_value=0, max_value=10**9)
days = st.integers(min_value=0, max_value=365 * 60).map(lambda n: date(1990, 1, 1) + timedelta(n))


def _us(c: int) -> str:
    return f"{c / 100:,.2f}"


def _eu(c: int) -> str:
    return f"{c / 100:,.2f}".replace(",", " ").replace(".", ",")


def _de(c: int) -> str:
    return f"{c / 100:,.2f}".replace(",", "#").replace(".", ",").replace("#", ".")


@settings(max_examples=300, deadline=None)
@given(cents, st.sampled_from([_us, _eu, _de, lambda c: f"${_us(c)}", lambda c: f"{_eu(c)} €"]))
def test_any_written_amount_equals_its_value(c: int, write: object) -> None:
    text = write(c)  # type: ignore[operator]
    result = compare(text, c / 100)
    assert result.same, result.reason


@settings(max_examples=300, deadline=None)
@given(cents, st.integers(min_value=1, max_value=10**6))
def test_amounts_that_differ_by_a_cent_or_more_differ(c: int, delta: int) -> None:
    result = compare(_eu(c), (c + delta) / 100)
    assert not result.same, result.reason


@settings(max_examples=300, deadline=None)
@given(days)
def test_every_date_format_means_the_same_day(d: date) -> None:
    forms = [
        d.isoformat(),
        f"{MONTHS[d.month - 1]} {d.day}, {d.year}",
        f"{d.day} {MONTHS[d.month - 1]} {d.year}",
        d.strftime("%d.%m.%Y"),
        f"{MONTHS[d.month - 1][:3]} {d.day} {d.year}",
    ]
    for form in forms:
        assert compare(d.isoformat(), form).same, form


@settings(max_examples=300, deadline=None)
@given(days, st.integers(min_value=1, max_value=4000))
def test_different_days_differ(d: date, shift: int) -> None:
    other = d + timedelta(days=shift)
    assert not compare(d.isoformat(), f"{MONTHS[other.month - 1]} {other.day}, {other.year}").same


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1990, max_value=2049), st.integers(min_value=1, max_value=12))
def test_month_forms_equal_their_date_range(year: int, month: int) -> None:
    first = date(year, month, 1)
    last = (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)
    forms = [f"{year}-{month:02d}", f"{MONTHS[month - 1]} {year}", f"{month:02d}/{year}"]
    for form in forms:
        assert compare(form, f"{first.isoformat()}..{last.isoformat()}").same, form
        assert compare(form, {"start": first.isoformat(), "end": last.isoformat()}).same
        assert not compare(form, f"{MONTHS[month - 1]} {year + 1}").same


prefix = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ", min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(prefix, st.integers(min_value=0, max_value=10**6), st.sampled_from(["-", "_", " ", ""]))
def test_ids_survive_case_separators_and_padding(p: str, n: int, sep: str) -> None:
    assert compare(f"{p}-{n}", f" {p.lower()}{sep}{n:08d} ").same


@settings(max_examples=300, deadline=None)
@given(prefix, st.integers(min_value=0, max_value=10**6), st.integers(min_value=1, max_value=99))
def test_ids_with_another_number_differ(p: str, n: int, delta: int) -> None:
    assert not compare(f"{p}-{n}", f"{p}-{n + delta}").same


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=-1000, max_value=1000), max_size=6), st.randoms())
def test_lists_compare_as_multisets(items: list[int], rnd: object) -> None:
    shuffled = list(items)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert compare(items, [str(x) for x in shuffled]).same
    assert not compare(items, [*shuffled, 0]).same
