"""``correctness.truthfulness``: what a turn states must not contradict the reference facts.

A turn *states* its text (reasoning, answer) and its arguments (a tool call says "the
period is 2025-03" as plainly as a sentence does). Each stated date/period, amount or id
is set against the case's ``facts``; a stated value *refers to* a fact when it is the
same kind of value and either sits under an argument whose name relates to the fact's
name, or is a near miss of it (the same month in another year; an id of the same shape).
Values that refer to a fact and disagree with it fail the turn, with the value and the
fact in the explanation. Dates a turn merely mentions (today's date, a birthday) refer
to no fact and are left alone.

Reasoning and answer turns must also be *supported*: every distinctive number, date or
id they state must appear in what the turn could see (``aem.metrics.support``) — else the
turn fails with the value and the closest evidence. When an ancestor tool call has no
result in the trace, unsupported values cannot be judged: the turn is skipped, saying so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date, datetime
from typing import Any

from pydantic import Field

from aem.compare.extract import StatedValue, extract_values
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result
from aem.metrics.support import is_distinctive
from aem.model import Evidence, MetricResult, Outcome, Turn, TurnKind

NAME = "correctness.truthfulness"
_TEMPORAL = ("date", "period")
_TEMPORAL_NAMES = (
    "date",
    "period",
    "month",
    "year",
    "day",
    "from",
    "to",
    "start",
    "end",
    "since",
    "until",
)


def _as_day(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def _span(value: StatedValue) -> tuple[date, date]:
    assert isinstance(value.value, tuple)
    start, end = value.value
    return _as_day(start), _as_day(end)


def _related(argument: str | None, fact: str, kind: str) -> bool:
    if not argument:
        return False
    a, f = argument.lower(), fact.lower()
    if a in f or f in a:
        return True
    return (
        kind in _TEMPORAL
        and any(n in a for n in _TEMPORAL_NAMES)
        and any(n in f for n in _TEMPORAL_NAMES)
    )


def _id_shape(canonical: str) -> str:
    return "".join("9" if c.isdigit() else "a" if c.isalpha() else c for c in canonical)[:3]


def _conflict(
    stated: StatedValue, fact_name: str, fact: StatedValue, argument: str | None, tolerance: float
) -> bool | None:
    """True: contradicts the fact; False: agrees with it; None: says nothing about it."""
    related = _related(argument, fact_name, fact.kind)
    if fact.kind in _TEMPORAL and stated.kind in _TEMPORAL:
        (fs, fe), (ss, se) = _span(fact), _span(stated)
        if fs <= ss and se <= fe:
            return False
        near_miss = ss.month == fs.month and fe.month == fs.month and ss.year != fs.year
        return True if (related or near_miss) else None
    if fact.kind == "id" and stated.kind == "id":
        if stated.value == fact.value:
            return False
        return (
            True if related or _id_shape(str(stated.value)) == _id_shape(str(fact.value)) else None
        )
    if fact.kind == "number" and stated.kind == "number" and related:
        expected, actual = float(fact.value), float(stated.value)  # type: ignore[arg-type]
        return abs(expected - actual) > tolerance * max(1.0, abs(expected))
    return None


def _stated(turn: Turn, settings: Any) -> Iterator[tuple[StatedValue, str | None]]:
    if turn.text:
        for value in extract_values(turn.text, settings):
            yield value, None
    if turn.tool_call is not None:
        yield from _stated_arguments(turn.tool_call.arguments, None, settings)


def _stated_arguments(
    value: Any, name: str | None, settings: Any
) -> Iterator[tuple[StatedValue, str | None]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _stated_arguments(item, str(key), settings)
    elif isinstance(value, list):
        for item in value:
            yield from _stated_arguments(item, name, settings)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        for stated in extract_values(str(value), settings):
            yield stated, name


def _fact_values(facts: dict[str, Any], settings: Any) -> list[tuple[str, StatedValue]]:
    parsed = []
    for name, raw in facts.items():
        values = extract_values(str(raw), settings)
        if values:
            parsed.append((name, values[0]))
    return parsed


class TruthfulnessSettings(MetricSettings):
    require_support: bool = Field(
        default=True,
        description="reasoning and answer turns: every distinctive number, date or id they "
        "state must be supported by what the turn could see (inputs, ancestor tool results, "
        "documents)",
    )
    support_date_slack_days: int = Field(
        default=1,
        ge=0,
        description='"a day later" is reasoning, not invention: a stated day this close to a '
        "seen date counts as supported; 0 makes dates exact",
    )


_JUDGED = (TurnKind.REASONING, TurnKind.ANSWER, TurnKind.TOOL_CALL)


class Truthfulness(BaseMetric[TruthfulnessSettings]):
    name = NAME
    precedence = 40
    Settings = TruthfulnessSettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        reference = _fact_values(context.facts, context.config.compare)
        for turn in context.session.turns:
            if turn.kind in _JUDGED:
                yield self._judge(context, turn, reference)

    def _judge(
        self, context: MetricContext, turn: Turn, reference: list[tuple[str, StatedValue]]
    ) -> MetricResult:
        """Contradicted facts first, then values nothing the turn saw supports."""
        settings = context.config.compare
        stated = list(_stated(turn, settings))
        checks_support = self.settings.require_support and turn.kind is not TurnKind.TOOL_CALL
        unsupported: list[Evidence] = []
        blind = None
        if checks_support:
            unsupported, blind = self._unsupported(context, turn, stated)
        if not reference and not unsupported:
            if blind is not None:
                return result(NAME, turn, Outcome.SKIP, blind)
            if not checks_support:
                return result(NAME, turn, Outcome.SKIP, "the case has no facts to check against")
            return result(NAME, turn, Outcome.PASS, "every stated value is supported", score=1.0)
        conflicts, agreements = _against_facts(
            turn, stated, reference, context.facts, settings.number_rel_tol
        )
        if conflicts:
            conflicts.extend(unsupported)
            detail = "; ".join(
                f"states {e.actual!r}{' as ' + str(e.field) if e.field != 'text' else ''} "
                f"where the reference says {e.expected}"
                for e in conflicts[:3]
            )
            return result(NAME, turn, Outcome.FAIL, detail, score=0.0, evidence=conflicts)
        if unsupported:
            detail = "; ".join(
                f"states {e.actual!r}, which nothing the turn saw supports"
                + (f" (closest: {e.expected!r})" if e.expected else "")
                for e in unsupported[:3]
            )
            return result(NAME, turn, Outcome.FAIL, detail, score=0.0, evidence=unsupported)
        note = (
            f"{agreements} stated value(s) agree with the facts"
            if agreements
            else "states nothing the facts cover"
        )
        return result(NAME, turn, Outcome.PASS, note, score=1.0)

    def _unsupported(
        self, context: MetricContext, turn: Turn, stated: list[tuple[StatedValue, str | None]]
    ) -> tuple[list[Evidence], str | None]:
        """Distinctive stated values nothing the turn saw supports; or why it can't be judged."""
        candidates = [value for value, _ in stated if is_distinctive(value)]
        if not candidates:
            return [], None
        seen = context.seen(turn)
        settings = context.config.compare
        slack = self.settings.support_date_slack_days
        missing = [
            Evidence(
                span_id=turn.span_ids[0],
                field="text",
                actual=value.raw,
                expected=seen.values.closest(value),
            )
            for value in candidates
            if not seen.values.supports(value, settings, date_slack_days=slack)
        ]
        if missing and seen.blind is not None:
            return [], f"cannot judge unsupported values: {seen.blind}"
        return missing, None


def _against_facts(
    turn: Turn,
    stated: list[tuple[StatedValue, str | None]],
    reference: list[tuple[str, StatedValue]],
    facts: dict[str, Any],
    tolerance: float,
) -> tuple[list[Evidence], int]:
    """Stated values that contradict a reference fact, and how many agree with one."""
    conflicts: list[Evidence] = []
    agreements = 0
    for value, argument in stated:
        for fact_name, fact in reference:
            verdict = _conflict(value, fact_name, fact, argument, tolerance)
            if verdict is True:
                conflicts.append(
                    Evidence(
                        span_id=turn.span_ids[0],
                        field=argument or "text",
                        expected=f"{fact_name}={facts[fact_name]}",
                        actual=value.raw,
                    )
                )
            elif verdict is False:
                agreements += 1
    return conflicts, agreements
