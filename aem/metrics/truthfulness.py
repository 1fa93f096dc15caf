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

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from pydantic import Field

from aem.compare.extract import StatedValue, extract_claims, extract_values
from aem.compare.relative_days import session_day
from aem.evidence import (
    Call,
    ClaimedSuccess,
    RelativePeriod,
    claimed_successes,
    day_of_session,
    is_distinctive,
    judge_value,
    near_miss,
    relative_periods,
    unrecovered_failures,
    worked_out_wrong,
    wrong_persons,
)
from aem.foundation.model import Evidence, MetricResult, Outcome, Turn, TurnKind, UnverifiedClaim
from aem.foundation.vocabulary import READ_LANGUAGES, unread_language
from aem.metrics.applies import refusal_owns
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result

NAME = "correctness.truthfulness"
_TEMPORAL = ("date", "period")
# The bounds of a range a call asks for: a period fact (``"period": "2026-03"``) binds the
# dates its bounds give, as ``start_date``/``end_date`` do.
_RANGE_BOUNDS = frozenset({"start", "end", "from", "to", "since", "until", "begin"})


def _as_day(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def _span(value: StatedValue) -> tuple[date, date]:
    assert isinstance(value.value, tuple)
    start, end = value.value
    return _as_day(start), _as_day(end)


def _words(name: str) -> tuple[str, ...]:
    """A name's words, however it is written: ``startDate``, ``start-date``, ``start_date``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return tuple(w for w in re.split(r"[\W_]+", spaced.lower()) if w)


def _related(argument: str | None, fact: str, fact_value: StatedValue) -> bool:
    """Whether the argument ``argument`` names the fact ``fact``: the same name in any
    spelling, or a range's bound when the fact is a period. Why not "one name inside the
    other": ``date_of_birth`` holds ``date`` and is another thing; a fact binds only a
    value said of *it*, never another value of the same type."""
    if not argument:
        return False
    words = _words(argument)
    if words == _words(fact):
        return True
    if fact_value.kind != "period":
        return False
    return bool(_RANGE_BOUNDS & set(words)) and len(words) <= 2


def _conflict(
    stated: StatedValue, fact_name: str, fact: StatedValue, argument: str | None, tolerance: float
) -> bool | None:
    """True: contradicts the fact; False: agrees with it; None: says nothing about it."""
    related = _related(argument, fact_name, fact)
    if fact.kind in _TEMPORAL and stated.kind in _TEMPORAL:
        (fs, fe), (ss, se) = _span(fact), _span(stated)
        if fs <= ss and se <= fe:
            return False
        # the same month, quarter or half in another year ("Q1 2025" for 2026-Q1); a day
        # of another year is no slip of a dated fact (a birthday on the same day is not)
        other_year = (
            fact.kind == "period"
            and (ss.month, ss.day, se.month, se.day)
            == (
                fs.month,
                fs.day,
                fe.month,
                fe.day,
            )
            and (ss.year != fs.year)
        )
        return True if (related or other_year) else None
    if fact.kind == "id" and stated.kind == "id":
        if stated.value == fact.value:
            return False
        return True if related or near_miss(str(stated.value), str(fact.value)) else None
    if fact.kind == "number" and stated.kind == "number":
        expected, actual = float(fact.value), float(stated.value)  # type: ignore[arg-type]
        if not related and not _digit_slip(fact, stated):
            return None
        return abs(expected - actual) > tolerance * max(1.0, abs(expected))
    return None


def _digit_slip(fact: StatedValue, stated: StatedValue) -> bool:
    """A number one typed digit away from the fact's (4125 for 4152, 1999 for 1899): a
    slip on the fact's own value binds to it; a number of similar size alone does not."""
    a, b = re.sub(r"\D", "", fact.raw), re.sub(r"\D", "", stated.raw)
    return len(a) >= 4 and near_miss(a, b)


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
        default=0,
        ge=0,
        description="a stated day this many days from a seen date counts as supported; 0 "
        "(the default) makes dates exact: for a scheduler a day off is the error",
    )


_PLAIN = ("text", "unsupported")
_JUDGED = (TurnKind.REASONING, TurnKind.ANSWER, TurnKind.TOOL_CALL)


@dataclass
class _Support:
    """The support check's findings: values a record contradicts (proof), values nothing
    supports nor contradicts (doubts), accepted derivations, or why the unsupported
    values cannot be judged."""

    contradicted: list[Evidence] = field(default_factory=list)
    missing: list[Evidence] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    blind: str | None = None
    judged: int = 0  # the distinctive values read and judged


class Truthfulness(BaseMetric[TruthfulnessSettings]):
    name = NAME
    band = "truth"
    Settings = TruthfulnessSettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        reference = _fact_values(context.facts, context.services.compare)
        periods = _periods(context)
        for turn in context.session.turns:
            if turn.kind in _JUDGED:
                yield self.judge(context, turn, reference, periods)

    def judge(
        self,
        context: MetricContext,
        turn: Turn,
        reference: list[tuple[str, StatedValue]] | None = None,
        periods: list[RelativePeriod] | None = None,
    ) -> MetricResult:
        """One turn's verdict: contradicted facts and periods first, then success claimed
        after a failed call, then values nothing the turn saw supports."""
        settings = context.services.compare
        if reference is None:
            reference = _fact_values(context.facts, settings)
        if periods is None:
            periods = _periods(context)
        stated = list(_stated(turn, settings))
        narrates = turn.kind is not TurnKind.TOOL_CALL
        checks_support = (
            self.settings.require_support and narrates and not refusal_owns(context, turn)
        )
        wrong_periods, right_periods = _against_periods(turn, stated, periods)
        settled = {str(e.actual) for e in wrong_periods} | set(right_periods)
        support = self._support(context, turn, stated, settled) if checks_support else _Support()
        support.derived[:0] = right_periods.values()
        claimed = (
            _claimed_successes(context, turn)
            if narrates and self.settings.check_claimed_success
            else []
        )
        conflicts, agreements = _against_facts(
            turn, stated, reference, context.facts, settings.number_rel_tol
        )
        conflicts += wrong_periods
        if checks_support:
            conflicts += _wrong_persons(context, turn)
        if not narrates:
            conflicts += _against_user_ids(context, turn, stated)
        agreements += len(right_periods)
        strict = context.services.verdicts.unsupported_fails
        proofs = [*conflicts, *support.contradicted, *(support.missing if strict else [])]
        if proofs:
            doubts = [] if strict else support.missing
            return _failed(turn, proofs).model_copy(update={"unverified": _doubts(doubts)})
        if claimed:
            return _claimed_result(turn, claimed)
        if support.missing:
            return _unsupported(turn, support.missing)
        derived = f"; derived: {'; '.join(support.derived[:3])}" if support.derived else ""
        if reference or agreements:
            note = (
                f"{agreements} stated value(s) agree with the case or the user's words"
                if agreements
                else "states nothing the facts cover"
            )
            return result(NAME, turn, Outcome.PASS, note + derived, score=1.0)
        if support.blind is not None:
            return result(NAME, turn, Outcome.SKIP, support.blind)
        if not checks_support:
            return result(NAME, turn, Outcome.SKIP, "the case has no facts to check against")
        return result(NAME, turn, Outcome.PASS, _all_supported(support, turn) + derived, score=1.0)

    def _support(
        self,
        context: MetricContext,
        turn: Turn,
        stated: list[tuple[StatedValue, str | None]],
        settled: set[str] = frozenset(),  # type: ignore[assignment]
    ) -> _Support:
        """Stated values the one value-support rule
        (:func:`aem.evidence.judge_value`) does not support, split into those a
        source binds another value to (:mod:`aem.evidence.bindings`: proof) and those
        nothing supports nor contradicts (doubts); or why those cannot be judged."""
        text = turn.text or ""
        own = [value for value, argument in stated if argument is None]
        found = _Support(contradicted=_written_wrong(context, turn, own))
        wrong = {e.actual for e in found.contradicted}
        wrong |= settled
        candidates = [v for v in own if is_distinctive(v, text) and v.raw not in wrong]
        found.judged = len(candidates) + len(found.contradicted)
        if not candidates:
            return found
        seen = context.seen(turn)
        settings = context.services.compare
        slack = self.settings.support_date_slack_days
        calls = _calls_seen(context, turn)
        for value in candidates:
            verdict = judge_value(
                value,
                seen.values,
                settings,
                text=text,
                own=own,
                calls=calls,
                date_slack_days=slack,
            )
            if verdict.status == "derived":
                found.derived.append(verdict.quote)
            elif verdict.status == "contradicted":
                found.contradicted.append(_proof(turn, value.raw, verdict.quote))
            elif verdict.status == "unverified":
                found.missing.append(_doubt(turn, value.raw, verdict.closest))
        if found.missing and seen.blind is not None:
            found.missing = []
            found.blind = f"cannot judge unsupported values: {seen.blind}"
        return found


def _all_supported(support: _Support, turn: Turn) -> str:
    """What a pass with no doubt says: that the values were supported — or, where no
    value was read, that nothing was checked and why."""
    if support.judged:
        return "every stated value is supported"
    if unread_language(turn.text or ""):
        languages = ", ".join(READ_LANGUAGES)
        return f"no value read: the text is in a language AEM does not read values in ({languages})"
    return "states no value to check"


def _proof(turn: Turn, stated: str, source: str) -> Evidence:
    return Evidence(span_id=turn.span_ids[0], field="text", actual=stated, expected=source)


def _doubt(turn: Turn, stated: str, closest: str | None) -> Evidence:
    return Evidence(span_id=turn.span_ids[0], field="unsupported", actual=stated, expected=closest)


def _calls_seen(context: MetricContext, turn: Turn) -> list[Call]:
    """The calls among ``turn``'s ancestors that returned something, as bindings read them."""
    turns = context.ancestry
    if turns is None:
        return []
    ancestors = turns.among(context.tool_turns, turn.turn_id)
    return [call for t in ancestors if (call := Call.of(t)) is not None]


def _wrong_persons(context: MetricContext, turn: Turn) -> list[Evidence]:
    """Another person named than the one the record the answer names holds
    (:func:`aem.evidence.wrong_persons`): a name compares as a name."""
    calls = _calls_seen(context, turn)
    if not calls or not turn.text:
        return []
    values = context.seen(turn).values
    wrong = wrong_persons(turn.text, calls, lambda: values.text)
    return [_proof(turn, bound.stated, bound.quote) for bound in wrong]


def _written_wrong(context: MetricContext, turn: Turn, own: list[StatedValue]) -> list[Evidence]:
    """Results the turn works out wrong (:func:`aem.evidence.worked_out_wrong`): the
    arithmetic it writes, or the call its sentence restates, gives another number."""
    text = turn.text or ""
    wrong = worked_out_wrong(own, text, _calls_seen(context, turn), context.services.compare)
    return [_proof(turn, bound.stated, bound.quote) for bound in wrong]


def _failed(turn: Turn, proofs: list[Evidence]) -> MetricResult:
    """The failed verdict quoting each stated value and the source value it contradicts
    (a case fact, a record's field; unsupported values too under ``unsupported = "fail"``)."""
    detail = "; ".join(
        f"states {e.actual!r}{' as ' + str(e.field) if e.field not in _PLAIN else ''} "
        + (
            f"where {e.expected}"
            if e.field != "unsupported"
            else "which nothing supports" + (f" (closest: {e.expected!r})" if e.expected else "")
        )
        for e in proofs[:3]
    )
    return result(NAME, turn, Outcome.FAIL, detail, score=0.0, evidence=proofs)


def _unsupported(turn: Turn, missing: list[Evidence]) -> MetricResult:
    """The ``unverified`` verdict of values nothing the turn saw supports nor contradicts:
    a suspect to look at, each with its closest candidate, never a failure."""
    detail = "; ".join(
        f"states {e.actual!r}, which nothing the turn saw supports or contradicts"
        + (f" (closest: {e.expected!r})" if e.expected else "")
        for e in missing[:3]
    )
    return result(NAME, turn, Outcome.UNVERIFIED, detail, unverified=_doubts(missing))


def _doubts(missing: list[Evidence]) -> list[UnverifiedClaim]:
    """Unsupported values as the report lists doubts: each with its closest candidate."""
    return [UnverifiedClaim(claim=str(e.actual), closest=e.expected) for e in missing]


def _claimed_successes(context: MetricContext, turn: Turn) -> list[ClaimedSuccess]:
    """Sentences of the turn reporting as done an action whose call failed, unrecovered."""
    graph = context.graph
    if not turn.text or graph is None or turn.turn_id not in graph:
        return []
    # Only a failed call can be claimed after failure: the graph asks about those alone
    # (listing every ancestor of every turn is quadratic in a long session).
    seen = graph.failed_ancestors(turn.turn_id)
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
                said = f"the case says {fact_name}={facts[fact_name]}"
                conflicts.append(_against(turn, argument or "text", said, value.raw))
            elif verdict is False:
                agreements += 1
    return conflicts, agreements


def _against_user_ids(
    context: MetricContext, turn: Turn, stated: list[tuple[StatedValue, str | None]]
) -> list[Evidence]:
    """Arguments that are a near miss of an id the user typed (two digits swapped, one
    changed: ``M-48231`` where the user wrote ``M-48213``) and that nothing the call saw
    holds as such: the user's words bind the id, so the slip is a proof, case or none."""
    arguments = [(v, a) for v, a in stated if a is not None and v.kind == "id"]
    if not arguments:
        return []
    settings = context.services.compare
    said = {
        str(v.value): v.raw
        for text in context.session.user_inputs
        for v in extract_values(text, settings)
        if v.kind == "id"
    }
    conflicts = []
    for value, argument in arguments:
        canonical = str(value.value)
        if canonical in said:
            continue
        slipped = next(
            (raw for user_id, raw in said.items() if near_miss(canonical, user_id)), None
        )
        # Asked last, as it is the dear question: a source that holds the id as such.
        if slipped is not None and not context.seen(turn).values.supports(value, settings):
            wrote = f"the user wrote {slipped}"
            conflicts.append(_against(turn, argument or "arguments", wrote, value.raw))
    return conflicts


def _against(turn: Turn, field: str, expected: str, actual: str) -> Evidence:
    """The evidence of a stated value a source binds another value to."""
    return Evidence(span_id=turn.span_ids[0], field=field, expected=expected, actual=actual)


def _periods(context: MetricContext) -> list[RelativePeriod]:
    """The relative periods the user states ("last quarter"), bound to the session's
    date: a "today is" in what the agent was told, else when the session started."""
    # The evaluator keeps the session's day; a metric run on its own works it out.
    today = session_day() or day_of_session(context.session, context.task_texts)
    if today is None:
        return []
    return relative_periods(context.session.user_inputs, today)


def _against_periods(
    turn: Turn, stated: list[tuple[StatedValue, str | None]], periods: list[RelativePeriod]
) -> tuple[list[Evidence], dict[str, str]]:
    """Stated periods of a relative period's length ("Q1 2025" for "last quarter"), and
    date ranges given as a call's start and end, set against it: outside is a
    contradiction, inside an agreement; any other date is not about it."""
    if not periods:
        return [], {}
    conflicts: list[Evidence] = []
    agreements: dict[str, str] = {}
    for raw, start, end, argument in _temporal(turn, stated):
        for period in periods:
            if not period.binds(start, end):
                continue
            if period.holds(start, end):
                agreements[raw] = f"{raw} = the user's {period.said!r} on the session's date"
                continue
            conflicts.append(
                Evidence(
                    span_id=turn.span_ids[0],
                    field=argument or "text",
                    expected=f"the user's {period.said!r} is {period.start.isoformat()}.."
                    f"{period.end.isoformat()}",
                    actual=raw,
                )
            )
    return conflicts, agreements


_START_ARGUMENT = ("start", "from", "since", "begin")
_END_ARGUMENT = ("end", "to", "until", "till")


def _temporal(
    turn: Turn, stated: list[tuple[StatedValue, str | None]]
) -> list[tuple[str, date, date, str | None]]:
    """Stated periods and dates as ranges, and a call's start and end dates joined."""
    found = [
        (value.raw, *_span(value), argument)
        for value, argument in stated
        if value.kind in _TEMPORAL
    ]
    starts = [f for f in found if f[3] and any(w in f[3].lower() for w in _START_ARGUMENT)]
    ends = [f for f in found if f[3] and any(w in f[3].lower() for w in _END_ARGUMENT)]
    if len(starts) == 1 and len(ends) == 1 and starts[0][1] <= ends[0][2]:
        (raw, start, _, name), (raw_end, _, end, _) = starts[0], ends[0]
        found.append((f"{raw}..{raw_end}", start, end, name))
    return found
