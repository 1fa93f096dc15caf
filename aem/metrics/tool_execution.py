"""``tool_execution``: did the tool run succeed, and did it return data where data was due.

Fails on error status, an ``exception`` event or ``error.type``. An empty result is
flagged only where the case expects data (case field ``expect_data``: tool names, or
``true`` for every tool) — an empty search result is often the right answer.
A tool error the agent recovered from (a later call with the same intent — the same tool,
equivalent arguments — in the same context succeeded; the rule is
:func:`aem.evidence.recovery.recovered_by`, which the claimed-success check shares) follows
``[metrics.tool_execution] recovered_error_outcome``. The error is read first: a
transient one (timeout, 5xx, rate limit) is recovered only by the same call succeeding;
one about an argument by a call that changes the argument it names. The world declining
a well-formed request (no seats, not available on that date) passes when the next answer
tells the user and the agent does not ask again. Every failure's evidence quotes the
error, its kind and the call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from aem.evidence.recovery import error_kind
from aem.foundation.model import Evidence, MetricResult, Outcome, Turn
from aem.metrics.base import (
    BaseMetric,
    CaseField,
    CaseFieldError,
    MetricContext,
    MetricSettings,
    result,
)

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


# ``true`` (every tool) or the tools whose result must not be empty.
EXPECT_DATA = CaseField("expect_data", bool | list[str], required=False)


def _expects_data(context: MetricContext, tool: str) -> bool:
    expected = EXPECT_DATA.value(context.case)
    if expected is True:
        return True
    return isinstance(expected, list) and tool in expected


class ToolExecution(BaseMetric[ToolExecutionSettings]):
    name = NAME
    band = "execution"
    Settings = ToolExecutionSettings
    case_fields = (EXPECT_DATA,)

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        try:
            EXPECT_DATA.value(context.case)
        except CaseFieldError as exc:
            for turn in context.tool_turns:
                yield result(NAME, turn, Outcome.ERROR, str(exc))
            return
        turns = context.tool_turns
        for turn in turns:
            call = turn.tool_call
            assert call is not None
            if call.error:
                yield self._failed(turn, context.recovery(turn), context)
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
                        Evidence(
                            span_id=turn.span_ids[0],
                            field="result",
                            actual=call.result,
                            expected="a non-empty result (the case's expect_data)",
                        )
                    ],
                )
            else:
                yield result(NAME, turn, Outcome.PASS, f"tool {call.name} succeeded", score=1.0)

    def _failed(self, turn: Turn, recovery: Turn | None, context: MetricContext) -> MetricResult:
        """A failed call: a root cause, unless recovered (and recoveries are configured to
        pass) or declined by the world and reported to the user."""
        call = turn.tool_call
        assert call is not None and call.error is not None
        kind = error_kind(call.error, call.error_type)
        where = Evidence(
            span_id=turn.span_ids[0],
            field="status",
            actual=call.error,
            detail=f"{kind.value} error of {call.name}({call.arguments_raw or call.arguments})",
        )
        label = (
            f"{call.error_type}: "
            if call.error_type and not call.error.startswith(call.error_type)
            else ""
        )
        told = context.reported_decline(turn) if recovery is None else None
        if told is not None:
            return result(
                NAME,
                turn,
                Outcome.PASS,
                f"tool {call.name} was declined ({label}{call.error}); {told.turn_id} told the "
                "user and the request was not repeated: the world's answer, reported, is no "
                "failure of the agent",
                score=1.0,
                evidence=[
                    where,
                    Evidence(span_id=told.span_ids[0], field="text", actual=told.text),
                ],
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
