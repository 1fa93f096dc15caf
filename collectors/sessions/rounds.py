"""How a session's turns of the conversation (user message to answer) were bounded.

Why it is reported: since the GenAI conventions name a framework runner's turn
(``handle_conversation_turn``), a trace can *say* where each exchange starts and ends.
Older traces leave it to be inferred from the outermost agent invocations (or, without
any, from the traces); a reader should know which of the two a session's structure rests
on, since an inferred boundary can be wrong where a stated one cannot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from aem.foundation.model import SpanRecord
from collectors.dialects.base import AgentRun, ConversationTurnRun, ModelCall, Operation

Boundaries = Literal["conventions", "inferred"]


def _under(span: SpanRecord, spans: Mapping[str, SpanRecord], kinds: tuple[type, ...],
           operations: Mapping[str, Operation]) -> bool:  # fmt: skip
    """Whether an ancestor of ``span`` is an operation of one of ``kinds``."""
    seen: set[str] = set()
    parent = span.parent_span_id
    while parent and parent in spans and parent not in seen:
        seen.add(parent)
        if isinstance(operations.get(parent), kinds):
            return True
        parent = spans[parent].parent_span_id
    return False


def conversation_turns(
    spans: Mapping[str, SpanRecord], operations: Mapping[str, Operation]
) -> tuple[Boundaries, int]:
    """How the turns of the conversation were found, and how many there are.

    Stated: each outermost ``handle_conversation_turn`` span is one. Inferred: each
    outermost agent invocation not marked nested and under no stated turn is one; a
    session with neither counts its traces. ``conventions`` only when no turn was
    inferred (a trace mixing both shapes is ``inferred``).

    >>> from aem.foundation.model import SpanRecord
    >>> turn = SpanRecord(trace_id="t", span_id="a", parent_span_id=None, name="turn")
    >>> agent = SpanRecord(trace_id="t", span_id="b", parent_span_id="a", name="agent")
    >>> conversation_turns({"a": turn, "b": agent},
    ...                    {"a": ConversationTurnRun(turn), "b": AgentRun(agent, "x")})
    ('conventions', 1)
    """
    stated = [
        op.span
        for op in operations.values()
        if isinstance(op, ConversationTurnRun)
        and not _under(op.span, spans, (ConversationTurnRun,), operations)
    ]
    inferred = [
        op.span
        for op in operations.values()
        if isinstance(op, AgentRun)
        and not op.nested
        and not _under(op.span, spans, (AgentRun, ConversationTurnRun), operations)
    ]
    if stated and not inferred:
        return "conventions", len(stated)
    if stated or inferred:
        return "inferred", len(stated) + len(inferred)
    return "inferred", len({s.trace_id for s in spans.values()})


def _first_user_texts(call: ModelCall) -> list[str]:
    if call.user_texts:
        return list(call.user_texts)
    return call.read_user_texts(call.input_text) if call.read_user_texts else []


def runs(model_calls: Sequence[ModelCall], predecessors: Mapping[str, ModelCall]) -> int:
    """How many times the conversation was started from its first message: ``2`` when a
    script re-ran under the same conversation id and both runs landed in one session.

    A run starts at a model call whose input was captured, continues no earlier call (no
    earlier output in it: ``predecessors``, :func:`collectors.sessions.history.history`)
    and holds exactly the session's first user messages, in a trace no earlier call was
    in (a re-run is a new process, so a new trace: an agent that sends each model call only
    the user's message, without the history, is one run). A continuing conversation
    carries earlier output, a sub-agent is handed a task of its own; a re-run whose first
    message changed is missed — a miss costs less than calling one conversation two.
    """
    ordered = sorted(model_calls, key=lambda op: (op.span.start_unix_nano, op.span.span_id))
    if not ordered:
        return 1
    first = _first_user_texts(ordered[0])
    if not first:
        return 1
    count, traces = 1, {ordered[0].span.trace_id}
    for call in ordered[1:]:
        if (
            call.span.trace_id not in traces
            and call.input_text
            and call.span.span_id not in predecessors
            and _first_user_texts(call) == first
        ):
            count += 1
        traces.add(call.span.trace_id)
    return count
