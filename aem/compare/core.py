"""One entry point that says whether two values mean the same, why, and how sure.

The dispatch is cheapest-first — an embedding costs milliseconds, every other reading
microseconds: exact equality, structures, booleans, dates, numbers, identifiers,
normalised text — and only then an embedding, which is de-duplicated, batched and cached
by :class:`~aem.compare.embedder.TextEmbedder`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from aem.compare.dates import compare_dates, parse_date, year_span
from aem.compare.embedder import TextEmbedder
from aem.compare.ids import compare_ids, looks_like_id
from aem.compare.numbers import compare_numbers, parse_number
from aem.compare.result import KINDS, Comparison, short
from aem.compare.settings import CompareSettings
from aem.compare.structured import compare_mappings, compare_sequences, maybe_json
from aem.compare.text import Similarity, compare_text

_CONTAINERS = (dict, list, tuple)
_SCALARS = frozenset({str, int, float, bool, type(None)})


class _Deferred(Exception):
    """Raised by the collecting similarity of ``compare_many``'s first pass."""


class SemanticComparator:
    """Compares values by meaning, with every threshold from :class:`CompareSettings`.

    >>> c = SemanticComparator()
    >>> c.compare("1 234,50", 1234.5).same, c.compare("March 2025", "2026-03").same
    (True, False)
    >>> c.compare("ORD-0042", "ord 42").kind
    'id'
    """

    def __init__(
        self, settings: CompareSettings | None = None, *, embedder: TextEmbedder | None = None
    ) -> None:
        self.settings = settings or CompareSettings()
        self._embedder = embedder
        self._lock = threading.Lock()

    @property
    def embedder(self) -> TextEmbedder:
        """The embedder, created on first need (creating it does not load the model)."""
        with self._lock:
            if self._embedder is None:
                self._embedder = TextEmbedder.from_settings(self.settings)
            return self._embedder

    @property
    def model_loaded(self) -> bool:
        return self._embedder is not None and self._embedder.loaded

    # --- public API ------------------------------------------------------------------
    def compare(
        self, expected: Any, actual: Any, *, kind: str | None = None, embed: bool = True
    ) -> Comparison:
        """Whether ``actual`` means ``expected``; ``kind`` forces one reading.

        ``embed=False`` never touches the model: free text must then be equal after
        normalisation (tool matching uses this unless configured otherwise).
        """
        if kind is not None and kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
        sim = self.similarity if embed and self.settings.embed_free_text else None
        return self._compare(expected, actual, kind, sim)

    def compare_many(self, pairs: Sequence[tuple[Any, Any]]) -> list[Comparison]:
        """Compare many pairs; all free text needing embedding is encoded in one batch."""
        results: list[Comparison | None] = []
        texts: list[str] = []
        pending: list[int] = []

        def collect(a: str, b: str) -> float:
            texts.extend((a, b))
            raise _Deferred

        sim = collect if self.settings.embed_free_text else None
        for index, (expected, actual) in enumerate(pairs):
            try:
                results.append(self._compare(expected, actual, None, sim))
            except _Deferred:
                results.append(None)
                pending.append(index)
        if not pending:
            return [r for r in results if r is not None]
        # Nested structures may need several texts; gather them all, then one encode.
        for index in pending:
            self._gather(pairs[index], texts)
        self.embedder.encode(list(dict.fromkeys(texts)))
        for index in pending:
            expected, actual = pairs[index]
            results[index] = self._compare(expected, actual, None, self.similarity)
        return [r for r in results if r is not None]

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two texts' embeddings (cached)."""
        return self.embedder.similarity(a, b)

    def best_match(self, text: str, candidates: Sequence[str]) -> tuple[int, float]:
        """Index and cosine of the candidate closest in meaning to ``text`` (one batch).

        Returns ``(-1, 0.0)`` for no candidates.
        """
        if not candidates:
            return -1, 0.0
        vectors = self.embedder.encode([text, *candidates])
        scores = vectors[1:] @ vectors[0]
        best = int(np.argmax(scores))
        return best, float(scores[best])

    # --- dispatch --------------------------------------------------------------------
    def _gather(self, pair: tuple[Any, Any], texts: list[str]) -> None:
        """Every text pair a full comparison of ``pair`` will embed (for batching)."""

        def collect(a: str, b: str) -> float:
            texts.extend((a, b))
            return 0.0  # keep walking: nested structures may hold more texts

        self._compare(pair[0], pair[1], None, collect)

    def _compare(
        self, expected: Any, actual: Any, kind: str | None, sim: Similarity | None
    ) -> Comparison:
        if kind is not None:
            return self._forced(expected, actual, kind, sim)
        if type(expected) is type(actual) and _equal(expected, actual):
            return Comparison(True, 1.0, "exact", f"{short(expected)} == {short(actual)}")
        if self.settings.parse_json_strings:
            expected, actual = maybe_json(expected), maybe_json(actual)
        leaf = self._leaf(sim)
        if not (type(expected) in _SCALARS and type(actual) in _SCALARS) and (
            isinstance(expected, _CONTAINERS) or isinstance(actual, _CONTAINERS)
        ):
            return self._structure(expected, actual, leaf)
        if expected is None or actual is None:
            same = expected is None and actual is None
            return Comparison(same, float(same), "exact", f"{short(expected)} vs {short(actual)}")
        if isinstance(expected, bool) or isinstance(actual, bool):
            return self._bool(expected, actual)
        dated = self._dates(expected, actual)
        if dated is not None:
            return dated
        e_num = parse_number(expected, self.settings.ambiguous_comma)
        a_num = parse_number(actual, self.settings.ambiguous_comma)
        if e_num is not None and a_num is not None:
            return compare_numbers(e_num, a_num, self.settings)
        e_text, a_text = str(expected), str(actual)
        if (e_num is None) != (a_num is None) and not (type(expected) is type(actual) is str):
            number, other = (expected, actual) if e_num is not None else (actual, expected)
            return Comparison(False, 0.0, "number", f"{short(other)} is not the number {number}")
        if looks_like_id(e_text, self.settings) or looks_like_id(a_text, self.settings):
            return compare_ids(e_text, a_text, self.settings)
        e_bool, a_bool = self._as_bool(e_text), self._as_bool(a_text)
        if e_bool is not None and a_bool is not None:
            return self._bool(expected, actual)
        return compare_text(e_text, a_text, self.settings, sim)

    def _leaf(self, sim: Similarity | None) -> Callable[[Any, Any], Comparison]:
        return lambda e, a: self._compare(e, a, None, sim)

    def _structure(
        self, expected: Any, actual: Any, leaf: Callable[[Any, Any], Comparison]
    ) -> Comparison:
        if isinstance(expected, Mapping) or isinstance(actual, Mapping):
            dated = self._dates(expected, actual)
            if dated is not None:
                return dated
            if isinstance(expected, Mapping) and isinstance(actual, Mapping):
                return compare_mappings(expected, actual, leaf)
        elif isinstance(expected, list | tuple) and isinstance(actual, list | tuple):
            ordered = self.settings.list_order_matters
            return compare_sequences(expected, actual, leaf, ordered=ordered)
        return Comparison(
            False, 0.0, "json", f"{short(expected)} vs {short(actual)}: shapes differ"
        )

    def _dates(self, expected: Any, actual: Any) -> Comparison | None:
        day_first = self.settings.slash_dates_day_first
        e_date = parse_date(expected, day_first=day_first)
        a_date = parse_date(actual, day_first=day_first)
        if e_date is None and a_date is None:
            return None
        if e_date is None and a_date is not None:
            e_date = year_span(expected) if a_date.is_period else None
        if a_date is None and e_date is not None:
            a_date = year_span(actual) if e_date.is_period else None
        if e_date is None or a_date is None:
            bad = actual if a_date is None else expected
            return Comparison(False, 0.0, "date", f"{short(bad)} is not a date or period")
        return compare_dates(e_date, a_date, self.settings)

    def _as_bool(self, value: Any) -> bool | None:
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            word = value.strip().casefold()
            if word in self.settings.true_words:
                return True
            if word in self.settings.false_words:
                return False
        return None

    def _bool(self, expected: Any, actual: Any) -> Comparison:
        e, a = self._as_bool(expected), self._as_bool(actual)
        if e is None or a is None:
            bad = expected if e is None else actual
            return Comparison(False, 0.0, "bool", f"{short(bad)} is not a yes/no value")
        same = e == a
        op = "==" if same else "!="
        return Comparison(
            same, float(same), "bool", f"{short(expected)} {op} {short(actual)} ({e} vs {a})"
        )

    def _forced(self, expected: Any, actual: Any, kind: str, sim: Similarity | None) -> Comparison:
        """The caller knows the kind: read both values that way, or say why not."""
        s = self.settings
        if kind == "exact":
            same = _equal(expected, actual)
            return Comparison(
                same,
                float(same),
                "exact",
                f"{short(expected)} {'==' if same else '!='} {short(actual)}",
            )
        if kind == "number":
            e, a = (
                parse_number(expected, s.ambiguous_comma),
                parse_number(actual, s.ambiguous_comma),
            )
            if e is None or a is None:
                return Comparison(
                    False, 0.0, "number", f"{short(actual if e else expected)} is not a number"
                )
            return compare_numbers(e, a, s)
        if kind in ("date", "period"):
            return self._dates(expected, actual) or Comparison(
                False, 0.0, kind, "neither is a date"
            )
        if kind == "id":
            return compare_ids(str(expected), str(actual), s)
        if kind == "bool":
            return self._bool(expected, actual)
        if kind == "json":
            return self._structure(maybe_json(expected), maybe_json(actual), self._leaf(sim))
        return compare_text(str(expected), str(actual), s, sim)  # enum, text


def _equal(a: Any, b: Any) -> bool:
    try:
        same = a == b
    except Exception:
        return False
    if isinstance(same, bool):
        return same and not (isinstance(a, float) and math.isnan(a))
    return False


_DEFAULTS: dict[str, SemanticComparator] = {}
_DEFAULTS_LOCK = threading.Lock()


def default_comparator(settings: CompareSettings | None = None) -> SemanticComparator:
    """A shared comparator per distinct settings, so the model and its cache load once."""
    if settings is None and "" in _DEFAULTS:
        return _DEFAULTS[""]  # the hot path: no settings to serialise
    key = settings.model_dump_json() if settings is not None else ""
    with _DEFAULTS_LOCK:
        if key not in _DEFAULTS:
            _DEFAULTS[key] = SemanticComparator(settings or CompareSettings())
        return _DEFAULTS[key]


def lazy_comparator(settings: CompareSettings) -> Callable[[], SemanticComparator]:
    """A comparator of its own for one owner (an evaluator, a judge, a set of services),
    made on the first call and the same one after: the embedding model loads only when
    some text needs it, and only once for that owner."""
    made: list[SemanticComparator] = []
    lock = threading.Lock()

    def comparator() -> SemanticComparator:
        if not made:
            with lock:
                if not made:
                    made.append(SemanticComparator(settings))
        return made[0]

    return comparator


def compare(expected: Any, actual: Any, *, settings: CompareSettings | None = None) -> Comparison:
    """Module-level convenience; loads the embedding model only if free text needs it.

    >>> compare("$1,200", "1200 USD").same
    True
    >>> compare("ORD-42", "ORD-43").same
    False
    """
    return default_comparator(settings).compare(expected, actual)
