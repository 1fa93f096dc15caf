"""Vercel AI SDK telemetry (``experimental_telemetry``): spans marked by ``ai.operationId``.

The shape, as the SDK writes it:

- ``ai.generateText`` / ``ai.streamText`` (and the ``…Object`` variants) wrap one call
  of the SDK; ``ai.telemetry.functionId`` names it, so with one it is read as an agent run.
- ``….doGenerate`` / ``….doStream`` are the provider calls: ``ai.prompt.messages`` (JSON:
  ``{role, content}`` where content is a string or typed parts — ``text``, ``tool-call``,
  ``tool-result``), ``ai.response.text``, ``ai.response.toolCalls`` (JSON list of
  ``{toolCallId, toolName, args}``; newer releases write ``input``), ``ai.prompt.tools``
  (one JSON string per tool, its schema in ``parameters`` or ``inputSchema``), ``ai.model.id``.
- ``ai.toolCall`` is a tool execution: ``ai.toolCall.{name,id,args,result}``; a throwing
  tool leaves an error status and an exception event and no result.

User metadata is ``ai.telemetry.metadata.<key>``; a ``sessionId`` there is the session.
Asked before GenAI: these spans carry a few ``gen_ai.*`` copies (model, usage).
"""

from __future__ import annotations

from typing import Any

from aem.foundation.model import SpanRecord
from collectors.dialects.base import (
    AgentRun,
    ModelCall,
    Operation,
    ToolCallRequest,
    as_text,
    parse_jsonish,
    tool_run,
)
from collectors.dialects.protocol import BaseDialect, SessionKey

CALL_OPERATIONS = frozenset(
    {"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"}
)
MODEL_SUFFIXES = (".doGenerate", ".doStream")


def _messages(value: Any) -> list[dict[str, Any]]:
    parsed = parse_jsonish(value)
    return [m for m in parsed if isinstance(m, dict)] if isinstance(parsed, list) else []


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _tool_output(part: dict[str, Any]) -> Any:
    """A ``tool-result`` part's value: ``result``, or newer ``output: {type, value}``."""
    output = part.get("result", part.get("output"))
    if isinstance(output, dict) and "value" in output and "type" in output:
        return output["value"]
    return output


def _inputs(raw: Any) -> tuple[list[str], dict[str, str]]:
    """User texts and tool results (by call id) in ``ai.prompt.messages``."""
    users: list[str] = []
    results: dict[str, str] = {}
    for message in _messages(raw):
        for part in _parts(message):
            if message.get("role") == "user" and part.get("type") == "text" and part.get("text"):
                users.append(str(part["text"]))
            elif part.get("type") == "tool-result" and part.get("toolCallId"):
                results[str(part["toolCallId"])] = as_text(_tool_output(part)) or ""
    return users, results


def _model_call(span: SpanRecord) -> ModelCall:
    attributes = span.attributes
    raw_input = attributes.get("ai.prompt.messages")
    users, results = _inputs(raw_input)
    calls = [
        ToolCallRequest.parse(c.get("toolCallId"), c.get("toolName"), c.get("args", c.get("input")))
        for c in _messages(attributes.get("ai.response.toolCalls"))
    ]
    text = attributes.get("ai.response.text") or as_text(attributes.get("ai.response.object"))
    return ModelCall(
        span=span,
        text=str(text) if text else None,
        tool_calls=calls,
        input_text=as_text(raw_input) or "",
        user_texts=users,
        tool_results=results,
        model=attributes.get("ai.model.id") or attributes.get("gen_ai.request.model"),
    )


class VercelAIDialect(BaseDialect):
    """Provider calls, tool executions and named SDK calls; embeddings are glue."""

    name = "vercel_ai"
    band = "framework"
    session_keys = (SessionKey("ai.telemetry.metadata.sessionId", 40),)

    def claims(self, span: SpanRecord) -> bool:
        return str(span.attributes.get("ai.operationId") or "").startswith("ai.")

    def observe(self, span: SpanRecord) -> Operation | None:
        attributes = span.attributes
        operation = str(attributes["ai.operationId"])
        if operation.endswith(MODEL_SUFFIXES):
            return _model_call(span)
        if operation == "ai.toolCall":
            raw_args = attributes.get("ai.toolCall.args")
            return tool_run(
                span,
                name=str(attributes.get("ai.toolCall.name") or span.name),
                call_id=attributes.get("ai.toolCall.id"),
                arguments=parse_jsonish(raw_args),
                arguments_raw=as_text(raw_args),
                result_key="ai.toolCall.result",
            )
        function_id = attributes.get("ai.telemetry.functionId")
        if operation in CALL_OPERATIONS and function_id:
            text = attributes.get("ai.response.text")
            return AgentRun(span=span, name=str(function_id), output_text=text or None)
        return None

    def tool_definitions(self, span: SpanRecord) -> dict[str, Any]:
        tools = parse_jsonish(span.attributes.get("ai.prompt.tools"))
        out: dict[str, Any] = {}
        for item in tools if isinstance(tools, list) else []:
            tool = parse_jsonish(item)
            if not isinstance(tool, dict) or not tool.get("name"):
                continue
            schema = parse_jsonish(tool.get("parameters") or tool.get("inputSchema"))
            if isinstance(schema, dict):
                out[str(tool["name"])] = schema
        return out


dialect = VercelAIDialect()
