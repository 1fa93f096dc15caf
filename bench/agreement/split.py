"""The fixed split of every development set into a *tune* half and a *check* half.

Why: a rule fitted to the sessions one looks at fails on the others. Every item (a
session, a case, a trajectory) belongs to exactly one half, decided by a hash of its set's
name and its id, so the split is the same on every run and every machine, and the
*check* half can stay unread while rules are tuned on the other.

An item belongs to *check* when the first byte of ``sha256(set_name + ":" + id)`` is odd,
else to *tune*.
"""

from __future__ import annotations

import hashlib

TUNE, CHECK, ALL = "tune", "check", "all"
HALVES = (TUNE, CHECK)
COLUMNS = (TUNE, CHECK, ALL)


def half(set_name: str, item_id: str) -> str:
    """``"check"`` when the hash's first byte is odd, else ``"tune"``."""
    first = hashlib.sha256(f"{set_name}:{item_id}".encode()).digest()[0]
    return CHECK if first % 2 else TUNE
