"""``tool_choice`` and ``argument_validity`` from one optimal tool-set match per session.

The case's ``expected_tool_calls`` are matched against the calls the agent made
(``aem.matching``: a multiset with an optimal assignment, partial order only where the
case declares it). Verdicts land on the turn that made the call; an expected call that
was never made lands on the session's final turn — that is where the task was left
incomplete. Calls the tool rejected with an error changed nothing, so by default they
are judged by ``tool_execution``, not matched (``metrics.tool_set.count_failed_calls``).

``argument_validity`` also validates every call against the tool's declared JSON
Schema (``gen_ai.tool.definitions`` or the OpenInference equivalents) with
``jsonschema``, case or no case.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jsonschema

from aem.matching import ActualCall, ToolSetMatch, match_tool_calls
from aem.metrics.base import MetricContext, result
from aem.model import Evidence, MetricResult, Outcome, Turn, TurnKind

TOOL_CHOICE = "tool_choice"
ARGUMENT_VALIDITY = "argument_validity"


def _tool_turns(context: MetricContext) -> list[Turn]:
    return [t for t in context.session.turns if t.kind is TurnKind.TOOL_CALL and t.tool_call]


def _compared_turns(context: MetricContext) -> list[Turn]:
    count_failed = context.config.metrics.tool_set.count_failed_calls
    return [
        t for t in _tool_turns(context) if count_failed or not (t.tool_call and t.tool_call.error)
    ]


def session_match(context: MetricContext) -> tuple[ToolSetMatch, list[Turn], list[int]] | None:
    """The session's tool-set match, computed once and shared by both metrics."""
    case = context.case
    if case is None or case.expected_tool_calls is None:
        return None
    if "tool_set_match" not in context.shared:
        turns = _compared_turns(context)
        actual = [
            ActualCall(name=t.tool_call.name, arguments=t.tool_call.arguments, ref=t.turn_id)
            for t in turns
            if t.tool_call is not None
        ]
        # ``match_tools`` scopes both sides: expected calls to other tools (read-only
        # lookups a reference happened to list) are not compared either.
        scope = set(case.match_tools) if case.match_tools is not None else None
        kept = [
            i for i, c in enumerate(case.expected_tool_calls) if scope is None or c.name in scope
        ]
        position = {original: new for new, original in enumerate(kept)}
        match = match_tool_calls(
            [case.expected_tool_calls[i].model_dump() for i in kept],
            actual,
            order=[
                (position[a], position[b]) for a, b in case.order if a in position and b in position
            ],
            match_tools=case.match_tools,
            comparator=context.comparator,
            settings=context.config.matching,
        )
        context.shared["tool_set_match"] = (match, turns, kept)
    found: tuple[ToolSetMatch, list[Turn], list[int]] = context.shared["tool_set_match"]
    return found


def _final_turn(context: MetricContext) -> Turn | None:
    turns = context.session.turns
    top = [t for t in turns if t.context == turns[0].context] if turns else []
    answers = [t for t in top if t.kind is TurnKind.ANSWER]
    if answers:
        return answers[-1]
    return top[-1] if top else None


def _describe(call: Any) -> str:
    name = call.get("name") if isinstance(call, dict) else getattr(call, "name", "?")
    arguments = call.get("arguments") if isinstance(call, dict) else getattr(call, "arguments", {})
    return f"{name}({arguments})"


class ToolChoice:
    name = TOOL_CHOICE

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        found = session_match(context)
        if found is None:
            for turn in _tool_turns(context):
                yield result(TOOL_CHOICE, turn, Outcome.SKIP, "no expected_tool_calls in the case")
            return
        match, turns, kept = found
        threshold = match.threshold
        verdicts: dict[str, MetricResult] = {}
        for pair in match.pairs:
            turn = turns[pair.actual]
            verdicts[turn.turn_id] = result(
                TOOL_CHOICE,
                turn,
                Outcome.PASS,
                f"expected call #{kept[pair.expected]} {turn.name} was made",
                score=1.0,
                threshold=threshold,
            )
        for index in match.extra:
            turn = turns[index]
            verdicts[turn.turn_id] = result(
                TOOL_CHOICE,
                turn,
                Outcome.FAIL,
                f"unexpected call {turn.name}({turn.tool_call.arguments if turn.tool_call else ''})"
                " — not among the expected calls",
                score=0.0,
                threshold=threshold,
                evidence=[Evidence(span_id=turn.span_ids[0], actual=turn.name)],
            )
        for violation in match.misordered:
            turn = turns[violation.actual_after]
            before = turns[violation.actual_before]
            why = (
                f"order violated: expected call #{kept[violation.before]} ({before.name}, made "
                f"at {before.turn_id}) must come before #{kept[violation.after]} ({turn.name}), "
                "which was made first"
            )
            verdicts[turn.turn_id] = result(
                TOOL_CHOICE,
                turn,
                Outcome.FAIL,
                why,
                score=0.0,
                threshold=threshold,
                evidence=[Evidence(span_id=turn.span_ids[0], detail=why)],
            )
        match_tools = set(context.case.match_tools or []) if context.case else set()
        for turn in _tool_turns(context):
            if turn.turn_id in verdicts:
                continue
            if (
                turn.tool_call
                and turn.tool_call.error
                and not context.config.metrics.tool_set.count_failed_calls
            ):
                reason = "the tool rejected this call; judged by tool_execution"
            elif match_tools and turn.name not in match_tools:
                reason = f"{turn.name} is not in match_tools (free call)"
            else:
                reason = "not compared"
            verdicts[turn.turn_id] = result(TOOL_CHOICE, turn, Outcome.SKIP, reason)
        yield from verdicts.values()
        if match.missing:
            final = _final_turn(context)
            if final is not None:
                expected = context.case.expected_tool_calls if context.case else []
                missing = (
                    ", ".join(_describe(expected[kept[i]]) for i in match.missing)
                    if expected
                    else ""
                )
                missing_names = (
                    {expected[kept[i]].name for i in match.missing} if expected else set()
                )
                attempted = [
                    f"{t.name} at {t.turn_id}"
                    for t in _tool_turns(context)
                    if t.tool_call and t.tool_call.error and t.name in missing_names
                ]
                note = f"; attempted but failed: {', '.join(attempted)}" if attempted else ""
                yield result(
                    TOOL_CHOICE,
                    final,
                    Outcome.FAIL,
                    f"session ended without expected call(s): {missing} "
                    f"(matched {match.score:.0%} of expected, threshold {threshold:.0%}){note}",
                    score=match.score,
                    threshold=threshold,
                    evidence=[
                        Evidence(
                            field="expected_tool_calls", expected=expected[kept[i]].model_dump()
                        )
                        for i in match.missing
                    ]
                    if expected
                    else [],
                )


class ArgumentValidity:
    name = ARGUMENT_VALIDITY

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        schema_failures = dict(_schema_failures(context))
        found = session_match(context)
        verdicts: dict[str, MetricResult] = {}
        if found is not None:
            match, turns, kept = found
            for pair in match.pairs:
                turn = turns[pair.actual]
                if pair.argument_mismatches:
                    detail = "; ".join(
                        f"{m.argument}: expected {m.expected!r}, got {m.actual!r} ({m.reason})"
                        for m in pair.argument_mismatches
                    )
                    verdicts[turn.turn_id] = result(
                        ARGUMENT_VALIDITY,
                        turn,
                        Outcome.FAIL,
                        f"{turn.name} called with wrong arguments: {detail}",
                        score=0.0,
                        threshold=match.threshold,
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
                else:
                    verdicts[turn.turn_id] = result(
                        ARGUMENT_VALIDITY,
                        turn,
                        Outcome.PASS,
                        f"{turn.name} arguments match expected call #{kept[pair.expected]}",
                        score=1.0,
                        threshold=match.threshold,
                    )
        for turn in _tool_turns(context):
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
                has_schema = turn.name in context.session.tool_definitions
                verdicts[turn.turn_id] = (
                    result(
                        ARGUMENT_VALIDITY,
                        turn,
                        Outcome.PASS,
                        f"{turn.name} arguments satisfy the declared JSON Schema",
                        score=1.0,
                    )
                    if has_schema
                    else result(
                        ARGUMENT_VALIDITY,
                        turn,
                        Outcome.SKIP,
                        "no expected call and no declared schema to check against",
                    )
                )
        yield from verdicts.values()


def _schema_failures(context: MetricContext) -> Iterable[tuple[str, str]]:
    definitions = context.session.tool_definitions
    for turn in _tool_turns(context):
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
