"""Expected tool calls against actual calls: multiset, optimal pairing, partial order."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from aem.cases import ExpectedToolCall
from aem.compare.core import SemanticComparator, default_comparator
from aem.compare.settings import MatchSettings
from aem.compare.structured import maybe_json
from aem.matching.assign import assign_block
from aem.matching.cost import ArgumentJudge, CallRules, argument_mismatches
from aem.matching.order import order_violations
from aem.matching.result import ActualCall, ArgumentMismatch, MatchedPair, ToolSetMatch

_DEFAULT_SETTINGS = MatchSettings()


def _expected_call(call: ExpectedToolCall | Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    if type(call) is dict or isinstance(call, Mapping):
        name, arguments = call["name"], call.get("arguments") or {}
    else:
        name, arguments = call.name, call.arguments
    if type(arguments) is not dict:
        arguments = maybe_json(arguments)
        if not isinstance(arguments, Mapping):
            raise ValueError(f"expected call {name!r}: arguments must be an object: {arguments!r}")
    return name, arguments


def _arguments(call: ActualCall) -> Mapping[str, Any]:
    arguments = call.arguments
    if type(arguments) is dict:
        return arguments
    arguments = maybe_json(arguments)
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
    allow_extra = settings.allow_extra_arguments
    calls: list[tuple[str, Mapping[str, Any]]] = []
    by_name: dict[str, tuple[list[int], list[int]]] = {}
    for i, call in enumerate(expected):
        name, arguments = _expected_call(call)
        calls.append((name, arguments))
        block = by_name.get(name)
        if block is None:
            by_name[name] = ([i], [])
        else:
            block[0].append(i)
    for j, actual_call in enumerate(actual):
        block = by_name.get(actual_call.name)
        if block is not None:
            block[1].append(j)
    args = [_arguments(call) for call in actual]
    # Rules are compiled only for calls that are not simply equal (most are).
    rules: list[CallRules | None] = [None] * len(calls)

    def rule_of(i: int) -> CallRules:
        rule = rules[i]
        if rule is None:
            rule = rules[i] = CallRules(calls[i][1])
        return rule

    def mismatches(i: int, j: int) -> list[ArgumentMismatch]:
        return argument_mismatches(rule_of(i), args[j], judge, allow_extra)

    pairs: list[MatchedPair] = []
    missing: list[int] = []
    paired_actual: dict[int, int] = {}  # expected index -> actual index
    for exp_idx, act_idx in by_name.values():
        if not act_idx:
            missing.extend(exp_idx)
            continue
        if len(exp_idx) == 1 and len(act_idx) == 1:  # the common case: one call per tool
            i, j = exp_idx[0], act_idx[0]
            # Exactly equal skips rule compilation and the per-argument walk.
            bad = [] if args[j] == calls[i][1] else mismatches(i, j)
            pairs.append(MatchedPair(i, j, not bad, bad))
            paired_actual[i] = j
            continue
        found = assign_block(exp_idx, act_idx, mismatches, settings.argument_mismatch_cost)
        for i, j, bad in found:
            pairs.append(MatchedPair(i, j, not bad, bad))
            paired_actual[i] = j
        if len(exp_idx) > len(act_idx):
            missing.extend(i for i in exp_idx if i not in paired_actual)
    if len(by_name) > 1:
        pairs.sort(key=_by_expected)
        missing.sort()
    used = set(paired_actual.values())
    if match_tools is None:
        extra = [j for j in range(len(actual)) if j not in used]
    else:
        wanted = set(match_tools)
        extra = [j for j, c in enumerate(actual) if j not in used and c.name in wanted]
    misordered = order_violations(order, paired_actual) if order else []
    ok = sum(1 for p in pairs if p.ok)
    score = ok / len(calls) if calls else 1.0
    passed = (
        score >= settings.pass_threshold
        and not (extra and settings.extra_calls_fail)
        and not (misordered and settings.order_violations_fail)
    )
    return ToolSetMatch(
        pairs, missing, extra, misordered, score, settings.pass_threshold, passed, calls, actual
    )


def _by_expected(pair: MatchedPair) -> int:
    return pair.expected
