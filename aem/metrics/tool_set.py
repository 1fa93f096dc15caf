"""``tool_choice`` and ``argument_validity`` from one optimal tool-set match per session.

The case's ``expected_tool_calls`` are matched against the calls the agent made
(``aem.matching``: a multiset with an optimal assignment, partial order only where the
case declares it). Verdicts land on the turn that made the call; an expected call that
was never made lands on the session's final turn — that is where the task was left
incomplete. Calls the tool rejected with an error changed nothing, so by default they
are judged by ``tool_execution``, not matched (``[matching] count_failed_calls``, a
setting of the match both metrics share).

``argument_validity`` also validates every call against the tool's declared JSON
Schema (``gen_ai.tool.definitions`` or the OpenInference equivalents) with
``jsonschema``, case or no case.
"""

from __future__ import annotations

from collections.abc import Iterable

import jsonschema

from aem.cases import ExpectedToolCall
from aem.metrics.base import BaseMetric, MetricContext, NoSettings, result
from aem.metrics.queries import SessionMatch
from aem.model import Evidence, MetricResult, Outcome, Turn

TOOL_CHOICE = "tool_choice"
ARGUMENT_VALIDITY = "argument_validity"


def _describe(call: ExpectedToolCall) -> str:
    return f"{call.name}({call.arguments})"


class ToolChoice(BaseMetric[NoSettings]):
    """Was every expected call made, no unexpected one, in the declared order."""

    name = TOOL_CHOICE
    precedence = 20

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        found = context.tool_set_match
        if found is None:
            for turn in context.tool_turns:
                yield result(TOOL_CHOICE, turn, Outcome.SKIP, "no expected_tool_calls in the case")
            return
        verdicts: dict[str, MetricResult] = {}
        for verdict in (*_made(found), *_extra(found), *_misordered(found)):
            verdicts[verdict.turn_id] = verdict
        for turn in context.tool_turns:
            if turn.turn_id not in verdicts:
                verdicts[turn.turn_id] = _not_compared(context, turn)
        yield from verdicts.values()
        if found.match.missing and context.final_turn is not None:
            yield _missing(context, found, context.final_turn)


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
    """A call no expected call pairs with (among ``match_tools``): fails where it was made."""
    for index in found.match.extra:
        turn = found.turns[index]
        yield result(
            TOOL_CHOICE,
            turn,
            Outcome.FAIL,
            f"unexpected call {turn.name}({turn.tool_call.arguments if turn.tool_call else ''})"
            " — not among the expected calls",
            score=0.0,
            threshold=found.match.threshold,
            evidence=[Evidence(span_id=turn.span_ids[0], actual=turn.name)],
        )


def _misordered(found: SessionMatch) -> Iterable[MetricResult]:
    """A declared order pair made the other way round: fails the call made too early."""
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
            Outcome.FAIL,
            why,
            score=0.0,
            threshold=found.match.threshold,
            evidence=[Evidence(span_id=turn.span_ids[0], detail=why)],
        )


def _not_compared(context: MetricContext, turn: Turn) -> MetricResult:
    """A call the match left out: say why it was not judged."""
    match_tools = set(context.case.match_tools or []) if context.case else set()
    if turn.tool_call and turn.tool_call.error and not context.config.matching.count_failed_calls:
        reason = "the tool rejected this call; judged by tool_execution"
    elif match_tools and turn.name not in match_tools:
        reason = f"{turn.name} is not in match_tools (free call)"
    else:
        reason = "not compared"
    return result(TOOL_CHOICE, turn, Outcome.SKIP, reason)


def _missing(context: MetricContext, found: SessionMatch, final: Turn) -> MetricResult:
    """Expected calls never made: the task was left incomplete where the session ended."""
    match = found.match
    missing = [found.expected_call(i) for i in match.missing]
    missing_names = {call.name for call in missing}
    attempted = [
        f"{t.name} at {t.turn_id}"
        for t in context.tool_turns
        if t.tool_call and t.tool_call.error and t.name in missing_names
    ]
    note = f"; attempted but failed: {', '.join(attempted)}" if attempted else ""
    return result(
        TOOL_CHOICE,
        final,
        Outcome.FAIL,
        f"session ended without expected call(s): {', '.join(_describe(c) for c in missing)} "
        f"(matched {match.score:.0%} of expected, threshold {match.threshold:.0%}){note}",
        score=match.score,
        threshold=match.threshold,
        evidence=[Evidence(field="expected_tool_calls", expected=c.model_dump()) for c in missing],
    )


class ArgumentValidity(BaseMetric[NoSettings]):
    """Were the arguments right: against the paired expected call, and the declared schema."""

    name = ARGUMENT_VALIDITY
    precedence = 30

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        schema_failures = dict(_schema_failures(context))
        found = context.tool_set_match
        verdicts = {v.turn_id: v for v in _argument_verdicts(found)} if found else {}
        for turn in context.tool_turns:
            problem = schema_failures.get(turn.turn_id)
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
                verdicts[turn.turn_id] = _schema_only(context, turn)
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


def _schema_only(context: MetricContext, turn: Turn) -> MetricResult:
    """No expected call to compare with: the declared schema, if any, is the judge."""
    if turn.name in context.session.tool_definitions:
        return result(
            ARGUMENT_VALIDITY,
            turn,
            Outcome.PASS,
            f"{turn.name} arguments satisfy the declared JSON Schema",
            score=1.0,
        )
    return result(
        ARGUMENT_VALIDITY,
        turn,
        Outcome.SKIP,
        "no expected call and no declared schema to check against",
    )


def _schema_failures(context: MetricContext) -> Iterable[tuple[str, str]]:
    definitions = context.session.tool_definitions
    for turn in context.tool_turns:
        call = turn.tool_call
        schema = definitions.get(turn.name)
        if call is None or not isinstance(schema, dict):
            continue
        arguments = call.arguments if call.arguments is not None else {}
        try:
            validator = jsonschema.validators.validator_for(schema)(schema)
            errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        except jsonschema.SchemaError as exc:
            yield turn.turn_id, f"the declared schema itself is invalid: {exc.message}"
            continue
        if errors:
            yield (
                turn.turn_id,
                "; ".join(
                    f"{'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:3]
                ),
            )
