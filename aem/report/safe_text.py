"""The small wording helpers every view of the report shares, and :func:`safe`.

Everything that comes from trace data (session ids, turn names, explanations, issue
messages) goes through :func:`safe` (:mod:`aem.foundation.terminaltext`): a span name must not be
able to clear the screen, retitle the window or forge output with escape sequences, nor
inject rich markup.
"""

from __future__ import annotations

from aem.foundation.terminaltext import safe

__all__ = ["cut", "plural", "safe"]


def plural(count: int, noun: str) -> str:
    """``1 session``, ``2 sessions``.

    >>> plural(1, "session"), plural(0, "turn")
    ('1 session', '0 turns')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def cut(text: str, limit: int = 140) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (the JSON report has it whole),
    at the last space before the limit, and never inside a quoted value: a value cut in the
    middle ('2025-03-0…') reads as another value. A short quoted value the limit falls in
    is left out whole, with an open parenthesis before it; a passage (words) is cut between
    its words and its quote closed after the ellipsis.

    >>> cut("got '2025-03-01' instead of '2026-03-01'", 30)
    "got '2025-03-01' instead of …"
    >>> cut("expected '2026-03-01', got '2025-03-01' ('2026-03-01' != '2025-03-01')", 60)
    "expected '2026-03-01', got '2025-03-01' …"
    >>> cut("closest passage: 'How long does it take to get my money back?'", 50)
    "closest passage: 'How long does it take to get …'"
    >>> cut("a_single_identifier_longer_than_the_limit", 10)
    'a_single_…'
    """
    if len(text) <= limit:
        return text
    head = text[: limit - 2]  # room for the ellipsis and a closing quote
    space = head.rfind(" ")
    if space <= limit // 2:  # one word longer than half the limit: cut inside it
        return text[: limit - 1] + "…"
    head = head[: space + 1]
    opened = _open_quote(head)
    if opened is not None:
        quote, start = opened
        if len(head[start + 1 :].split()) >= _WORDS:  # words: cut between them, quote closed
            return head + "…" + quote
        head = head[:start]
    parenthesis = head.rfind("(")
    if parenthesis > limit // 3 and ")" not in head[parenthesis:]:
        head = head[:parenthesis]
    kept = head.rstrip(" ,;:(")
    return kept + " …" if kept else text[: limit - 1] + "…"


# A quoted value of fewer words kept (a date, an id, an amount: one) is left out whole
# rather than cut; one of more is a passage, cut between its words.
_WORDS = 3
# What may stand before a quote that opens a value: an apostrophe inside a word does not.
_BEFORE_QUOTE = " ([{=:,"


def _open_quote(text: str) -> tuple[str, int] | None:
    """The quote character and position of a quoted value ``text`` ends inside, if any."""
    quote, start = "", -1
    for i, char in enumerate(text):
        if char not in "'\"":
            continue
        if not quote and (i == 0 or text[i - 1] in _BEFORE_QUOTE):
            quote, start = char, i
        elif char == quote and (i + 1 == len(text) or not text[i + 1].isalnum()):
            quote = ""
    return (quote, start) if quote else None
