"""bench/support perturbs a stated number plausibly and keeps how it was written."""

from __future__ import annotations

import random

from aem.compare.extract import extract_values
from bench.support.perturb import perturbations


def _rewrites(text: str) -> list[str]:
    (value,) = extract_values(text)
    return perturbations(value, random.Random(3))


def test_currency_grouping_and_decimals_are_kept() -> None:
    rewrites = _rewrites("$1,200.50")
    assert rewrites and all(r.startswith("$") and r[-3] == "." for r in rewrites)
    assert "$1,260.53" in rewrites or "$1,236.52" in rewrites


def test_every_rewrite_is_a_different_plausible_value() -> None:
    for text in ("$55", "5.595", "1,000", "12 %"):
        (value,) = extract_values(text)
        for raw in _rewrites(text):
            (changed,) = extract_values(raw)
            ratio = float(changed.value) / float(value.value)  # type: ignore[arg-type]
            assert changed.unit == value.unit and 0.45 <= ratio <= 1.55 and ratio != 1
