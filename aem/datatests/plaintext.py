"""Untrusted text shown as text: control characters made visible, no markup read.

Why: ``aem test run`` and ``show`` print what others wrote — a judge's reply, an agent's
conversation id, trace text. Written to a terminal raw, an ESC sequence in it recolours
or clears the screen, a ``\\r`` overwrites the line before it (a "fail" shown as "pass"),
a BEL rings; read as rich markup, ``[bold red]`` in a reply would be styled and vanish.
So every such string goes through :func:`visible` and into a ``rich.text.Text``, which
rich never parses for markup.
"""

from __future__ import annotations

from rich.text import Text

_KEPT = {"\n", "\t"}
# Bidirectional overrides and isolates reorder what a terminal shows ("trojan source").
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_NAMED = {
    "\r": "\\r",
    "\x1b": "\\x1b",
    "\x07": "\\x07",
    "\x08": "\\b",
    "\x0b": "\\v",
    "\x0c": "\\f",
}


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


def visible(text: str) -> str:
    """``text`` with every control character (but newline and tab) as a visible escape:
    ESC as ``\\x1b``, CR as ``\\r``, BEL as ``\\x07``."""
    return text.translate(_TABLE)


def plain(text: object) -> Text:
    """``text`` as a rich ``Text``: control characters visible, markup printed as is."""
    return Text(visible(str(text)))
