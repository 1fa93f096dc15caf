"""What a span *means* for AEM, independent of the dialect that described it.

Each dialect (``collectors.dialects.protocol``) turns a span into at most one operation:
a model call (its output text and tool-call requests, and its input as evidence of
history), a tool run, a retrieval, or an agent run. Session building
(``collectors.sessions``) works only on these, so a new dialect is a new module, not a
new code path.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aem.foundation.model import SpanRecord


@dataclass(slots=True)
class ToolCallRequest:
    """A tool call as the model asked for it (a ``tool_call`` part)."""

    call_id: str | None
    name: str
    arguments: Any
    arguments_raw: str | None = None

    @classmethod
    def parse(cls, call_id: Any, name: Any, raw_arguments: Any) -> ToolCallRequest:
        """From the dialect's fields; arguments may be a JSON string or structured."""
        return cls(
            call_id=str(call_id) if call_id else None,
            name=str(name or ""),
            arguments=parse_jsonish(raw_arguments),
            arguments_raw=raw_arguments
            if isinstance(raw_arguments, str)
            else as_text(raw_arguments),
        )


@dataclass(slots=True)
class ModelCall:
    span: SpanRecord
    text: str | None
    tool_calls: list[ToolCallRequest]
    # The model's input as one searchable string: history evidence is found by looking
    # for earlier outputs (call ids, text) in it, without parsing the whole history.
    input_text: str
    user_texts: list[str] = field(default_factory=list)
    # Tool results visible in the input, by call id, where the dialect makes them cheap.
    tool_results: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    # The agent the span itself names as speaker (a group-chat member), when it does:
    # it names the turn before the enclosing agent run does.
    agent: str | None = None
    # For dialects that leave a large input unparsed (most sessions never need it): read
    # the user texts / fed-back tool results out of ``input_text`` only when asked.
    read_user_texts: Callable[[str], list[str]] | None = None
    read_tool_results: Callable[[str], dict[str, str]] | None = None


@dataclass(slots=True)
class ToolRun:
    span: SpanRecord
    name: str
    call_id: str | None
    arguments: Any
    arguments_raw: str | None
    has_result: bool
    result: Any
    result_raw: str | None
    error: str | None
    error_type: str | None


@dataclass(slots=True)
class RetrievalRun:
    span: SpanRecord
    query: str | None
    documents: list[dict[str, Any]]


@dataclass(slots=True)
class AgentRun:
    span: SpanRecord
    name: str
    output_text: str | None = None
    # An in-process invocation inside another one (``gen_ai.invocation.is_nested``, or
    # an internal invocation): it never starts a turn of the conversation.
    nested: bool = False


@dataclass(slots=True)
class ConversationTurnRun:
    """A framework runner's turn of the conversation (the GenAI conventions'
    ``handle_conversation_turn``): it bounds one exchange, user message to answer. Not an
    agent: the invocations under it keep their own contexts."""

    span: SpanRecord


Operation = ModelCall | ToolRun | RetrievalRun | AgentRun | ConversationTurnRun


def parse_jsonish(value: Any) -> Any:
    """A value that may be JSON text (or a Python repr, as LangChain writes) → Python.

    >>> parse_jsonish('{"a": 1}'), parse_jsonish("{'a': 1}"), parse_jsonish("Paris")
    ({'a': 1}, {'a': 1}, 'Paris')
    """
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return value
    first = text[0]
    if first in '[{"-' or first.isdigit() or text in ("true", "false", "null"):
        try:
            return json.loads(text)
        except ValueError:
            pass
        if first in "[{":
            try:
                return ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                pass
    return value


def as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def span_error(span: SpanRecord) -> tuple[str | None, str | None]:
    """``(message, error.type)`` when the span failed: status, ``error.type``, exceptions."""
    error_type = span.attributes.get("error.type")
    message = span.status_message or None
    for event in span.events:
        if event.name == "exception":
            error_type = error_type or event.attributes.get("exception.type")
            message = message or event.attributes.get("exception.message")
    if span.status_code == 2 or error_type:
        return message or str(error_type or "error status"), (
            str(error_type) if error_type else None
        )
    return None, None


def unwrap_tool_message(value: Any) -> tuple[Any, str | None, bool]:
    """LangChain serialises tool results as ``ToolMessage`` objects; take content and id.

    Returns ``(content, tool_call_id, is_error)``; a plain value passes through.
    """
    node = value
    if isinstance(node, dict) and "output" in node and len(node) <= 3:
        node = node["output"]
    if isinstance(node, dict):
        data = node.get("kwargs") or node.get("data")
        if isinstance(data, dict) and ("tool_call_id" in data or node.get("type") == "tool"):
            return (
                data.get("content"),
                data.get("tool_call_id"),
                data.get("status") == "error",
            )
    return value, None, False


def tool_run(
    span: SpanRecord,
    *,
    name: str,
    call_id: str | None,
    arguments: Any,
    arguments_raw: str | None,
    result_key: str,
) -> ToolRun:
    """A tool run from any dialect: the result attribute is unwrapped (LangChain's
    ``ToolMessage`` carries the call id and an error status), errors come from the span."""
    has_result = result_key in span.attributes
    result, message_call_id, tool_error = unwrap_tool_message(
        parse_jsonish(span.attributes.get(result_key))
    )
    error, error_type = span_error(span)
    if tool_error and error is None:
        error = as_text(result)
    return ToolRun(
        span=span,
        name=name,
        call_id=call_id or message_call_id,
        arguments=arguments,
        arguments_raw=arguments_raw,
        has_result=has_result,
        result=parse_jsonish(result) if isinstance(result, str) else result,
        result_raw=as_text(result),
        error=error,
        error_type=error_type,
    )
