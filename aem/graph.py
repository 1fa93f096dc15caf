"""The turn graph: a :class:`TurnGraph` of a session's turns, where an edge A → B means B
consumed A's output.

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

import bisect
import heapq
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from typing import Any, NamedTuple

import networkx as nx

from aem.foundation.gcpause import cyclic_gc_paused
from aem.foundation.model import Session, Turn, TurnKind
from aem.foundation.textindex import PatternFinder

_MIN_REUSED_TEXT = 5
_MIN_REUSED_NUMBER = 100


class TurnLink(NamedTuple):
    """One edge of a :class:`TurnGraph`: ``target`` consumed ``source``'s output, for
    ``reason`` (one of the reasons in this module's docstring, or ``stated`` for an edge a
    test or a plug-in stated by hand)."""

    source: str
    target: str
    reason: str


class TurnGraph:
    """A session's turns and the edges between them, each node holding its turn.

    Why a type and not a bare networkx graph: code that asks about a turn's ancestors wants
    the turns, not ids; a graph whose nodes carried their turn only by convention (node
    data) broke every reader when it was built by hand without it. Here a node exists only
    through :meth:`add_turn`, an edge only between turns already added. Algorithms that
    want networkx read :attr:`nx`, a read-only view of the same graph.

    >>> from aem.foundation.model import Turn, TurnKind, ToolCall
    >>> call = Turn(turn_id="t1", index=1, kind=TurnKind.TOOL_CALL, name="pay", span_ids=["s1"],
    ...             trace_id="x", tool_call=ToolCall(name="pay", error="card declined"))
    >>> answer = Turn(turn_id="t2", index=2, kind=TurnKind.ANSWER, name="agent",
    ...               span_ids=["s2"], trace_id="x", text="Paid.")
    >>> graph = TurnGraph([call, answer])
    >>> graph.link("t1", "t2", "tool_result")
    True
    >>> [t.turn_id for t in graph.failed_ancestors("t2")], graph.edges
    (['t1'], [TurnLink(source='t1', target='t2', reason='tool_result')])
    """

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        self._graph = nx.DiGraph()
        self._view = self._graph.copy(as_view=True)
        self._turns: dict[str, Turn] = {}
        self._ordered: list[Turn] | None = None
        self._ancestry: Ancestry | None = None
        for turn in turns:
            self.add_turn(turn)

    @property
    def nx(self) -> nx.DiGraph:
        """The graph as networkx sees it, read-only (nodes are turn ids, each edge has its
        ``reason``): for algorithms (``nx.descendants``, ``topological_sort``…)."""
        return self._view

    def add_turn(self, turn: Turn) -> None:
        """Add ``turn`` as a node; a second turn with the same id is an error (its edges
        would silently become the other turn's)."""
        if turn.turn_id in self._turns:
            raise ValueError(f"turn {turn.turn_id!r} is already in the graph")
        self._turns[turn.turn_id] = turn
        self._graph.add_node(turn.turn_id)
        self._changed()

    def link(self, source: str, target: str, reason: str) -> bool:
        """Add the edge ``source`` → ``target`` (``target`` consumed ``source``'s output);
        both must be turns of the graph (KeyError otherwise). When the two are already
        linked the first reason stays (docs/semantics.md); returns whether it was new."""
        for turn_id in (source, target):
            if turn_id not in self._turns:
                raise KeyError(f"turn {turn_id!r} is not in the graph: add_turn it first")
        if source == target:
            raise ValueError(f"turn {source!r} cannot consume its own output")
        if self._graph.has_edge(source, target):
            return False
        self._graph.add_edge(source, target, reason=reason)
        self._changed()
        return True

    def _changed(self) -> None:
        self._ordered = None
        self._ancestry = None

    def __contains__(self, turn_id: object) -> bool:
        return turn_id in self._turns

    def __len__(self) -> int:
        return len(self._turns)

    def turn(self, turn_id: str) -> Turn:
        """The turn of that id (KeyError when the graph has none)."""
        return self._turns[turn_id]

    def turns(self) -> list[Turn]:
        """Every turn in session order (by index; turns sharing one in the order added)."""
        if self._ordered is None:
            self._ordered = sorted(self._turns.values(), key=lambda t: t.index)
        return list(self._ordered)

    @property
    def edges(self) -> list[TurnLink]:
        """Every edge with its reason, by source then target in session order."""
        order = {turn.turn_id: position for position, turn in enumerate(self.turns())}
        links = [TurnLink(s, t, str(r)) for s, t, r in self._graph.edges(data="reason")]
        return sorted(links, key=lambda link: (order[link.source], order[link.target]))

    def ancestors(self, turn_id: str) -> list[Turn]:
        """Every turn whose output reached ``turn_id``, directly or not, in session order.

        It lists them all: to ask whether one turn is an ancestor of another, or which of a
        few candidates are, use :attr:`ancestry` (listing every ancestor of every turn of
        a long session is quadratic)."""
        found = nx.ancestors(self._graph, self._known(turn_id))
        return [turn for turn in self.turns() if turn.turn_id in found]

    def failed_ancestors(self, turn_id: str) -> list[Turn]:
        """The ancestors of ``turn_id`` whose tool call failed (``tool_call.error`` set,
        what ``tool.execution`` fails on and a claim of success contradicts), in session
        order; answered without listing every ancestor."""
        ancestry = self.ancestry
        return ancestry.among(ancestry.failed_calls, self._known(turn_id))

    @property
    def ancestry(self) -> Ancestry:
        """ "Is A an ancestor of B?" for this graph (:class:`Ancestry`), kept until the
        graph changes."""
        if self._ancestry is None:
            self._ancestry = Ancestry(self)
        return self._ancestry

    def _known(self, turn_id: str) -> str:
        if turn_id not in self._turns:
            raise KeyError(f"turn {turn_id!r} is not in the graph")
        return turn_id


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


@cyclic_gc_paused()
def build_turn_graph(turns: Iterable[Turn]) -> TurnGraph:
    """Build the turn graph from the link keys the collectors put on each turn.

    >>> from aem.foundation.model import Turn, TurnKind, ToolCall
    >>> a = Turn(turn_id="t1", index=1, kind=TurnKind.TOOL_CALL, name="f", span_ids=["s1"],
    ...          trace_id="x", model_span_id="m1", tool_call=ToolCall(call_id="c1", name="f"))
    >>> b = Turn(turn_id="t2", index=2, kind=TurnKind.ANSWER, name="agent", span_ids=["m2"],
    ...          trace_id="x", model_span_id="m2", consumes_call_ids=["c1"], history_from="m1")
    >>> build_turn_graph([a, b]).edges
    [TurnLink(source='t1', target='t2', reason='tool_result')]
    """
    ordered = sorted(turns, key=lambda t: t.index)
    graph = TurnGraph(ordered)
    by_model: dict[str, list[Turn]] = defaultdict(list)
    by_span: dict[str, Turn] = {}
    for turn in ordered:
        if turn.model_span_id:
            by_model[turn.model_span_id].append(turn)
        for span_id in turn.span_ids[:1]:
            by_span.setdefault(span_id, turn)

    def link(src: Turn, dst: Turn, reason: str) -> None:
        if src.index < dst.index:
            graph.link(src.turn_id, dst.turn_id, reason)

    tool_turns = [t for t in ordered if t.kind is TurnKind.TOOL_CALL and t.tool_call]
    producers = _producers(tool_turns)
    other_context = _last_other_context(ordered)
    for position, turn in enumerate(ordered):
        siblings = by_model.get(turn.model_span_id or "", [])
        if turn.kind is TurnKind.TOOL_CALL:
            for sibling in siblings:
                if sibling.kind is TurnKind.REASONING:
                    link(sibling, turn, "decision")
        for call_id in turn.consumes_call_ids:
            producer = _latest_before(producers.get(call_id), turn.index)
            if producer is not None:
                link(producer, turn, "tool_result")
        if turn.history_from:
            for previous in by_model.get(turn.history_from, []):
                link(previous, turn, "history")
        if turn.delegated_by_span:
            delegator = by_span.get(turn.delegated_by_span)
            if delegator is None:
                delegator = other_context(position)
            if delegator is not None:
                link(delegator, turn, "delegation")
    _link_retrievals(ordered, by_model, link)
    _link_argument_reuse(tool_turns, link)
    _link_subagent_results(ordered, by_model, link)
    assert nx.is_directed_acyclic_graph(graph.nx)
    return graph


def _producers(tool_turns: list[Turn]) -> dict[str, tuple[list[int], list[Turn]]]:
    """Tool-call turns by call id, each as ``(indexes, turns)`` in index order."""
    producers: dict[str, tuple[list[int], list[Turn]]] = {}
    for turn in tool_turns:
        if turn.tool_call and turn.tool_call.call_id:
            indexes, turns = producers.setdefault(turn.tool_call.call_id, ([], []))
            indexes.append(turn.index)
            turns.append(turn)
    return producers


def _latest_before(producers: tuple[list[int], list[Turn]] | None, index: int) -> Turn | None:
    """The latest producer with a lower index (call ids are reused in real traces)."""
    if producers is None:
        return None
    indexes, turns = producers
    before = bisect.bisect_left(indexes, index)
    return turns[before - 1] if before else None


def _last_other_context(ordered: list[Turn]) -> Callable[[int], Turn | None]:
    """For a position: the latest earlier turn of another agent context (the delegator
    when the delegating span made no turn), from each context block's start."""
    block_start: list[int] = []
    for position, turn in enumerate(ordered):
        same = position and ordered[position - 1].context == turn.context
        block_start.append(block_start[-1] if same else position)

    def before(position: int) -> Turn | None:
        index = ordered[position].index
        context = ordered[position].context
        candidate = position - 1
        while candidate >= 0:
            turn = ordered[candidate]
            if turn.index < index and turn.context != context:
                return turn
            # Skip the whole block of this context (its turns share the context).
            candidate = block_start[candidate] - 1 if turn.context == context else candidate - 1
        return None

    return before


def _link_argument_reuse(tool_turns: list[Turn], link: Any) -> None:
    """A tool result to every later tool call whose arguments hold one of its
    distinctive values; results are searched once, through an index of every value."""
    values = [
        {
            v
            for v in map(_distinctive, _scalars(t.tool_call.arguments if t.tool_call else None))
            if v
        }
        for t in tool_turns
    ]
    finder = PatternFinder(v for wanted in values for v in wanted)
    holders: dict[str, list[int]] = {}
    for position, turn in enumerate(tool_turns):
        if values[position]:
            earlier = {j for value in values[position] for j in holders.get(value, ())}
            for j in sorted(earlier, reverse=True):
                link(tool_turns[j], turn, "argument_reuse")
        result = turn.tool_call.result_raw if turn.tool_call else None
        if result:
            for value in finder.find(result):
                holders.setdefault(value, []).append(position)


def _link_retrievals(ordered: list[Turn], by_model: dict[str, list[Turn]], link: Any) -> None:
    """A retrieval to the turns of the next model call of its context (one backward pass)."""
    readers = _next_model_turns(ordered)
    for position, turn in enumerate(ordered):
        if turn.kind is not TurnKind.RETRIEVAL:
            continue
        reader = readers[position]
        if reader is not None and reader.model_span_id:
            for target in by_model[reader.model_span_id]:
                link(turn, target, "retrieval")


def _next_model_turns(ordered: list[Turn]) -> list[Turn | None]:
    """For each position, the first later turn (higher index) made by a model call in
    the same agent context."""
    found: list[Turn | None] = [None] * len(ordered)
    first_after: dict[str, Turn] = {}
    position = len(ordered) - 1
    while position >= 0:
        # Turns sharing an index are not "later" than each other: answer them together.
        group = position
        while group > 0 and ordered[group - 1].index == ordered[position].index:
            group -= 1
        for member in range(group, position + 1):
            found[member] = first_after.get(ordered[member].context)
        for member in range(position, group - 1, -1):
            if ordered[member].model_span_id:
                first_after[ordered[member].context] = ordered[member]
        position = group - 1
    return found


def _link_subagent_results(ordered: list[Turn], by_model: dict[str, list[Turn]], link: Any) -> None:
    """A sub-agent's last answer to the turns of the next model call of the context it
    returns to that started after it ended."""
    by_context: dict[str, tuple[list[int], list[Turn]]] = {}
    for turn in ordered:
        if turn.model_span_id:
            indexes, turns = by_context.setdefault(turn.context, ([], []))
            indexes.append(turn.index)
            turns.append(turn)
    for turn in ordered:
        if turn.returns_to_context is None:
            continue
        indexes, turns = by_context.get(turn.returns_to_context, ([], []))
        consumer = next(
            (
                t
                for t in turns[bisect.bisect_right(indexes, turn.index) :]
                if t.start_unix_nano >= turn.end_unix_nano
            ),
            None,
        )
        if consumer is not None and consumer.model_span_id:
            for target in by_model[consumer.model_span_id]:
                link(turn, target, "subagent_result")


def session_graph(session: Session) -> TurnGraph:
    """The session's turn graph: its ``stated_edges`` where stated (a session built by
    hand), else built from the turns' link keys (:func:`build_turn_graph`)."""
    if session.stated_edges is None:
        return build_turn_graph(session.turns)
    graph = TurnGraph(session.turns)
    for edge in session.stated_edges:
        graph.link(edge.source, edge.target, edge.kind)
    return graph


class Ancestry:
    """ "Is turn A an ancestor of turn B?", answered without listing B's ancestors.

    Why not ``nx.ancestors`` per turn: in a long session nearly every earlier turn is an
    ancestor of the next (history edges chain the model calls), so listing them for every
    turn is quadratic. Every edge goes to a later position in a topological order, so a
    walk back from B that expands the latest-positioned turn first has found every
    ancestor at or after a position once it has expanded every turn there: asking about
    A walks down to A's position and no further. Values a turn states come from recent
    results, so the walk stays short; it is kept per turn (the last few asked) and
    resumed.

    A :class:`TurnGraph` makes one (:attr:`TurnGraph.ancestry`) and drops it when it
    changes; the ancestry holds the graph's turns weakly, so the two make no reference
    cycle (evaluation runs with the cyclic collector paused).
    """

    _KEPT = 4

    def __init__(self, graph: TurnGraph) -> None:
        self._graph = weakref.ref(graph)
        # The ids' DAG alone (no turns in it) is what the walks read, many times a turn.
        self.dag = graph.nx
        self._walks: dict[str, _Walk] = {}

    @property
    def graph(self) -> TurnGraph:
        graph = self._graph()
        if graph is None:
            raise ReferenceError("the turn graph of this ancestry was freed")
        return graph

    @cached_property
    def failed_calls(self) -> list[Turn]:
        """Turns whose tool call failed, in session order (few: asked about per turn)."""
        return [t for t in self.graph.turns() if t.tool_call is not None and t.tool_call.error]

    @cached_property
    def _position(self) -> dict[str, int]:
        # Positions in a topological order: every edge goes to a higher one, whatever
        # the turns' indexes say (a graph built by hand may not follow them).
        return {node: i for i, node in enumerate(nx.topological_sort(self.dag))}

    def index(self, turn_id: str) -> int:
        return self._position[turn_id]

    def is_ancestor(self, candidate: str, turn_id: str) -> bool:
        """Whether ``candidate`` is an ancestor of ``turn_id`` (both turns of the graph)."""
        walk = self._walks.pop(turn_id, None)
        if walk is None:
            walk = _Walk(self, turn_id)
            while len(self._walks) >= self._KEPT:
                del self._walks[next(iter(self._walks))]
        self._walks[turn_id] = walk  # most recently asked last
        return walk.reaches(self, candidate, self.index(candidate))

    def among(self, candidates: Iterable[Turn], turn_id: str) -> list[Turn]:
        """Those of ``candidates`` that are ancestors of ``turn_id``, in the given order."""
        graph = self.graph
        if turn_id not in graph:
            return []
        return [
            c for c in candidates if c.turn_id in graph and self.is_ancestor(c.turn_id, turn_id)
        ]


class _Walk:
    """A walk back from one turn, highest index first, resumed where it stopped (given
    its ancestry each time, not holding it: the two would make a cycle)."""

    def __init__(self, ancestry: Ancestry, turn_id: str) -> None:
        self.queued: set[str] = set()
        self.heap: list[tuple[int, str]] = []
        self._push_predecessors(ancestry, turn_id)

    def _push_predecessors(self, ancestry: Ancestry, turn_id: str) -> None:
        for pred in ancestry.dag.predecessors(turn_id):
            if pred not in self.queued:
                self.queued.add(pred)
                heapq.heappush(self.heap, (-ancestry.index(pred), pred))

    def reaches(self, ancestry: Ancestry, candidate: str, level: int) -> bool:
        # Expand every queued turn at or above ``level``: then each ancestor at or above
        # it is queued (its path back from the start runs through higher indexes only).
        while self.heap and -self.heap[0][0] >= level:
            _, turn_id = heapq.heappop(self.heap)
            self._push_predecessors(ancestry, turn_id)
        return candidate in self.queued
