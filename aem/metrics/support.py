"""Evidence a turn could see, and whether a stated value is supported by it.

Used by ``correctness.truthfulness``: a number, date or id that a reasoning or answer turn
states must appear in what that turn could see — its model input (user messages, system
prompt, history), the results of tool calls among its ancestors in the turn graph, the
documents of ancestor retrievals — or in the case's facts. Values are compared after
normalisation (``$55`` is supported by a tool result ``55.0``, ``May 20, 2024`` by
``2024-05-20``); digit strings are also looked up verbatim, so ``7504069`` is supported
by ``certificate_7504069``.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from aem.compare.extract import StatedValue, extract_values
from aem.compare.settings import CompareSettings

_DIGITS = re.compile(r"\d+")
# "24-hour", "3-day": a count with a unit word, not an identifier.
_COUNT_WORD = re.compile(
    r"^\d+[-\s]?(?:hours?|days?|weeks?|months?|years?|minutes?|seconds?|nights?|hrs?|mins?)$",
    re.IGNORECASE,
)
_MONTH_NAMES = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
# A stated total is supported when it is derived from seen numbers: a sum or difference
# of two, a sum of three, or one times a small count (passengers, nights, bags).
_MAX_MULTIPLIER = 9
_MAX_TRIPLE_POOL = 400


def _day(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def day_range(value: StatedValue) -> tuple[date, date]:
    """First and last day a date or period value covers."""
    assert isinstance(value.value, tuple)
    start, end = value.value
    return _day(start), _day(end)


def is_distinctive(value: StatedValue) -> bool:
    """Worth checking: small bare integers (counts, list numbering, clock hours) are not."""
    if value.kind == "id":
        return not _COUNT_WORD.match(value.raw.strip())
    if value.kind in ("date", "period"):
        return True
    number = float(value.value)  # type: ignore[arg-type]
    return value.unit is not None or abs(number) >= 100 or not number.is_integer()


def near_any(numbers: list[float], number: float, settings: CompareSettings) -> bool:
    """Whether sorted ``numbers`` holds ``number`` within the configured tolerance."""
    tolerance = max(settings.number_abs_tol, settings.number_rel_tol * abs(number))
    i = bisect.bisect_left(numbers, number - tolerance)
    return i < len(numbers) and numbers[i] <= number + tolerance


@dataclass
class SeenValues:
    """Normalised values from everything a turn could see."""

    numbers: list[float] = field(default_factory=list)
    dates: list[tuple[date, date, str]] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)
    text: str = ""

    @classmethod
    def gather(cls, texts: Iterable[str], settings: CompareSettings) -> SeenValues:
        evidence = cls()
        chunks = []
        for text in texts:
            if not text:
                continue
            chunks.append(text.lower())
            for value in extract_values(text, settings):
                if value.kind == "number":
                    evidence.numbers.append(float(value.value))  # type: ignore[arg-type]
                elif value.kind in ("date", "period"):
                    first, last = day_range(value)
                    evidence.dates.append((first, last, value.raw))
                else:
                    evidence.ids.setdefault(str(value.value), value.raw)
                    runs = _DIGITS.findall(value.raw)
                    if len(runs) == 1 and sum(c.isalpha() for c in value.raw) <= 2:
                        evidence.numbers.append(float(runs[0]))  # "14C": a number with a unit
        evidence.numbers.sort()
        evidence.text = "\n".join(chunks)
        return evidence

    def supports(
        self, value: StatedValue, settings: CompareSettings, *, date_slack_days: int = 0
    ) -> bool:
        if value.kind == "number":
            return self._supports_number(float(value.value), value.raw, settings)  # type: ignore[arg-type]
        if value.kind in ("date", "period"):
            s, e = day_range(value)
            slack = timedelta(days=date_slack_days)
            if any(es - slack <= e and s <= ee + slack for es, ee, _ in self.dates):
                return True
            # "May 20th" in a user message states the day without a year.
            month = _MONTH_NAMES[s.month - 1]
            return s == e and any(f"{name} {s.day}" in self.text for name in (month, month[:3]))
        if str(value.value) in self.ids or value.raw.lower() in self.text:
            return True
        # "22C", "5kg": a number with a unit glued on, which the text extractor reads as
        # an id; the seen number supports it.
        letters = sum(c.isalpha() for c in value.raw)
        runs = _DIGITS.findall(value.raw)
        return (
            letters <= 2
            and len(runs) == 1
            and self._supports_number(float(runs[0]), runs[0], settings)
        )

    def _supports_number(self, number: float, raw: str, settings: CompareSettings) -> bool:
        if near_any(self.numbers, number, settings):
            return True
        digits = "".join(_DIGITS.findall(raw))
        if len(digits) >= 3 and digits in self.text:
            return True
        tolerance = max(settings.number_abs_tol, settings.number_rel_tol * abs(number))
        return self.derivation(number, tolerance) is not None

    def states(self, value: StatedValue, settings: CompareSettings) -> bool:
        """The value itself was said (no derivation, no slack): for coverage checks."""
        if value.kind == "number":
            return near_any(self.numbers, float(value.value), settings)  # type: ignore[arg-type]
        if value.kind in ("date", "period"):
            s, e = day_range(value)
            return any(es <= s and e <= ee for es, ee, _ in self.dates)
        return str(value.value) in self.ids or value.raw.lower() in self.text

    def derivation(self, number: float, tolerance: float) -> str | None:
        """How ``number`` follows from seen numbers, if it does (``152 + 103``)."""
        pool = sorted(set(self.numbers))
        present = set(pool)

        def near(target: float) -> float | None:
            i = bisect.bisect_left(pool, target - tolerance)
            return pool[i] if i < len(pool) and pool[i] <= target + tolerance else None

        for a in pool:
            b = near(number - a)
            if b is not None and b in present and (b != a or self.numbers.count(a) > 1):
                return f"{a:g} + {b:g}"
            b = near(a - number)
            if b is not None and b > 0:
                return f"{a:g} - {b:g}"
            for k in range(2, _MAX_MULTIPLIER + 1):
                if abs(a * k - number) <= tolerance:
                    return f"{k} × {a:g}"
        small = pool[-_MAX_TRIPLE_POOL:]
        for i, a in enumerate(small):
            for b in small[i + 1 :]:
                c = near(number - a - b)
                if c is not None and c not in (a, b):
                    return f"{a:g} + {b:g} + {c:g}"
        return None

    def closest(self, value: StatedValue) -> str | None:
        """The nearest evidence of the same kind, to quote in an explanation."""
        if value.kind == "number" and self.numbers:
            number = float(value.value)  # type: ignore[arg-type]
            return f"{min(self.numbers, key=lambda n: abs(n - number)):g}"
        if value.kind in ("date", "period") and self.dates:
            start = day_range(value)[0]
            return min(self.dates, key=lambda d: abs((d[0] - start).days))[2]
        if value.kind == "id" and self.ids:
            close = difflib.get_close_matches(value.raw, list(self.ids.values()), n=1, cutoff=0)
            return close[0] if close else None
        return None
