"""Change one stated number by a plausible amount, keeping how it was written.

Why a module of its own: the benchmark and its tests must perturb the same way — ``$1,200``
becomes ``$1,260`` (currency, grouping and decimals kept), never ``1260.0``.
"""

from __future__ import annotations

import random
import re

from aem.compare.extract import StatedValue

_DIGITS = re.compile(r"\d[\d,. \u00a0]*\d|\d")
# Relative changes an agent plausibly gets wrong by: a few percent, a tenth, a fifth, half.
RELATIVE_STEPS = (0.03, 0.05, 0.1, 0.2, 0.5)


def _format(number: float, written: str, fractional: bool) -> str:
    """``number`` written like ``written`` (its decimals and thousands separator)."""
    decimals = 0
    head = written
    for mark in (".", ","):
        tail = written.rsplit(mark, 1)[-1]
        if mark in written and (len(tail) in (1, 2) or (fractional and len(tail) == 3)):
            decimals = len(written.rsplit(mark, 1)[1])
            head = written.rsplit(mark, 1)[0]
            break
    grouping = "," if "," in head else ""
    text = f"{number:,.{decimals}f}" if grouping else f"{number:.{decimals}f}"
    if decimals and "," in written and "." not in written:
        text = text.replace(".", ",")  # 12,5 stays decimal-comma
    return text


def perturbations(value: StatedValue, rng: random.Random) -> list[str]:
    """Candidate rewrites of ``value.raw`` in a random order of plausible changes."""
    assert value.kind == "number"
    number = float(value.value)  # type: ignore[arg-type]
    found = _DIGITS.search(value.raw)
    if found is None or number == 0:
        return []
    steps = [s * sign for s in RELATIVE_STEPS for sign in (1, -1)]
    rng.shuffle(steps)
    out = []
    for step in steps:
        changed = number * (1 + step)
        if float(number).is_integer():
            changed = float(round(changed))
        if changed == number or changed <= 0:
            continue
        digits = _format(abs(changed), found.group(0), not float(number).is_integer())
        raw = value.raw[: found.start()] + digits + value.raw[found.end() :]
        if raw not in out and raw != value.raw:
            out.append(raw)
    return out
