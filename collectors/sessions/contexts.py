"""Which agent instance each span belongs to, and how sub-agents hand back.

A turn's context decides its agent name, its structural history fallback and which
context a sub-agent's final answer returns to; all of it is derived from agent runs
in the span tree, whatever dialect described them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aem.foundation.model import SpanRecord, Turn, TurnKind
from collectors.dialects.base import AgentRun, Operation, ToolRun

ROOT_CONTEXT = "root"


@dataclass(slots=True)
class Context:
    """Which agent instance a span belongs to, and what started that agent."""

    key: str
    agent: str | None
    agent_span: SpanRecord | None
    parent_key: str | None


def contexts(
    spans: Mapping[str, SpanRecord], operations: Mapping[str, Operation]
) -> dict[str, Context]:
    """Context of every span: the nearest enclosing agent run with a new name.

    An agent nested in an agent of the same name (a workflow wrapper, a graph node) is
    the same agent; a differently named one is a sub-agent with its own context.
    Top-level agents of one name share a context across traces (one conversation).
    """
    memo: dict[str, Context] = {}

    def context_of(span: SpanRecord) -> Context:
        chain: list[SpanRecord] = []
        node: SpanRecord | None = span
        while node is not None and node.span_id not in memo:
            chain.append(node)
            node = spans.get(node.parent_span_id) if node.parent_span_id else None
        inherited = (
            memo[node.span_id] if node is not None else Context(ROOT_CONTEXT, None, None, None)
        )
        for item in reversed(chain):
            observed = operations.get(item.span_id)
            if isinstance(observed, AgentRun) and observed.name != inherited.agent:
                key = (
                    f"agent:{observed.name}"
                    if inherited.agent_span is None
                    else f"agent:{observed.name}@{item.span_id}"
                )
                inherited = Context(key, observed.name, item, inherited.key)
            memo[item.span_id] = inherited
        return memo[span.span_id]

    return {span_id: context_of(span) for span_id, span in spans.items()}


def delegating_span(
    context: Context, spans: Mapping[str, SpanRecord], operations: Mapping[str, Operation]
) -> str | None:
    """The span that started a sub-agent: the enclosing tool run, else the agent span."""
    if context.agent_span is None or context.parent_key is None:
        return None
    node = spans.get(context.agent_span.parent_span_id or "")
    while node is not None:
        if isinstance(operations.get(node.span_id), ToolRun):
            return node.span_id
        if isinstance(operations.get(node.span_id), AgentRun):
            break
        node = spans.get(node.parent_span_id or "")
    return context.agent_span.span_id


def mark_returns(turns: list[Turn], contexts: Mapping[str, Context]) -> None:
    """The last answer of each sub-agent flows back to the context that started it."""
    last_answer: dict[str, Turn] = {}
    parents: dict[str, str | None] = {c.key: c.parent_key for c in contexts.values()}
    for turn in turns:
        if turn.kind is TurnKind.ANSWER and parents.get(turn.context) is not None:
            last_answer[turn.context] = turn
    for context_key, turn in last_answer.items():
        turn.returns_to_context = parents[context_key]
