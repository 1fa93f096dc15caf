"""Text from traces made inert for a terminal: no escape sequences, no rich markup.

Why at the bottom of the layers: the audit's terminal view and the scorecard tables both
print what spans said (session and conversation ids, step names, messages), and both are
written with rich. A step name can carry ``\\x1b]0;…\\x07`` (retitle the window), ``\\x1b[2J``
(clear the screen) or ``[bold]`` (read as a style tag and dropped); one function, below
every application, keeps them all printing what is literally there.
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.text import Text

# C0 and C1 control characters (ESC starts every terminal escape sequence, BEL ends the
# OSC ones, CR overwrites the line before it: a "fail" shown as "pass") and the
# bidirectional overrides and isolates that reorder what a line seems to say. Line feeds
# and tabs stay: multi-line explanations are fine in a table cell.
_KEPT = {"\n", "\t"}
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_NAMED = {"\r": "\\r", "\x08": "\\b", "\x0b": "\\v", "\x0c": "\\f"}


def _escape(code: int) -> str:
    char = chr(code)
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_TABLE = {
    code: _escape(code)
    for code in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *_BIDI]
    if chr(code) not in _KEPT
}


def escape_controls(value: object) -> str:
    r"""``value`` as text with each unsafe character written as its escape.

    >>> escape_controls("a\x1b[2Jb")
    'a\\x1b[2Jb'
    """
    return str(value).translate(_TABLE)


def safe(value: object, style: str = "") -> Text:
    """Trace data as inert text: control characters shown as ``\\x1b``-style escapes,
    brackets shown as brackets (never read as rich markup)."""
    return Text(escape_controls(value), style=style)


# Wide enough that a renderable's measurement is its natural width, not the terminal's.
_UNBOUNDED = 100_000


def fits(console: Console, renderable: RenderableType) -> bool:
    """Whether ``renderable`` prints at its natural width on ``console``: a table squeezed
    below it folds an identifier in two, so callers print a plainer form instead."""
    unbounded = console.options.update(width=_UNBOUNDED, max_width=_UNBOUNDED)
    return Measurement.get(console, unbounded, renderable).maximum <= console.width
