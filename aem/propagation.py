"""prior_action_failed: tell root causes from turns that only inherited a failure.

A failed turn is a root cause when none of its ancestors in the turn graph failed;
otherwise it is ``prior_action_failed`` and points at the root causes among its
ancestors. Pure functions over the graph, computed with ``descendants`` from each
failure (cheap; per-turn ``ancestors`` calls are far dearer — see performance notes).

A turn that passes its own checks still inherits when it consumes what a failed turn
produced (:func:`inherit_along_values`): it restates a value the failed turn was wrong
about (the same typed value — ``EUR 20.00`` and ``20,00 €`` — in any format or language,
as :func:`aem.compare.extract.extract_values` reads it), passes it as an argument, or
relays a failed sub-agent's answer. "Supported by the sub-agent's words" is no support
when those words were wrong; each such edge carries the value and its reason.

Why it takes any graph that shows a networkx one (:class:`aem.graph.TurnGraph` does,
as ``.nx``), or a networkx graph itself: labels are about ids and edges alone, and
this module stays independent of how the turn graph is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import networkx as nx

from aem.compare.extract import StatedValue, extract_values
from aem.foundation.model import Label, Turn, TurnKind


class ShowsNetworkx(Protocol):
    """A graph that lends networkx a read-only view of itself (``TurnGraph.nx``)."""

    @property
    def nx(self) -> nx.DiGraph: ...


def propagate_failures(
    graph: ShowsNetworkx | nx.DiGraph, failed: Iterable[str], suspected: Iterable[str] = ()
) -> dict[str, tuple[Label, list[str]]]:
    """Label every node: ``(label, inherited_from)``.

    ``suspected`` are turns left ``unverified`` (a value nothing proves or disproves)
    that reached the user (the caller decides which: an answer, an argument that changed
    state): each with no failed ancestor, and not failed itself, is a ``suspect`` —
    where to look when nothing is proven; it propagates nothing.

    >>> g = nx.DiGraph([("t1", "t2"), ("t2", "t3"), ("t4", "t3")])
    >>> labels = propagate_failures(g, {"t1", "t3"})
    >>> labels["t1"], labels["t2"], labels["t3"], labels["t4"]
    ((<Label.ROOT_CAUSE: 'root_cause'>, []), (<Label.OK: 'ok'>, []), \
(<Label.PRIOR_ACTION_FAILED: 'prior_action_failed'>, ['t1']), (<Label.OK: 'ok'>, []))
    """
    dag = graph if isinstance(graph, nx.DiGraph) else graph.nx
    failed_set = set(failed)
    downstream: dict[str, set[str]] = {f: nx.descendants(dag, f) for f in failed_set}
    tainted = set().union(*downstream.values()) if downstream else set()
    roots = failed_set - tainted
    inherited: dict[str, list[str]] = {}
    order = {node: i for i, node in enumerate(nx.topological_sort(dag))}
    for root in sorted(roots, key=order.__getitem__):
        for node in downstream[root]:
            if node in failed_set:
                inherited.setdefault(node, []).append(root)
    suspects = set(suspected) - failed_set - tainted
    labels: dict[str, tuple[Label, list[str]]] = {}
    for node in dag.nodes:
        if node in suspects:
            labels[node] = (Label.SUSPECT, [])
        elif node in roots:
            labels[node] = (Label.ROOT_CAUSE, [])
        elif node in failed_set:
            labels[node] = (Label.PRIOR_ACTION_FAILED, inherited.get(node, []))
        else:
            labels[node] = (Label.OK, [])
    return labels


Labels = dict[str, tuple[Label, list[str]]]


@dataclass(frozen=True, slots=True)
class ValueEdge:
    """``target`` inherits ``source``'s failure through ``value``: ``kind`` is
    ``restates`` (its text states the value), ``argument`` (a call passes it) or
    ``relays`` (it is the parent's turn that received a failed sub-agent's answer)."""

    source: str
    target: str
    kind: str
    value: str

    @property
    def reason(self) -> str:
        """``restates 'EUR 20.00' from t6``."""
        if self.kind == "relays":
            return f"relays the answer of {self.source}" + (
                f" ({self.value!r})" if self.value else ""
            )
        verb = "passes" if self.kind == "argument" else "restates"
        return f"{verb} {self.value!r} from {self.source}"


def _key(value: StatedValue) -> tuple[object, ...]:
    """A typed value as two wordings of it compare: kind, value, unit."""
    return (value.kind, value.value, value.unit)


def _said(turn: Turn) -> str:
    """What a turn hands on: its text, or a call's arguments as written."""
    if turn.kind is TurnKind.TOOL_CALL and turn.tool_call is not None:
        call = turn.tool_call
        return call.arguments_raw or str(call.arguments or "")
    return turn.text or ""


def inherit_along_values(
    graph: ShowsNetworkx | nx.DiGraph,
    labels: Labels,
    turns: Sequence[Turn],
    disputed: Mapping[str, Sequence[str]],
) -> list[ValueEdge]:
    """Label ``prior_action_failed`` every ``ok`` turn that consumes a failed turn's
    disputed value; return the edges it followed. ``labels`` is updated in place.

    ``disputed``: per failed turn, the texts of the values it was wrong about (its
    failure's evidence). A later turn the graph reaches from it inherits when its text
    (a call: its arguments) states one of those typed values, or when it received the
    failed turn's answer over a ``subagent_result`` edge. An inheriting turn hands the
    value on (a parent that relays, then an answer that repeats it: two edges).
    """
    dag = graph if isinstance(graph, nx.DiGraph) else graph.nx
    order = [t for t in turns if t.turn_id in dag]
    carried: dict[str, dict[tuple[object, ...], str]] = {}
    for turn in order:
        label, _ = labels.get(turn.turn_id, (Label.OK, []))
        if label in (Label.ROOT_CAUSE, Label.PRIOR_ACTION_FAILED):
            stated = [v for text in disputed.get(turn.turn_id, ()) for v in extract_values(text)]
            carried[turn.turn_id] = {_key(v): v.raw for v in stated}
    relays = {(s, t) for s, t, r in dag.edges(data="reason") if r == "subagent_result"}
    edges: list[ValueEdge] = []
    below: dict[str, set[str]] = {}
    for turn in order:
        tid = turn.turn_id
        if labels.get(tid, (Label.OK, []))[0] is not Label.OK:
            continue
        sources = [s for s in carried if s != tid and tid in _below(dag, s, below)]
        found = _consumed(turn, sources, carried, relays)
        if not found:
            continue
        roots: list[str] = []
        for edge in found:
            label, inherited = labels[edge.source]
            for root in inherited if label is Label.PRIOR_ACTION_FAILED else [edge.source]:
                roots += [root] if root not in roots else []
        labels[tid] = (Label.PRIOR_ACTION_FAILED, roots)
        edges += found
        handed = {k: r for e in found for k, r in carried[e.source].items() if r == e.value}
        relayed = [carried[e.source] for e in found if e.kind == "relays"]
        carried[tid] = {**handed, **{k: r for c in relayed for k, r in c.items()}}
    return edges


def doubts_reaching(
    graph: ShowsNetworkx | nx.DiGraph,
    turns: Sequence[Turn],
    doubted: Mapping[str, Sequence[str]],
    facing: Iterable[str],
) -> set[str]:
    """The doubts (turns left unverified that reached no user: ``doubted``, each with the
    values it left unverified) whose value a later turn that reached the user restates —
    the same typed value, in any format — or passes as an argument: a plan's unsupported
    "March 2025" that the answer repeats is where the user's answer came from.

    >>> from aem.testing import make_turn
    >>> g = nx.DiGraph([("t1", "t2")])
    >>> turns = [make_turn("reasoning", text="About 30 EUR.", turn_id="t1"),
    ...          make_turn("answer", text="It costs €30.00.", turn_id="t2")]
    >>> doubts_reaching(g, turns, {"t1": ["30 EUR"]}, {"t2"})
    {'t1'}
    """
    dag = graph if isinstance(graph, nx.DiGraph) else graph.nx
    targets = [t for t in turns if t.turn_id in set(facing) and t.turn_id in dag]
    reached = set()
    for source, texts in doubted.items():
        keys = {_key(v) for text in texts for v in extract_values(text)}
        if not keys or source not in dag:
            continue
        below = nx.descendants(dag, source)
        for turn in targets:
            if turn.turn_id in below and keys & {_key(v) for v in extract_values(_said(turn))}:
                reached.add(source)
                break
    return reached


def _below(dag: nx.DiGraph, source: str, known: dict[str, set[str]]) -> set[str]:
    """The turns ``source`` reaches, once per source."""
    if source not in known:
        known[source] = nx.descendants(dag, source)
    return known[source]


def _consumed(
    turn: Turn,
    sources: Sequence[str],
    carried: Mapping[str, Mapping[tuple[object, ...], str]],
    relays: set[tuple[str, str]],
) -> list[ValueEdge]:
    """The edges by which ``turn`` consumes a disputed value of one of ``sources``."""
    said = {_key(v) for v in extract_values(_said(turn))}
    kind = "argument" if turn.kind is TurnKind.TOOL_CALL else "restates"
    found = []
    for source in sources:
        values = carried[source]
        if (source, turn.turn_id) in relays:
            found.append(ValueEdge(source, turn.turn_id, "relays", next(iter(values.values()), "")))
            continue
        hit = next((raw for key, raw in values.items() if key in said), None)
        if hit is not None:
            found.append(ValueEdge(source, turn.turn_id, kind, hit))
    return found
