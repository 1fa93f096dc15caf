"""Numbers as people and tools write them: ``1 234,50``, ``1,234.5``, ``1.2k``, ``$1,200``.

Why a parser and not ``float()``: an agent that answers "1 234,50 €" for a tool result of
``1234.5`` told the truth; string equality (what every peer library does) says it lied.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from babel import Locale
from babel.numbers import get_currency_symbol

from aem.compare.result import Comparison
from aem.compare.settings import CompareSettings
from aem.foundation.vocabulary import CURRENCY_CODES, MAGNITUDE_WORDS, NUMBER_WORDS, READ_LANGUAGES

CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₽": "RUB", "₹": "INR"}
# The symbols CLDR writes in the read languages that are neither a bare sign nor the code
# ("US$", "CA$", "AU$", "CN¥"), from babel: "12,50 US$" is Spanish for $12.50.
CURRENCY_SYMBOLS |= {
    str(symbol): code
    for code in CURRENCY_CODES
    for language in READ_LANGUAGES
    if len(symbol := get_currency_symbol(code, language)) > 1 and symbol != code
}
_MAGNITUDES = {
    "k": 1e3,
    "K": 1e3,
    "M": 1e6,
    "mn": 1e6,
    "mln": 1e6,
    "B": 1e9,
    "bn": 1e9,
    **MAGNITUDE_WORDS,
}
# Units recognised inside free text; a whole value ("42 apples") may carry any short word.
KNOWN_UNITS = {
    "%": "%",
    "percent": "%",
    "pct": "%",
    "kg": "kg",
    "g": "g",
    "lb": "lb",
    "lbs": "lb",
    "km": "km",
    "m": "m",
    "cm": "cm",
    "mm": "mm",
    "mi": "mi",
    "miles": "mi",
    "h": "h",
    "hr": "h",
    "hrs": "h",
    "hour": "h",
    "hours": "h",
    "min": "min",
    "mins": "min",
    "minute": "min",
    "minutes": "min",
    "s": "s",
    "sec": "s",
    "seconds": "s",
    "ms": "ms",
    "day": "day",
    "days": "day",
    "night": "night",
    "nights": "night",
    "gb": "GB",
    "mb": "MB",
    "kb": "KB",
    "week": "week",
    "weeks": "week",
    # Russian units bind and contradict exactly as English ones ("30 дней" is 30 days).
    "день": "day",
    "дня": "day",
    "дней": "day",
    "сутки": "day",
    "суток": "day",
    "ночь": "night",
    "ночи": "night",
    "ночей": "night",
    "неделя": "week",
    "недели": "week",
    "недель": "week",
    "час": "h",
    "часа": "h",
    "часов": "h",
    "ч": "h",
    "минута": "min",
    "минуты": "min",
    "минут": "min",
    "секунд": "s",
    "секунды": "s",
    "км": "km",
    "кг": "kg",
    "руб": "RUB",
    "рубль": "RUB",
    "рубля": "RUB",
    "рублей": "RUB",
    "евро": "EUR",
    "долларов": "USD",
    "доллара": "USD",
}


def _currency_words() -> dict[str, str]:
    """Currencies named in words in the read languages, from CLDR through babel: each
    display name, singular and plural ("euros", "US dollars", "russische Rubel", "libras
    esterlinas"). Not a name's last word alone: "pounds" also weighs."""
    words: dict[str, str] = {}
    for language in READ_LANGUAGES:
        data = Locale.parse(language)
        for code in CURRENCY_CODES:
            names = {str(data.currencies.get(code, ""))}
            names |= {str(n) for n in data._data["currency_names_plural"].get(code, {}).values()}
            for name in (n for n in names if n):  # as CLDR writes it ("US dollars"), and lower
                words.setdefault(name, code)
                words.setdefault(name.lower(), code)
    return words


# "19 euros", "12 Euro", "435 рублей": a currency in words is a currency too.
KNOWN_UNITS.update({w: c for w, c in _currency_words().items() if w not in KNOWN_UNITS})

_CUR_SYM = "".join(re.escape(s) for s in CURRENCY_SYMBOLS if len(s) == 1)
# A currency sign: one character, or a lettered one ("US$"), longest first.
_SYM_ANY = "|".join(re.escape(s) for s in sorted(CURRENCY_SYMBOLS, key=len, reverse=True))
_CODES = "|".join(CURRENCY_CODES)
_BODY = r"""
(?P<num>
    \d{1,3}(?P<g>[ \u00a0\u202f\u2009',.])\d{3}(?:(?P=g)\d{3})*(?:[.,]\d+)?
  | \d+(?:[.,]\d+)?
  | [.,]\d+
)
(?:(?P<mag>[kKMB]|bn|mn|mln)(?![^\W\d_])|\s?(?P<magw>"""
_BODY += (
    "|".join(MAGNITUDE_WORDS)
    + r""")\b)?
"""
)
# Codes are upper case only (``chf 1`` is an id, not money); a sign may follow a symbol
# ($-5) but not a code (``CHF-1`` is an id).
_PREFIX = (
    rf"(?:(?P<sign>[-+−])?"
    rf"(?:(?P<sym>{_SYM_ANY})\s?(?P<sign2>[-+−])?|(?-i:(?P<code>{_CODES}))"
    # A code glued to an amount with cents ("RUB435.00", as CLDR writes it in English).
    rf"(?:\s|(?=\d[\d,.]*[.,]\d\d(?!\d))))?)"
)
_WHOLE = re.compile(
    rf"^\s*{_PREFIX}{_BODY}\s?(?P<post>%|[{_CUR_SYM}]|[^\W\d_][^\W\d_/²³]{{0,11}})?\s*$",
    re.VERBOSE | re.IGNORECASE,
)
# Unit words as written, and capitalised as German writes nouns ("12 Euro", "3 Tage").
_UNIT_WORDS = "|".join(
    sorted(
        {
            re.escape(form)
            .replace("\\ ", r"\s")
            .replace(" ", r"\s")  # the patterns are verbose: spaces vanish
            for u in KNOWN_UNITS
            if u != "%"
            for form in (u, u[:1].upper() + u[1:] if len(u) >= 3 else u)
        },
        key=len,
    )
)
_IN_TEXT = re.compile(
    # A hyphen before a number joins it to a word (``ORD-42``) unless a number precedes
    # it: the second end of a range (``3-5 days``) is a number as ``3–5`` and ``3 to 5``'s is.
    rf"(?<![\w.,/#:])(?<!(?<![\d\s])-){_PREFIX}{_BODY}"
    rf"(?:\s?(?P<post>%|{_SYM_ANY}|(?-i:{_CODES})(?![^\W\d_])|(?:{_UNIT_WORDS})(?![^\W\d_])))?"
    r"(?![\w]|[.,]\d)",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class ParsedNumber:
    """A number read from text: value, canonical unit or currency (or None), as written."""

    value: float
    unit: str | None
    raw: str


def _digits(num: str, ambiguous_comma: Literal["thousands", "decimal"]) -> float | None:
    """Resolve group and decimal separators: the last of ',' and '.' is the decimal one."""
    s = re.sub(r"[ \u00a0\u202f\u2009']", "", num)
    commas, dots = s.count(","), s.count(".")
    if commas and dots:
        decimal = "," if s.rfind(",") > s.rfind(".") else "."
        group = "." if decimal == "," else ","
        if s.count(decimal) > 1:
            return None
        s = s.replace(group, "").replace(decimal, ".")
    elif commas > 1 or dots > 1:
        s = s.replace("," if commas else ".", "")
    elif commas == 1:
        head, tail = s.split(",")
        thousands = len(tail) == 3 and 1 <= len(head) <= 3 and ambiguous_comma == "thousands"
        s = head + tail if thousands else f"{head}.{tail}"
    try:
        return float(s)
    except ValueError:
        return None


def _canonical_unit(unit: str | None) -> str | None:
    if not unit:
        return None
    unit = unit.strip()
    if unit in CURRENCY_SYMBOLS:
        return CURRENCY_SYMBOLS[unit]
    if unit.upper() in CURRENCY_CODES:
        return unit.upper()
    return KNOWN_UNITS.get(unit.lower(), unit.lower())


def _from_match(
    m: re.Match[str], ambiguous_comma: Literal["thousands", "decimal"]
) -> ParsedNumber | None:
    value = _digits(m["num"], ambiguous_comma)
    if value is None:
        return None
    mag = m["mag"] or m["magw"]
    if mag:
        value *= _MAGNITUDES.get(mag, _MAGNITUDES.get(mag.lower(), 1.0))
    if (m["sign"] or m["sign2"] or "+") in "-−":
        value = -value
    pre, post = m["sym"] or m["code"], m["post"]
    if pre and post and _canonical_unit(pre) != _canonical_unit(post):
        return None
    return ParsedNumber(value, _canonical_unit(pre or post), m.group(0).strip())


def parse_number(
    value: object, ambiguous_comma: Literal["thousands", "decimal"] = "thousands"
) -> ParsedNumber | None:
    """Read a whole value as a number, or None.

    >>> parse_number("1 234,50").value
    1234.5
    >>> parse_number("$1,200")
    ParsedNumber(value=1200.0, unit='USD', raw='$1,200')
    >>> parse_number("1.2k").value
    1200.0
    >>> parse_number("ORD-42") is None
    True
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return None if math.isnan(value) else ParsedNumber(float(value), None, str(value))
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    m = _WHOLE.match(value)
    return _from_match(m, ambiguous_comma) if m else None


def find_numbers(
    text: str, ambiguous_comma: Literal["thousands", "decimal"] = "thousands"
) -> list[tuple[ParsedNumber, int, int]]:
    """Every number stated in free text, with its character span.

    >>> [(n.value, n.unit) for n, _, _ in find_numbers("refund of €5 and 1,234.5 kg")]
    [(5.0, 'EUR'), (1234.5, 'kg')]
    """
    found = []
    for m in _IN_TEXT.finditer(text):
        parsed = _from_match(m, ambiguous_comma)
        if parsed is not None:
            found.append((parsed, m.start(), m.end()))
    return found


_NUMBER_WORD = re.compile(
    r"(?<![\w-])(?:" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")(?![\w-])",
    re.IGNORECASE,
)


def find_number_words(text: str) -> list[tuple[float, int, int]]:
    """Numbers written as words (``three``, ``dozen``, ``три``) with their spans.

    Why: "two articles" states the count 2 as plainly as "2 articles" does, and a count
    is checked against what the turn saw however it is spelt.

    >>> text = "Три варианта and two more"
    >>> [(value, text[start:end]) for value, start, end in find_number_words(text)]
    [(3.0, 'Три'), (2.0, 'two')]
    """
    return [
        (float(NUMBER_WORDS[m.group(0).lower()]), m.start(), m.end())
        for m in _NUMBER_WORD.finditer(text)
    ]


def compare_numbers(
    expected: ParsedNumber, actual: ParsedNumber, settings: CompareSettings
) -> Comparison:
    """Equal within ``number_abs_tol`` or ``number_rel_tol``; units must agree if both given.

    >>> s = CompareSettings()
    >>> compare_numbers(parse_number("1 234,50"), parse_number(1234.5), s).reason
    '1 234,50 == 1234.5 (|Δ|=0 ≤ abs_tol 0.005)'
    """
    a, b = expected.value, actual.value
    diff = abs(a - b)
    abs_tol = settings.number_abs_tol
    rel = settings.number_rel_tol * max(abs(a), abs(b))
    tol, tol_name = (abs_tol, "abs_tol") if abs_tol >= rel else (rel, "rel_tol")
    scale = max(abs(a), abs(b))
    score = 1.0 if diff == 0 else max(0.0, 1.0 - diff / scale) if scale else 0.0
    pair = f"{expected.raw} {{}} {actual.raw}"
    units_differ = expected.unit and actual.unit and expected.unit != actual.unit
    if settings.number_units_must_agree and units_differ:
        return Comparison(
            False,
            0.0,
            "number",
            pair.format("!=") + f" (units differ: {expected.unit} vs {actual.unit})",
            tol,
        )
    same = diff <= tol
    op = "≤" if same else ">"
    return Comparison(
        same,
        1.0 if same else min(score, 0.999),
        "number",
        pair.format("==" if same else "!=") + f" (|Δ|={diff:g} {op} {tol_name} {tol:g})",
        tol,
    )
