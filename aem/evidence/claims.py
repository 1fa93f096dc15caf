"""An answer split into claims: sentences and list items that carry checkable content.

Why a splitter of its own: groundedness judges an answer claim by claim, so "Hello!",
"Is there anything else I can help with?" and "Хотите, я подключу менеджера?" must not
count as claims (they state nothing the context could support), while every sentence
and every list item that does state something must. Citation markers (``[1]``,
``[1, 2]``, ``[1][3]``) are taken out of the claim's text and kept beside it, so the
text compared with the context is the claim alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aem.evidence.citations import Citation, find_citations, strip_citations

# Sentence ends: . ! ? … followed by space and an upper-case or digit start, or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"'«(\[]?[A-ZА-ЯЁ0-9])|\n+")
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


def _pieces(text: str) -> list[tuple[str, int]]:
    """Sentences and list items with their offsets in ``text``."""
    pieces: list[tuple[str, int]] = []
    position = 0
    for match in _SENTENCE_END.finditer(text):
        pieces.append((text[position : match.start()], position))
        position = match.end()
    pieces.append((text[position:], position))
    return [(piece, start) for piece, start in pieces if piece.strip()]


def is_claim(text: str) -> bool:
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
        text = strip_citations(body).strip()
        if text and is_claim(text):
            claims.append(Claim(text, piece.strip(), tuple(find_citations(body)), start))
    return claims
