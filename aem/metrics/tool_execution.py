"""``tool_execution``: did the tool run succeed, and did it return data where data was due.

Fails on error status, an ``exception`` event or ``error.type``. An empty result is
flagged only where the case expects data (case field ``expect_data``: tool names, or
``true`` for every tool) — an empty search result is often the right answer.
A tool error the agent recovered from (a later call with the same intent — the same tool,
equivalent arguments — in the same context succeeded) follows
``[metrics.tool_execution] recovered_error_outcome``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import Field

from aem.compare.structured import maybe_json
from aem.matching.cost import ArgumentJudge, CallRules, argument_mismatches
from aem.matching.names import tool_key
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result
from aem.model import Evidence, MetricResult, Outcome, Turn

NAME = "tool_execution"


class ToolExecutionSettings(MetricSettings):
    recovered_error_outcome: Literal["pass", "fail"] = Field(
        default="pass",
        description="a tool error the agent recovered from (a later call of the same tool "
        "with equivalent arguments succeeded) is reported either way; `fail` also makes it "
        "a root cause",
    )


def _is_empty(value: object) -> bool:
    return value is None or value == "" or value == [] or value == {} or value == "[]"


def _expects_data(context: MetricContext, tool: str) -> bool:
    expected = context.case.metadata.get("expect_data") if context.case else None
    if expected is True:
        return True
    return isinstance(expected, list) and tool in expected


class ToolExecution(BaseMetric[ToolExecutionSettings]):
    name = NAME
    precedence = 10
    Settings = ToolExecutionSettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        turns = context.tool_turns
        for position, turn in enumerate(turns):
            call = turn.tool_call
            assert call is not None
            if call.error:
                yield self._failed(turn, _recovered_by(context, turn, turns[position + 1 :]))
            elif not call.executed and not call.has_result:
                yield result(NAME, turn, Outcome.SKIP, "no tool span and no result in the trace")
            elif call.has_result and _is_empty(call.result) and _expects_data(context, call.name):
                yield result(
                    NAME,
                    turn,
                    Outcome.FAIL,
                    f"tool {call.name} returned an empty result where the case expects data",
                    score=0.0,
                    evidence=[
                        Evidence(span_id=turn.span_ids[0], field="result", actual=call.result)
                    ],
                )
            else:
                yield result(NAME, turn, Outcome.PASS, f"tool {call.name} succeeded", score=1.0)

    def _failed(self, turn: Turn, recovery: Turn | None) -> MetricResult:
        """A failed call: a root cause, unless recovered and recoveries are configured to pass."""
        call = turn.tool_call
        assert call is not None and call.error is not None
        where = Evidence(span_id=turn.span_ids[0], field="status", actual=call.error)
        label = (
            f"{call.error_type}: "
            if call.error_type and not call.error.startswith(call.error_type)
            else ""
        )
        if recovery is None:
            return result(
                NAME,
                turn,
                Outcome.FAIL,
                f"tool {call.name} failed: {label}{call.error}",
                score=0.0,
                evidence=[where],
            )
        outcome = Outcome(self.settings.recovered_error_outcome)
        return result(
            NAME,
            turn,
            outcome,
            f"tool {call.name} failed ({label}{call.error}); recovered by "
            f"{recovery.turn_id}, a later successful call with the same intent",
            score=0.0 if outcome is Outcome.FAIL else 1.0,
            evidence=[where],
        )


def _recovered_by(context: MetricContext, turn: Turn, later: list[Turn]) -> Turn | None:
    """The first later successful call with the same intent, if any.

    Same intent: the same tool (names compared by :func:`aem.matching.names.tool_key`,
    so ``cd<|channel|>commentary`` retries ``cd``), in the same agent context, with
    equivalent arguments by AEM's comparison — except the arguments the error message
    names (by key or by value), which were what the retry had to change. A failed quote
    from carrier A is not recovered by a quote from carrier B.
    """
    failed = turn.tool_call
    assert failed is not None
    key = tool_key(failed.name)
    wanted = _arguments(failed.arguments)
    rules = CallRules(
        {k: v for k, v in wanted.items() if not _named_in_error(k, v, failed.error or "")}
    )
    judge = ArgumentJudge(context.comparator, context.config.matching)
    for candidate in later:
        call = candidate.tool_call
        if (
            call is not None
            and candidate.context == turn.context
            and not call.error
            and call.executed
            and tool_key(call.name) == key
            and not argument_mismatches(rules, _arguments(call.arguments), judge, True)
        ):
            return candidate
    return None


def _arguments(value: object) -> Mapping[str, Any]:
    parsed = maybe_json(value)
    return parsed if isinstance(parsed, Mapping) else {}


def _named_in_error(key: str, value: Any, error: str) -> bool:
    """The error message says this argument was wrong: it names the argument (the key,
    or a word of it: "payment amount does not add up" names ``payment_methods``; "no
    seats on flight X" names ``flights``) or quotes one of its values, nested ones too.

    A generic failure names nothing, so a retry that changes any argument is another
    intent: a timed-out quote from carrier A is not recovered by a quote from carrier B.

    >>> _named_in_error("date", "2026-02-30", "date 2026-02-30 is not a valid date")
    True
    >>> _named_in_error("carrier", "ACME", "upstream timed out after 30 s")
    False
    >>> _named_in_error("payment_methods", [{"amount": 250}], "payment amount does not add up")
    True
    >>> _named_in_error("cabin", "economy", "not enough seats on flight HAT229")
    False
    """
    text = error.casefold()
    words = set(re.findall(r"[a-z]+", text))
    for part in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", key):
        stem = part.casefold()
        if len(stem) >= 3 and ({stem, stem.removesuffix("s"), f"{stem}s"} & words):
            return True
    return any(re.search(rf"(?<![\w.]){re.escape(leaf)}(?![\w])", text) for leaf in _leaves(value))


def _leaves(value: Any) -> Iterable[str]:
    """The scalar values inside an argument, as text (two characters at least: a lone
    digit or letter in a message names nothing)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
        elif node is not None and not isinstance(node, bool):
            text = str(node).casefold()
            if len(text) >= 2:
                yield text
