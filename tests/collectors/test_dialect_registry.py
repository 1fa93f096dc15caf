"""Dialects are plug-ins: the Vercel AI SDK shape read end to end through ``aem audit``,
a third-party dialect registered as an entry point is used, a broken one is named."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import distributions
from pathlib import Path
from typing import Any

import pytest

from aem.foundation import plugins
from collectors.dialects import registry
from tests.conftest import run_audit, session
from tests.team_dialect_kit import TEAM_DIALECT

TRACE = "7" * 32
SECOND = 10**9


def _value(value: Any) -> dict[str, Any]:
    """OTLP/JSON ``AnyValue``; a list is an array (the SDK writes ``ai.prompt.tools`` so)."""
    if isinstance(value, list):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value if isinstance(value, str) else json.dumps(value)}


def _span(
    span_id: str, parent: str | None, name: str, start: int, attributes: dict[str, Any], **kw: Any
) -> dict[str, Any]:
    span = {
        "traceId": TRACE,
        "spanId": span_id * 16,
        "parentSpanId": parent * 16 if parent else "",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(1_776_852_000 * SECOND + start * SECOND),
        "endTimeUnixNano": str(1_776_852_000 * SECOND + (start + 1) * SECOND),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
    }
    span.update(kw)
    return span


def _write(path: Path, spans: list[dict[str, Any]], scope: str = "ai") -> Path:
    line = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": _value("bot")}]},
                "scopeSpans": [{"scope": {"name": scope}, "spans": spans}],
            }
        ]
    }
    path.write_text(json.dumps(line) + "\n")
    return path


SCHEMAS = {
    "get_weather": {"type": "object", "properties": {"city": {"type": "string"}}},
    "add": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    },
}


def _vercel_spans() -> list[dict[str, Any]]:
    """One ``generateText`` call: two tool calls (``add`` throws), then the answer."""
    meta = {"ai.telemetry.functionId": "weather-bot", "ai.telemetry.metadata.sessionId": "v-1"}
    question = [{"role": "user", "content": [{"type": "text", "text": "Paris weather, 2+3?"}]}]
    requested = [
        {"toolCallId": "call_1", "toolName": "get_weather", "args": '{"city": "Paris"}'},
        {"toolCallId": "call_2", "toolName": "add", "args": '{"a": 2, "b": 3}'},
    ]
    fed_back = [
        *question,
        {
            "role": "assistant",
            "content": [{"type": "tool-call", **c} for c in requested],
        },
        {
            "role": "tool",
            "content": [
                {"type": "tool-result", "toolCallId": "call_1", "result": "rainy, 14C"},
                {"type": "tool-result", "toolCallId": "call_2", "result": "error"},
            ],
        },
    ]
    tools = [
        json.dumps({"type": "function", "name": n, "parameters": s}) for n, s in SCHEMAS.items()
    ]
    model = {**meta, "ai.model.id": "gpt-4o", "gen_ai.request.model": "gpt-4o"}
    failure = {
        "status": {"code": 2, "message": "TypeError: add is broken"},
        "events": [
            {
                "name": "exception",
                "timeUnixNano": str(1_776_852_000 * SECOND + 4 * SECOND),
                "attributes": [{"key": "exception.type", "value": _value("TypeError")}],
            }
        ],
    }
    call = "ai.toolCall"
    return [
        _span("a", None, "ai.generateText", 0, {**meta, "ai.operationId": "ai.generateText"}),
        _span(
            "b",
            "a",
            "ai.generateText.doGenerate",
            1,
            {
                **model,
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.prompt.messages": json.dumps(question),
                "ai.prompt.tools": tools,
                "ai.response.toolCalls": json.dumps(requested),
            },
        ),
        _span(
            "c",
            "a",
            call,
            3,
            {
                **meta,
                "ai.operationId": call,
                "ai.toolCall.name": "get_weather",
                "ai.toolCall.id": "call_1",
                "ai.toolCall.args": '{"city": "Paris"}',
                "ai.toolCall.result": '"rainy, 14C"',
            },
        ),
        _span(
            "d",
            "a",
            call,
            3,
            {
                **meta,
                "ai.operationId": call,
                "ai.toolCall.name": "add",
                "ai.toolCall.id": "call_2",
                "ai.toolCall.args": '{"a": 2, "b": 3}',
            },
            **failure,
        ),
        _span(
            "e",
            "a",
            "ai.generateText.doGenerate",
            5,
            {
                **model,
                "ai.operationId": "ai.generateText.doGenerate",
                "ai.prompt.messages": json.dumps(fed_back),
                "ai.response.text": "It is rainy in Paris, 14C.",
            },
        ),
    ]


def test_vercel_ai_sdk_spans_become_turns_and_a_failing_tool_is_the_root_cause(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path / "vercel.otlp.jsonl", _vercel_spans())
    code, report, _ = run_audit(str(path))
    found = session(report, "v-1")
    assert found["session_key"] == "ai.telemetry.metadata.sessionId"
    assert not found["session_key_fallback"]
    turns = [(t["kind"], t["name"]) for t in found["turns"]]
    assert turns == [("tool_call", "get_weather"), ("tool_call", "add"), ("answer", "weather-bot")]
    weather, add = found["turns"][0], found["turns"][1]
    assert weather["span_ids"] == ["c" * 16, "b" * 16] and weather["label"] == "ok"
    assert add["label"] == "root_cause"
    [cause] = found["root_causes"]
    assert cause["name"] == "add" and "tool_execution" in cause["metrics"]
    explanation = next(m["explanation"] for m in add["metrics"] if m["name"] == "tool_execution")
    assert "add is broken" in explanation
    assert code == 1


def test_vercel_ai_sdk_session_reads_arguments_results_and_schemas(tmp_path: Path) -> None:
    from collectors.assembler import SessionAssembler
    from collectors.readers import read_batches
    from collectors.sessions import build_session

    path = _write(tmp_path / "vercel.otlp.jsonl", _vercel_spans())
    assembler = SessionAssembler(idle=10**9)
    for clock, span in enumerate((s for b in read_batches(str(path)) for s in b.spans), 1):
        assembler.add(span, clock)
    [built] = [build_session(closed) for closed in assembler.drain()]
    weather, add, answer = built.turns
    assert weather.tool_call is not None and add.tool_call is not None
    assert weather.tool_call.arguments == {"city": "Paris"}
    assert weather.tool_call.result == "rainy, 14C" and weather.tool_call.executed
    assert add.tool_call.error == "TypeError: add is broken" and not add.tool_call.has_result
    assert built.tool_definitions == SCHEMAS
    assert built.user_inputs == ["Paris weather, 2+3?"]
    assert answer.agent == "weather-bot" and answer.consumes_call_ids == ["call_1", "call_2"]


@pytest.fixture
def plugged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str, str], None]]:
    """Registers extra ``aem.dialects`` entry points the way pip would: a real
    ``*.dist-info`` on ``sys.path``, read by the extension kernel like any distribution."""
    (tmp_path / "team_dialect.py").write_text(TEAM_DIALECT)
    info = tmp_path / "team_dialect-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: team-dialect\nVersion: 0.1\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def plug(name: str, value: str) -> None:
        with (info / "entry_points.txt").open("a") as lines:
            if not lines.tell():
                lines.write(f"[{registry.ENTRY_POINT_GROUP}]\n")
            lines.write(f"{name} = {value}\n")
        registry.reload()

    yield plug
    monkeypatch.undo()
    registry.reload()
    sys.modules.pop("team_dialect", None)


def test_a_third_party_dialect_registered_as_an_entry_point_is_used(
    tmp_path: Path, plugged: Callable[[str, str], None]
) -> None:
    plugged("team", "team_dialect:TeamDialect")
    spans = [
        _span(
            "a",
            None,
            "lookup",
            0,
            {
                "team.step": "tool",
                "team.tool": "lookup",
                "team.conversation": "team-7",
                "team.result": "found",
            },
        ),
        _span(
            "b",
            None,
            "ping",
            2,
            {"team.step": "tool", "team.tool": "ping"},
            status={"code": 2, "message": "timeout"},
        ),
    ]
    code, report, _ = run_audit(str(_write(tmp_path / "team.otlp.jsonl", spans)))
    assert registry.dialects()[0].name == "team"
    found = session(report, "team-7")
    assert found["session_key"] == "team.conversation"
    assert [(t["kind"], t["name"], t["label"]) for t in found["turns"]] == [
        ("tool_call", "lookup", "ok"),
        ("tool_call", "ping", "root_cause"),
    ]
    assert code == 1


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("no_such_module_here:Dialect", "cannot be loaded: ModuleNotFoundError"),
        ("json:dumps", "is not a dialect: it needs `name`"),
    ],
)
def test_a_broken_dialect_entry_point_is_a_clear_error_naming_it(
    plugged: Callable[[str, str], None], value: str, says: str
) -> None:
    plugged("broken", value)
    module = value.split(":")[0]
    named = f"dialect plug-in 'broken' from {module} \\(team-dialect 0.1\\): {says}"
    with pytest.raises(plugins.PluginError, match=named):
        registry.dialects()


def test_built_in_session_keys_keep_their_order() -> None:
    assert registry.session_keys() == (
        "gen_ai.conversation.id",
        "session.id",
        "traceloop.association.properties.session_id",
        "langfuse.session.id",
        "ai.telemetry.metadata.sessionId",
    )
    names = [d.name for d in registry.dialects()]
    assert names.index("openinference") < names.index("genai") < names.index("traceloop_legacy")


def test_no_registered_dialect_at_all_is_an_error_not_an_empty_audit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A source tree never installed: no distribution on the path registers a dialect.
    bare = [p for p in sys.path if not any(d.name == "aem" for d in distributions(path=[p]))]
    monkeypatch.setattr(sys, "path", bare)
    registry.reload()
    try:
        with pytest.raises(plugins.PluginError, match="no dialects registered"):
            registry.dialects()
    finally:
        monkeypatch.undo()
        registry.reload()
