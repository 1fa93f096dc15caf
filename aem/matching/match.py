"""Expected tool calls against actual calls: multiset, optimal pairing, partial order.

The steps, each named below: group calls by tool, pair each group optimally, list the
extra calls, check the declared order, then the verdict.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from aem.cases import ExpectedToolCall
from aem.compare.core import SemanticComparator, default_comparator
from aem.compare.structured import maybe_json
from aem.matching.assign import assign_block
from aem.matching.cost import ArgumentJudge, CallRules, argument_mismatches
from aem.matching.effects import NO_DECLARATIONS, ToolEffect, ToolEffects
from aem.matching.order import order_violations
from aem.matching.result import ActualCall, ArgumentMismatch, MatchedPair, ToolSetMatch
from aem.matching.settings import MatchSettings

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
    effects: ToolEffects | None = None,
    optional: Collection[int] = (),
) -> ToolSetMatch:
    """Match the case's expected calls to the agent's calls as multisets.

    Pairs are only made between calls to the same tool, optimally (fewest wrong arguments
    over the most pairs); only ``order`` pairs ``[before, after]`` (expected indexes) are
    ordered. With ``match_tools``, only calls to those tools can be extra. An extra call
    passes by ``settings.extra_mode`` and its tool's ``effects`` (a look-up, under
    ``writes``); ``optional`` expected calls not made are ``not_required``, not missing.

    >>> m = match_tool_calls(
    ...     [{"name": "f", "arguments": {"a": 1}}, {"name": "f", "arguments": {"a": 1, "b": 2}}],
    ...     [ActualCall("f", {"a": 1, "b": 2}), ActualCall("f", {"a": 1})],
    ... )
    >>> m.passed, [(p.expected, p.actual) for p in m.pairs]
    (True, [(0, 1), (1, 0)])
    """
    settings = settings or _DEFAULT_SETTINGS
    exact = _exact_match(expected, actual, order, settings)
    if exact is not None:
        return exact
    calls, blocks = _blocks_by_tool(expected, actual)
    scorer = _PairCost(calls, actual, comparator or default_comparator(), settings)
    pairs, missing, paired_actual = _pair_blocks(blocks, scorer, settings.argument_mismatch_cost)
    if len(blocks) > 1:
        pairs.sort(key=_by_expected)
        missing.sort()
    missing, not_required = _split_optional(missing, optional)
    extra = _extra_calls(actual, set(paired_actual.values()), match_tools)
    kinds, allowed = _judge_extras(actual, extra, effects or NO_DECLARATIONS, settings.extra_mode)
    misordered = order_violations(order, paired_actual) if order else []
    ok = sum(1 for p in pairs if p.ok)
    required = len(calls) - len(not_required)
    score = ok / required if required else 1.0
    fails_order = bool(misordered) and settings.order_violations_fail
    passed = score >= settings.pass_threshold and len(allowed) == len(extra) and not fails_order
    return ToolSetMatch(
        pairs,
        missing,
        extra,
        misordered,
        score,
        settings.pass_threshold,
        passed,
        calls,
        actual,
        allowed_extra=allowed,
        extra_effects=kinds,
        not_required=not_required,
        extra_mode=settings.extra_mode,
    )


def _split_optional(missing: list[int], optional: Collection[int]) -> tuple[list[int], list[int]]:
    """Expected calls not made: the required ones (missing) and the optional ones."""
    if not optional:
        return missing, []
    return [i for i in missing if i not in optional], [i for i in missing if i in optional]


def _judge_extras(
    actual: Sequence[ActualCall], extra: Sequence[int], effects: ToolEffects, mode: str
) -> tuple[dict[int, ToolEffect], list[int]]:
    """Each extra call's tool effect (and what says so), and the extra calls that pass:
    none under ``fail``, look-ups under ``writes``, all under ``allow``."""
    kinds = {j: effects.of(actual[j].name) for j in extra}
    if mode == "allow":
        return kinds, list(extra)
    if mode == "writes":
        return kinds, [j for j in extra if kinds[j].reads]
    return kinds, []


def _exact_match(
    expected: Sequence[ExpectedToolCall | Mapping[str, Any]],
    actual: Sequence[ActualCall],
    order: Sequence[tuple[int, int]],
    settings: MatchSettings,
) -> ToolSetMatch | None:
    """The common case in one pass, or ``None`` for the general path: every tool called
    once on each side, each with arguments ``==`` the expected ones.

    Same result as the general path: one call per tool on each side leaves one possible
    pairing, and ``==`` arguments are a match there too (``_PairCost.single``). No call is
    extra (every actual call is paired) and the score is 1, so only the order can fail.
    """
    if len(expected) != len(actual) or not actual:
        return None
    position = {call.name: j for j, call in enumerate(actual)}
    if len(position) != len(actual):
        return None  # a tool called twice: pairing within it is the general path's job
    calls: list[tuple[str, Mapping[str, Any]]] = []
    pairs: list[MatchedPair] = []
    paired: dict[int, int] = {}
    for i, call in enumerate(expected):
        if type(call) is dict:
            name, arguments = call["name"], call.get("arguments") or {}
        elif type(call) is ExpectedToolCall:
            name, arguments = call.name, call.arguments
        else:
            return None
        j = position.pop(name, None)  # popped: a second expected call to it finds none
        if j is None or type(arguments) is not dict or actual[j].arguments != arguments:
            return None
        calls.append((name, arguments))
        pairs.append(MatchedPair(i, j, True, []))
        paired[i] = j
    misordered = order_violations(order, paired) if order else []
    # Score 1.0 meets any threshold (pass_threshold <= 1): only the order can fail.
    passed = not (misordered and settings.order_violations_fail)
    return ToolSetMatch(
        pairs,
        [],
        [],
        misordered,
        1.0,
        settings.pass_threshold,
        passed,
        calls,
        actual,
        extra_mode=settings.extra_mode,
    )


Block = tuple[list[int], list[int]]


def _blocks_by_tool(
    expected: Sequence[ExpectedToolCall | Mapping[str, Any]], actual: Sequence[ActualCall]
) -> tuple[list[tuple[str, Mapping[str, Any]]], dict[str, Block]]:
    """The expected calls as ``(name, arguments)`` and, per tool name, the expected and
    actual indexes: calls to different tools can never pair, so each block is solved alone."""
    calls: list[tuple[str, Mapping[str, Any]]] = []
    by_name: dict[str, Block] = {}
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
    return calls, by_name


class _PairCost:
    """The argument mismatches of pairing expected call ``i`` with actual call ``j``.

    Rules are compiled lazily, only for calls that are not simply equal (most are).
    """

    def __init__(
        self,
        calls: Sequence[tuple[str, Mapping[str, Any]]],
        actual: Sequence[ActualCall],
        comparator: SemanticComparator,
        settings: MatchSettings,
    ) -> None:
        self.calls = calls
        self.args = [_arguments(call) for call in actual]
        self.judge = ArgumentJudge(comparator, settings)
        self.allow_extra = settings.allow_extra_arguments
        self.rules: list[CallRules | None] = [None] * len(calls)

    def rule_of(self, i: int) -> CallRules:
        rule = self.rules[i]
        if rule is None:
            rule = self.rules[i] = CallRules(self.calls[i][1])
        return rule

    def __call__(self, i: int, j: int) -> list[ArgumentMismatch]:
        return argument_mismatches(self.rule_of(i), self.args[j], self.judge, self.allow_extra)

    def single(self, i: int, j: int) -> list[ArgumentMismatch]:
        """One call per tool on each side: exactly equal skips rules and the argument walk."""
        return [] if self.args[j] == self.calls[i][1] else self(i, j)


def _pair_blocks(
    blocks: Mapping[str, Block], cost: _PairCost, unit_cost: float
) -> tuple[list[MatchedPair], list[int], dict[int, int]]:
    """Pair each tool's block optimally: the pairs, the expected calls left unpaired, and
    the expected → actual index map the order check reads."""
    pairs: list[MatchedPair] = []
    missing: list[int] = []
    paired_actual: dict[int, int] = {}
    for exp_idx, act_idx in blocks.values():
        if not act_idx:
            missing.extend(exp_idx)
            continue
        if len(exp_idx) == 1 and len(act_idx) == 1:  # the common case: one call per tool
            found = [(exp_idx[0], act_idx[0], cost.single(exp_idx[0], act_idx[0]))]
        else:
            found = assign_block(exp_idx, act_idx, cost, unit_cost)
        for i, j, bad in found:
            pairs.append(MatchedPair(i, j, not bad, bad))
            paired_actual[i] = j
        if len(exp_idx) > len(act_idx):
            missing.extend(i for i in exp_idx if i not in paired_actual)
    return pairs, missing, paired_actual


def _extra_calls(
    actual: Sequence[ActualCall], used: set[int], match_tools: Collection[str] | None
) -> list[int]:
    """Actual calls paired with nothing; with ``match_tools`` only calls to those tools."""
    if match_tools is None:
        return [j for j in range(len(actual)) if j not in used]
    wanted = set(match_tools)
    return [j for j, c in enumerate(actual) if j not in used and c.name in wanted]


def _by_expected(pair: MatchedPair) -> int:
    return pair.expected
