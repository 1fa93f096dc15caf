"""Sessions are built in time linear in their length, with the same turns and edges as
the pairwise scans they replace, and a session over the size limit is cut, not hung on.

The pairwise algorithms live on here only, as the reference: history by testing every
earlier model call, consumed call ids and fed-back results by testing every id, pairing
by testing every run, and the graph's producer, delegation, retrieval, argument-reuse
and sub-agent links by scanning every turn.
"""

from __future__ import annotations

import json
import random
import time
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

import collectors.assembler
import collectors.sessions.build as build_module
from aem.compare.extract import extract_values
from aem.compare.settings import CompareSettings
from aem.evidence.queries import seen_by, seen_fully, task_texts
from aem.foundation.model import ClosedSession, Session, SpanRecord, Turn, TurnKind
from aem.foundation.sessioncache import SessionCache
from aem.foundation.textindex import PatternFinder
from aem.graph import TurnGraph, _distinctive, _scalars, build_turn_graph
from bench.session_size.workload import generate, otlp_line
from collectors.assembler import SessionAssembler
from collectors.dialects.base import ModelCall
from collectors.sessions import build_session
from collectors.sessions.contexts import Context
from collectors.sessions.history import output_evidence
from collectors.sessions.pairing import pair_tool_runs_by_scan
from tests.conftest import SAMPLES, run_audit


class NaiveFinder:
    """The reference: every pattern tested with ``in``."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = list(dict.fromkeys(patterns))

    def find(self, text: str) -> set[str]:
        return {p for p in self.patterns if p in text}


class ScanFedBack:
    """The reference for fed-back results: every model call scanned for each id."""

    def __init__(self, model_calls: Iterable[ModelCall], call_ids: Iterable[str]) -> None:
        self.model_calls = list(model_calls)

    def get(self, call_id: str) -> str | None:
        for call in self.model_calls:
            if call_id in call.tool_results:
                return call.tool_results[call_id]
            if (
                call.read_tool_results is not None
                and call_id in call.input_text
                and call.input_text.lstrip().startswith("[")
            ):
                results = call.read_tool_results(call.input_text)
                if call_id in results:
                    return results[call_id]
        return None


def scan_history(
    model_calls: list[ModelCall], contexts: Mapping[str, Context]
) -> dict[str, ModelCall]:
    """The reference history: every earlier call tested, latest first."""
    ordered = sorted(model_calls, key=lambda m: (m.span.start_unix_nano, m.span.span_id))
    found: dict[str, ModelCall] = {}
    for position, call in enumerate(ordered):
        for candidate in reversed(ordered[:position]):
            if call.input_text:
                hit = any(e in call.input_text for e in output_evidence(candidate))
            else:
                key = contexts[call.span.span_id].key
                hit = contexts[candidate.span.span_id].key == key
            if hit:
                found[call.span.span_id] = candidate
                break
    return found


def reference_build(closed: ClosedSession, monkeypatch: pytest.MonkeyPatch) -> list[Turn]:
    """Turns built with the pairwise reference swapped in for every index."""
    with monkeypatch.context() as patch:
        patch.setattr(build_module, "history", scan_history)
        patch.setattr(build_module, "pair_tool_runs", pair_tool_runs_by_scan)
        patch.setattr(build_module, "FedBackResults", ScanFedBack)
        patch.setattr(build_module, "PatternFinder", NaiveFinder)
        return build_session(closed).turns


def reference_graph(turns: list[Turn]) -> nx.DiGraph:
    """The turn graph by scanning every turn for every link (edges in the same order)."""
    ordered = sorted(turns, key=lambda t: t.index)
    graph = nx.DiGraph()
    graph.add_nodes_from(t.turn_id for t in ordered)
    by_model: dict[str, list[Turn]] = {}
    by_span: dict[str, Turn] = {}
    for turn in ordered:
        if turn.model_span_id:
            by_model.setdefault(turn.model_span_id, []).append(turn)
        for span_id in turn.span_ids[:1]:
            by_span.setdefault(span_id, turn)

    def link(src: Turn, dst: Turn, reason: str) -> None:
        if src.index < dst.index and not graph.has_edge(src.turn_id, dst.turn_id):
            graph.add_edge(src.turn_id, dst.turn_id, reason=reason)

    tools = [t for t in ordered if t.kind is TurnKind.TOOL_CALL and t.tool_call]
    for turn in ordered:
        if turn.kind is TurnKind.TOOL_CALL:
            for sibling in by_model.get(turn.model_span_id or "", []):
                if sibling.kind is TurnKind.REASONING:
                    link(sibling, turn, "decision")
        for call_id in turn.consumes_call_ids:
            made = [t for t in tools if t.index < turn.index and t.tool_call.call_id == call_id]  # type: ignore[union-attr]
            if made:
                link(made[-1], turn, "tool_result")
        for previous in by_model.get(turn.history_from or "", []):
            link(previous, turn, "history")
        if turn.delegated_by_span:
            delegator = by_span.get(turn.delegated_by_span)
            if delegator is None:
                other = [t for t in ordered if t.index < turn.index and t.context != turn.context]
                delegator = other[-1] if other else None
            if delegator is not None:
                link(delegator, turn, "delegation")
    _reference_late_links(ordered, tools, by_model, link)
    return graph


def _reference_late_links(
    ordered: list[Turn], tools: list[Turn], by_model: dict[str, list[Turn]], link: Any
) -> None:
    """Retrieval, argument-reuse and sub-agent links, by scanning."""
    for turn in ordered:
        if turn.kind is TurnKind.RETRIEVAL:
            reader = next(
                (
                    t
                    for t in ordered
                    if t.index > turn.index and t.model_span_id and t.context == turn.context
                ),
                None,
            )
            for target in by_model.get(reader.model_span_id or "", []) if reader else []:
                link(turn, target, "retrieval")
    for position, turn in enumerate(tools):
        values = {v for v in map(_distinctive, _scalars(turn.tool_call.arguments)) if v}  # type: ignore[union-attr]
        for earlier in reversed(tools[:position]):
            result = earlier.tool_call.result_raw  # type: ignore[union-attr]
            if values and result and any(v in result for v in values):
                link(earlier, turn, "argument_reuse")
    for turn in ordered:
        if turn.returns_to_context is not None:
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
            for target in by_model.get(consumer.model_span_id or "", []) if consumer else []:
                link(turn, target, "subagent_result")


def roughened(spans: list[SpanRecord], seed: int) -> list[SpanRecord]:
    """The generated session with real traces' gaps: tool spans lost (results only in
    later inputs), call ids missing on tool spans, calls repeated by name and arguments."""
    rng = random.Random(seed)
    out = []
    for span in spans:
        if span.attributes.get("gen_ai.operation.name") == "execute_tool":
            roll = rng.random()
            if roll < 0.15:
                continue
            if roll < 0.3:
                span.attributes.pop("gen_ai.tool.call.id", None)
        out.append(span)
    return out


def closed_of(spans: list[SpanRecord]) -> ClosedSession:
    return ClosedSession("long-session", "gen_ai.conversation.id", False, spans)


def sample_sessions() -> Iterator[ClosedSession]:
    """Every session of the bundled samples (sub-agents, retrievals, parallel calls)."""
    from collectors.readers import read_batches

    assembler = SessionAssembler(idle=10**9)
    for path in sorted(SAMPLES.glob("*.otlp.jsonl")):
        for batch in read_batches(str(path)):
            for span in batch.spans:
                assembler.add(span, 0)
    yield from assembler.drain()


def assert_same_as_reference(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Turns (every field) and graph (edges, reasons, their order) equal the reference's."""
    turns = build_session(make()).turns
    expected = reference_build(make(), monkeypatch)
    assert [t.model_dump() for t in turns] == [t.model_dump() for t in expected]
    graph, reference = build_turn_graph(turns), reference_graph(expected)
    assert list(graph.nx.edges(data="reason")) == list(reference.edges(data="reason"))
    assert list(nx.topological_sort(graph.nx)) == list(nx.topological_sort(reference))


@pytest.mark.parametrize(
    ("window", "seed"),
    [(24, 1), (24, 2), (None, 3), (4, 4)],
    ids=["window", "window-rough", "full", "short"],
)
def test_long_session_matches_the_pairwise_reference(
    window: int | None, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def make() -> ClosedSession:
        spans = generate(600, window=window, seed=seed)
        return closed_of(roughened(spans, seed) if seed % 2 == 0 else spans)

    assert_same_as_reference(make, monkeypatch)


def test_sample_sessions_match_the_pairwise_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    sessions = {s.session_id: s for s in sample_sessions()}
    assert len(sessions) >= 6
    for session_id in sessions:

        def make(sid: str = session_id) -> ClosedSession:
            return {s.session_id: s for s in sample_sessions()}[sid]

        assert_same_as_reference(make, monkeypatch)


def test_pattern_finder_answers_as_in_does() -> None:
    rng = random.Random(14)
    alphabet = 'ab_1 ,."\\é-'
    for trial in range(2_000):
        few = trial % 2  # few patterns: found by their openings, not by splitting the text
        patterns = [
            "".join(rng.choices(alphabet, k=rng.randint(0, 6)))
            for _ in range(rng.randint(1, 3 if few else 12))
        ]
        finder = PatternFinder(patterns)
        for _ in range(4):
            text = "".join(rng.choices(alphabet, k=rng.randint(0, 40)))
            assert finder.find(text) == {p for p in patterns if p in text}, (patterns, text)


def test_pattern_finder_finds_ids_that_share_a_long_opening() -> None:
    """Call ids open alike (``call_``) and may hold one another; the opening is also
    inside other words (``tool_call_response``)."""
    rng = random.Random(15)
    pieces = ["call_", "cal", "l_", "1", "12", "_s", "a", '"', "tool_call_response", "c"]
    for _ in range(2_000):
        patterns = ["call_" + "".join(rng.choices("12_sa", k=rng.randint(0, 4))) for _ in "abc"]
        finder = PatternFinder(patterns)
        for _ in range(4):
            text = "".join(rng.choices(pieces, k=rng.randint(0, 12)))
            assert finder.find(text) == {p for p in patterns if p in text}, (patterns, text)


def test_session_over_the_span_limit_is_cut_with_the_reason_and_the_rest_evaluated(
    tmp_path: Path,
) -> None:
    big = generate(400, session_id="big")
    small = generate(50, session_id="small", seed=7)
    path = tmp_path / "two.otlp.jsonl"
    lines = [otlp_line(big[i : i + 50]) for i in range(0, len(big), 50)]
    path.write_text("\n".join([*lines, otlp_line(small)]) + "\n")
    config = tmp_path / "aem.toml"
    config.write_text("[assembly]\nmax_session_spans = 100\n")
    code, report, _ = run_audit(str(path), "--config", str(config))
    assert code in (0, 1), report
    by_id = {s["session_id"]: s for s in report["sessions"]}
    assert by_id["big"]["cut"] is True
    reasons = [i for i in by_id["big"]["issues"] if i["kind"] == "session_cut"]
    assert len(reasons) == 1 and "max_session_spans" in reasons[0]["message"]
    assert reasons[0]["spans_skipped"] == len(big) - 100
    assert by_id["small"]["cut"] is False and by_id["small"]["turns"]
    assert report["skipped"]["by_kind"]["session_cut"] == 1
    assert report["skipped"]["total_spans_skipped"] >= len(big) - 100
    # 0 turns the limit off: the same input is whole.
    code, report, _ = run_audit(str(path), "--set", "assembly.max_session_spans=0")
    assert not any(s["cut"] for s in report["sessions"]), report["skipped"]


def test_turn_limit_from_the_command_line_cuts_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "one.otlp.jsonl"
    path.write_text(otlp_line(generate(120, session_id="long")) + "\n")
    code, report, _ = run_audit(str(path), "--set", "assembly.max_session_turns=10")
    assert code in (0, 1), report
    (only,) = report["sessions"]
    assert only["cut"] is True and len(only["turns"]) == 10
    (reason,) = [i for i in only["issues"] if i["kind"] == "session_cut"]
    assert "max_session_turns" in reason["message"]
    whole = run_audit(str(path))[1]["sessions"][0]
    assert whole["cut"] is False and len(whole["turns"]) > 10


def test_assembly_limits_are_strict_settings_with_the_collectors_defaults() -> None:
    from aem.config import AemConfig, ConfigError, load_config
    from collectors.sessions.build import DEFAULT_MAX_SESSION_TURNS

    assembly = AemConfig().assembly
    assert assembly.max_session_spans == collectors.assembler.DEFAULT_MAX_SESSION_SPANS
    assert assembly.max_session_turns == DEFAULT_MAX_SESSION_TURNS
    with pytest.raises((ConfigError, ValueError), match="max_session_spans"):
        load_config(None, ["assembly.max_session_spanz=5"])
    with pytest.raises((ConfigError, ValueError), match="max_session_turns"):
        load_config(None, ["assembly.max_session_turns=-1"])


def test_session_over_the_turn_limit_keeps_its_first_turns() -> None:
    closed = closed_of(generate(200))
    whole = build_session(closed_of(generate(200)))
    cut = build_session(closed, max_turns=25)
    assert cut.cut and len(cut.turns) == 25
    # The same turns, except which answer is its agent's last (it hands back to the caller).
    unmarked = {"returns_to_context"}
    assert [t.model_dump(exclude=unmarked) for t in cut.turns] == [
        t.model_dump(exclude=unmarked) for t in whole.turns[:25]
    ]
    assert cut.issues[0].kind == "session_cut" and "max_session_turns" in cut.issues[0].message


def test_span_limit_holds_memory_not_just_time() -> None:
    assembler = SessionAssembler(idle=10**9, max_session_spans=50)
    for clock, span in enumerate(generate(500), start=1):
        assembler.add(span, clock)
    assert assembler.open_spans == 50
    (closed,) = assembler.drain()
    assert closed.cut and len(closed.spans) == 50
    assert json.loads(json.dumps(closed.issues[0].model_dump()))["spans_skipped"] >= 450


def built_sessions() -> Iterator[tuple[Session, TurnGraph]]:
    """The sample sessions and two generated ones (windowed and rough), with graphs."""
    closed = [
        *sample_sessions(),
        closed_of(generate(300, seed=5)),
        closed_of(roughened(generate(300, window=4, seed=6), 6)),
    ]
    for one in closed:
        session = build_session(one)
        yield session, build_turn_graph(session.turns)


def test_ancestry_answers_as_nx_ancestors() -> None:
    for session, graph in built_sessions():
        walk = graph.ancestry
        for turn in session.turns:
            expected = nx.ancestors(graph.nx, turn.turn_id)
            # Asked in an order that resumes walks and revisits forgotten ones.
            for other in sorted(session.turns, key=lambda t: -t.index)[:150]:
                assert walk.is_ancestor(other.turn_id, turn.turn_id) == (
                    other.turn_id in expected
                ), (session.session_id, other.turn_id, turn.turn_id)
        failed = [t for t in session.turns if t.tool_call and t.tool_call.error]
        assert walk.failed_calls == sorted(failed, key=lambda t: t.index)


def test_value_support_answers_as_the_full_evidence() -> None:
    """The indexed evidence says "supported" exactly where every text the turn saw,
    gathered together, does: for every value any turn states or sees."""
    settings = CompareSettings()
    checked = supported = 0
    for session, graph in built_sessions():
        facts = {"total": "$55", "day": "2024-05-20"}
        task = task_texts(session)
        values = [
            v
            for t in session.turns
            for text in (t.text or "", t.tool_call.result_raw if t.tool_call else "")
            for v in extract_values(text or "", settings)
        ][:400]
        cache = SessionCache()
        for turn in session.turns:
            fast, full = (
                seen_by(session, graph, turn, facts, settings, task, cache),
                seen_fully(graph, turn, facts, settings, task),
            )
            for value in values[:: max(1, len(values) // 60)]:
                for slack in (0, 1):
                    want = full.values.supports(value, settings, date_slack_days=slack)
                    got = fast.values.supports(value, settings, date_slack_days=slack)
                    assert got == want, (session.session_id, turn.turn_id, value.raw, slack)
                    checked += 1
                    supported += want
            assert fast.blind == full.blind
            assert fast.values.closest(values[0]) == full.values.closest(values[0])
    assert checked > 10_000 and 0 < supported < checked


def test_serve_assembles_with_the_configured_span_limit(tmp_path: Path) -> None:
    from aem.config import load_config
    from aem.serve.server import LiveServer
    from aem.serve.settings import ServeSettings

    settings = ServeSettings(grpc_port=-1, http_port=0, spool_path=tmp_path / "spool.sqlite")
    for value, held in (("30", 30), ("0", None)):
        config = load_config(None, [f"assembly.max_session_spans={value}"])
        server = LiveServer(settings, evaluate=lambda s: s, sinks=[], assembly=config.assembly)
        assert server.pipeline.assembler.max_session_spans == held
        server.spool.close()
        server.store_lock.release()  # one server per store: this one is done
    default = LiveServer(settings, evaluate=lambda s: s, sinks=[])
    assert default.pipeline.assembler.max_session_spans == 100_000
    default.spool.close()
    default.store_lock.release()


@pytest.mark.slow
def test_serve_cuts_a_session_over_the_configured_span_limit(tmp_path: Path) -> None:
    """The real live server (HTTP receiver, spool, pipeline): ``[assembly]
    max_session_spans`` reaches its assembler, and the verdicts say ``cut``."""
    from aem.config import load_config
    from aem.serve.server import LiveServer, default_evaluator
    from aem.serve.settings import ServeSettings
    from aem.testing import InMemorySink

    config = load_config(None, ["assembly.max_session_spans=30"])
    sink = InMemorySink()
    settings = ServeSettings(
        grpc_port=-1, http_port=0, spool_path=tmp_path / "spool.sqlite", session_idle_seconds=0.3
    )
    server = LiveServer(
        settings, evaluate=default_evaluator(None, config), sinks=[sink], assembly=config.assembly
    )
    server.start()
    try:
        spans = generate(80, session_id="live-long")
        for i in range(0, len(spans), 20):
            request = urllib.request.Request(
                f"http://127.0.0.1:{server.ports['http']}/v1/traces",
                data=otlp_line(spans[i : i + 20]).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.status == 200
        deadline = time.monotonic() + 120
        while not sink.payloads("turn"):
            assert time.monotonic() < deadline, "no verdict"
            time.sleep(0.1)
    finally:
        server.stop()
    turns = sink.payloads("turn")
    assert {p["session_id"] for p in turns} == {"live-long"}
    assert all(p["cut"] is True for p in turns)
    # Only turns of the first 30 spans were built.
    held = {s.span_id for s in spans[:30]}
    assert {p["span_id"] for p in turns} <= held
