"""Citation markers in an answer — ``[2]``, ``[1, 3]``, ``[1][3]``, ``[kb-17]`` — and
whether each points at a source the agent really had.

Why parsed, not searched for: "cites at least one source" is half of the groundedness
verdict, and a marker that points nowhere (``[4]`` when three documents were retrieved)
is a failure of its own that must be named as such, not mistaken for a citation.
A key is a position (1-based, in the order the agent received the sources) or a
source's id; a bracket holding words (``[optional]``, ``[Note 1]``) or a Markdown link
text is not a citation.

A source named in words — "(Passage 1)", "according to document 2", "see source [3]",
"в источнике 2" — is a citation too (its nouns and lead words are in
:mod:`aem.foundation.vocabulary`), resolved like ``[N]``; and its number is the source's, never a
value the answer states, so :func:`strip_citations` takes the whole reference out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from aem.foundation.vocabulary import SOURCE_LEADS, SOURCE_NOUNS

_BRACKET = re.compile(r"\[([^\[\]\n]{1,60})\](?!\()")
_NUMBER = re.compile(r"^\d{1,3}$")
_RANGE = re.compile(r"^(\d{1,3})\s*[-–]\s*(\d{1,3})$")
_ID = re.compile(r"^(?=[\w.:/-]*\d)(?=[\w.:/-]*[^\W\d_])[\w.:/-]{2,40}$")
_MAX_RANGE = 10
# "Passage 1", "documents 1 and 3", "source [2]", "источнике 2", with the words leading it in.
_NUMBERS = r"\d{1,3}(?:\s*(?:[,;&–-]|and|or|и|или)\s*\d{1,3})*(?![.,]?\d)"
_MARK = r"(?:#|№|no\.\s*)?"
_ONE_REFERENCE = (
    rf"(?:(?:{SOURCE_LEADS})\s+)?(?:(?:the|this|these)\s+)?(?:{SOURCE_NOUNS})\s*{_MARK}"
    rf"(?:{_NUMBERS}|\[[^\[\]\n]{{1,60}}\](?!\())"
)
_WORD_REFERENCE = re.compile(
    rf"[(\[]\s*{_ONE_REFERENCE}(?:\s*(?:[,;]|and|и)\s*{_ONE_REFERENCE})*\s*[)\]]"
    rf"|\b{_ONE_REFERENCE}",
    re.IGNORECASE,
)
_REFERENCE_KEYS = re.compile(
    rf"(?:{SOURCE_NOUNS})\s*{_MARK}(?:({_NUMBERS})|\[([^\[\]\n]{{1,60}})\])", re.IGNORECASE
)
_JOINERS = re.compile(r"\s*(?:[;&]|\band\b|\bor\b|\bи\b|\bили\b)\s*", re.IGNORECASE)


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


def _reference_keys(reference: str) -> list[str]:
    """The keys of a source named in words: each noun's numbers, or its bracket's keys."""
    keys: list[str] = []
    for match in _REFERENCE_KEYS.finditer(reference):
        numbers, bracket = match.groups()
        inside = _JOINERS.sub(",", numbers) if numbers is not None else bracket
        keys.extend(_keys(inside) or [])
    return keys


def _word_references(text: str) -> list[tuple[re.Match[str], list[str]]]:
    """Sources named in words in ``text``, each with its keys (none: not a citation)."""
    found = [(m, _reference_keys(m.group(0))) for m in _WORD_REFERENCE.finditer(text)]
    return [(m, keys) for m, keys in found if keys]


def find_citations(text: str) -> list[Citation]:
    """Every cited key in ``text``, in order (``[1, 3]`` gives two, "Passages 1 and 3"
    too); a bracket inside a reference in words ("source [3]") is counted once."""
    found: list[Citation] = []
    taken: list[tuple[int, int]] = []
    for match, keys in _word_references(text):
        found.extend(Citation(key, match.group(0).strip(), match.start()) for key in keys)
        taken.append(match.span())
    for bracket in _BRACKET.finditer(text):
        cited = _keys(bracket.group(1))
        if cited and not any(start <= bracket.start() < end for start, end in taken):
            found.extend(Citation(key, bracket.group(0), bracket.start()) for key in cited)
    return sorted(found, key=lambda c: c.start)


def strip_citations(text: str) -> str:
    """``text`` without its citation markers and its sources named in words (other
    brackets stay), the punctuation tidied where a reference was taken out."""
    stripped = text
    for match, _ in reversed(_word_references(text)):
        stripped = stripped[: match.start()] + stripped[match.end() :]
    referenced = stripped != text
    stripped = _BRACKET.sub(lambda m: "" if _keys(m.group(1)) else m.group(0), stripped)
    stripped = re.sub(r"\s+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", stripped))
    if not referenced:
        return stripped
    # "According to document 2, the fee…" leaves ", the fee…"; "fee, per source 1, is"
    # leaves "fee, , is"; "$5, see source [3]." leaves "$5,.".
    stripped = re.sub(r"\s*,\s*,\s*", " ", stripped)
    stripped = re.sub(r"[,;:]+(?=[.!?]|$)", "", stripped)
    return re.sub(r"^[\s,;:]+", "", stripped)


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
