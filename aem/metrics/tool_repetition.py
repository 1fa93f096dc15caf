"""``tool_repetition``: an agent stuck in a loop, calling the same tool with the same
arguments again and again.

Two calls are the same when they name the same tool and their arguments are equal as
canonical JSON (keys sorted; a JSON-string argument payload is parsed first), so
``{"a": 1, "b": 2}`` and ``'{"b":2,"a":1}'`` are one call. Identical calls are counted per
agent context by default (a sub-agent asking what its parent asked is not a loop); with
``scope = "session"`` across the whole session. The call that takes the count past
``max_repeats`` fails, naming the earlier identical calls and quoting their errors;
every other call passes. Failed calls count too: retrying a rejected call unchanged is
the loop at its purest.

Only calls with no state-changing success between them are counted together: a
successful call of another tool or arguments whose name starts with a state-changing
verb (:data:`aem.foundation.vocabulary.STATE_CHANGING_VERBS`: book, update, cancel, …) changed the
world the call asks about, so a call repeated after it — a retry once the precondition
was fixed — starts a new count.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from aem.compare.structured import maybe_json
from aem.evidence.claimed_success import name_words
from aem.foundation.model import Evidence, MetricResult, Outcome, Turn
from aem.foundation.vocabulary import STATE_CHANGING_VERBS, TOOL_NAME_FILLER
from aem.metrics.base import BaseMetric, MetricContext, MetricSettings, result

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


def changes_state(turn: Turn) -> bool:
    """A successful call of a tool whose name starts with a state-changing verb.

    >>> from aem.testing import make_tool_call
    >>> changes_state(make_tool_call("update_reservation", {"id": 1}, result="ok"))
    True
    >>> changes_state(make_tool_call("get_reservation", {"id": 1}, result="ok"))
    False
    """
    call = turn.tool_call
    if call is None or call.error or not (call.executed or call.has_result):
        return False
    words = [w for w in name_words(call.name) if w not in TOOL_NAME_FILLER]
    return bool(words) and words[0] in STATE_CHANGING_VERBS


def _quoted(turn: Turn) -> Evidence:
    """An earlier identical call: where, its arguments, and its error if it failed."""
    call = turn.tool_call
    assert call is not None
    error = f": failed: {call.error}" if call.error else ""
    return Evidence(
        span_id=turn.span_ids[0],
        field="arguments",
        actual=call.arguments,
        detail=f"{turn.turn_id} {call.name}{error}",
    )


class ToolRepetition(BaseMetric[ToolRepetitionSettings]):
    name = NAME
    band = "repetition"
    Settings = ToolRepetitionSettings

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        earlier: dict[tuple[str, str], list[Turn]] = {}
        for turn in context.tool_turns:
            scope = turn.context if self.settings.scope == "context" else ""
            signature = _signature(turn)
            same = earlier.setdefault((scope, signature), [])
            yield self._verdict(turn, same)
            same.append(turn)
            if changes_state(turn):  # the world changed: other calls start counting again
                for key in [k for k in earlier if k[0] == scope and k[1] != signature]:
                    del earlier[key]

    def _verdict(self, turn: Turn, same: list[Turn]) -> MetricResult:
        """``turn`` after the identical calls ``same``: fails the one past the limit."""
        limit = self.settings.max_repeats
        if len(same) == limit:
            listed = ", ".join(t.turn_id for t in same)
            return result(
                NAME,
                turn,
                Outcome.FAIL,
                f"{turn.name} called with the same arguments {len(same) + 1} times "
                f"(limit {limit}) with no state-changing success between; earlier identical "
                f"calls: {listed}",
                score=0.0,
                threshold=float(limit),
                evidence=[_quoted(t) for t in same],
            )
        reported = f" (loop already reported at {same[limit].turn_id})" if len(same) > limit else ""
        return result(
            NAME,
            turn,
            Outcome.PASS,
            f"{turn.name} with these arguments: call {len(same) + 1}{reported}",
            score=1.0,
            threshold=float(limit),
        )
