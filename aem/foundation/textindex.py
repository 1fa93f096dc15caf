"""Which of many known strings occur in a text, without testing each one against it.

Session building asks "which earlier output, which tool-call id, which argument value
appears in this text?" for every model input and tool result of a session. Testing
every known string against every text is quadratic in the session's length (1 k spans
took 1.2 s, 10 k spans 25 s); :class:`PatternFinder` answers from an index instead and
gives exactly the same answer as ``pattern in text`` for each pattern.

How it stays exact: split patterns and texts into maximal runs of word characters
(``\\w+``). A run *inside* a pattern (non-word characters on both sides of it, within
the pattern) is a whole run of any text that contains the pattern, so such patterns are
indexed by their longest inner run and looked up by the text's runs. A pattern without
an inner run is indexed by its longest run, which must then lie inside one of the text's
runs; those containments are found once per distinct run and cached. Every candidate is
confirmed with ``in``, except a pattern that is one run by itself (an id such as
``call_abc123``), where containment in a run already is the answer. When the keys open
with only a few distinct pairs of characters (call ids), they are found instead where
the prefix the keys of each opening share occurs in the text (``str.find`` of ``call_``),
which is cheaper than splitting it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

_RUN = re.compile(r"\w+")
_CACHE_LIMIT = 200_000  # distinct runs remembered; past it the cache starts afresh
_MAX_HEADS = 8  # key openings found with str.find; more, and the text is split in runs


def _key(pattern: str) -> tuple[str | None, bool]:
    """``(key run, inner)``: the longest run inside the pattern, else its longest run."""
    inner: str | None = None
    longest: str | None = None
    for match in _RUN.finditer(pattern):
        run = match.group()
        if longest is None or len(run) > len(longest):
            longest = run
        inside = match.start() > 0 and match.end() < len(pattern)
        if inside and (inner is None or len(run) > len(inner)):
            inner = run
    return (inner, True) if inner is not None else (longest, False)


class PatternFinder:
    """A fixed set of patterns, indexed so that a text's matches cost about its length.

    >>> finder = PatternFinder(["call_1", "call_12", "Paris, France", "!!"])
    >>> sorted(finder.find('[{"id": "call_12", "text": "Paris, France!!"}]'))
    ['!!', 'Paris, France', 'call_1', 'call_12']
    >>> sorted(finder.find("call_2 in Paris"))
    []
    """

    def __init__(self, patterns: Iterable[str]) -> None:
        self._by_inner: dict[str, list[str]] = {}
        self._by_run: dict[str, list[str]] = {}
        self._whole: set[str] = set()  # patterns that are one run: found means present
        self._always: list[str] = []  # no word character at all: always tested
        for pattern in dict.fromkeys(patterns):
            key, inner = _key(pattern)
            if key is None:
                self._always.append(pattern)
            elif inner:
                self._by_inner.setdefault(key, []).append(pattern)
            else:
                self._by_run.setdefault(key, []).append(pattern)
                if key == pattern:
                    self._whole.add(pattern)
        # Run keys by their first two characters, each with the lengths present: a
        # position of a text's run is looked at only when some key starts that way.
        self._heads: dict[str, tuple[int, ...]] = {}
        self._singles: list[str] = []
        lengths: dict[str, set[int]] = {}
        for key in self._by_run:
            if len(key) == 1:
                self._singles.append(key)
            else:
                lengths.setdefault(key[:2], set()).add(len(key))
        self._heads = {head: tuple(sorted(found)) for head, found in lengths.items()}
        self._contained_cache: dict[str, tuple[str, ...]] = {}
        self._scan = _HeadScan(self._by_inner, self._by_run)

    def candidates(self, text: str) -> Iterator[tuple[str, bool]]:
        """``(pattern, certain)`` for every pattern that may occur in ``text``; a pattern
        not yielded does not occur. ``certain`` means it does; else test it with ``in``."""
        yield from ((p, p == "") for p in self._always)
        if not text:
            return
        if self._scan.usable:
            for pattern in self._scan.candidates(text):
                yield pattern, pattern in self._whole
            return
        by_inner, by_run, whole = self._by_inner, self._by_run, self._whole
        for run in set(_RUN.findall(text)):
            for pattern in by_inner.get(run, ()):
                yield pattern, False
            if by_run:
                for key in self._contained(run):
                    for pattern in by_run[key]:
                        yield pattern, pattern in whole

    def find(self, text: str) -> set[str]:
        """Exactly the patterns that occur in ``text``."""
        if self._scan.usable and not self._always:  # the common case, without the pairs
            whole = self._whole
            found = self._scan.candidates(text) if text else ()
            return {p for p in found if p in whole or p in text}
        maybe: dict[str, bool] = {}
        for pattern, certain in self.candidates(text):
            maybe[pattern] = maybe.get(pattern, False) or certain
        return {p for p, certain in maybe.items() if certain or p in text}

    def _contained(self, run: str) -> tuple[str, ...]:
        """The run keys inside one run of a text (computed once per distinct run)."""
        hit = self._contained_cache.get(run)
        if hit is not None:
            return hit
        found = [key for key in self._singles if key in run]
        heads, keys, end = self._heads, self._by_run, len(run)
        for i in range(end - 1):
            for length in heads.get(run[i : i + 2], ()):
                if i + length > end:
                    break
                if run[i : i + length] in keys:
                    found.append(run[i : i + length])
        hit = tuple(dict.fromkeys(found))
        if len(self._contained_cache) >= _CACHE_LIMIT:
            self._contained_cache.clear()
        self._contained_cache[run] = hit
        return hit


class _HeadScan:
    """Keys found where they start: every place a key's first two characters occur.

    For a few distinct openings (call ids share ``call_`` or ``toolu_``) a ``str.find``
    per opening beats splitting a long input into runs. A key found this way is in the
    text, so its patterns are candidates (a one-run pattern is its own key: present).
    """

    def __init__(self, *indexes: dict[str, list[str]]) -> None:
        self.keys: dict[str, list[str]] = {}
        for index in indexes:
            for key, patterns in index.items():
                self.keys.setdefault(key, []).extend(patterns)
        lengths: dict[str, set[int]] = {}
        for key in self.keys:
            lengths.setdefault(key[:2], set()).add(len(key))
        # Per opening: the keys' shortest length, and their openings of that length each
        # with the lengths of the keys that open so: most places (the opening inside some
        # other word) cost one look-up, and a key's place one more per length it has.
        # A key is looked for where the prefix all keys of its opening share occurs
        # (``call_``, not ``ca``: fewer places inside other words).
        self.heads: dict[str, tuple[str, int, dict[str, tuple[int, ...]]]] = {}
        for head, found in lengths.items():
            shortest = min(found)
            openings: dict[str, set[int]] = {}
            for key in self.keys:
                if key[:2] == head:
                    openings.setdefault(key[:shortest], set()).add(len(key))
            self.heads[head] = (
                os.path.commonprefix(list(openings)),  # noqa: RUF071 - by character, as wanted
                shortest,
                {opening: tuple(sorted(sizes)) for opening, sizes in openings.items()},
            )
        self.usable = len(self.heads) <= _MAX_HEADS

    def candidates(self, text: str) -> list[str]:
        found: list[str] = []
        keys = self.keys
        for head, (prefix, shortest, openings) in self.heads.items():
            if len(head) == 1:  # a one-character key
                if head in text:
                    found.extend(keys[head])
                continue
            at = text.find(prefix)
            while at != -1:
                sizes = openings.get(text[at : at + shortest])
                if sizes is not None:
                    for length in sizes:
                        found.extend(keys.get(text[at : at + length], ()))
                at = text.find(prefix, at + 1)
        return found
