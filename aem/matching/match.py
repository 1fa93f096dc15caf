"""Expected tool calls against actual calls: multiset, optimal pairing, partial order."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from aem.cases import ExpectedToolCall
from aem.compare.core import SemanticComparator, default_comparator
from aem.compare.settings import MatchSettings
from aem.compare.structured import maybe_json
from aem.matching.assign import assign_block
from aem.matching.cost import ArgumentJudge, argument_mismatches, compile_rules
from aem.matching.order import order_violations
from aem.matching.result import ActualCall, ArgumentMismatch, MatchedPair, ToolSetMatch

_DEFAULT_SETTINGS = MatchSettings()


def _expected_call(call: ExpectedToolCall | Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    if isinstance(call, Mapping):
        name, arguments = call["name"], call.get("arguments") or {}
    else:
        name, arguments = call.name, call.arguments
    arguments = maybe_json(arguments)
    if not isinstance(arguments, Mapping):
        raise ValueError(f"expected call {name!r}: arguments must be an object, got {arguments!r}")
    return name, arguments


def _arguments(call: ActualCall) -> Mapping[str, Any]:
    arguments = maybe_json(call.arguments)
    return arguments if isinstance(arguments, Mapping) else {}


def match_tool_calls(
    expected: Sequence[ExpectedToolCall | Mapping[str, Any]],
    actual: Sequence[ActualCall],
    *,
    order: Sequence[tuple[int, int]] = (),
    match_tools: Collection[str] | None = None,
    comparator: SemanticComparator | None = None,
    settings: MatchSettings | None = None,
) -> ToolSetMatch:
    """Match the case's expected calls to the agent's calls as multisets.

    Pairs are only ever made between calls to the same tool; among those the pairing
    is optimal (fewest wrong arguments over the most pairs). ``order`` pairs
    ``[before, after]`` (expected indexes) are checked on that pairing. With
    ``match_tools``, only calls to those tools can be extra; other calls are free.

    >>> m = match_tool_calls(
    ...     [{"name": "f", "arguments": {"a": 1}}, {"name": "f", "arguments": {"a": 1, "b": 2}}],
    ...     [ActualCall("f", {"a": 1, "b": 2}), ActualCall("f", {"a": 1})],
    ... )
    >>> m.passed, [(p.expected, p.actual) for p in m.pairs]
    (True, [(0, 1), (1, 0)])
    """
    settings = settings or _DEFAULT_SETTINGS
    judge = ArgumentJudge(comparator or default_comparator(), settings)
    calls = [_expected_call(call) for call in expected]
    rules = [compile_rules(arguments) for _, arguments in calls]
    wanted = set(match_tools) if match_tools is not None else None
    by_name: dict[str, tuple[list[int], list[int]]] = {}
    for i, (name, _) in enumerate(calls):
        by_name.setdefault(name, ([], []))[0].append(i)
    for j, call in enumerate(actual):
        block = by_name.get(call.name)
        if block is not None:
            block[1].append(j)
    actual_args: dict[int, Mapping[str, Any]] = {}

    def mismatches(i: int, j: int) -> list[ArgumentMismatch]:
        args = actual_args.get(j)
        if args is None:
            args = actual_args[j] = _arguments(actual[j])
        return argument_mismatches(rules[i], args, judge, settings.allow_extra_arguments)

    pairs: list[MatchedPair] = []
    missing: list[int] = []
    for exp_idx, act_idx in by_name.values():
        if not act_idx:
            missing.extend(exp_idx)
            continue
        for i, j, bad in assign_block(
            exp_idx, act_idx, mismatches, settings.argument_mismatch_cost
        ):
            pairs.append(MatchedPair(i, j, not bad, bad))
        if len(exp_idx) > len(act_idx):
            paired = {p.expected for p in pairs}
            missing.extend(i for i in exp_idx if i not in paired)
    pairs.sort(key=lambda p: p.expected)
    missing.sort()
    used = {p.actual for p in pairs}
    extra = [
        j
        for j, call in enumerate(actual)
        if j not in used and (wanted is None or call.name in wanted)
    ]
    misordered = order_violations(order, {p.expected: p.actual for p in pairs}) if order else []
    ok = sum(p.ok for p in pairs)
    score = ok / len(calls) if calls else 1.0
    passed = (
        score >= settings.pass_threshold
        and not (extra and settings.extra_calls_fail)
        and not (misordered and settings.order_violations_fail)
    )
    return ToolSetMatch(
        pairs, missing, extra, misordered, score, settings.pass_threshold, passed, calls, actual
    )
