"""The labelled workload the benchmark runs: AEM must get every category right."""

from __future__ import annotations

from collections import Counter

from aem.matching import ActualCall, match_tool_calls
from bench.matching.workload import CATEGORIES, generate


def test_every_category_is_judged_right() -> None:
    wrong: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for t in generate(per_category=60, seed=11):
        actual = [ActualCall(c["name"], c["arguments"]) for c in t.actual]
        m = match_tool_calls(t.expected, actual, order=t.order)
        seen[t.category] += 1
        if m.passed != t.should_pass:
            wrong[t.category] += 1
            examples.setdefault(t.category, m.explanation())
    assert set(seen) == set(CATEGORIES)
    assert not wrong, examples


def test_workload_is_reproducible_and_labelled() -> None:
    first = [(t.category, t.expected, t.actual) for t in generate(5, seed=3)]
    assert first == [(t.category, t.expected, t.actual) for t in generate(5, seed=3)]
    for t in generate(20, seed=5):
        assert 3 <= len(t.expected) <= 10
        if t.category in ("identical",):
            assert t.expected == t.actual
        if t.category == "order_violation":
            assert t.order and not t.should_pass
