"""``tool_repetition``: an agent stuck in a loop, calling the same tool with the same
arguments again and again.

Two calls are the same when they name the same tool and their arguments are equal as
canonical JSON (keys sorted; a JSON-string argument payload is parsed first), so
``{"a": 1, "b": 2}`` and ``'{"b":2,"a":1}'`` are one call. Identical calls are counted per
agent context by default (a sub-agent asking what its parent asked is not a loop); with
``scope = "session"`` across the whole session. The call that takes the count past
``max_repeats`` fails, naming the earlier identical calls; every other call passes.
Failed calls count too: retrying a rejected call unchanged is the loop at its purest.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from aem.compare.structured import maybe_json
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result
from aem.model import Evidence, MetricResult, Outcome, Turn

NAME = "tool_repetition"


class ToolRepetitionSettings(MetricSettings):
    max_repeats: int = Field(
        default=2, ge=1, description="identical calls allowed before the next one fails"
    )
    scope: Literal["context", "session"] = Field(
        default="context",
        description="count identical calls within one agent context, or across the session",
    )


def _signature(turn: Turn) -> str:
    """The call as canonical JSON: tool name and arguments, keys sorted."""
    call = turn.tool_call
    assert call is not None
    arguments: Any = maybe_json(call.arguments)
    return json.dumps([call.name, arguments], sort_keys=True, default=str)


class ToolRepetition(BaseMetric[ToolRepetitionSettings]):
    name = NAME
    precedence = 60
    Settings = ToolRepetitionSettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        limit = self.settings.max_repeats
        earlier: dict[tuple[str, str], list[Turn]] = {}
        for turn in context.tool_turns:
            scope = turn.context if self.settings.scope == "context" else ""
            same = earlier.setdefault((scope, _signature(turn)), [])
            if len(same) == limit:
                listed = ", ".join(t.turn_id for t in same)
                yield result(
                    NAME,
                    turn,
                    Outcome.FAIL,
                    f"{turn.name} called with the same arguments {len(same) + 1} times "
                    f"(limit {limit}); earlier identical calls: {listed}",
                    score=0.0,
                    threshold=float(limit),
                    evidence=[
                        Evidence(span_id=t.span_ids[0], actual=turn.name, detail=t.turn_id)
                        for t in same
                    ],
                )
            else:
                yield result(
                    NAME,
                    turn,
                    Outcome.PASS,
                    f"{turn.name} with these arguments: call {len(same) + 1}"
                    + (
                        f" (loop already reported at {same[limit].turn_id})"
                        if len(same) > limit
                        else ""
                    ),
                    score=1.0,
                    threshold=float(limit),
                )
            same.append(turn)
