"""The support check under perturbation: false pass and false fail, per half.

``bench.support.run`` measures it (same seed, same order, so the pooled counts equal its
own run with ``--seed 8``); here each session's turns are counted in the half of the set
the session comes from (tau-bench or Who&When), so a session is on the same side of the
split here as in the agreement figures. The baseline is that bench's: the rule before
issue 8, which accepted any arithmetic of the numbers a turn saw.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench.agreement.figures import Cell, Figure, ratio
from bench.agreement.split import ALL, HALVES, half

SET = "perturbation"
SEED, PER_TURN = 8, 3
SOURCE = {"tau-bench airline": "tau-bench", "Who&When AG": "whowhen", "Who&When HC": "whowhen"}
# figure -> (method, numerator field, denominator field) of bench.support.run.Tally
COUNTS = {
    "false pass": (
        ("AEM", "passed_perturbed"),
        ("any arithmetic (before issue 8)", "baseline_passed_perturbed"),
        "perturbed",
    ),
    "false fail": (
        ("AEM", "failed_turns"),
        ("any arithmetic (before issue 8)", "baseline_failed_turns"),
        "turns",
    ),
}


def measure(root: Path, workers: int) -> list[Figure]:
    from bench.support.run import DATA_SETS, Tally, measure_data_set

    rng = random.Random(SEED)
    result = []
    for name in DATA_SETS:
        tallies = {h: Tally() for h in HALVES}
        measure_data_set(root, name, rng, PER_TURN, _tally_of(SOURCE[name], tallies))
        result += figures(name, tallies)
    return result


def _tally_of(source: str, tallies: Mapping[str, Any]) -> Callable[[str], Any]:
    """The tally of the half a session of ``source`` belongs to."""
    return lambda session_id: tallies[half(source, session_id)]


def figures(name: str, tallies: Mapping[str, Any]) -> list[Figure]:
    """False pass and false fail of AEM and the baseline from the per-half tallies."""
    result = []
    for figure_name, (*methods, denominator) in COUNTS.items():
        for method, numerator in methods:
            cells: dict[str, Cell] = {
                h: ratio(getattr(tallies[h], numerator), getattr(tallies[h], denominator))
                for h in HALVES
            }
            cells[ALL] = ratio(
                sum(getattr(tallies[h], numerator) for h in HALVES),
                sum(getattr(tallies[h], denominator) for h in HALVES),
            )
            result.append(Figure(SET, f"{name} {figure_name}", method, cells, "lower"))
    return result
