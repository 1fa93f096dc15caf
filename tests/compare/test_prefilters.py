"""The cheap checks that let extraction (and value support's arithmetic) skip a scan
never skip one that would find something: on texts made of the very pieces the full
patterns look for (and noise around them), a text a check turns away holds no match of
the pattern it guards."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from aem.compare import clock, textkinds
from aem.evidence import support

PIECES = [
    # times and days
    "08:30", "8:05 PM", "20:30:00", "11am", "7 p.m.", "12 AM", "9:7", "24:00", "1:60",
    "May 26", "26th of May", "Sept. 3", "3 мая", "Feb 31", "may 2", "JAN 5",
    # inline kinds
    "https://x.io/a1", "ftp://h/p", "www.shop.example", "%2F", "%zz", "/usr/lib/x",
    "~/a/b", "C:\\dir\\f", "src/main.py", "report.json", "notes.MD", "python/3.11",
    "v1.2.3", "V2.0", "version 2.0", "Python 3.11.4", "node.js 20.1", "release 1.2-rc",
    "1.2.3-beta", "12.03.2024", "gpt-4o", "GPT4", "gpt4o-mini", "Claude-3.5", "LLAMA:70b",
    "o1-preview", "o4-mini", "O3:x", "t5.base", "roberta-large", "all-MiniLM-L6", "GEMİNİ-pro",
    "\u212a", "\\u00e9", "\\x41", "\\q",
    # what lies around them
    "$655.81", "ORD-0000042", "total", "the", "ver", "vs", ":", ".", "-", "/", "\\",
    "\n", " ", "  ", "\t", "a", "A", "7", "0", "é", "ſ", "İ",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=8).map("".join) | st.text(max_size=40)


@settings(max_examples=3000, deadline=None)
@given(texts)
@example("Arrival 8:05 PM on May 26")
@example("see gpt-4o at https://x.io/a1")
def test_a_text_the_checks_turn_away_holds_no_match(text: str) -> None:
    if not textkinds._may_be_inline(text):
        assert textkinds._INLINE.search(text) is None, text
    if not clock._MAY_HOLD_TIME.search(text):
        assert not clock._CLOCK.search(text) and not clock._HOUR.search(text), text
    if not clock._MAY_HOLD_DAY.search(text):
        assert not clock._MONTH_DAY.search(text) and not clock._DAY_MONTH.search(text), text


def test_the_checks_let_through_what_they_guard() -> None:
    """Not vacuous: each piece the patterns find passes its check."""
    assert all(textkinds._may_be_inline(t) for t in ("gpt-4o", "v1.2", "a/b", "x.py", "%41"))
    assert all(clock._MAY_HOLD_TIME.search(t) for t in ("08:30", "7 p.m.", "11AM"))
    assert all(clock._MAY_HOLD_DAY.search(t) for t in ("May 26", "3 мая"))
    assert not textkinds._may_be_inline("Your order ORD-0000042 totals $655.81.")


ARITHMETIC_PIECES = ['"', "12", " + ", "(", ")", ".", "-", "*", "/", "a", '\\"', ",", ":", "{", "}"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(ARITHMETIC_PIECES), max_size=14).map("".join))
@example('{"expression": "364 + (210 + 370)"}')
def test_a_text_the_arithmetic_check_turns_away_holds_no_arithmetic(text: str) -> None:
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    written = [s for s in strings if support._ARITHMETIC.match(s) and set(s) & set("+-*/")]
    if not support._MAY_HOLD_ARITHMETIC.search(text):
        assert not written, text
    assert bool(support.arithmetic_results(text)) <= bool(written)
