"""Small agents recorded with the real OpenTelemetry SDK, for tests that audit traces.

The recorder is the one that writes ``sample_traces/`` (``scripts/generate_sample_traces``):
a ``TracerProvider`` with a seeded id generator and the OTLP exporter's own encoder, so
a test audits exactly what an instrumented agent exports.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.trace import SpanKind

from scripts.generate_sample_traces import (
    GENAI_APP_SCOPE,
    GenAIAgent,
    Scope,
    Session,
    ToolCall,
    ToolSpec,
    epoch_ns,
    fixed_resource,
    message,
    record_tool_outcome,
    text_part,
    tool_messages,
    write_lines,
)

__all__ = [
    "GenAIAgent",
    "ToolCall",
    "ToolSpec",
    "message",
    "record",
    "speak",
    "text_part",
    "tool_messages",
    "tool_turn",
    "write_cases",
]

START = epoch_ns(2026, 5, 4, 9, 0)
CHAT_SCOPE = Scope("opentelemetry.instrumentation.openai_v2", "2.4b0")


def record(path: Path, seed: str, build: Callable[[Session], None]) -> Path:
    """Record one session (``build`` opens its spans) as an OTLP/JSON-lines file."""
    session = Session(seed, fixed_resource("test-agent"), START)
    build(session)
    write_lines(path, session.lines())
    return path


def speak(
    session: Session,
    conversation: str,
    speaker: str,
    text: str,
    *,
    ms: int = 900,
    calls: Sequence[ToolCall] = (),
) -> None:
    """A group-chat member's model call: a ``chat`` span naming its speaker in
    ``gen_ai.agent.name`` (as AG2 and Magentic-One conversions do)."""
    parts = ([text_part(text)] if text else []) + [
        {"type": "tool_call", "id": c.id, "name": c.name, "arguments": c.arguments} for c in calls
    ]
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": conversation,
        "gen_ai.agent.name": speaker,
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.input.messages": "[]",
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": parts}]),
    }
    with session.span(CHAT_SCOPE, f"chat {speaker}", attributes, kind=SpanKind.CLIENT, ms=ms):
        pass


def tool_turn(
    session: Session, call: ToolCall, *, arguments: Any = None, extra: Mapping[str, Any] = ()
) -> None:
    """An ``execute_tool`` span; ``arguments`` replaces the call's (e.g. raw text)."""
    raw = call.arguments if arguments is None else arguments
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.call.arguments": raw if isinstance(raw, str) else json.dumps(raw),
        **dict(extra),
    }
    with session.span(GENAI_APP_SCOPE, f"execute_tool {call.name}", attributes, ms=40) as span:
        record_tool_outcome(span, call, session.clock, "gen_ai.tool.call.result")


def write_cases(path: Path, *cases: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path
