"""Turn graph edges and propagation, on the public functions."""

from __future__ import annotations

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st

from aem.foundation.model import Label, ToolCall, Turn, TurnKind
from aem.graph import build_turn_graph
from aem.propagation import propagate_failures


def _turn(i: int, kind: TurnKind, model: str, **kw: object) -> Turn:
    return Turn(
        turn_id=f"t{i}",
        index=i,
        kind=kind,
        name=f"n{i}",
        span_ids=[f"s{i}"],
        trace_id="x",
        model_span_id=model,
        **kw,  # type: ignore[arg-type]
    )


def test_parallel_calls_are_siblings_and_results_join_the_next_model_call() -> None:
    reasoning = _turn(1, TurnKind.REASONING, "m1")
    calls = [
        _turn(i, TurnKind.TOOL_CALL, "m1", tool_call=ToolCall(call_id=f"c{i}", name="f"))
        for i in (2, 3, 4)
    ]
    answer = _turn(
        5, TurnKind.ANSWER, "m2", consumes_call_ids=["c2", "c3", "c4"], history_from="m1"
    )
    graph = build_turn_graph([reasoning, *calls, answer])
    assert not any(graph.nx.has_edge(a.turn_id, b.turn_id) for a in calls for b in calls)
    assert all(graph.nx.has_edge("t1", c.turn_id) for c in calls)
    assert set(graph.nx.predecessors("t5")) == {"t1", "t2", "t3", "t4"}
    labels = propagate_failures(graph, {"t3", "t5"})
    assert labels["t3"] == (Label.ROOT_CAUSE, [])
    assert labels["t2"] == labels["t4"] == (Label.OK, [])
    assert labels["t5"] == (Label.PRIOR_ACTION_FAILED, ["t3"])


def test_reused_call_id_links_to_the_latest_earlier_call() -> None:
    first = _turn(1, TurnKind.TOOL_CALL, "m1", tool_call=ToolCall(call_id="dup", name="f"))
    mid = _turn(2, TurnKind.ANSWER, "m2", consumes_call_ids=["dup"])
    second = _turn(3, TurnKind.TOOL_CALL, "m3", tool_call=ToolCall(call_id="dup", name="g"))
    last = _turn(4, TurnKind.ANSWER, "m4", consumes_call_ids=["dup"])
    graph = build_turn_graph([first, mid, second, last])
    assert graph.nx.has_edge("t1", "t2") and graph.nx.has_edge("t3", "t4")
    assert not graph.nx.has_edge("t1", "t4")


def test_argument_reuse_edge() -> None:
    lookup = _turn(
        1,
        TurnKind.TOOL_CALL,
        "m1",
        tool_call=ToolCall(name="find", result_raw='{"order": "ORD-7781"}'),
    )
    cancel = _turn(
        2, TurnKind.TOOL_CALL, "m9", tool_call=ToolCall(name="cancel", arguments={"id": "ORD-7781"})
    )
    graph = build_turn_graph([lookup, cancel])
    assert [tuple(link) for link in graph.edges] == [("t1", "t2", "argument_reuse")]


def test_independent_branches_give_independent_root_causes() -> None:
    graph = nx.DiGraph([("a1", "a2"), ("b1", "b2"), ("a2", "end"), ("b2", "end")])
    labels = propagate_failures(graph, {"a1", "b2", "end"})
    assert labels["a1"][0] is Label.ROOT_CAUSE and labels["b2"][0] is Label.ROOT_CAUSE
    assert labels["end"] == (Label.PRIOR_ACTION_FAILED, ["a1", "b2"])


@given(st.data())
def test_propagation_invariants(data: st.DataObject) -> None:
    n = data.draw(st.integers(min_value=1, max_value=12))
    edges = data.draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30)
    )
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((a, b) for a, b in edges if a < b)
    failed = data.draw(st.sets(st.integers(0, n - 1)))
    labels = propagate_failures(graph, failed)
    for node, (label, inherited) in labels.items():
        failed_ancestors = nx.ancestors(graph, node) & failed
        if node not in failed:
            assert label is Label.OK
        elif failed_ancestors:
            assert label is Label.PRIOR_ACTION_FAILED
            assert inherited and all(labels[r][0] is Label.ROOT_CAUSE for r in inherited)
            assert set(inherited) <= failed_ancestors
        else:
            assert label is Label.ROOT_CAUSE and inherited == []
