"""The turn graph: a networkx ``DiGraph`` where an edge A → B means B consumed A's output.

Edges (see docs/semantics.md, "The turn graph"), each with a ``reason`` attribute:

* ``decision`` — a reasoning turn to the tool calls made in the same model output;
  parallel calls from one output are siblings, never a chain;
* ``tool_result`` — a tool call to the turns of the model call whose input carried its
  result (matched by tool-call id, scoped to the latest earlier call with that id);
* ``history`` — every turn of a model call to the turns of the next model call whose
  input holds that output as history;
* ``argument_reuse`` — a tool result to a later tool call whose arguments reuse one of
  its values;
* ``delegation`` / ``subagent_result`` — into a sub-agent and back out of it;
* ``retrieval`` — a retrieval to the turns of the next model call of the same agent
  context (its documents are what that call reads).

Every edge goes from an earlier turn to a later one, so the graph is a DAG by
construction; :func:`build_turn_graph` asserts it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

import networkx as nx

from aem.model import Session, Turn, TurnKind

_MIN_REUSED_TEXT = 5
_MIN_REUSED_NUMBER = 100


def _scalars(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield value


def _distinctive(value: Any) -> str | None:
    """A value specific enough that finding it in an earlier result means reuse."""
    if isinstance(value, str):
        text = value.strip()
        if len(text) >= _MIN_REUSED_TEXT and any(c.isdigit() for c in text) and " " not in text:
            return text
        return None
    if isinstance(value, int | float) and abs(value) >= _MIN_REUSED_NUMBER:
        return str(value)
    return None


def build_turn_graph(turns: Iterable[Turn]) -> nx.DiGraph:
    """Build the turn graph from the link keys the collectors put on each turn.

    >>> from aem.model import Turn, TurnKind, ToolCall
    >>> a = Turn(turn_id="t1", index=1, kind=TurnKind.TOOL_CALL, name="f", span_ids=["s1"],
    ...          trace_id="x", model_span_id="m1", tool_call=ToolCall(call_id="c1", name="f"))
    >>> b = Turn(turn_id="t2", index=2, kind=TurnKind.ANSWER, name="agent", span_ids=["m2"],
    ...          trace_id="x", model_span_id="m2", consumes_call_ids=["c1"], history_from="m1")
    >>> sorted(build_turn_graph([a, b]).edges(data="reason"))
    [('t1', 't2', 'tool_result')]
    """
    ordered = sorted(turns, key=lambda t: t.index)
    graph = nx.DiGraph()
    for turn in ordered:
        graph.add_node(turn.turn_id, turn=turn)
    by_model: dict[str, list[Turn]] = defaultdict(list)
    by_span: dict[str, Turn] = {}
    for turn in ordered:
        if turn.model_span_id:
            by_model[turn.model_span_id].append(turn)
        for span_id in turn.span_ids[:1]:
            by_span.setdefault(span_id, turn)

    def link(src: Turn, dst: Turn, reason: str) -> None:
        if src.index < dst.index and not graph.has_edge(src.turn_id, dst.turn_id):
            graph.add_edge(src.turn_id, dst.turn_id, reason=reason)

    tool_turns = [t for t in ordered if t.kind is TurnKind.TOOL_CALL and t.tool_call]
    for turn in ordered:
        siblings = by_model.get(turn.model_span_id or "", [])
        if turn.kind is TurnKind.TOOL_CALL:
            for sibling in siblings:
                if sibling.kind is TurnKind.REASONING:
                    link(sibling, turn, "decision")
        for call_id in turn.consumes_call_ids:
            producer = None
            for candidate in tool_turns:
                if candidate.index >= turn.index:
                    break
                if candidate.tool_call and candidate.tool_call.call_id == call_id:
                    producer = candidate
            if producer is not None:
                link(producer, turn, "tool_result")
        if turn.history_from:
            for previous in by_model.get(turn.history_from, []):
                link(previous, turn, "history")
        if turn.delegated_by_span:
            delegator = by_span.get(turn.delegated_by_span)
            if delegator is None:
                earlier = [t for t in ordered if t.index < turn.index and t.context != turn.context]
                delegator = earlier[-1] if earlier else None
            if delegator is not None:
                link(delegator, turn, "delegation")
    _link_retrievals(ordered, by_model, link)
    _link_argument_reuse(tool_turns, link)
    _link_subagent_results(ordered, by_model, link)
    assert nx.is_directed_acyclic_graph(graph)
    return graph


def _link_argument_reuse(tool_turns: list[Turn], link: Any) -> None:
    for position, turn in enumerate(tool_turns):
        assert turn.tool_call is not None
        values = {v for v in map(_distinctive, _scalars(turn.tool_call.arguments)) if v}
        if not values:
            continue
        for earlier in reversed(tool_turns[:position]):
            result = earlier.tool_call.result_raw if earlier.tool_call else None
            if result and any(value in result for value in values):
                link(earlier, turn, "argument_reuse")


def _link_retrievals(ordered: list[Turn], by_model: dict[str, list[Turn]], link: Any) -> None:
    for turn in ordered:
        if turn.kind is not TurnKind.RETRIEVAL:
            continue
        reader = next(
            (
                t
                for t in ordered
                if t.index > turn.index and t.model_span_id and t.context == turn.context
            ),
            None,
        )
        if reader is not None and reader.model_span_id:
            for target in by_model[reader.model_span_id]:
                link(turn, target, "retrieval")


def _link_subagent_results(ordered: list[Turn], by_model: dict[str, list[Turn]], link: Any) -> None:
    for turn in ordered:
        if turn.returns_to_context is None:
            continue
        consumer = next(
            (
                t
                for t in ordered
                if t.context == turn.returns_to_context
                and t.model_span_id
                and t.start_unix_nano >= turn.end_unix_nano
                and t.index > turn.index
            ),
            None,
        )
        if consumer is not None and consumer.model_span_id:
            for target in by_model[consumer.model_span_id]:
                link(turn, target, "subagent_result")


def attach_graph(session: Session) -> nx.DiGraph:
    session.graph = build_turn_graph(session.turns)
    return session.graph
