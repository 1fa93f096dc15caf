"""Free text: normalised equality first, sentence-embedding similarity for what is left.

Why this order: an embedding costs milliseconds, a normalised string compare nanoseconds,
and most "different" texts in traces differ only in case, spacing or punctuation.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from aem.compare.result import Comparison, short
from aem.compare.settings import CompareSettings

Similarity = Callable[[str, str], float]
_SPACE_LIKE = re.compile(r"[\s_\-–—]+")
_EDGE_PUNCT = " \t\n.,;:!?'\"`()[]{}"


def normalise_text(text: str) -> str:
    """NFKC, case-folded, separators and runs of whitespace as one space, edge punctuation off.

    >>> normalise_text("  Round_Trip. ")
    'round trip'
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE_LIKE.sub(" ", text).strip(_EDGE_PUNCT)


def is_enum_like(text: str, settings: CompareSettings) -> bool:
    """A short word (or ``enum_max_words`` words) with no digits: an enum value, not prose.

    >>> is_enum_like("economy", CompareSettings()), is_enum_like("the flight", CompareSettings())
    (True, False)
    """
    words = normalise_text(text).split()
    return 0 < len(words) <= settings.enum_max_words and not any(c.isdigit() for c in text)


def compare_text(
    expected: str, actual: str, settings: CompareSettings, similarity: Similarity | None
) -> Comparison:
    """Text verdict: normalised equality, enum spelling, then embedding cosine vs threshold.

    ``similarity`` is None when embedding is not allowed on this path (tool matching).

    >>> compare_text("Economy", "economy ", CompareSettings(), None).same
    True
    """
    threshold = settings.text_similarity_threshold
    a, b = normalise_text(expected), normalise_text(actual)
    pair = f"{short(expected)} {{}} {short(actual)}"
    if a == b:
        kind = "enum" if is_enum_like(expected, settings) else "text"
        return Comparison(True, 1.0, kind, pair.format("==") + " (same after normalising)", None)
    if is_enum_like(expected, settings) and is_enum_like(actual, settings):
        return Comparison(False, 0.0, "enum", pair.format("!=") + f" ({a} vs {b})")
    if similarity is None or not settings.embed_free_text:
        return Comparison(
            False, 0.0, "text", pair.format("!=") + " (texts differ; embedding not used here)"
        )
    score = max(0.0, min(1.0, float(similarity(expected, actual))))
    same = score >= threshold
    op = ("~", "≥") if same else ("!~", "<")
    return Comparison(
        same,
        score,
        "text",
        pair.format(op[0]) + f" (cosine {score:.3f} {op[1]} threshold {threshold:g})",
        threshold,
    )
