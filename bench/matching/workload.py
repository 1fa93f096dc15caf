"""A labelled tool-matching workload: trajectories of 3–8 calls, each with its right verdict.

Used by ``tests/matching/test_workload.py`` (AEM must get every category right) and by
``bench/matching/run.py`` (speed and per-category correctness beside the peers). It is a
generator, not a data file, so it is reproducible from a seed and costs nothing to store.

Categories and their right verdict (the order-independent rule of docs/semantics.md; the
first eight are the perturbations peer matchers are usually probed with, the rest the
cases greedy pairing breaks):

==================== ====== ==========================================================
category             verdict what changes between expected and actual
==================== ====== ==========================================================
identical            pass   nothing
reordered            pass   calls shuffled, declared order pairs kept
swapped_duplicates   pass   two calls of one tool (different arguments) swap places
equivalent_format    pass   values re-written: case, id separators/zeros, date formats,
                            int→"5", int→float, float→"120.50", "$1,234.50", periods
greedy_trap          pass   expected [f(a), f(a, b)], actual [f(a, b), f(a)]; extra
                            arguments allowed, so first-fit pairs f(a) with f(a, b)
identical_duplicates pass   the same call expected twice and made twice
order_violation      fail   a declared read-before-write pair made the other way round
wrong_argument       fail   one value a near miss (1234.5→1243.5, 2025→2026, ORD-42→43)
missing_call         fail   one expected call never made
extra_call           fail   one state-changing call nobody asked for (an extra
                            look-up passes: bench/toolsets measures that)
duplicate_made_once  fail   the same call expected twice, made once
==================== ====== ==========================================================
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

PASS_CATEGORIES = (
    "identical",
    "reordered",
    "swapped_duplicates",
    "equivalent_format",
    "greedy_trap",
    "identical_duplicates",
)
FAIL_CATEGORIES = (
    "order_violation",
    "wrong_argument",
    "missing_call",
    "extra_call",
    "duplicate_made_once",
)
CATEGORIES = PASS_CATEGORIES + FAIL_CATEGORIES

Call = dict[str, Any]  # {"name": ..., "arguments": {...}}


@dataclass
class Trajectory:
    """One labelled case: the reference, what the agent did, and the right verdict."""

    category: str
    expected: list[Call]
    actual: list[Call]
    order: list[tuple[int, int]] = field(default_factory=list)
    should_pass: bool = True


_CITIES = ["Paris", "Berlin", "Boston", "Tokyo", "Lisbon", "Denver"]
_AIRPORTS = ["SFO", "JFK", "LHR", "CDG", "NRT", "BOS"]
_CABINS = ["economy", "business", "first"]
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]  # fmt: skip


def _day(rng: random.Random) -> date:
    return date(2025, 1, 1) + timedelta(days=rng.randrange(700))


def _tools(rng: random.Random) -> dict[str, Callable[[], dict[str, Any]]]:
    """Argument generators per tool: ids, dates, periods, amounts, enums, counts, text."""
    return {
        "get_reservation": lambda: {"reservation_id": f"RES-{rng.randrange(1, 9999):04d}"},
        "search_flights": lambda: {
            "origin": rng.choice(_AIRPORTS),
            "destination": rng.choice(_AIRPORTS),
            "date": _day(rng).isoformat(),
            "cabin": rng.choice(_CABINS),
        },
        "book_flight": lambda: {
            "flight_id": f"UA{rng.randrange(100, 999)}",
            "passengers": rng.randrange(1, 6),
            "cabin": rng.choice(_CABINS),
        },
        "refund": lambda: {
            "order_id": f"ORD-{rng.randrange(1, 999)}",
            "amount": round(rng.uniform(10, 5000), 2),
            "currency": "USD",
        },
        "list_orders": lambda: {
            "period": f"{rng.randrange(2024, 2027)}-{rng.randrange(1, 13):02d}"
        },
        "get_weather": lambda: {"city": rng.choice(_CITIES), "day": _day(rng).isoformat()},
        "send_email": lambda: {
            "to": f"user{rng.randrange(100)}@example.com",
            "subject": rng.choice(["Your refund", "Booking confirmed", "Itinerary change"]),
        },
        "update_address": lambda: {"user_id": f"U{rng.randrange(1, 99999)}", "zip": "02139"},
    }


def _file_pair(rng: random.Random) -> tuple[Call, Call]:
    path = f"/data/report_{rng.randrange(1000)}.csv"
    read = {"name": "read_file", "arguments": {"path": path}}
    write = {"name": "write_file", "arguments": {"path": path, "rows": rng.randrange(1, 500)}}
    return read, write


def _base(rng: random.Random, *, with_pair: bool | None = None) -> Trajectory:
    """3–8 distinct reference calls; ~30 % hold a read_file → write_file pair (ordered)."""
    tools = _tools(rng)
    n = rng.randrange(3, 9)
    pair = rng.random() < 0.3 if with_pair is None else with_pair
    names = rng.sample(sorted(tools), k=min(n - 2 if pair else n, len(tools)))
    calls: list[Call] = [{"name": name, "arguments": tools[name]()} for name in names]
    while len(calls) < (n - 2 if pair else n):
        name = rng.choice(sorted(tools))
        calls.append({"name": name, "arguments": tools[name]()})
    order: list[tuple[int, int]] = []
    if pair:
        read, write = _file_pair(rng)
        at = rng.randrange(len(calls) + 1)
        calls[at:at] = [read, write]
        order = [(at, at + 1)]
    return Trajectory("identical", calls, copy.deepcopy(calls), order, True)


def _shuffle_keeping(
    rng: random.Random, calls: list[Call], order: list[tuple[int, int]]
) -> list[Call]:
    """A permutation that differs from the input and keeps every ``before < after``."""
    for _ in range(50):
        perm = list(range(len(calls)))
        rng.shuffle(perm)
        pos = {orig: k for k, orig in enumerate(perm)}
        if perm != sorted(perm) and all(pos[b] < pos[a] for b, a in order):
            return [copy.deepcopy(calls[k]) for k in perm]
    return list(reversed(copy.deepcopy(calls))) if not order else copy.deepcopy(calls)


def _equivalent(value: Any, key: str, rng: random.Random) -> Any:
    """The same value written differently (what a real agent or tool might send)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return rng.choice([str(value), float(value)])
    if isinstance(value, float):
        return rng.choice(
            [f"{value:.2f}", f"${value:,.2f}", f"{value:,.2f}".replace(",", " ").replace(".", ",")]
        )
    if not isinstance(value, str):
        return value
    if key in ("date", "day"):
        d = date.fromisoformat(value)
        return rng.choice([f"{_MONTHS[d.month - 1]} {d.day}, {d.year}", d.strftime("%d.%m.%Y")])
    if key == "period":
        year, month = value.split("-")
        return rng.choice([f"{_MONTHS[int(month) - 1]} {year}", f"{month}/{year}"])
    if key.endswith("_id") or key == "order_id":
        head, _, tail = value.partition("-")
        return (
            rng.choice([f"{head.lower()} {tail}", f"{head}_{tail}", f" {value.lower()} "])
            if tail
            else value.lower()
        )
    if key in ("origin", "destination", "cabin", "city", "currency"):
        return rng.choice([value.lower(), value.upper(), f" {value.title()} "])
    return value


def _near_miss(value: Any, key: str, rng: random.Random) -> Any:
    """A value that looks alike but means something else."""
    if isinstance(value, int):
        return value + rng.choice([1, -1]) if value > 1 else value + 1
    if isinstance(value, float):
        text = f"{value:.2f}"
        digits = [k for k, c in enumerate(text) if c.isdigit()]
        k = rng.choice(digits)
        return float(text[:k] + str((int(text[k]) + 1) % 10) + text[k + 1 :])
    if key in ("date", "day"):
        d = date.fromisoformat(value)
        return d.replace(year=d.year + 1 if d.month != 2 or d.day != 29 else d.year + 4).isoformat()
    if key == "period":
        year, month = value.split("-")
        return f"{int(year) + 1}-{month}"
    if any(c.isdigit() for c in value):
        k = max(k for k, c in enumerate(value) if c.isdigit())
        return value[:k] + str((int(value[k]) + 1) % 10) + value[k + 1 :]
    if key == "cabin":
        return next(c for c in _CABINS if c != value)
    return value + "x"


def _identical(rng: random.Random) -> Trajectory:
    return _base(rng)


def _reordered(rng: random.Random) -> Trajectory:
    t = _base(rng)
    t.actual = _shuffle_keeping(rng, t.expected, t.order)
    return t


def _swapped_duplicates(rng: random.Random) -> Trajectory:
    t = _base(rng, with_pair=False)
    tools = _tools(rng)
    name = rng.choice(sorted(tools))
    first = {"name": name, "arguments": tools[name]()}
    second = {"name": name, "arguments": tools[name]()}
    while second == first:
        second = {"name": name, "arguments": tools[name]()}
    at = rng.randrange(len(t.expected) + 1)
    t.expected[at:at] = [first, second]
    t.actual = copy.deepcopy(t.expected)
    t.actual[at], t.actual[at + 1] = t.actual[at + 1], t.actual[at]
    return t


def _equivalent_format(rng: random.Random) -> Trajectory:
    t = _base(rng)
    changed = 0
    for call in t.actual:
        for key, value in call["arguments"].items():
            if key not in ("path", "to", "subject", "zip") and rng.random() < 0.6:
                call["arguments"][key] = _equivalent(value, key, rng)
                changed += call["arguments"][key] != value
    if not changed:  # at least one re-written value, or the case tests nothing
        call = next(c for c in t.actual if c["name"] not in ("read_file", "send_email"))
        key = next(iter(call["arguments"]))
        call["arguments"][key] = _equivalent(call["arguments"][key], key, rng)
    return t


def _greedy_trap(rng: random.Random) -> Trajectory:
    t = _base(rng, with_pair=False)
    a = {"reservation_id": f"RES-{rng.randrange(1, 9999):04d}"}
    b = {**a, "include_history": True}
    at = rng.randrange(len(t.expected) + 1)
    t.expected[at:at] = [{"name": "get_reservation", "arguments": dict(a)},
                         {"name": "get_reservation", "arguments": dict(b)}]  # fmt: skip
    t.actual = copy.deepcopy(t.expected)
    t.actual[at], t.actual[at + 1] = t.actual[at + 1], t.actual[at]
    return t


def _identical_duplicates(rng: random.Random) -> Trajectory:
    t = _base(rng, with_pair=False)
    k = rng.randrange(len(t.expected))
    t.expected.insert(k + 1, copy.deepcopy(t.expected[k]))
    t.actual = copy.deepcopy(t.expected)
    return t


def _order_violation(rng: random.Random) -> Trajectory:
    t = _base(rng, with_pair=True)
    before, after = t.order[0]
    t.actual[before], t.actual[after] = t.actual[after], t.actual[before]
    t.should_pass = False
    return t


def _wrong_argument(rng: random.Random) -> Trajectory:
    t = _base(rng)
    call = rng.choice(t.actual)
    key = rng.choice(sorted(call["arguments"]))
    call["arguments"][key] = _near_miss(call["arguments"][key], key, rng)
    t.should_pass = False
    return t


def _missing_call(rng: random.Random) -> Trajectory:
    t = _base(rng)
    del t.actual[rng.randrange(len(t.actual))]
    t.should_pass = False
    return t


_WRITES = ("book_flight", "refund", "send_email", "update_address")


def _extra_call(rng: random.Random) -> Trajectory:
    t = _base(rng)
    tools = _tools(rng)
    name = rng.choice(_WRITES)
    t.actual.insert(rng.randrange(len(t.actual) + 1), {"name": name, "arguments": tools[name]()})
    t.should_pass = False
    return t


def _duplicate_made_once(rng: random.Random) -> Trajectory:
    t = _identical_duplicates(rng)
    twin = next(k for k in range(len(t.actual) - 1) if t.actual[k] == t.actual[k + 1])
    del t.actual[twin]
    t.should_pass = False
    return t


_MAKERS: dict[str, Callable[[random.Random], Trajectory]] = {
    "identical": _identical,
    "reordered": _reordered,
    "swapped_duplicates": _swapped_duplicates,
    "equivalent_format": _equivalent_format,
    "greedy_trap": _greedy_trap,
    "identical_duplicates": _identical_duplicates,
    "order_violation": _order_violation,
    "wrong_argument": _wrong_argument,
    "missing_call": _missing_call,
    "extra_call": _extra_call,
    "duplicate_made_once": _duplicate_made_once,
}


def generate(per_category: int = 100, seed: int = 7) -> Iterator[Trajectory]:
    """``per_category`` trajectories of every category, reproducible from ``seed``."""
    rng = random.Random(seed)
    for category in CATEGORIES:
        for _ in range(per_category):
            t = _MAKERS[category](rng)
            t.category = category
            yield t
