"""Person names as values: read by shape, compared as names, never by embedding.

Why by shape and not by a name list: a person in charge can be anyone ("Dra. María
Gómez", "Игорь Петров", "Sarah O'Neil"), so a name is a run of two to four capitalised
words, perhaps after a title ("Dr.", "Dra.", "Prof." — a capitalised word of two to four
letters ending with a full stop). What keeps German nouns ("Ihr Termin", "Die Gebühr")
and dates out is that a name holds no function word, month or weekday of a read
language. Two names are the same person when, transliterated (``anyascii``: Cyrillic and
diacritics to Latin letters), case-folded and without titles, one's words hold the
other's ("Dr. Weber" is "Anna Weber"; "Jurgen Muller" is "Jürgen Müller"; "Anna
Smirnova" is "Анна Смирнова").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from anyascii import anyascii

from aem.foundation.vocabulary import (
    ABBREVIATIONS,
    LANGUAGE_WORDS,
    MONTH_NUMBERS,
    WEEKDAY_NUMBERS,
)

_CHUNK = re.compile(r"\S+")
_OPENING = "\"'«„“(["
_CLOSING = ".,;:!?\"'»“”)]"
_NOT_NAME_WORDS = frozenset().union(*LANGUAGE_WORDS.values(), MONTH_NUMBERS, WEEKDAY_NUMBERS)
_MAX_WORDS = 4


@dataclass(frozen=True, slots=True)
class PersonName:
    """A name as written (``raw``) and its comparable words (transliterated, folded)."""

    raw: str
    words: frozenset[str]

    def same_person(self, other: PersonName) -> bool:
        """One's words hold the other's: "Dr. Weber" and "Anna Weber" are one person."""
        return bool(self.words) and (self.words <= other.words or other.words <= self.words)

    def shares_a_word(self, other: PersonName) -> bool:
        return bool(self.words & other.words)


def folded(word: str) -> str:
    """A word as names compare it: transliterated to Latin letters and case-folded."""
    return anyascii(word).casefold().replace("’", "'")


_WORDS = re.compile(r"[^\W\d_][^\W\d_'’-]*")


@functools.lru_cache(maxsize=64)
def folded_words(text: str) -> frozenset[str]:
    """Every word of ``text`` as names compare it (:func:`folded`); kept for the texts
    asked again (a turn's context is asked once per claim)."""
    return frozenset(folded(w) for w in _WORDS.findall(text))


def person_name(text: str) -> PersonName | None:
    """``text`` read as a whole person's name (a record's field), or None.

    >>> person_name("Dra. María Gómez").words == frozenset({"maria", "gomez"})
    True
    >>> person_name("confirmed"), person_name("San Francisco Bay Area Office Park")
    (None, None)
    """
    names = list(person_names(text))
    if len(names) == 1 and names[0].raw == text.strip():
        return names[0]
    return None


def person_names(text: str) -> Iterator[PersonName]:
    """The person names a text states, in order: runs of name words (perhaps after a
    title), each run ended by a word that is none or by punctuation after a word.

    >>> [n.raw for n in person_names("Ihr Termin ist am 12. Mai bei Dr. Jürgen Müller.")]
    ['Dr. Jürgen Müller']
    >>> [n.raw for n in person_names("Вас примет Игорь Петров; к оплате 40 €.")]
    ['Игорь Петров']
    """
    title, run = "", list[str]()
    for found in _CHUNK.finditer(text):
        core = found.group().lstrip(_OPENING)
        if not run and not title and _is_title(core):
            title = core
            continue
        word = core.rstrip(_CLOSING)
        if _is_name_word(word):
            run.append(word)
            if word == core:
                continue
        yield from _name(title, run)
        title, run = "", list[str]()
    yield from _name(title, run)


def _is_title(chunk: str) -> bool:
    """ "Dr.", "Dra.", "Prof.", "Fr.": a capitalised abbreviation of the read languages
    (:data:`aem.foundation.vocabulary.ABBREVIATIONS`) with its stop — not "Uhr." ending a
    sentence."""
    return chunk.endswith(".") and chunk[:1].isupper() and chunk[:-1].lower() in ABBREVIATIONS


def _is_name_word(word: str) -> bool:
    """A capitalised word of letters (an apostrophe or hyphen inside), not all capitals,
    and no function word, month or weekday of a read language."""
    letters = word.replace("'", "").replace("’", "").replace("-", "")
    return (
        len(letters) >= 2
        and letters.isalpha()
        and word[0].isupper()
        and not word.isupper()
        and word.lower() not in _NOT_NAME_WORDS
    )


def _name(title: str, run: list[str]) -> Iterator[PersonName]:
    """The name a run of words makes: two to four words, or one after a title."""
    if not run or len(run) > _MAX_WORDS or (len(run) == 1 and not title):
        return
    raw = " ".join([title, *run]) if title else " ".join(run)
    yield PersonName(raw, frozenset(folded(w) for w in run))
