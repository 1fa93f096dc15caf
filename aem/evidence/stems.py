"""Word stems: what the embedded checks compare when they compare words, not meanings.

Why crude prefixes: the bundled embedding model reads English best, and a Russian answer
paraphrasing a Russian passage shares its stems far more reliably than its vectors; the
same stems let polarity and names be checked in any script without a stemmer per language.
"""

from __future__ import annotations

from functools import lru_cache

from aem.evidence.claims import words
from aem.foundation.vocabulary import STOP_WORDS


def stem(word: str) -> str:
    """A crude stem: the first 5 letters (4 in Cyrillic, whose endings run longer)."""
    cut = 4 if any("а" <= c <= "я" or c == "ё" for c in word) else 5
    return word[:cut]


@lru_cache(maxsize=8192)
def content_stems(text: str) -> frozenset[str]:
    """Stems of the words that carry content: no stop words, no one-letter words, no
    values (numbers and dates are the value rule's, compared by meaning).

    Cached: every claim of an answer is held against every passage, so one passage's
    stems were computed once per claim (a quarter of a short session's groundedness)."""
    return frozenset(
        stem(w)
        for w in words(text)
        if len(w) > 1 and w not in STOP_WORDS and not any(c.isdigit() for c in w)
    )
