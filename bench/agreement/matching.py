"""The labelled tool-matching workload: no pass-labelled trajectory may fail.

Each trajectory of ``bench.matching.workload`` (its default size and seed) is judged by
AEM's matcher as ``bench.matching.run`` runs it; a failed match is what becomes a
``tool_choice`` / ``argument_validity`` root cause in a session. Baseline: the same tool
names, as many times each, with arguments ignored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.agreement.figures import Cell, Figure, figure, share
from bench.agreement.split import half

SET = "matching"
PER_CATEGORY, SEED = 100, 7
METHODS = ("AEM", "same tool names")


@dataclass(frozen=True)
class MatchRow:
    """One trajectory: its right verdict and each method's (True = passed)."""

    should_pass: bool
    passed: dict[str, bool]


def same_names(expected: Sequence[Mapping[str, Any]], actual: Sequence[Mapping[str, Any]]) -> bool:
    """The trivial matcher: the same multiset of tool names."""
    return Counter(c["name"] for c in expected) == Counter(c["name"] for c in actual)


def measure(root: Path, workers: int) -> list[Figure]:
    from bench.matching.run import aem_runner
    from bench.matching.workload import generate

    rows = []
    seen: Counter[str] = Counter()
    for trajectory in generate(PER_CATEGORY, seed=SEED):
        item = f"{trajectory.category}/{seen[trajectory.category]}"
        seen[trajectory.category] += 1
        passed = {
            METHODS[0]: aem_runner(trajectory)(),
            METHODS[1]: same_names(trajectory.expected, trajectory.actual),
        }
        rows.append((half(SET, item), MatchRow(trajectory.should_pass, passed)))
    return figures(rows)


def figures(rows: list[tuple[str, MatchRow]]) -> list[Figure]:
    """Pass-labelled trajectories judged failed (must be none) and fail-labelled caught."""
    good = [(h, r) for h, r in rows if r.should_pass]
    bad = [(h, r) for h, r in rows if not r.should_pass]
    wrongly_failed = [
        figure(SET, "pass-labelled judged failed", m, good, _failed(m), "lower") for m in METHODS
    ]
    return wrongly_failed + [
        figure(SET, "fail-labelled caught", m, bad, _failed(m)) for m in METHODS
    ]


def _failed(method: str) -> Callable[[Sequence[MatchRow]], Cell]:
    return lambda rows: share([not r.passed[method] for r in rows])
