"""Text from traces made inert for a terminal: no escape sequences, no rich markup.

Why at the bottom of the layers: the audit's terminal view and the scorecard tables both
print what spans said (session and conversation ids, step names, messages), and both are
written with rich. A step name can carry ``\\x1b]0;…\\x07`` (retitle the window), ``\\x1b[2J``
(clear the screen) or ``[bold]`` (read as a style tag and dropped); one function, below
every application, keeps them all printing what is literally there.
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


def escape_controls(value: object) -> str:
    r"""``value`` as text with each unsafe character written as its escape.

    >>> escape_controls("a\x1b[2Jb")
    'a\\x1b[2Jb'
    """
    return _UNSAFE.sub(_escape_char, str(value))


def safe(value: object, style: str = "") -> Text:
    """Trace data as inert text: control characters shown as ``\\x1b``-style escapes,
    brackets shown as brackets (never read as rich markup)."""
    return Text(escape_controls(value), style=style)
