"""One agent run, three dialects, the same turns."""

from __future__ import annotations

import json
from pathlib import Path

from aem.foundation.model import Session
from aem.graph import session_graph
from collectors.assembler import SessionAssembler
from collectors.readers import read_batches
from collectors.sessions import build_session
from tests.conftest import SAMPLES


def _sessions(path: Path) -> list[Session]:
    assembler = SessionAssembler(idle=10**9)
    for clock, span in enumerate(
        (s for batch in read_batches(str(path)) for s in batch.spans), start=1
    ):
        assembler.add(span, clock)
    return [build_session(closed) for closed in assembler.drain()]


def _shape(session: Session) -> list[tuple]:
    graph = session_graph(session)
    return [
        (
            t.kind.value,
            t.tool_call.name if t.tool_call else None,
            t.tool_call.call_id if t.tool_call else None,
            t.tool_call.arguments if t.tool_call else None,
            str(t.tool_call.result) if t.tool_call else None,
            t.text,
            sorted(graph.nx.predecessors(t.turn_id)),
        )
        for t in session.turns
    ]


def test_same_run_same_turns_across_dialects() -> None:
    shapes = {}
    for name in (
        "weather_genai",
        "weather_openinference",
        "weather_openllmetry",
        "weather_openllmetry_legacy",
    ):
        [session] = _sessions(SAMPLES / f"{name}.otlp.jsonl")
        shapes[name] = _shape(session)
    reference = shapes["weather_genai"]
    assert [s[0] for s in reference] == ["tool_call", "tool_call", "answer"]
    assert reference[0][3] == {"city": "Paris"} and reference[1][3] == {"a": 2, "b": 3}
    for name, shape in shapes.items():
        assert shape == reference, name


def test_session_keys_by_dialect() -> None:
    keys = {}
    for name in ("weather_genai", "weather_openinference", "weather_openllmetry"):
        [session] = _sessions(SAMPLES / f"{name}.otlp.jsonl")
        keys[session.session_id] = (session.session_key, session.fallback)
    assert keys == {
        "weather-genai": ("gen_ai.conversation.id", False),
        "weather-oi": ("session.id", False),
        "weather-tl": ("traceloop.association.properties.session_id", False),
    }


def test_trace_id_fallback_is_flagged(tmp_path: Path) -> None:
    import json

    lines = (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines()
    stripped = []
    for line in lines:
        document = json.loads(line)
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["attributes"] = [
                a for a in span["attributes"] if a["key"] != "gen_ai.conversation.id"
            ]
        stripped.append(json.dumps(document))
    path = tmp_path / "nokey.jsonl"
    path.write_text("\n".join(stripped))
    [session] = _sessions(path)
    assert session.fallback and session.session_key == "trace_id"
    assert session.session_id == session.spans[0].trace_id


def test_session_spanning_two_traces_is_one_session(tmp_path: Path) -> None:
    import json

    lines = (SAMPLES / "weather_genai.otlp.jsonl").read_text().splitlines()
    second = []
    for line in lines:
        document = json.loads(line)
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["traceId"] = "f" * 32
            span["spanId"] = "e" + span["spanId"][1:]
            if span.get("parentSpanId"):
                span["parentSpanId"] = "e" + span["parentSpanId"][1:]
            span["startTimeUnixNano"] = str(int(span["startTimeUnixNano"]) + 10**12)
            span["endTimeUnixNano"] = str(int(span["endTimeUnixNano"]) + 10**12)
        second.append(json.dumps(document))
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(lines + second))
    [session] = _sessions(path)
    assert len(session.trace_ids) == 2 and len(session.turns) == 6


def test_declared_tool_schemas_in_every_dialect() -> None:
    from aem.foundation.model import SpanRecord
    from collectors.dialects import tool_definitions

    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    genai = SpanRecord(
        "a" * 32, "b" * 16, None, "chat",
        attributes={"gen_ai.tool.definitions": json.dumps(
            [{"type": "function", "name": "get_weather", "parameters": schema}]
        )},
    )  # fmt: skip
    openinference = SpanRecord(
        "a" * 32, "c" * 16, None, "llm",
        attributes={
            "openinference.span.kind": "LLM",
            "llm.tools.0.tool.json_schema": json.dumps(
                {"type": "function", "function": {"name": "get_weather", "parameters": schema}}
            ),
        },
    )  # fmt: skip
    legacy = SpanRecord(
        "a" * 32, "d" * 16, None, "openai.chat",
        attributes={
            "llm.request.functions.0.name": "get_weather",
            "llm.request.functions.0.parameters": json.dumps(schema),
        },
    )  # fmt: skip
    for span in (genai, openinference, legacy):
        assert tool_definitions(span) == {"get_weather": schema}, span.name


def test_turns_do_not_depend_on_arrival_order() -> None:
    import random

    spans = [s for b in read_batches(str(SAMPLES / "parallel_tools.otlp.jsonl")) for s in b.spans]
    shapes = set()
    for seed in range(5):
        shuffled = spans[:]
        random.Random(seed).shuffle(shuffled)
        assembler = SessionAssembler(idle=10**9)
        for clock, span in enumerate(shuffled):
            assembler.add(span, clock)
        [closed] = assembler.drain()
        session = build_session(closed)
        shapes.add(tuple((t.turn_id, t.name, tuple(t.span_ids)) for t in session.turns))
    assert len(shapes) == 1
