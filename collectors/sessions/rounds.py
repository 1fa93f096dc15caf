"""How a session's turns of the conversation (user message to answer) were bounded.

Why it is reported: since the GenAI conventions name a framework runner's turn
(``handle_conversation_turn``), a trace can *say* where each exchange starts and ends.
Older traces leave it to be inferred from the outermost agent invocations (or, without
any, from the traces); a reader should know which of the two a session's structure rests
on, since an inferred boundary can be wrong where a stated one cannot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from aem.model import SpanRecord
from collectors.dialects.base import AgentRun, ConversationTurnRun, Operation

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

    >>> from aem.model import SpanRecord
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
