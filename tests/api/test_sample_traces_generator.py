"""``sample_traces/`` is the output of ``scripts/generate_sample_traces.py``, nothing else.

The samples are what ``aem audit sample_traces/`` runs on and what other tests lean on, so
these tests pin (1) that the committed files are exactly what the script writes (nobody
hand-edits them), (2) that every line is OTLP/JSON as the Collector file exporter writes
it (hex ids, not base64), and (3) the shape each session is meant to have.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aem.cases import load_cases

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "generate_sample_traces.py"
SAMPLES = REPO / "sample_traces"

# file -> (session attribute, session id, span count)
EXPECTED_FILES: dict[str, tuple[str, str, int]] = {
    "march_refunds.otlp.jsonl": ("gen_ai.conversation.id", "refunds-march", 8),
    "parallel_tools.otlp.jsonl": ("gen_ai.conversation.id", "trip-planner-7", 6),
    "multi_agent.otlp.jsonl": ("gen_ai.conversation.id", "research-31", 13),
    "weather_genai.otlp.jsonl": ("gen_ai.conversation.id", "weather-genai", 5),
    "weather_openinference.otlp.jsonl": ("session.id", "weather-oi", 9),
    "weather_openllmetry.otlp.jsonl": (
        "traceloop.association.properties.session_id",
        "weather-tl",
        9,
    ),
    "weather_openllmetry_legacy.otlp.jsonl": (
        "traceloop.association.properties.session_id",
        "weather-tl-legacy",
        5,
    ),
}
# One file of seven help-desk sessions (groundedness and refusal, docs/groundedness.md);
# tests/metrics/test_groundedness*.py and tests/metrics/test_refusal.py check their verdicts.
HELPDESK_FILE = "helpdesk_rag.otlp.jsonl"
HELPDESK_SESSIONS = {
    "rag-cited",
    "rag-invented",
    "rag-no-citation",
    "rag-dangling",
    "oos-honest",
    "oos-invented",
    "rag-russian",
}
GENERATED = [*EXPECTED_FILES, HELPDESK_FILE, "cases.jsonl"]

TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
SPAN_ID = re.compile(r"^[0-9a-f]{16}$")
DECIMAL = re.compile(r"^[0-9]+$")


@dataclass(frozen=True)
class Span:
    """The fields of one OTLP/JSON span these tests look at, attributes decoded."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int
    status_code: int
    attributes: dict[str, Any]
    events: tuple[str, ...]

    def json_attr(self, key: str) -> Any:
        return json.loads(self.attributes[key])


def any_value(value: dict[str, Any]) -> Any:
    if "arrayValue" in value:
        return [any_value(v) for v in value["arrayValue"].get("values", [])]
    if "intValue" in value:
        return int(value["intValue"])
    return next(iter(value.values()), None)


def load_spans(path: Path) -> list[Span]:
    spans = []
    for line in path.read_text(encoding="utf-8").splitlines():
        for resource_spans in json.loads(line)["resourceSpans"]:
            for scope_spans in resource_spans["scopeSpans"]:
                for raw in scope_spans["spans"]:
                    spans.append(
                        Span(
                            trace_id=raw["traceId"],
                            span_id=raw["spanId"],
                            parent_id=raw.get("parentSpanId", ""),
                            name=raw["name"],
                            kind=raw["kind"],
                            status_code=raw.get("status", {}).get("code", 0),
                            attributes={
                                kv["key"]: any_value(kv["value"])
                                for kv in raw.get("attributes", [])
                            },
                            events=tuple(e["name"] for e in raw.get("events", [])),
                        )
                    )
    return spans


def by_name(spans: list[Span], name: str) -> list[Span]:
    return [s for s in spans if s.name == name]


def one(spans: list[Span], name: str) -> Span:
    found = by_name(spans, name)
    assert len(found) == 1, f"expected one span {name!r}, found {len(found)}"
    return found[0]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample_traces")
    subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], check=True, timeout=60)
    return out


@pytest.fixture(scope="module")
def spans() -> dict[str, list[Span]]:
    return {name: load_spans(SAMPLES / name) for name in EXPECTED_FILES}


def test_committed_samples_are_exactly_the_script_output(generated: Path) -> None:
    assert sorted(p.name for p in generated.iterdir()) == sorted(GENERATED)
    committed = {p.name for p in SAMPLES.glob("*.jsonl")}
    assert committed == set(GENERATED), "a sample file not written by the script"
    for name in GENERATED:
        assert (generated / name).read_bytes() == (SAMPLES / name).read_bytes(), (
            f"sample_traces/{name} differs from the script output: "
            "regenerate with scripts/generate_sample_traces.py, do not edit by hand"
        )


@pytest.mark.parametrize("name", list(EXPECTED_FILES))
def test_every_line_is_collector_style_otlp_json(name: str) -> None:
    for number, line in enumerate((SAMPLES / name).read_text().splitlines(), start=1):
        where = f"{name}:{number}"
        request = json.loads(line)
        assert "_" not in "".join(_keys(request)), f"{where}: snake_case key"
        (raw,) = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
        assert TRACE_ID.match(raw["traceId"]), f"{where}: traceId {raw['traceId']!r}"
        assert SPAN_ID.match(raw["spanId"]), f"{where}: spanId {raw['spanId']!r}"
        if "parentSpanId" in raw:
            assert SPAN_ID.match(raw["parentSpanId"]), f"{where}: parentSpanId"
        assert DECIMAL.match(raw["startTimeUnixNano"]) and DECIMAL.match(raw["endTimeUnixNano"])
        assert int(raw["startTimeUnixNano"]) <= int(raw["endTimeUnixNano"])
        assert isinstance(raw["kind"], int)


def _keys(value: Any) -> list[str]:
    """Every JSON object key of the OTLP envelope (attribute keys are values, not keys)."""
    if isinstance(value, dict):
        return [k for k in value] + [k for v in value.values() for k in _keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []


@pytest.mark.parametrize(("name", "expected"), list(EXPECTED_FILES.items()))
def test_each_file_holds_one_session_one_trace_one_root(
    name: str, expected: tuple[str, str, int], spans: dict[str, list[Span]]
) -> None:
    key, session_id, count = expected
    file_spans = spans[name]
    assert len(file_spans) == count
    assert len({s.span_id for s in file_spans}) == count
    assert len({s.trace_id for s in file_spans}) == 1
    ids = {s.span_id for s in file_spans}
    roots = [s for s in file_spans if not s.parent_id]
    assert len(roots) == 1
    assert all(s.parent_id in ids for s in file_spans if s.parent_id), "orphan span"
    assert {s.attributes[key] for s in file_spans if key in s.attributes} == {session_id}
    assert key in roots[0].attributes


def test_march_refunds_picks_march_2025_and_inherits_it(spans: dict[str, list[Span]]) -> None:
    file_spans = spans["march_refunds.otlp.jsonl"]
    root = one(file_spans, "invoke_agent refunds_agent")
    chats = by_name(file_spans, "chat gpt-4o")
    assert len(chats) == 4
    assert all(c.parent_id == root.span_id for c in chats)
    assert all(c.attributes["gen_ai.conversation.id"] == "refunds-march" for c in chats)
    inputs = chats[0].json_attr("gen_ai.input.messages")
    assert "Today is 2026-04-02" in json.dumps(inputs)
    assert inputs[-1]["parts"][0]["content"] == (
        "Calculate the refunds on customer C-1042's orders for March."
    )
    (first,) = chats[0].json_attr("gen_ai.output.messages")
    assert [p["type"] for p in first["parts"]] == ["text", "tool_call"]
    assert "March 2025" in first["parts"][0]["content"]
    assert first["parts"][1]["id"] == "call_orders"
    get_orders = one(file_spans, "execute_tool get_orders")
    assert get_orders.attributes["gen_ai.tool.call.id"] == "call_orders"
    assert get_orders.json_attr("gen_ai.tool.call.arguments")["start_date"] == "2025-03-01"
    assert get_orders.attributes["gen_ai.tool.call.result"] == "[]"
    called = [c.json_attr("gen_ai.output.messages")[0]["parts"][-1] for c in chats[1:3]]
    assert [(p["name"], p["id"], p["arguments"]["period"]) for p in called] == [
        ("filter_refunds", "call_filter", "2025-03"),
        ("sum_refunds", "call_sum", "2025-03"),
    ]
    total = one(file_spans, "execute_tool sum_refunds").json_attr("gen_ai.tool.call.result")
    assert total == {"total": 0, "currency": "EUR", "period": "2025-03"}
    (final,) = chats[3].json_attr("gen_ai.output.messages")
    assert final["parts"] == [
        {
            "type": "text",
            "content": "There were no refunds on customer C-1042's orders in March 2025 "
            "(total 0 EUR).",
        }
    ]
    responses = [
        p["id"]
        for m in chats[3].json_attr("gen_ai.input.messages")
        for p in m["parts"]
        if p["type"] == "tool_call_response"
    ]
    assert responses == ["call_orders", "call_filter", "call_sum"]


def test_parallel_tools_are_three_siblings_one_timed_out(spans: dict[str, list[Span]]) -> None:
    file_spans = spans["parallel_tools.otlp.jsonl"]
    root = one(file_spans, "invoke_agent trip_planner")
    tools = [s for s in file_spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert len(tools) == 3
    assert {t.parent_id for t in tools} == {root.span_id}
    (first, second) = by_name(file_spans, "chat gpt-4o")
    (output,) = first.json_attr("gen_ai.output.messages")
    assert [p["name"] for p in output["parts"]] == ["get_weather", "get_hotels", "get_flights"]
    failed = [t for t in tools if t.status_code == 2]
    assert [t.name for t in failed] == ["execute_tool get_hotels"]
    assert failed[0].attributes["error.type"] == "TimeoutError"
    assert failed[0].events == ("exception",)
    fed_back = {
        p["id"]: p["response"]
        for m in second.json_attr("gen_ai.input.messages")
        for p in m["parts"]
        if p["type"] == "tool_call_response"
    }
    assert set(fed_back) == {"call_weather", "call_hotels", "call_flights"}
    assert fed_back["call_hotels"].startswith("Error: TimeoutError")
    answer = second.json_attr("gen_ai.output.messages")[0]["parts"][0]["content"]
    assert "Hotels are unavailable" in answer


def test_multi_agent_has_two_branches_and_one_failure_in_the_analyst(
    spans: dict[str, list[Span]],
) -> None:
    file_spans = spans["multi_agent.otlp.jsonl"]
    parent = {s.span_id: s for s in file_spans}

    def ancestors(span: Span) -> list[str]:
        names = []
        while span.parent_id:
            span = parent[span.parent_id]
            names.append(span.name)
        return names

    root = one(file_spans, "invoke_agent coordinator")
    for name, tool, inner in [
        ("researcher", "ask_researcher", "search_papers"),
        ("analyst", "ask_analyst", "run_query"),
    ]:
        agent = one(file_spans, f"invoke_agent {name}")
        assert agent.attributes["gen_ai.agent.name"] == name
        assert parent[agent.parent_id].name == f"execute_tool {tool}"
        assert parent[agent.parent_id].parent_id == root.span_id
        own = [s for s in file_spans if s.parent_id == agent.span_id]
        chat = "chat gpt-4o-mini"
        assert [s.name for s in own] == [chat, f"execute_tool {inner}", chat]
        # own context: the delegated task, not the coordinator's question
        history = json.dumps(own[0].json_attr("gen_ai.input.messages"))
        assert "support tickets from Q1 2026 mention" not in history
    failed = [s for s in file_spans if s.status_code == 2]
    assert [s.name for s in failed] == ["execute_tool run_query"]
    assert "invoke_agent analyst" in ancestors(failed[0])
    assert failed[0].events == ("exception",)


def _weather_run_genai(file_spans: list[Span]) -> tuple[list[tuple[str, str, Any]], str]:
    chats = [s for s in file_spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    calls = [
        (p["id"], p["name"], p["arguments"])
        for p in chats[0].json_attr("gen_ai.output.messages")[0]["parts"]
    ]
    return calls, chats[-1].json_attr("gen_ai.output.messages")[0]["parts"][0]["content"]


def _weather_run_openinference(file_spans: list[Span]) -> tuple[list[tuple[str, str, Any]], str]:
    llms = [s for s in file_spans if s.attributes["openinference.span.kind"] == "LLM"]
    prefix = "llm.output_messages.0.message"
    first = llms[0].attributes
    calls = [
        (
            first[f"{prefix}.tool_calls.{m}.tool_call.id"],
            first[f"{prefix}.tool_calls.{m}.tool_call.function.name"],
            json.loads(first[f"{prefix}.tool_calls.{m}.tool_call.function.arguments"]),
        )
        for m in range(2)
    ]
    return calls, llms[-1].attributes[f"{prefix}.content"]


def _weather_run_legacy(file_spans: list[Span]) -> tuple[list[tuple[str, str, Any]], str]:
    chats = by_name(file_spans, "openai.chat")
    first = chats[0].attributes
    prefix = "gen_ai.completion.0.tool_calls"
    calls = [
        (
            first[f"{prefix}.{m}.id"],
            first[f"{prefix}.{m}.name"],
            json.loads(first[f"{prefix}.{m}.arguments"]),
        )
        for m in range(2)
    ]
    return calls, chats[-1].attributes["gen_ai.completion.0.content"]


def test_weather_run_is_the_same_in_every_dialect(spans: dict[str, list[Span]]) -> None:
    runs = {
        "genai": _weather_run_genai(spans["weather_genai.otlp.jsonl"]),
        "openinference": _weather_run_openinference(spans["weather_openinference.otlp.jsonl"]),
        "traceloop": _weather_run_genai(spans["weather_openllmetry.otlp.jsonl"]),
        "traceloop-legacy": _weather_run_legacy(spans["weather_openllmetry_legacy.otlp.jsonl"]),
    }
    expected = (
        [("call_1", "get_weather", {"city": "Paris"}), ("call_2", "add", {"a": 2, "b": 3})],
        "Paris is rainy (14C) and 2+3=5.",
    )
    assert runs == dict.fromkeys(runs, expected)
    tools = Counter(
        s.attributes.get("tool.name") for s in spans["weather_openinference.otlp.jsonl"]
    )
    assert tools["get_weather"] == tools["add"] == 1


def test_cases_file_loads_and_covers_every_session() -> None:
    cases = load_cases(SAMPLES / "cases.jsonl")
    expected = {session_id for _, session_id, _ in EXPECTED_FILES.values()}
    assert set(cases) == expected | HELPDESK_SESSIONS
    refunds = cases["refunds-march"]
    assert refunds.facts == {"period": "2026-03", "customer_id": "C-1042"}
    assert refunds.expected_tool_calls is not None
    assert refunds.expected_tool_calls[0].arguments["start_date"] == "2026-03-01"
    assert cases["trip-planner-7"].type == "happy"
    assert cases["weather-oi"].key_points == ["Paris weather is rainy, 14C", "2+3=5"]
