"""The typed turn graph: a node exists only with its turn, an edge only between turns of
the graph; ancestors and failed ancestors answer as networkx does on the same edges; a
graph built by hand serves the ancestry, propagation and the evaluator like a built one."""

from __future__ import annotations

from collections.abc import Iterator

import networkx as nx
import pytest

from aem.evaluate import evaluate_session
from aem.foundation.model import Label, Session, ToolCall, Turn, TurnKind
from aem.graph import TurnGraph, TurnLink, build_turn_graph, session_graph
from aem.metrics.truthfulness import Truthfulness
from aem.propagation import propagate_failures
from aem.testing import make_session, make_tool_call, make_turn
from bench.session_size.workload import generate
from collectors.assembler import SessionAssembler
from collectors.readers import read_batches
from collectors.sessions import build_session
from tests.conftest import SAMPLES


def _turn(turn_id: str, index: int, error: str | None = None) -> Turn:
    call = ToolCall(name=f"call_{turn_id}", error=error, executed=True)
    return Turn(
        turn_id=turn_id,
        index=index,
        kind=TurnKind.TOOL_CALL,
        name=call.name,
        span_ids=[f"span-{turn_id}"],
        trace_id="trace",
        tool_call=call,
    )


def _built_sessions() -> Iterator[tuple[Session, TurnGraph]]:
    """Every bundled sample session (failed calls, sub-agents, retrievals) and a long
    generated one, each with the graph the evaluator builds."""
    assembler = SessionAssembler(idle=10**9)
    for clock, span in enumerate(
        (
            s
            for path in sorted(SAMPLES.glob("*.otlp.jsonl"))
            for b in read_batches(str(path))
            for s in b.spans
        ),
        start=1,
    ):
        assembler.add(span, clock)
    for span in generate(400, seed=7, session_id="generated"):
        assembler.add(span, 0)
    for closed in assembler.drain():
        session = build_session(closed)
        yield session, build_turn_graph(session.turns)


def test_turns_are_added_once_and_listed_in_session_order() -> None:
    late, early = _turn("b", 2), _turn("a", 1)
    graph = TurnGraph([late, early])
    assert graph.turns() == [early, late]  # by index, whatever order they came in
    assert graph.turn("b") is late and "a" in graph and "z" not in graph and len(graph) == 2
    with pytest.raises(ValueError, match="already in the graph"):
        graph.add_turn(_turn("a", 5))
    with pytest.raises(KeyError):
        graph.turn("z")


def test_linking_an_unknown_turn_is_an_error_and_adds_nothing() -> None:
    graph = TurnGraph([_turn("a", 1)])
    with pytest.raises(KeyError, match="'ghost' is not in the graph"):
        graph.link("a", "ghost", "tool_result")
    with pytest.raises(KeyError, match="'ghost' is not in the graph"):
        graph.link("ghost", "a", "tool_result")
    with pytest.raises(ValueError):
        graph.link("a", "a", "history")
    assert graph.edges == [] and list(graph.nx.nodes) == ["a"]
    with pytest.raises(KeyError):
        graph.ancestors("ghost")


def test_the_first_reason_stays_and_edges_are_listed_by_session_order() -> None:
    graph = TurnGraph([_turn("c", 3), _turn("a", 1), _turn("b", 2)])
    assert graph.link("b", "c", "history") and graph.link("a", "c", "tool_result")
    assert not graph.link("a", "c", "argument_reuse")
    assert graph.link("a", "b", "decision")
    assert graph.edges == [
        TurnLink("a", "b", "decision"),
        TurnLink("a", "c", "tool_result"),
        TurnLink("b", "c", "history"),
    ]


def test_the_networkx_view_is_read_only_and_follows_the_graph() -> None:
    graph = TurnGraph([_turn("a", 1), _turn("b", 2)])
    view = graph.nx
    with pytest.raises(nx.NetworkXError):
        view.add_node("c")  # a node without its turn cannot be made through the view
    graph.link("a", "b", "tool_result")
    assert list(view.edges(data="reason")) == [("a", "b", "tool_result")]


def test_ancestors_and_failed_ancestors_answer_as_networkx_on_built_sessions() -> None:
    checked = failed_seen = 0
    for session, graph in _built_sessions():
        assert graph.turns() == sorted(session.turns, key=lambda t: t.index)
        for turn in session.turns:
            expected = nx.ancestors(graph.nx, turn.turn_id)
            ancestors = graph.ancestors(turn.turn_id)
            assert [t.turn_id for t in ancestors] == [
                t.turn_id for t in graph.turns() if t.turn_id in expected
            ]
            failed = [t for t in ancestors if t.tool_call is not None and t.tool_call.error]
            assert graph.failed_ancestors(turn.turn_id) == failed
            checked += 1
            failed_seen += len(failed)
    assert checked > 100 and failed_seen > 0  # the samples hold failed calls downstream


def test_a_graph_changed_after_a_question_answers_for_its_new_edges() -> None:
    graph = TurnGraph([_turn("a", 1, error="timeout"), _turn("b", 2)])
    assert graph.failed_ancestors("b") == []
    graph.link("a", "b", "tool_result")
    assert [t.turn_id for t in graph.failed_ancestors("b")] == ["a"]


def test_a_hand_built_graph_serves_failed_calls_and_propagation() -> None:
    """No node data to forget: the ancestry finds the failed calls, propagation labels a
    failure downstream of another as inherited."""
    refund, lookup, retry = _turn("t1", 1, error="503"), _turn("t2", 2), _turn("t3", 3, "503")
    graph = TurnGraph([refund, lookup, retry])
    graph.link("t1", "t2", "tool_result")
    graph.link("t2", "t3", "argument_reuse")
    assert graph.ancestry.failed_calls == [refund, retry]
    assert graph.failed_ancestors("t3") == [refund]
    labels = propagate_failures(graph, {"t1", "t3"})
    assert labels == {
        "t1": (Label.ROOT_CAUSE, []),
        "t2": (Label.OK, []),
        "t3": (Label.PRIOR_ACTION_FAILED, ["t1"]),
    }


def test_a_hand_built_graph_lets_truthfulness_find_a_claimed_success() -> None:
    """The claim of success after a failed call reads the failed ancestors of the answer:
    a graph stated by hand (make_session's edges) works for it as a built one does."""
    session = make_session(
        make_tool_call("cancel_order", {"order_id": "A-1"}, error="order is locked"),
        make_turn("answer", text="I have cancelled your order A-1."),
    )
    assert session_graph(session).edges == [TurnLink("t1", "t2", "stated")]
    report = evaluate_session(session)
    answer = next(v for v in report.turns if v.turn_id == "t2")
    assert answer.label is Label.PRIOR_ACTION_FAILED and answer.inherited_from == ["t1"]
    assert Truthfulness.name in answer.failed_metrics
