"""OpenInference (Arize): ``openinference.span.kind`` and flattened message lists.

Two shapes of the same facts are handled: flattened ``llm.*_messages`` attributes
(LangChain/LangGraph) and the raw ``input.value``/``output.value`` item lists of the
OpenAI Agents SDK (``function_call`` / ``function_call_output`` items), where no
flattened tool calls exist. LangGraph's tool spans lack the call id; the session repair
takes it from the parent chain span. Session key: ``session.id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aem.foundation.model import SpanRecord
from collectors.dialects.base import (
    AgentRun,
    ModelCall,
    Operation,
    RetrievalRun,
    ToolCallRequest,
    ToolRun,
    as_text,
    parse_jsonish,
    tool_run,
)
from collectors.dialects.flatten import unflatten
from collectors.dialects.protocol import BaseDialect, SessionKey


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        message = item.get("message", item)
        return message if isinstance(message, dict) else {}
    return {}


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if content:
        return str(content)
    texts = []
    for item in message.get("contents") or []:
        part = item.get("message_content", item) if isinstance(item, dict) else {}
        if isinstance(part, dict) and part.get("text"):
            texts.append(str(part["text"]))
    return "\n".join(texts)


def _tool_calls(message: dict[str, Any]) -> list[ToolCallRequest]:
    calls = []
    for item in message.get("tool_calls") or []:
        call = item.get("tool_call", item) if isinstance(item, dict) else {}
        function = call.get("function") or {}
        raw = function.get("arguments")
        calls.append(ToolCallRequest.parse(call.get("id"), function.get("name"), raw))
    return calls


def _items_output(value: Any) -> tuple[str | None, list[ToolCallRequest]]:
    """OpenAI Agents/Responses items: ``function_call`` and ``message`` entries."""
    items = parse_jsonish(value)
    if not isinstance(items, list):
        return None, []
    texts: list[str] = []
    calls: list[ToolCallRequest] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            raw = item.get("arguments")
            calls.append(
                ToolCallRequest.parse(item.get("call_id") or item.get("id"), item.get("name"), raw)
            )
        elif item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("text"):
                    texts.append(str(part["text"]))
    return ("\n".join(texts) or None), calls


def _model_call(span: SpanRecord) -> ModelCall:
    attributes = span.attributes
    outputs = [_message(m) for m in unflatten(attributes, "llm.output_messages.")]
    texts = [t for m in outputs if (t := _content(m))]
    calls = [c for m in outputs for c in _tool_calls(m)]
    if not texts and not calls:
        text, calls = _items_output(attributes.get("output.value"))
        texts = [text] if text else []
    inputs = [_message(m) for m in unflatten(attributes, "llm.input_messages.")]
    user_texts = [t for m in inputs if m.get("role") == "user" and (t := _content(m))]
    tool_results = {
        str(m["tool_call_id"]): _content(m)
        for m in inputs
        if m.get("role") == "tool" and m.get("tool_call_id")
    }
    raw_input = attributes.get("input.value")
    items = parse_jsonish(raw_input) if not inputs else None
    if isinstance(items, list):
        for item in items:
            if not isinstance(item, dict):
                continue
            if item.get("role") == "user" and isinstance(item.get("content"), str):
                user_texts.append(item["content"])
            if item.get("type") == "function_call_output" and item.get("call_id"):
                tool_results[str(item["call_id"])] = as_text(item.get("output")) or ""
    evidence = [as_text(raw_input) or ""]
    for m in inputs:
        evidence.append(_content(m))
        if m.get("tool_call_id"):
            evidence.append(str(m["tool_call_id"]))
        evidence.extend(c.call_id or "" for c in _tool_calls(m))
    return ModelCall(
        span=span,
        text="\n".join(texts) or None,
        tool_calls=calls,
        input_text="\n".join(evidence),
        user_texts=user_texts,
        tool_results=tool_results,
        model=attributes.get("llm.model_name"),
        agent=as_text(attributes.get("agent.name")),
    )


def unwrap_call_arguments(value: Any) -> Any:
    """smolagents records a tool's Python call, ``{"args": [...], "kwargs": {...}}``, as
    the TOOL span's input; the tool's arguments are the keyword arguments (and a lone
    dict passed positionally, which smolagents itself spreads as keywords).

    >>> unwrap_call_arguments({"args": [], "kwargs": {"query": "Paris"}})
    {'query': 'Paris'}
    >>> unwrap_call_arguments({"args": [{"query": "Paris"}], "kwargs": {}})
    {'query': 'Paris'}
    >>> unwrap_call_arguments({"args": ["Paris"], "kwargs": {"n": 2}})
    {'n': 2, 'args': ['Paris']}
    """
    if not isinstance(value, dict) or not value or not set(value) <= {"args", "kwargs"}:
        return value
    args, kwargs = value.get("args") or [], value.get("kwargs") or {}
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        return value
    if len(args) == 1 and isinstance(args[0], dict):
        return {**args[0], **kwargs}
    return {**kwargs, "args": args} if args else dict(kwargs)


def _tool_run(span: SpanRecord) -> ToolRun:
    attributes = span.attributes
    raw_args = attributes.get("input.value")
    return tool_run(
        span,
        name=str(attributes.get("tool.name") or span.name),
        call_id=attributes.get("tool.id") or attributes.get("tool_call.id"),
        arguments=unwrap_call_arguments(parse_jsonish(raw_args)),
        arguments_raw=as_text(raw_args),
        result_key="output.value",
    )


def _is_graph_node(span: SpanRecord) -> bool:
    """LangGraph marks its graph nodes AGENT; a node is not an agent invocation."""
    metadata = parse_jsonish(span.attributes.get("metadata"))
    return isinstance(metadata, dict) and "langgraph_node" in metadata


def observe(span: SpanRecord, kind: str) -> Operation | None:
    """The span by its (upper-cased) ``openinference.span.kind``; CHAIN etc. are glue."""
    attributes = span.attributes
    if kind == "LLM":
        return _model_call(span)
    if kind == "TOOL":
        return _tool_run(span)
    if kind == "RETRIEVER":
        documents = [
            d.get("document", d)
            for d in unflatten(attributes, "retrieval.documents.")
            if isinstance(d, dict)
        ]
        return RetrievalRun(
            span=span, query=as_text(attributes.get("input.value")), documents=documents
        )
    if kind == "AGENT" and not _is_graph_node(span):
        output = parse_jsonish(attributes.get("output.value"))
        return AgentRun(
            span=span,
            name=str(attributes.get("agent.name") or span.name),
            output_text=output if isinstance(output, str) else None,
        )
    return None


def tool_definitions(span: SpanRecord) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in unflatten(span.attributes, "llm.tools."):
        tool = item.get("tool", item) if isinstance(item, dict) else {}
        schema = parse_jsonish(tool.get("json_schema")) if isinstance(tool, dict) else None
        if isinstance(schema, dict):
            function = schema.get("function", schema)
            name = function.get("name")
            parameters = function.get("parameters")
            if name and isinstance(parameters, dict):
                out[str(name)] = parameters
    if span.attributes.get("openinference.span.kind") == "TOOL":
        schema = parse_jsonish(
            span.attributes.get("tool.json_schema") or span.attributes.get("tool.parameters")
        )
        name = span.attributes.get("tool.name")
        if name and isinstance(schema, dict) and schema.get("type") == "object":
            out[str(name)] = schema
    return out


def fill_langgraph_tool_context(
    operations: Mapping[str, Operation], spans: Mapping[str, SpanRecord]
) -> None:
    """LangGraph's OpenInference TOOL spans lack the call id (and, for one-argument tools,
    the argument name); its parent ``tools`` chain holds the full ``tool_call``."""
    for run in operations.values():
        if not isinstance(run, ToolRun):
            continue
        if run.call_id is not None and isinstance(run.arguments, dict):
            continue
        parent = spans.get(run.span.parent_span_id or "")
        if parent is None:
            continue
        payload = parse_jsonish(parent.attributes.get("input.value"))
        call = payload.get("tool_call") if isinstance(payload, dict) else None
        if isinstance(call, dict) and call.get("name") == run.name:
            run.call_id = run.call_id or call.get("id")
            if isinstance(call.get("args"), dict):
                run.arguments = call["args"]


class OpenInferenceDialect(BaseDialect):
    """Asked first and exclusive: its spans may also carry ``gen_ai.*`` copies, and a
    CHAIN or graph-node span must stay glue rather than be read again as GenAI."""

    name = "openinference"
    band = "framework"
    exclusive = True
    session_keys = (SessionKey("session.id", 10),)

    def claims(self, span: SpanRecord) -> bool:
        return span.attributes.get("openinference.span.kind") is not None

    def observe(self, span: SpanRecord) -> Operation | None:
        return observe(span, str(span.attributes["openinference.span.kind"]).upper())

    def tool_definitions(self, span: SpanRecord) -> dict[str, Any]:
        return tool_definitions(span)

    def repair(self, operations: Mapping[str, Operation], spans: Mapping[str, SpanRecord]) -> None:
        fill_langgraph_tool_context(operations, spans)


dialect = OpenInferenceDialect()
