"""OTel GenAI semantic conventions (``gen_ai.*``), including Traceloop ≥ 0.5.

Claims spans with ``gen_ai.operation.name``. Real output differs from the conventions in
small ways and every variant is accepted: ``tool_call_response`` parts may hold
``response`` or ``result``, "any"-typed attributes arrive as JSON strings or as
structured values. Session key: ``gen_ai.conversation.id``.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from aem.foundation.model import SpanRecord
from collectors.dialects.base import (
    AgentRun,
    ConversationTurnRun,
    ModelCall,
    Operation,
    RetrievalRun,
    ToolCallRequest,
    ToolRun,
    as_text,
    parse_jsonish,
    tool_run,
)
from collectors.dialects.protocol import BaseDialect, SessionKey

MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
# An agent invocation; the conventions now name an internal (in-process) one
# ``gen_ai.invocation.internal``, which was ``invoke_agent`` before and still may be.
INTERNAL_INVOCATION = "gen_ai.invocation.internal"
AGENT_OPERATIONS = frozenset({"invoke_agent", INTERNAL_INVOCATION})
# One turn of the conversation as a framework runner reports it.
CONVERSATION_TURN = "handle_conversation_turn"


def messages(value: Any) -> list[dict[str, Any]]:
    """``gen_ai.{input,output}.messages`` as a list of ``{role, parts}`` dicts."""
    parsed = parse_jsonish(value)
    if isinstance(parsed, dict):
        parsed = [parsed]
    return [m for m in parsed if isinstance(m, dict)] if isinstance(parsed, list) else []


def text_of_parts(parts: Any) -> str:
    texts = []
    for part in parts or []:
        if isinstance(part, dict) and part.get("type", "text") == "text":
            content = part.get("content")
            if content:
                texts.append(str(content))
    return "\n".join(texts)


def output_of(value: Any) -> tuple[str | None, list[ToolCallRequest]]:
    texts: list[str] = []
    calls: list[ToolCallRequest] = []
    for message in messages(value):
        text = text_of_parts(message.get("parts"))
        if text:
            texts.append(text)
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "tool_call":
                raw = part.get("arguments")
                calls.append(ToolCallRequest.parse(part.get("id"), part.get("name"), raw))
    return ("\n".join(texts) or None), calls


def user_texts(value: Any) -> list[str]:
    return [
        text
        for m in messages(value)
        if m.get("role") == "user" and (text := text_of_parts(m.get("parts")))
    ]


def tool_results(value: Any) -> dict[str, str]:
    """Tool results fed back in a model input, by call id (parsed only when needed)."""
    out: dict[str, str] = {}
    for message in messages(value):
        for part in message.get("parts") or []:
            if isinstance(part, dict) and part.get("type") == "tool_call_response":
                response = part.get("response", part.get("result"))
                if part.get("id"):
                    out[str(part["id"])] = as_text(response) or ""
    return out


def _model_call(span: SpanRecord) -> ModelCall:
    attributes = span.attributes
    raw_input = attributes.get("gen_ai.input.messages")
    text, calls = output_of(attributes.get("gen_ai.output.messages"))
    return ModelCall(
        span=span,
        text=text,
        tool_calls=calls,
        input_text=_input_text(raw_input),
        model=attributes.get("gen_ai.request.model") or attributes.get("gen_ai.response.model"),
        agent=as_text(attributes.get("gen_ai.agent.name")),
        read_user_texts=user_texts,
        read_tool_results=tool_results,
    )


def _input_text(raw_input: Any) -> str:
    """The model input as text, or "" when it was not captured.

    No model is called with no messages, so an empty message list (``[]``, as group-chat
    conversions write for a member that was handed the shared conversation out of band)
    means the history went unrecorded, not that there was none: it is read as not
    captured, and the member's turn continues the previous one of its agent context.
    """
    if not _opens_a_message(raw_input) and parse_jsonish(raw_input) == []:
        return ""
    return raw_input if isinstance(raw_input, str) else (as_text(raw_input) or "")


def _opens_a_message(raw_input: Any) -> bool:
    """A list text whose first element opens (``[{`` or ``["``): it parses to a non-empty
    list or not at all, never to ``[]`` — known without parsing the whole input (each
    model input of a long session is kilobytes)."""
    if not isinstance(raw_input, str):
        return False
    text = raw_input.lstrip()
    return text[:1] == "[" and text[1:].lstrip(" \t\n\r")[:1] in ("{", '"')


def _tool_run(span: SpanRecord) -> ToolRun:
    attributes = span.attributes
    raw_args = attributes.get("gen_ai.tool.call.arguments")
    arguments = parse_jsonish(raw_args)
    if isinstance(arguments, dict) and "input_str" in arguments:
        arguments = parse_jsonish(arguments["input_str"])  # LangChain callback shape
    return tool_run(
        span,
        name=str(attributes.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool ")),
        call_id=attributes.get("gen_ai.tool.call.id"),
        arguments=arguments,
        arguments_raw=raw_args if isinstance(raw_args, str) else as_text(raw_args),
        result_key="gen_ai.tool.call.result",
    )


def _retrieval(span: SpanRecord) -> RetrievalRun:
    attributes = span.attributes
    documents = parse_jsonish(attributes.get("gen_ai.retrieval.documents")) or []
    return RetrievalRun(
        span=span,
        query=attributes.get("gen_ai.retrieval.query.text"),
        documents=[d for d in documents if isinstance(d, dict)]
        if isinstance(documents, list)
        else [],
    )


def _agent_run(span: SpanRecord, operation: str) -> AgentRun:
    attributes = span.attributes
    text, _ = output_of(attributes.get("gen_ai.output.messages"))
    nested = attributes.get("gen_ai.invocation.is_nested") in (True, "true")
    return AgentRun(
        span=span,
        name=str(attributes.get("gen_ai.agent.name") or span.name.removeprefix("invoke_agent ")),
        output_text=text,
        nested=nested or operation == INTERNAL_INVOCATION,
    )


def observe(span: SpanRecord, operation: str) -> Operation | None:
    """The span by its ``gen_ai.operation.name``; unknown operations are left to others."""
    if operation in MODEL_OPERATIONS:
        return _model_call(span)
    if operation == "execute_tool":
        return _tool_run(span)
    if operation == "retrieval":
        return _retrieval(span)
    if operation in AGENT_OPERATIONS:
        return _agent_run(span, operation)
    if operation == CONVERSATION_TURN:
        return ConversationTurnRun(span)
    return None


def tool_definitions(span: SpanRecord) -> dict[str, Any]:
    """``gen_ai.tool.definitions`` as ``{tool name: JSON Schema of its parameters}``."""
    definitions = parse_jsonish(span.attributes.get("gen_ai.tool.definitions"))
    out: dict[str, Any] = {}
    if not isinstance(definitions, list):
        return out
    for item in definitions:
        if not isinstance(item, dict):
            continue
        nested = item.get("function")
        function: dict[str, Any] = nested if isinstance(nested, dict) else item
        name = function.get("name")
        schema = function.get("parameters") or function.get("input_schema")
        if name and isinstance(schema, dict):
            out[str(name)] = schema
    return out


def _code_lines(arguments: Any) -> list[str]:
    """Distinctive lines of the code a run executed (whitespace-normalised, ≥ 12 chars)."""
    found: list[str] = []
    stack = [arguments]
    while stack and len(found) < 3:
        node = stack.pop(0)
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and ("\n" in node or len(node) >= 20):
            lines = (" ".join(line.split()) for line in node.splitlines())
            found.extend(line for line in lines if len(line) >= 12)
    return found[:3]


def link_code_runs(operations: Mapping[str, Operation], spans: Mapping[str, SpanRecord]) -> None:
    """A code-executing agent (AG2's terminal, Magentic-One's ComputerTerminal) runs the
    code a message holds: the run is traced as ``execute_tool``, and no model output asks
    for it (no tool-call part with its call id, or with its name when it has none). The
    run is the execution of that message's code, so it is made that message's tool call:
    a failed run is then the author's attempt, not an act of nobody. Linked only when
    the message — the latest model call before the run under the same parent — contains
    the code's first distinctive line.
    """
    del spans  # the parent link is on the spans the operations carry
    model_calls = sorted(
        (o for o in operations.values() if isinstance(o, ModelCall) and o.text),
        key=lambda o: (o.span.end_unix_nano, o.span.start_unix_nano),
    )
    requests = [c for mc in model_calls for c in mc.tool_calls]
    ids, names = {c.call_id for c in requests}, {c.name for c in requests}
    # Model calls by parent, in end order: the latest before a run is found by bisection
    # (a scan of every model call per run is quadratic in a long session).
    siblings: dict[str | None, tuple[list[int], list[ModelCall]]] = {}
    for mc in model_calls:
        ends, calls = siblings.setdefault(mc.span.parent_span_id, ([], []))
        ends.append(mc.span.end_unix_nano)
        calls.append(mc)
    for run in operations.values():
        if not isinstance(run, ToolRun) or (
            run.call_id in ids if run.call_id else run.name in names
        ):
            continue
        lines = _code_lines(run.arguments)
        ends, calls = siblings.get(run.span.parent_span_id, ([], []))
        before = bisect.bisect_right(ends, run.span.start_unix_nano)
        if not lines or not before:
            continue
        author = calls[before - 1]
        if lines[0] in " ".join((author.text or "").split()):
            run.call_id = run.call_id or f"code-run:{run.span.span_id}"
            author.tool_calls.append(
                ToolCallRequest(run.call_id, run.name, run.arguments, run.arguments_raw)
            )


class GenAIDialect(BaseDialect):
    """The OTel GenAI conventions; after OpenInference, whose spans may carry copies."""

    name = "genai"
    band = "convention"
    session_keys = (SessionKey("gen_ai.conversation.id", 0),)

    def claims(self, span: SpanRecord) -> bool:
        attributes = span.attributes
        operation = attributes.get("gen_ai.operation.name")
        if operation is None:
            return False
        # Legacy Traceloop content on a current span: the legacy dialect reads it.
        return not (
            str(operation) in MODEL_OPERATIONS
            and attributes.get("gen_ai.input.messages") is None
            and "gen_ai.prompt.0.role" in attributes
        )

    def observe(self, span: SpanRecord) -> Operation | None:
        return observe(span, str(span.attributes["gen_ai.operation.name"]))

    def tool_definitions(self, span: SpanRecord) -> dict[str, Any]:
        if "gen_ai.tool.definitions" not in span.attributes:
            return {}
        return tool_definitions(span)

    def repair(self, operations: Mapping[str, Operation], spans: Mapping[str, SpanRecord]) -> None:
        link_code_runs(operations, spans)


dialect = GenAIDialect()
