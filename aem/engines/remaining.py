"""How much of an audit's input is left, to decide whether a worker pool can pay for itself.

Why: with the worker count left to AEM, an audit evaluates here first
(:class:`aem.engines.seam.DeferredEngine`); starting worker processes costs seconds of CPU
(each builds an evaluator and loads the model), which a 25-session audit never wins
back — measured 1.2–2.5× slower than one process. The reader streams, so the number of
sessions is unknown; the input's bytes are not. A session's spans say where they were
read (file and line), so the share of the input read when the last session closed is
the bytes of the files before its file plus its file's bytes times the share of its
lines; the evaluation time spent so far, scaled by that share, estimates what is left.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from aem.foundation.model import ClosedSession

# A file above this size is not counted line by line (the estimate takes half of it as
# read): the audit is long anyway, and counting must stay cheap beside evaluating.
_COUNT_LIMIT_BYTES = 256 * 2**20


class RemainingWork:
    """Estimates of the evaluation time left, from the files of one audit, in read order."""

    def __init__(self, files: Sequence[str], min_seconds: float) -> None:
        self.files = list(files)
        self.min_seconds = min_seconds
        self._sizes: list[int | None] = [_size(f) for f in self.files]
        self._lines: dict[str, int | None] = {}

    def share_read(self, session: ClosedSession) -> float | None:
        """The share of the input's bytes read up to ``session``'s last span; ``None``
        when it cannot be told (stdin, a file that vanished, spans without a source)."""
        where = max(
            ((s.origin.source, s.origin.line or 0) for s in session.spans if s.origin),
            default=None,
            key=lambda at: (self._index(at[0]), at[1]),
        )
        if where is None or None in self._sizes:
            return None
        index = self._index(where[0])
        if index < 0:
            return None
        sizes = [s or 0 for s in self._sizes]
        total = sum(sizes)
        if total <= 0:
            return None
        lines = self._line_count(where[0], sizes[index])
        within = 0.5 if not lines or lines < 2 else min(1.0, where[1] / lines)
        return (sum(sizes[:index]) + sizes[index] * within) / total

    def worth_pool(self, session: ClosedSession, spent: float) -> bool:
        """Whether the evaluation estimated to be left is at least ``min_seconds``
        (unknown: yes, as before the estimate existed)."""
        share = self.share_read(session)
        if share is None:
            return True
        if share <= 0.0:
            return True
        return spent * (1.0 - share) / share >= self.min_seconds

    def _index(self, source: str) -> int:
        try:
            return self.files.index(source)
        except ValueError:
            return -1

    def _line_count(self, path: str, size: int) -> int | None:
        if path not in self._lines:
            self._lines[path] = _count_lines(path, size)
        return self._lines[path]


def _size(path: str) -> int | None:
    if path == "-":
        return None
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def _count_lines(path: str, size: int) -> int | None:
    """Newlines in a plain file (a compressed one: ``None``); about 1 GB/s."""
    if size > _COUNT_LIMIT_BYTES or path.lower().endswith(".gz"):
        return None
    count = 0
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(2**20):
                count += chunk.count(b"\n")
    except OSError:
        return None
    return count + 1
