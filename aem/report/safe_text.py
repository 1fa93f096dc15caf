"""Trace data made inert for a terminal, and the small wording helpers every view shares.

Everything that comes from trace data (session ids, turn names, explanations, issue
messages) goes through :func:`safe`: a span name must not be able to clear the screen,
retitle the window or forge output with escape sequences, nor inject rich markup.
"""

from __future__ import annotations

import re

from rich.text import Text

# C0 and C1 control characters (ESC starts every terminal escape sequence, BEL ends the
# OSC ones) and the bidirectional overrides that reorder what a line seems to say. Line
# feeds and tabs stay: multi-line explanations are fine in a table cell.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(value: object, style: str = "") -> Text:
    """Trace data as inert text: control characters shown as ``\\x1b``-style escapes,
    brackets shown as brackets (never read as rich markup)."""
    return Text(_UNSAFE.sub(_escape_char, str(value)), style=style)


def plural(count: int, noun: str) -> str:
    """``1 session``, ``2 sessions``.

    >>> plural(1, "session"), plural(0, "turn")
    ('1 session', '0 turns')
    """
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def cut(text: str, limit: int = 140) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (the JSON report has it whole)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
