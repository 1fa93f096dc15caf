"""An answer split into claims: sentences and list items that carry checkable content.

Why a splitter of its own: groundedness judges an answer claim by claim, so "Hello!",
"Is there anything else I can help with?" and "Хотите, я подключу менеджера?" must not
count as claims (they state nothing the context could support), while every sentence
and every list item that does state something must. Citation markers (``[1]``,
``[1, 2]``, ``[1][3]``) are taken out of the claim's text and kept beside it, so the
text compared with the context is the claim alone; so are sources named in words
("(Passage 1)", "according to document 2"), whose numbers are no stated values.

An honest gap statement — "I couldn't find …", "the passages do not say …", "в документах
нет сведений о …" (:data:`aem.foundation.vocabulary.GAP_CUES`) — states nothing a context could
support, so it is no claim; a clause after it that does state something ("…, but there is
one on May 6 at 9:00") still is, and is checked on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aem.evidence.citations import Citation, find_citations, strip_citations
from aem.foundation.vocabulary import ABBREVIATIONS, GAP_CLAUSE_BREAK, GAP_CUES, MONTH_NUMBERS

# Sentence ends: . ! ? … followed by space and an upper-case or digit start, or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"'«(\[]?[A-ZА-ЯЁ0-9])|\n+")
# The word before a full stop (letters and dots: "z.B", "т.е"), the word after a break.
_LAST_WORD = re.compile(r"[^\W\d_][\w.]*$|\d+$")
_FIRST_WORD = re.compile(r"[^\W\d_]+\.?")
_LIST_MARK = re.compile(r"^\s*(?:[-*•·]|\d{1,2}[.)])\s+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# What carries no checkable content: greetings, thanks, offers of help, sign-offs.
_NON_CLAIM = re.compile(
    r"^(?:hi|hello|hey|dear|thanks?|thank you|you're welcome|sure|of course|certainly"
    r"|здравствуйте|добрый (?:день|вечер)|привет|спасибо|пожалуйста|конечно)\b"
    r"|\b(?:let me know|happy to help|glad to help|feel free|anything else|hope (?:this|that)"
    r" helps|have a (?:nice|great|good|safe|pleasant|wonderful) (?:day|trip|flight|journey)"
    r"|enjoy your|safe travels|bon voyage|(?:i'm|i am) glad|glad i could|don't hesitate"
    r"|can i help|may i help"
    r"|чем (?:ещё|еще) (?:могу|я могу) помочь|обращайтесь|рад(?:а)? помочь|хорошего дня"
    r"|если (?:у вас )?(?:остались|будут|возникнут) вопросы)\b",
    re.IGNORECASE,
)
# What the agent says about its own doing or asks of the user — "Here are the details:",
# "I have retrieved your reservation", "Please provide the reason" — states no fact about
# the world for a context to support.
_NARRATION = re.compile(
    r"^(?:here (?:is|are)\b|i(?:'ve| have)? (?:just )?(?:retrieved|found|checked|looked|pulled|"
    r"fetched|located)\b|i(?:'ll| will| can| am going to| would like to)\b|let me\b|please\b"
    r"|could you\b|can you\b|would you\b|вот\b|я (?:нашёл|нашел|нашла|проверил|проверила)\b"
    r"|пожалуйста\b|уточните\b|подскажите\b)",
    re.IGNORECASE,
)
_MIN_WORDS = 3


@dataclass(frozen=True)
class Claim:
    """One checkable statement of an answer: its text without citation markers, the
    citations it carries, and where it starts in the answer."""

    text: str
    raw: str
    citations: tuple[Citation, ...]
    start: int


def words(text: str) -> list[str]:
    """The text's words, lower-cased (letters and digits, any script)."""
    return [w.lower() for w in _WORD.findall(text)]


def sentence_pieces(text: str) -> list[str]:
    """Sentences and lines of ``text``, without their offsets."""
    return [piece for piece, _ in _pieces(text)]


def sentence_breaks(text: str) -> list[tuple[int, int]]:
    """Where ``text``'s sentences and lines break, as ``(end of one, start of the next)``.

    A full stop after a title or an abbreviation ("Dr. Weber", "Dra. Gómez", "Sept. 5"),
    an initial ("J. Smith") or a day's number before its month ("am 22. Juli") ends no
    sentence. The one splitter of AEM: claims and the bindings' sentences both cut here.

    >>> text = "Termin am 22. Juli bei Dr. Weber. Es kostet 25 €."
    >>> [text[a:b] for a, b in zip([0] + [e for _, e in sentence_breaks(text)],
    ...                             [s for s, _ in sentence_breaks(text)] + [len(text)])]
    ['Termin am 22. Juli bei Dr. Weber.', 'Es kostet 25 €.']
    """
    breaks = []
    for match in _SENTENCE_END.finditer(text):
        if match.group(0).startswith("\n") or not _no_end(text, match.start(), match.end()):
            breaks.append((match.start(), match.end()))
    return breaks


def _no_end(text: str, stop: int, following: int) -> bool:
    """Whether the full stop before ``stop`` ends no sentence (see :func:`sentence_breaks`)."""
    if text[stop - 1 : stop] != ".":
        return False
    word = _LAST_WORD.search(text, max(0, stop - 12), stop - 1)
    if word is None or (word.start() > 0 and text[word.start() - 1].isalnum()):
        return False  # "22C." is a measure glued to its number, no initial
    last = word.group(0).lower()
    if last in ABBREVIATIONS or (len(last) == 1 and last.isalpha() and word.group(0).isupper()):
        return True
    if last.isdigit() and len(last) <= 2:  # "22. Juli": a day before its month
        after = _FIRST_WORD.match(text, following)
        return after is not None and after.group(0).lower().rstrip(".") in MONTH_NUMBERS
    return False


def _pieces(text: str) -> list[tuple[str, int]]:
    """Sentences and list items with their offsets in ``text``."""
    pieces: list[tuple[str, int]] = []
    position = 0
    for end, start in sentence_breaks(text):
        pieces.append((text[position:end], position))
        position = start
    pieces.append((text[position:], position))
    return [(piece, start) for piece, start in pieces if piece.strip()]


def is_gap_statement(text: str) -> bool:
    """Whether ``text`` says the context lacks something ("I couldn't find …", "the
    passages do not mention …", "в документах нет сведений о …")."""
    return GAP_CUES.search(text) is not None


def claim_texts(sentence: str) -> list[str]:
    """What of a sentence is to be checked: the sentence itself when it is a claim; of a
    gap statement, only the clauses that are claims and no gap statement themselves
    ("I couldn't find a flight on May 5, but there is one on May 6 at 9:00" → "there is
    one on May 6 at 9:00")."""
    if not is_gap_statement(sentence):
        return [sentence] if _states_something(sentence) else []
    clauses = (clause.strip() for clause in GAP_CLAUSE_BREAK.split(sentence))
    return [c for c in clauses if c and not is_gap_statement(c) and _states_something(c)]


def is_claim(text: str) -> bool:
    """Whether a sentence states something checkable (:func:`claim_texts` finds some)."""
    return bool(claim_texts(text))


def _states_something(text: str) -> bool:
    """Whether a sentence states something checkable: not a question, a lead-in ("…:"),
    a greeting, an offer of help, a sign-off, the agent narrating its own steps or a
    request to the user, and not too short to say anything."""
    stripped = text.strip().strip("*_#` ")  # "**Option 1:**" is markup round a lead-in
    if not stripped or stripped.endswith(("?", ":")):
        return False
    if _NARRATION.search(stripped):
        return False
    if _NON_CLAIM.search(stripped):
        return False
    if not any(c.isalpha() for c in stripped):
        return False  # a lone list number ("4.") or a bare figure says nothing by itself
    return len(words(stripped)) >= _MIN_WORDS or any(c.isdigit() for c in stripped)


def split_claims(answer: str) -> list[Claim]:
    """The claims of ``answer`` in order, each with the citation markers inside it."""
    claims: list[Claim] = []
    for piece, start in _pieces(answer):
        body = _LIST_MARK.sub("", piece)
        cited = tuple(find_citations(body))
        for text in claim_texts(strip_citations(body).strip()):
            claims.append(Claim(text, piece.strip(), cited, start))
    return claims
