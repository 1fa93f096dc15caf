"""Citation markers in an answer — ``[2]``, ``[1, 3]``, ``[1][3]``, ``[kb-17]`` — and
whether each points at a source the agent really had.

Why parsed, not searched for: "cites at least one source" is half of the groundedness
verdict, and a marker that points nowhere (``[4]`` when three documents were retrieved)
is a failure of its own that must be named as such, not mistaken for a citation.
A key is a position (1-based, in the order the agent received the sources) or a
source's id; a bracket holding words (``[optional]``, ``[Note 1]``) or a Markdown link
text is not a citation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_BRACKET = re.compile(r"\[([^\[\]\n]{1,60})\](?!\()")
_NUMBER = re.compile(r"^\d{1,3}$")
_RANGE = re.compile(r"^(\d{1,3})\s*[-–]\s*(\d{1,3})$")
_ID = re.compile(r"^(?=[\w.:/-]*\d)(?=[\w.:/-]*[^\W\d_])[\w.:/-]{2,40}$")
_MAX_RANGE = 10


@dataclass(frozen=True)
class Citation:
    """One cited key (a position or an id) and the marker it was written in."""

    key: str
    marker: str
    start: int

    @property
    def position(self) -> int | None:
        return int(self.key) if self.key.isdigit() else None


def _keys(inside: str) -> list[str] | None:
    """The keys of a bracket's content, or None when it is not a citation."""
    keys: list[str] = []
    for part in re.split(r"\s*[,;]\s*", inside.strip()):
        ranged = _RANGE.match(part)
        if _NUMBER.match(part):
            keys.append(str(int(part)))
        elif ranged and 0 <= int(ranged.group(2)) - int(ranged.group(1)) <= _MAX_RANGE:
            keys.extend(str(n) for n in range(int(ranged.group(1)), int(ranged.group(2)) + 1))
        elif _ID.match(part):
            keys.append(part)
        else:
            return None
    return keys or None


def find_citations(text: str) -> list[Citation]:
    """Every cited key in ``text``, in order (``[1, 3]`` gives two)."""
    found: list[Citation] = []
    for match in _BRACKET.finditer(text):
        keys = _keys(match.group(1))
        if keys:
            found.extend(Citation(key, match.group(0), match.start()) for key in keys)
    return found


def strip_citations(text: str) -> str:
    """``text`` without its citation markers (other brackets stay)."""
    stripped = _BRACKET.sub(lambda m: "" if _keys(m.group(1)) else m.group(0), text)
    return re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", stripped))


@dataclass(frozen=True)
class Source:
    """Something the agent could cite: a retrieved document or a tool result."""

    position: int
    id: str | None
    label: str
    text: str


def resolve(citation: Citation, sources: Sequence[Source]) -> Source | None:
    """The source ``citation`` points at: by id first (ids may be digits), then by
    position; None when it points at nothing the agent had."""
    key = citation.key.casefold()
    for source in sources:
        if source.id is not None and source.id.casefold() == key:
            return source
    position = citation.position
    if position is not None and 1 <= position <= len(sources):
        return sources[position - 1]
    return None
