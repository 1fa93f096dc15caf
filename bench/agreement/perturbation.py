"""The support check under perturbation: false pass and false fail, per half.

``bench.support.run`` measures it (same seed, same order); here each session's turns
are counted in the half of the set the session comes from (tau-bench or Who&When), so a
session is on the same side of the split here as in the agreement figures. The baseline
is that bench's: the rule before issue 8, which accepted any arithmetic of the numbers a
turn saw.

Measured twice, on the same perturbations. With the defaults (what users get): false
pass is a changed number the check calls supported, *proven* a changed number a source
binds another value to (a fail), the rest are suspects (``unverified``); false fail is a
correct turn that fails. With ``[verdicts] unsupported = "fail"`` (the ``(strict)``
rows): "not accepted" is a fail, so the rows say whether the support check *accepts* a
value — what a derivation changes, and what ``bench.agreement.ablate`` reads (by default
a derivation only turns suspects into passes, which no fail count shows).
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
STRICT = "verdicts.unsupported=fail"
STRICT_SUFFIX = " (strict)"
SOURCE = {"tau-bench airline": "tau-bench", "Who&When AG": "whowhen", "Who&When HC": "whowhen"}
# figure -> (method, numerator field, denominator field) of bench.support.run.Tally
COUNTS: dict[str, tuple[Any, ...]] = {
    "false pass": (
        ("AEM", "passed_perturbed"),
        ("any arithmetic (before issue 8)", "baseline_passed_perturbed"),
        "perturbed",
    ),
    "proven": (("AEM", "proven_perturbed"), "perturbed"),
    "false fail": (
        ("AEM", "failed_turns"),
        ("any arithmetic (before issue 8)", "baseline_failed_turns"),
        "turns",
    ),
}


def measure(root: Path, workers: int) -> list[Figure]:
    """Both modes: the defaults, then the strict rows."""
    return _measure(root, strict_only=False)


def measure_strict(root: Path, workers: int) -> list[Figure]:
    """The strict rows alone: what ``bench.agreement.ablate`` reads."""
    return _measure(root, strict_only=True)


def _measure(root: Path, *, strict_only: bool) -> list[Figure]:
    from aem.config import load_config
    from bench.support.run import DATA_SETS, Tally, measure_data_set

    modes = [("", None), (STRICT_SUFFIX, load_config(None, [STRICT]))]
    result = []
    for suffix, config in modes[1:] if strict_only else modes:
        rng = random.Random(SEED)  # the same perturbations in both modes
        for name in DATA_SETS:
            tallies = {h: Tally() for h in HALVES}
            tally_of = _tally_of(SOURCE[name], tallies)
            measure_data_set(root, name, rng, PER_TURN, tally_of, config)
            result += figures(name, tallies, suffix)
    return result


def _tally_of(source: str, tallies: Mapping[str, Any]) -> Callable[[str], Any]:
    """The tally of the half a session of ``source`` belongs to."""
    return lambda session_id: tallies[half(source, session_id)]


def figures(name: str, tallies: Mapping[str, Any], suffix: str = "") -> list[Figure]:
    """False pass, proven (default mode only: in the strict mode every unaccepted value
    fails) and false fail of AEM and the baseline from the per-half tallies; ``suffix``
    ends each figure's name (``" (strict)"``)."""
    result = []
    for figure_name, (*methods, denominator) in COUNTS.items():
        if suffix and figure_name == "proven":
            continue
        for method, numerator in methods:
            cells: dict[str, Cell] = {
                h: ratio(getattr(tallies[h], numerator), getattr(tallies[h], denominator))
                for h in HALVES
            }
            cells[ALL] = ratio(
                sum(getattr(tallies[h], numerator) for h in HALVES),
                sum(getattr(tallies[h], denominator) for h in HALVES),
            )
            better = "higher" if figure_name == "proven" else "lower"
            result.append(Figure(SET, f"{name} {figure_name}{suffix}", method, cells, better))
    return result
