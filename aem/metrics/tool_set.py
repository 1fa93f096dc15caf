"""``tool_choice`` and ``argument_validity`` from one optimal tool-set match per session.

The case's ``expected_tool_calls`` are matched against the calls the agent made
(``aem.matching``: a multiset with an optimal assignment, partial order only where the
case declares it). Verdicts land on the turn that made the call; an expected call that
was never made lands on the session's final turn — that is where the task was left
incomplete. Calls the tool rejected with an error changed nothing, so by default they
are judged by ``tool_execution``, not matched (``[matching] count_failed_calls``, a
setting of the match both metrics share).

A call the case does not list passes when it only looked something up — its tool is
read-only by the case, ``[matching]``, the tool's definition or its name's verb
(``aem.matching.effects``) — and the verdict says so, with that source ("extra look-up
`ls`: allowed (read verb 'ls')"); a call that may change state fails
(``[matching] extra_calls``: ``fail`` | ``writes`` | ``allow``, a case's own
``extra_calls`` first). An optional expected call not made is "not required".

``argument_validity`` also validates every call against the tool's declared JSON
Schema (``gen_ai.tool.definitions`` or the OpenInference equivalents) with
``jsonschema``, case or no case.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aem.cases import ExpectedToolCall
from aem.evidence import SessionMatch
from aem.foundation.model import Evidence, MetricResult, Outcome, Turn
from aem.matching.effects import Effect, ToolEffect
from aem.matching.names import tool_key
from aem.metrics.base import BaseMetric, MetricContext, NoSettings, result
from aem.metrics.tool_schema import UnusableSchema, usable_validator

TOOL_CHOICE = "tool_choice"
ARGUMENT_VALIDITY = "argument_validity"
# The evidence field of an extra call that passed because ``extra_calls`` allowed it: the
# terminal says each one, as nothing else flags a pass.
ALLOWED_EXTRA = "extra_calls"


def is_allowed_extra(verdict: MetricResult) -> bool:
    """A ``tool_choice`` pass of a call the case does not list, let through by
    ``[matching] extra_calls`` (an extra look-up, or any extra call under ``allow``)."""
    return verdict.outcome is Outcome.PASS and any(
        e.field == ALLOWED_EXTRA for e in verdict.evidence
    )


def _describe(call: ExpectedToolCall) -> str:
    return f"{call.name}({call.arguments})"


class ToolChoice(BaseMetric[NoSettings]):
    """Was every required expected call made, no unexpected call that may change state,
    in the declared order."""

    name = TOOL_CHOICE
    band = "choice"

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        found = context.tool_set_match
        if found is None:
            for turn in context.tool_turns:
                yield result(TOOL_CHOICE, turn, Outcome.SKIP, "no expected_tool_calls in the case")
            return
        settings = context.services.matching
        verdicts: dict[str, MetricResult] = {}
        for verdict in (
            *_made(found),
            *_extra(found),
            *_misordered(found, settings.order_violations_fail),
        ):
            verdicts[verdict.turn_id] = verdict
        for turn in context.tool_turns:
            if turn.turn_id not in verdicts:
                verdicts[turn.turn_id] = _not_compared(context, turn)
        attempts = _failed_attempts(context, found) if found.match.missing else {}
        for turn, indexes in attempts.values():
            verdicts[turn.turn_id] = _attempted(found, turn, indexes)
        yield from verdicts.values()
        tried = {i for _, indexes in attempts.values() for i in indexes}
        never = [i for i in found.match.missing if i not in tried]
        final = context.final_turn
        if never and final is not None:
            yield _missing(found, final, never)
        elif found.match.not_required and final is not None and final.turn_id not in verdicts:
            yield _not_required(found, final)


def _made(found: SessionMatch) -> Iterable[MetricResult]:
    """Each expected call paired with a call the agent made: passes tool choice."""
    for pair in found.match.pairs:
        turn = found.turns[pair.actual]
        yield result(
            TOOL_CHOICE,
            turn,
            Outcome.PASS,
            f"expected call #{found.kept[pair.expected]} {turn.name} was made",
            score=1.0,
            threshold=found.match.threshold,
        )


def _extra(found: SessionMatch) -> Iterable[MetricResult]:
    """A call no expected call pairs with (among ``match_tools``): passes when the match
    allowed it — a look-up under ``matching.extra_calls = "writes"``, any call under
    ``"allow"`` — and says so with why it counted as a look-up; fails otherwise, quoting
    the call and what makes it a possible change of state."""
    match = found.match
    for index in match.extra:
        turn = found.turns[index]
        effect = match.extra_effects.get(index)
        allowed = index in match.allowed_extra
        why = _extra_reason(turn, effect, allowed, match.extra_mode)
        yield result(
            TOOL_CHOICE,
            turn,
            Outcome.PASS if allowed else Outcome.FAIL,
            why,
            score=1.0 if allowed else 0.0,
            threshold=match.threshold,
            evidence=[
                Evidence(
                    span_id=turn.span_ids[0],
                    field=ALLOWED_EXTRA if allowed else None,
                    actual=turn.name,
                    detail=effect.why if effect is not None else None,
                )
            ],
        )


def _extra_reason(turn: Turn, effect: ToolEffect | None, allowed: bool, mode: str) -> str:
    """The sentence for an extra call: allowed look-up, allowed call, or the failure."""
    setting = f"matching.extra_calls = {mode!r}"
    if allowed and effect is not None and effect.reads:
        return (
            f"extra look-up `{turn.name}`: allowed ({effect.why}); not among the expected "
            f"calls ({setting})"
        )
    call = f"{turn.name}({turn.tool_call.arguments if turn.tool_call else ''})"
    if allowed:
        return f"unexpected call {call} — not among the expected calls; allowed ({setting})"
    if mode == "fail" or effect is None:
        kind = setting
    elif effect.effect is Effect.WRITE:
        kind = f"it changes state: {effect.why}"
    else:
        kind = f"not known to only read: {effect.why}"
    return f"unexpected call {call} — not among the expected calls ({kind})"


def _misordered(found: SessionMatch, fails: bool) -> Iterable[MetricResult]:
    """A declared order pair made the other way round: fails the call made too early,
    unless ``matching.order_violations_fail`` is off (then said, and passed)."""
    turns, kept = found.turns, found.kept
    for violation in found.match.misordered:
        turn = turns[violation.actual_after]
        before = turns[violation.actual_before]
        why = (
            f"order violated: expected call #{kept[violation.before]} ({before.name}, made "
            f"at {before.turn_id}) must come before #{kept[violation.after]} ({turn.name}), "
            "which was made first"
        )
        yield result(
            TOOL_CHOICE,
            turn,
            Outcome.FAIL if fails else Outcome.PASS,
            why if fails else f"{why}; allowed (matching.order_violations_fail = false)",
            score=0.0 if fails else 1.0,
            threshold=found.match.threshold,
            evidence=[Evidence(span_id=turn.span_ids[0], detail=why)],
        )


def _not_compared(context: MetricContext, turn: Turn) -> MetricResult:
    """A call the match left out: say why it was not judged."""
    match_tools = set(context.case.match_tools or []) if context.case else set()
    if turn.tool_call and turn.tool_call.error and not context.services.matching.count_failed_calls:
        reason = "the tool rejected this call; judged by tool_execution"
    elif match_tools and turn.name not in match_tools:
        reason = f"{turn.name} is not in match_tools (free call)"
    else:
        reason = "not compared"
    return result(TOOL_CHOICE, turn, Outcome.SKIP, reason)


def _failed_attempts(
    context: MetricContext, found: SessionMatch
) -> dict[str, tuple[Turn, list[int]]]:
    """Missing expected calls the agent attempted and the tool rejected: by the attempt.

    Why: the attempt is where the task broke (``tool_execution`` fails it); the answer
    that then honestly reports the failure did nothing wrong. Each missing call goes to
    the last rejected call of the same tool (names compared by ``tool_key``) — the one
    the agent gave up on.
    """
    attempts: dict[str, tuple[Turn, list[int]]] = {}
    failed = [t for t in context.tool_turns if t.tool_call and t.tool_call.error]
    for index in found.match.missing:
        key = tool_key(found.expected_call(index).name)
        tried = [t for t in failed if tool_key(t.name) == key]
        if tried:
            attempts.setdefault(tried[-1].turn_id, (tried[-1], []))[1].append(index)
    return attempts


def _attempted(found: SessionMatch, turn: Turn, indexes: list[int]) -> MetricResult:
    """The expected call(s) this rejected attempt was meant to make were never made."""
    calls = [found.expected_call(i) for i in indexes]
    error = turn.tool_call.error if turn.tool_call else None
    why = (
        f"expected call(s) {', '.join(_describe(c) for c in calls)} attempted here and "
        f"rejected ({error}); never made successfully"
    )
    where = turn.span_ids[0]
    return _unmade(found, turn, why, 0.0, calls, where)


def _missing(found: SessionMatch, final: Turn, indexes: list[int]) -> MetricResult:
    """Expected calls never made nor attempted: the task was left incomplete where the
    session ended."""
    match = found.match
    calls = [found.expected_call(i) for i in indexes]
    why = (
        f"session ended without expected call(s): {', '.join(_describe(c) for c in calls)} "
        f"(matched {match.score:.0%} of expected, threshold {match.threshold:.0%})"
    )
    return _unmade(found, final, why, match.score, calls, None)


def _not_required(found: SessionMatch, final: Turn) -> MetricResult:
    """Optional expected calls (look-ups the agent may skip) that were not made: said, and
    passed — the required minimum is the rest."""
    calls = [found.expected_call(i) for i in found.match.not_required]
    why = (
        f"optional expected call(s) {', '.join(_describe(c) for c in calls)} not made: "
        "not required (the case marks them optional)"
    )
    return result(TOOL_CHOICE, final, Outcome.PASS, why, score=1.0, threshold=found.match.threshold)


def _unmade(
    found: SessionMatch,
    turn: Turn,
    why: str,
    score: float,
    calls: list[ExpectedToolCall],
    span_id: str | None,
) -> MetricResult:
    """Expected calls not made fail ``turn`` — unless the share of expected calls matched
    still reaches ``matching.pass_threshold`` (then said, and passed)."""
    passed = found.match.score >= found.match.threshold
    return result(
        TOOL_CHOICE,
        turn,
        Outcome.PASS if passed else Outcome.FAIL,
        f"{why}; enough matched (matching.pass_threshold)" if passed else why,
        score=score,
        threshold=found.match.threshold,
        evidence=[
            Evidence(
                span_id=span_id,
                field="expected_tool_calls",
                expected=c.model_dump(exclude=None if c.optional else {"optional"}),
            )
            for c in calls
        ],
    )


class ArgumentValidity(BaseMetric[NoSettings]):
    """Were the arguments right: against the paired expected call, and the declared schema."""

    name = ARGUMENT_VALIDITY
    band = "arguments"

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        checks = _SchemaChecks(context.session.tool_definitions)
        found = context.tool_set_match
        verdicts = {v.turn_id: v for v in _argument_verdicts(found)} if found else {}
        for turn in context.tool_turns:
            problem = checks.problem(turn)
            if problem is not None:
                verdicts[turn.turn_id] = result(
                    ARGUMENT_VALIDITY,
                    turn,
                    Outcome.FAIL,
                    f"{turn.name} arguments violate the declared JSON Schema: {problem}",
                    score=0.0,
                    evidence=[Evidence(span_id=turn.span_ids[0], detail=problem)],
                )
            elif turn.turn_id not in verdicts:
                verdicts[turn.turn_id] = checks.schema_only(turn)
        yield from verdicts.values()


def _argument_verdicts(found: SessionMatch) -> Iterable[MetricResult]:
    """Each paired call: pass, or fail naming every wrong argument with both values."""
    threshold = found.match.threshold
    for pair in found.match.pairs:
        turn = found.turns[pair.actual]
        if not pair.argument_mismatches:
            yield result(
                ARGUMENT_VALIDITY,
                turn,
                Outcome.PASS,
                f"{turn.name} arguments match expected call #{found.kept[pair.expected]}",
                score=1.0,
                threshold=threshold,
            )
            continue
        detail = "; ".join(
            f"{m.argument}: expected {m.expected!r}, got {m.actual!r} ({m.reason})"
            for m in pair.argument_mismatches
        )
        yield result(
            ARGUMENT_VALIDITY,
            turn,
            Outcome.FAIL,
            f"{turn.name} called with wrong arguments: {detail}",
            score=0.0,
            threshold=threshold,
            evidence=[
                Evidence(
                    span_id=turn.span_ids[0],
                    field=m.argument,
                    expected=m.expected,
                    actual=m.actual,
                    detail=m.reason,
                )
                for m in pair.argument_mismatches
            ],
        )


class _SchemaChecks:
    """Each declared schema made usable once per tool (``aem.metrics.tool_schema``).

    A schema that stays unusable is said once, on the tool's first call ("schema
    unusable: …"), and its check skipped on every call: one bad declaration must not
    turn into an error on every turn.
    """

    def __init__(self, definitions: dict[str, Any]) -> None:
        self.definitions = definitions
        self.validators: dict[str, Any] = {}
        self.unusable: dict[str, str] = {}
        self.said: dict[str, str] = {}

    def _validator(self, name: str) -> Any:
        if name not in self.validators and name not in self.unusable:
            try:
                self.validators[name] = usable_validator(self.definitions[name])
            except UnusableSchema as exc:
                self.unusable[name] = str(exc)
        return self.validators.get(name)

    def problem(self, turn: Turn) -> str | None:
        """What is wrong with the call's arguments by the declared schema, if anything."""
        call = turn.tool_call
        if call is None or turn.name not in self.definitions:
            return None
        validator = self._validator(turn.name)
        if validator is None:
            return None
        arguments = call.arguments if call.arguments is not None else {}
        errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        if not errors:
            return None
        return "; ".join(
            f"{'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:3]
        )

    def schema_only(self, turn: Turn) -> MetricResult:
        """No expected call to compare with: the declared schema, if usable, is the judge."""
        if turn.name not in self.definitions:
            return result(
                ARGUMENT_VALIDITY,
                turn,
                Outcome.SKIP,
                "no expected call and no declared schema to check against",
            )
        why = self.unusable.get(turn.name)
        if why is None:
            return result(
                ARGUMENT_VALIDITY,
                turn,
                Outcome.PASS,
                f"{turn.name} arguments satisfy the declared JSON Schema",
                score=1.0,
            )
        first = self.said.setdefault(turn.name, turn.turn_id)
        text = (
            f"schema unusable: {why}; the schema check of {turn.name} is skipped"
            if first == turn.turn_id
            else f"schema of {turn.name} unusable (said at {first}); not checked"
        )
        return result(ARGUMENT_VALIDITY, turn, Outcome.SKIP, text)
