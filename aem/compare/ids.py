"""Identifiers: ``ORD-42`` == ``ord 42`` == ``ORD_42`` == ``ORD-0042``, but not ``ORD-43``.

Why canonical runs: agents and tools reformat ids freely (case, separators, padding), and an
id that differs in one digit is a different record, so ids are never embedded or fuzzed.
"""

from __future__ import annotations

import re

from aem.compare.result import Comparison, short
from aem.compare.settings import CompareSettings

_ID_CHARS = re.compile(r"^[#\w\s\-./:]+$")
_SEPARATORS = re.compile(r"[\s\-_./:#]+")
_RUNS = re.compile(r"[^\W\d_]+|\d+")
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$", re.IGNORECASE)
# In free text: letters and digits mixed, optionally joined by - _ / (ORD-42, W2378156, A1B2).
_IN_TEXT = re.compile(
    r"(?<![\w.#\-/])#?(?=[\w\-/]*\d)(?=[\w\-/]*[^\W\d_])[^\W_]+(?:[-_/][^\W_]+){0,5}(?![\w\-/])"
)


def looks_like_id(value: str, settings: CompareSettings) -> bool:
    """A short string of letter/digit runs with at least one digit (not a number or date).

    >>> looks_like_id("ORD-0042", CompareSettings()), looks_like_id("two words", CompareSettings())
    (True, False)
    """
    if len(value) > 64 or not _ID_CHARS.match(value) or not any(c.isdigit() for c in value):
        return False
    tokens = [t for t in _SEPARATORS.split(value.strip()) if t]
    return 0 < len(tokens) <= settings.id_max_tokens


def canonical_id(value: str, settings: CompareSettings) -> str:
    """Lower-case letter and digit runs joined by '-', leading zeros dropped if configured.

    >>> canonical_id("ORD_0042", CompareSettings())
    'ord-42'
    """
    runs = _RUNS.findall(value.casefold())
    if settings.id_ignore_leading_zeros:
        runs = [r.lstrip("0") or "0" if r.isdigit() else r for r in runs]
    return "-".join(runs)


def compare_ids(expected: str, actual: str, settings: CompareSettings) -> Comparison:
    """Equal when the canonical forms are equal; otherwise a different record.

    >>> compare_ids("ORD-42", "ord 42", CompareSettings()).same
    True
    >>> compare_ids("ORD-42", "ORD-43", CompareSettings()).reason
    "'ORD-42' != 'ORD-43' (ord-42 vs ord-43)"
    """
    a, b = canonical_id(expected, settings), canonical_id(actual, settings)
    if a == b:
        return Comparison(True, 1.0, "id", f"{short(expected)} == {short(actual)} (both {a})")
    return Comparison(False, 0.0, "id", f"{short(expected)} != {short(actual)} ({a} vs {b})")


def find_ids(text: str, settings: CompareSettings) -> list[tuple[str, str, int, int]]:
    """Identifiers in free text as (raw, canonical, start, end); ordinals (1st) are skipped.

    >>> found = find_ids("order #W2378156 and ORD-0042 on the 1st", CompareSettings())
    >>> [(raw, canonical) for raw, canonical, _, _ in found]
    [('#W2378156', 'w-2378156'), ('ORD-0042', 'ord-42')]
    """
    found = []
    for m in _IN_TEXT.finditer(text):
        raw = m.group(0)
        if _ORDINAL.match(raw):
            continue
        found.append((raw, canonical_id(raw, settings), m.start(), m.end()))
    return found
