"""Dialect gaps seen on real traces, on traces recorded with the real SDK: a group chat's
speakers name their turns (and the code they had run), smolagents' wrapped tool
arguments, BFCL-style and OpenAPI schemas, a schema nothing can use; a group chat's
members saw its earlier messages when the input went unrecorded, and "2-year-old" is a
count with a unit word."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripts.generate_sample_traces import Scope, Session
from tests.agent_kit import (
    GenAIAgent,
    ToolCall,
    ToolSpec,
    message,
    record,
    speak,
    text_part,
    tool_turn,
    write_cases,
)
from tests.conftest import run_audit, session

CODE = "import pandas as pd\nrows = pd.read_csv('clients.csv')\nprint(len(rows))"


def _group_chat(recording: Session) -> None:
    """AG2-style: members speak in turn under one group-chat agent; the terminal runs the
    code the coder's message holds (and fails)."""
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "group chat",
        "gen_ai.conversation.id": "chat-1",
    }
    with recording.span(Scope("ag2"), "invoke_agent group chat", attributes, root=True):
        speak(recording, "chat-1", "Planner", "Plan: load the client list, count the rows.")
        speak(recording, "chat-1", "Coder", f"Running this:\n```python\n{CODE}\n```")
        run = ToolCall(
            "step2",
            "terminal",
            {"code_blocks": [{"language": "python", "code": CODE}]},
            "",
            FileNotFoundError("clients.csv not found"),
        )
        tool_turn(recording, run)
        speak(recording, "chat-1", "Reviewer", "The file is missing, so we cannot count.")


def test_each_chat_span_names_its_own_turns_and_the_code_run_is_its_authors(
    tmp_path: Path,
) -> None:
    _, report, _ = run_audit(str(record(tmp_path / "t.jsonl", "chat-1", _group_chat)))
    chat = session(report, "chat-1")
    names = [(t["kind"], t["name"], t["agent"]) for t in chat["turns"]]
    assert names[0] == ("answer", "Planner", "Planner")
    assert ("tool_call", "terminal", "Coder") in names
    assert names[-1][1:] == ("Reviewer", "Reviewer")
    [cause] = chat["root_causes"]
    assert cause["agent"] == "Coder" and cause["metrics"][0] == "tool_execution"
    assert len(cause["span_ids"]) == 2  # the terminal run and the message that wrote it


OI = Scope("openinference.instrumentation.smolagents", "0.1.11")


def _smolagents(recording: Session) -> None:
    """OpenInference as smolagents writes it: the TOOL span's input is the Python call."""
    base = {"session.id": "smol-1"}
    agent = {**base, "openinference.span.kind": "AGENT", "agent.name": "weather_agent"}
    call_base = "llm.output_messages.0.message.tool_calls.0.tool_call"
    llm = {
        **base,
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather in Paris?",
        "llm.output_messages.0.message.role": "assistant",
        f"{call_base}.id": "call_1",
        f"{call_base}.function.name": "get_weather",
        f"{call_base}.function.arguments": json.dumps({"city": "Paris"}),
    }
    tool = {
        **base,
        "openinference.span.kind": "TOOL",
        "tool.name": "get_weather",
        "input.value": json.dumps({"args": [], "kwargs": {"city": "Paris", "unit": "C"}}),
        "output.value": "rainy, 14C",
    }
    with recording.span(OI, "weather_agent.run", agent, root=True):
        with recording.span(OI, "OpenAIServerModel.generate", llm):
            pass
        with recording.span(OI, "get_weather", tool):
            pass


def test_smolagents_wrapped_arguments_are_unwrapped_before_the_check(tmp_path: Path) -> None:
    path = record(tmp_path / "t.jsonl", "smol-1", _smolagents)
    cases = write_cases(
        tmp_path / "c.jsonl",
        {
            "session_id": "smol-1",
            "expected_tool_calls": [
                {"name": "get_weather", "arguments": {"city": "Paris", "unit": "C"}}
            ],
        },
    )
    _, report, _ = run_audit(str(path), "--cases", str(cases))
    [call] = [t for t in session(report, "smol-1")["turns"] if t["kind"] == "tool_call"]
    outcomes = {m["name"]: m["outcome"] for m in call["metrics"]}
    assert outcomes["argument_validity"] == "pass" and outcomes["tool_choice"] == "pass"


BFCL = {  # Gorilla/BFCL-style: Python type names, and OpenAPI's nullable
    "type": "dict",
    "properties": {
        "amount": {"type": "float"},
        "tags": {"type": "tuple", "items": {"type": "string"}},
        "note": {"type": "string", "nullable": True},
        "extra": {"type": "any"},
    },
    "required": ["amount"],
}
UNUSABLE = {"type": "object", "properties": {"q": {"type": "frobnicated"}}}


def _schemas(recording: Session) -> None:
    tools = [
        ToolSpec("convert", "Convert an amount.", BFCL),
        ToolSpec("lookup", "Look something up.", UNUSABLE),
    ]
    agent = GenAIAgent(recording, "schema-1", "gpt-4o", tools)
    calls = [
        ToolCall("c1", "convert", {"amount": 1.5, "tags": ["a"], "note": None, "extra": 3}, "2"),
        ToolCall("c2", "convert", {"amount": "lots"}, "?"),
        ToolCall("c3", "lookup", {"q": "x"}, "found"),
        ToolCall("c4", "lookup", {"q": "y"}, "found"),
    ]
    with agent.invoke_agent("converter", root=True):
        agent.chat([message("user", text_part("convert and look up"))], calls=calls)
        for call in calls:
            with agent.execute_tool(call):
                pass


def test_bfcl_types_and_nullable_are_read_and_an_unusable_schema_is_said_once(
    tmp_path: Path,
) -> None:
    _, report, _ = run_audit(str(record(tmp_path / "t.jsonl", "schema-1", _schemas)))
    turns = session(report, "schema-1")["turns"]
    verdicts: dict[str, Any] = {
        t["turn_id"]: next(m for m in t["metrics"] if m["name"] == "argument_validity")
        for t in turns
        if t["kind"] == "tool_call"
    }
    good, bad, first, second = (verdicts[t] for t in sorted(verdicts))
    assert good["outcome"] == "pass"
    assert bad["outcome"] == "fail" and "amount" in bad["explanation"]
    assert first["outcome"] == "skip" and first["explanation"].startswith("schema unusable:")
    assert "frobnicated" in first["explanation"]
    assert second["outcome"] == "skip" and "schema unusable" not in second["explanation"]
    assert not [m for t in turns for m in t["metrics"] if m["outcome"] == "error"]


def _magentic(conversation: str, task: str, *said: tuple[str, str]) -> Callable[[Session], None]:
    """Magentic-One-style: members speak in one conversation under the root agent, each
    chat span's input an empty message list (the shared history went unrecorded)."""

    def build(recording: Session) -> None:
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "Magentic-One",
            "gen_ai.conversation.id": conversation,
            "gen_ai.input.messages": json.dumps([message("user", text_part(task))]),
        }
        with recording.span(Scope("magentic-one"), "invoke_agent", attributes, root=True):
            for speaker, text in said:
                speak(recording, conversation, speaker, text)

    return build


# The orchestrator restates the address the surfer found.
_MAGENTIC_CHAT = _magentic(
    "m1-1",
    "Which bar is closest to the Mummers Museum?",
    ("Orchestrator", "Please look up the museum's address."),
    ("WebSurfer", "Mummers Museum: 1100 S 2nd St, PA 19147."),
    ("Orchestrator", "Find bars near 1100 S 2nd St, PA 19147."),
)


def test_a_group_chat_member_saw_the_earlier_messages_of_the_chat(tmp_path: Path) -> None:
    _, report, _ = run_audit(str(record(tmp_path / "t.jsonl", "m1-1", _MAGENTIC_CHAT)))
    chat = session(report, "m1-1")
    truth = {
        t["turn_id"]: m
        for t in chat["turns"]
        for m in t["metrics"]
        if m["name"] == "correctness.truthfulness"
    }
    # The surfer states what no recorded input holds (its page is not in the trace): a
    # suspect, nothing proven …
    assert truth["t2"]["outcome"] == "unverified" and "19147" in truth["t2"]["explanation"]
    # … and the orchestrator, who read the surfer's message, restates it: another agent's
    # words are no source, so the restatement shares the doubt; the surfer is where to look.
    assert truth["t3"]["outcome"] == "unverified", truth["t3"]["explanation"]
    assert chat["root_causes"] == []
    # Both told the chat an unsupported value: both are suspects, the surfer first.
    assert [c["agent"] for c in chat["suspects"]] == ["WebSurfer", "Orchestrator"]


# The orchestrator restates the task's "kid age 2" as "the 2-year-old".
_FAMILY_TICKETS = _magentic(
    "m1-2",
    "Passes for 2 adults, 1 kid age 5, 1 kid age 2?",
    ("Orchestrator", "The 2-year-old and the 5-year-old need passes."),
)


def test_an_age_is_a_count_with_a_unit_word_not_an_identifier(tmp_path: Path) -> None:
    _, report, _ = run_audit(str(record(tmp_path / "t.jsonl", "m1-2", _FAMILY_TICKETS)))
    [turn] = session(report, "m1-2")["turns"]
    [truth] = [m for m in turn["metrics"] if m["name"] == "correctness.truthfulness"]
    assert truth["outcome"] == "pass", truth["explanation"]
