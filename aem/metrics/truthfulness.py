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
id they state must appear in what the turn could see (``aem.evidence.support``) — else the
turn fails with the value and the closest evidence. When an ancestor tool call has no
result in the trace, unsupported values cannot be judged: the turn is skipped, saying so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from pydantic import Field

from aem.compare.extract import StatedValue, extract_claims, extract_values
from aem.evidence import (
    ClaimedSuccess,
    claimed_successes,
    is_distinctive,
    support_value,
    unrecovered_failures,
)
from aem.metrics.applies import refusal_owns
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result
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
        for value in extract_claims(turn.text, settings):
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
    check_claimed_success: bool = Field(
        default=True,
        description='answer and reasoning turns: reporting an action as done ("I booked '
        '…") when the tool call for it failed and was not recovered (no later call of '
        "that tool with equivalent arguments succeeded) fails the turn, naming the failed call",
    )
    support_date_slack_days: int = Field(
        default=1,
        ge=0,
        description='"a day later" is reasoning, not invention: a stated day this close to a '
        "seen date counts as supported; 0 makes dates exact",
    )


_JUDGED = (TurnKind.REASONING, TurnKind.ANSWER, TurnKind.TOOL_CALL)


@dataclass
class _Support:
    """The support check's findings: unsupported values, accepted derivations, or why
    the turn cannot be judged."""

    missing: list[Evidence] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    blind: str | None = None


class Truthfulness(BaseMetric[TruthfulnessSettings]):
    name = NAME
    precedence = 40
    Settings = TruthfulnessSettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        reference = _fact_values(context.facts, context.services.compare)
        for turn in context.session.turns:
            if turn.kind in _JUDGED:
                yield self.judge(context, turn, reference)

    def judge(
        self,
        context: MetricContext,
        turn: Turn,
        reference: list[tuple[str, StatedValue]] | None = None,
    ) -> MetricResult:
        """One turn's verdict: contradicted facts first, then success claimed after a
        failed call, then values nothing the turn saw supports."""
        settings = context.services.compare
        if reference is None:
            reference = _fact_values(context.facts, settings)
        stated = list(_stated(turn, settings))
        narrates = turn.kind is not TurnKind.TOOL_CALL
        checks_support = (
            self.settings.require_support and narrates and not refusal_owns(context, turn)
        )
        support = self._support(context, turn, stated) if checks_support else _Support()
        claimed = (
            _claimed_successes(context, turn)
            if narrates and self.settings.check_claimed_success
            else []
        )
        conflicts, agreements = _against_facts(
            turn, stated, reference, context.facts, settings.number_rel_tol
        )
        if conflicts:
            conflicts.extend(support.missing)
            detail = "; ".join(
                f"states {e.actual!r}{' as ' + str(e.field) if e.field != 'text' else ''} "
                f"where the reference says {e.expected}"
                for e in conflicts[:3]
            )
            return result(NAME, turn, Outcome.FAIL, detail, score=0.0, evidence=conflicts)
        if claimed:
            return _claimed_result(turn, claimed)
        if support.missing:
            detail = "; ".join(
                f"states {e.actual!r}, which nothing the turn saw supports"
                + (f" (closest: {e.expected!r})" if e.expected else "")
                for e in support.missing[:3]
            )
            return result(NAME, turn, Outcome.FAIL, detail, score=0.0, evidence=support.missing)
        derived = f"; derived: {'; '.join(support.derived[:3])}" if support.derived else ""
        if reference:
            note = (
                f"{agreements} stated value(s) agree with the facts"
                if agreements
                else "states nothing the facts cover"
            )
            return result(NAME, turn, Outcome.PASS, note + derived, score=1.0)
        if support.blind is not None:
            return result(NAME, turn, Outcome.SKIP, support.blind)
        if not checks_support:
            return result(NAME, turn, Outcome.SKIP, "the case has no facts to check against")
        return result(
            NAME, turn, Outcome.PASS, "every stated value is supported" + derived, score=1.0
        )

    def _support(
        self, context: MetricContext, turn: Turn, stated: list[tuple[StatedValue, str | None]]
    ) -> _Support:
        """Stated values the one value-support rule
        (:func:`aem.evidence.support.support_value`) fails — contradicted by a record or
        supported by nothing the turn saw, directly or derived —; or why it can't be judged."""
        text = turn.text or ""
        candidates = [value for value, _ in stated if is_distinctive(value, text)]
        if not candidates:
            return _Support()
        seen = context.seen(turn)
        settings = context.services.compare
        slack = self.settings.support_date_slack_days
        own = [value for value, argument in stated if argument is None]
        found = _Support()
        for value in candidates:
            verdict = support_value(
                value, seen.values, settings, text=text, own=own, date_slack_days=slack
            )
            if verdict.how == "derived":
                found.derived.append(verdict.quote)
            elif verdict.fails:
                found.missing.append(
                    Evidence(
                        span_id=turn.span_ids[0],
                        field="text",
                        actual=value.raw,
                        expected=verdict.closest,
                    )
                )
        if found.missing and seen.blind is not None:
            return _Support(blind=f"cannot judge unsupported values: {seen.blind}")
        return found


def _claimed_successes(context: MetricContext, turn: Turn) -> list[ClaimedSuccess]:
    """Sentences of the turn reporting as done an action whose call failed, unrecovered."""
    graph, turns = context.session.graph, context.ancestry
    if not turn.text or graph is None or turns is None or turn.turn_id not in graph:
        return []
    # Only a failed call can be claimed after failure: ask the ancestry about those
    # alone (listing every ancestor of every turn is quadratic in a long session).
    seen = turns.among(turns.failed_calls, turn.turn_id)
    failures = unrecovered_failures(seen, turn, context.recovery)
    if not failures:
        return []
    done = [t for t in context.tool_turns if t.index < turn.index]
    return claimed_successes(turn.text, failures, done)


def _claimed_result(turn: Turn, claimed: list[ClaimedSuccess]) -> MetricResult:
    """The failed verdict of success claimed after failure, naming the failed call."""
    evidence = []
    details = []
    for claim in claimed:
        call = claim.failed.tool_call
        assert call is not None
        details.append(
            f"reports {call.name} as done ({claim.sentence!r}) but {claim.failed.turn_id} "
            f"{call.name} failed: {call.error}, and no later call with the same intent succeeded"
        )
        evidence.append(Evidence(span_id=turn.span_ids[0], field="text", actual=claim.sentence))
        evidence.append(
            Evidence(span_id=claim.failed.span_ids[0], field="status", actual=call.error)
        )
    return result(
        NAME,
        turn,
        Outcome.FAIL,
        "success claimed after failure: " + "; ".join(details[:3]),
        score=0.0,
        evidence=evidence,
    )


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
