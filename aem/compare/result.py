"""The verdict of one semantic comparison (kept apart so every comparer can return it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("exact", "number", "date", "period", "id", "bool", "enum", "json", "text")


@dataclass(frozen=True, slots=True)
class Comparison:
    """Whether two values mean the same, why, and with which threshold.

    ``score`` is in 0..1 (1 = the same); ``threshold`` is the tolerance or similarity
    threshold the verdict used (None where the verdict needs none, e.g. ids).

    >>> Comparison(True, 1.0, "exact", "equal").same
    True
    """

    same: bool
    score: float
    kind: str
    reason: str
    threshold: float | None = None


def short(value: Any, limit: int = 60) -> str:
    """A value as it appears in a reason: repr for strings, truncated.

    >>> short("x" * 100, 10)
    "'xxxxxxxx…"
    """
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
