"""The small wording helpers every view of the report shares, and :func:`safe`.

Everything that comes from trace data (session ids, turn names, explanations, issue
messages) goes through :func:`safe` (:mod:`aem.terminaltext`): a span name must not be
able to clear the screen, retitle the window or forge output with escape sequences, nor
inject rich markup.
"""

from __future__ import annotations

from aem.terminaltext import safe

__all__ = ["cut", "plural", "safe"]


def plural(count: int, noun: str) -> str:
    """``1 session``, ``2 sessions``.

    >>> plural(1, "session"), plural(0, "turn")
    ('1 session', '0 turns')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def cut(text: str, limit: int = 140) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (the JSON report has it whole),
    at the last space before the limit: a value cut in the middle ('2025-03-0…') reads as
    another value.

    >>> cut("got '2025-03-01' instead of '2026-03-01'", 30)
    "got '2025-03-01' instead of …"
    >>> cut("a_single_identifier_longer_than_the_limit", 10)
    'a_single_…'
    """
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[: space + 1] if space > limit // 2 else head) + "…"
