"""prior_action_failed: tell root causes from turns that only inherited a failure.

A failed turn is a root cause when none of its ancestors in the turn graph failed;
otherwise it is ``prior_action_failed`` and points at the root causes among its
ancestors. A turn that passes stays ``ok`` whatever came before. Pure functions over
the graph, computed with ``descendants`` from each failure (cheap; per-turn
``ancestors`` calls are far dearer — see performance notes).

Why it takes any graph that shows a networkx one (:class:`aem.graph.TurnGraph` does,
as ``.nx``), or a networkx graph itself: labels are about ids and edges alone, and
this module stays independent of how the turn graph is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import networkx as nx

from aem.model import Label


class ShowsNetworkx(Protocol):
    """A graph that lends networkx a read-only view of itself (``TurnGraph.nx``)."""

    @property
    def nx(self) -> nx.DiGraph: ...


def propagate_failures(
    graph: ShowsNetworkx | nx.DiGraph, failed: Iterable[str], suspected: Iterable[str] = ()
) -> dict[str, tuple[Label, list[str]]]:
    """Label every node: ``(label, inherited_from)``.

    ``suspected`` are turns left ``unverified`` (a value nothing proves or disproves):
    the earliest of each branch with no failed ancestor, and not failed itself, is a
    ``suspect`` — where to look when nothing is proven; it propagates nothing.

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
    suspects = _earliest_suspects(dag, set(suspected) - failed_set - tainted)
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


def _earliest_suspects(graph: nx.DiGraph, candidates: set[str]) -> set[str]:
    """The candidates no other candidate precedes in the graph: the first doubt of each
    branch (a later turn repeating it adds no new place to look).

    >>> g = nx.DiGraph([("t1", "t2"), ("t2", "t3"), ("t1", "t4")])
    >>> sorted(_earliest_suspects(g, {"t2", "t3", "t4"}))
    ['t2', 't4']
    """
    if not candidates:
        return set()
    below: set[str] = set()
    for node in candidates:
        if node not in below and node in graph:
            below |= nx.descendants(graph, node)
    return {node for node in candidates if node not in below}
