"""The arithmetic of the figures: ratios and precision / recall / F1, per half.

Why one place: every set reports its figures the same way (a value and the counts behind
it, per half and over both), so two runs can be compared cell by cell.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from bench.agreement.split import ALL, HALVES

Row = TypeVar("Row")


@dataclass(frozen=True)
class Cell:
    """One figure on one half: its value (``None`` when nothing to count) and the counts."""

    value: float | None
    detail: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"value": self.value, "detail": self.detail}


@dataclass(frozen=True)
class Figure:
    """One row of the table: a figure of one set, measured for one method, per half."""

    set_name: str
    figure: str
    method: str
    cells: dict[str, Cell]
    better: str = "higher"  # or "lower": which way an improvement moves the value

    def as_json(self) -> dict[str, Any]:
        return {
            "set": self.set_name,
            "figure": self.figure,
            "method": self.method,
            "better": self.better,
            **{column: cell.as_json() for column, cell in self.cells.items()},
        }


def ratio(hits: int, total: int) -> Cell:
    """``hits / total`` with its counts; no value when there is nothing to count."""
    return Cell(hits / total if total else None, f"{hits}/{total}")


def share(flags: Sequence[bool]) -> Cell:
    """The share of true flags."""
    return ratio(sum(flags), len(flags))


def mean(values: Sequence[float]) -> Cell:
    """The mean of expected values (a random guess's chance per item)."""
    return Cell(sum(values) / len(values) if values else None, f"n={len(values)}")


def precision(pairs: Sequence[tuple[bool, bool]]) -> Cell:
    """Of the items predicted positive, the share that are: pairs are (predicted, actual)."""
    return share([actual for predicted, actual in pairs if predicted])


def recall(pairs: Sequence[tuple[bool, bool]]) -> Cell:
    """Of the positive items, the share predicted positive."""
    return share([predicted for predicted, actual in pairs if actual])


def f1(pairs: Sequence[tuple[bool, bool]]) -> Cell:
    """The harmonic mean of precision and recall (0 when either is 0 or undefined)."""
    true_pos = sum(1 for predicted, actual in pairs if predicted and actual)
    predicted_pos = sum(1 for predicted, _ in pairs if predicted)
    actual_pos = sum(1 for _, actual in pairs if actual)
    if not pairs or not actual_pos:
        return Cell(None, "no positives")
    value = 2 * true_pos / (predicted_pos + actual_pos)
    return Cell(value, f"tp={true_pos} pred={predicted_pos} pos={actual_pos}")


def false_positive_rate(pairs: Sequence[tuple[bool, bool]]) -> Cell:
    """Of the negative items (a clean answer), the share predicted positive (failed)."""
    return share([predicted for predicted, actual in pairs if not actual])


def by_half(
    rows: Sequence[tuple[str, Row]], score: Callable[[Sequence[Row]], Cell]
) -> dict[str, Cell]:
    """``score`` on each half's rows and on all of them; rows are (half, row) pairs."""
    cells = {name: score([row for h, row in rows if h == name]) for name in HALVES}
    cells[ALL] = score([row for _, row in rows])
    return cells


def figure(
    set_name: str,
    name: str,
    method: str,
    rows: Sequence[tuple[str, Row]],
    score: Callable[[Sequence[Row]], Cell],
    better: str = "higher",
) -> Figure:
    """One table row: ``score`` per half over (half, row) pairs."""
    return Figure(set_name, name, method, by_half(rows, score), better)
