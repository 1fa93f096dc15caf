"""Legacy OpenLLMetry/Traceloop (semconv-ai < 0.5): flattened ``gen_ai.prompt.N.*`` and
``gen_ai.completion.N.*`` on LLM spans, ``traceloop.span.kind`` on decorated tasks.

Current Traceloop (≥ 0.5) writes the upstream GenAI attributes and is read by
``collectors.dialects.genai``; this module only covers what that one cannot.
"""

from __future__ import annotations

from typing import Any

from aem.model import SpanRecord
from collectors.dialects.base import (
    AgentRun,
    ModelCall,
    Observation,
    ToolCallRequest,
    ToolRun,
    as_text,
    parse_jsonish,
    tool_run,
)
from collectors.dialects.flatten import unflatten


def _model_call(span: SpanRecord) -> ModelCall:
    attributes = span.attributes
    completions = [c for c in unflatten(attributes, "gen_ai.completion.") if isinstance(c, dict)]
    texts = [str(c["content"]) for c in completions if c.get("content")]
    calls = [
        ToolCallRequest.parse(call.get("id"), call.get("name"), call.get("arguments"))
        for c in completions
        for call in c.get("tool_calls") or []
        if isinstance(call, dict)
    ]
    prompts = [p for p in unflatten(attributes, "gen_ai.prompt.") if isinstance(p, dict)]
    evidence: list[str] = []
    for p in prompts:
        evidence.append(str(p.get("content") or ""))
        if p.get("tool_call_id"):
            evidence.append(str(p["tool_call_id"]))
        evidence.extend(str(c.get("id")) for c in p.get("tool_calls") or [] if isinstance(c, dict))
    return ModelCall(
        span=span,
        text="\n".join(texts) or None,
        tool_calls=calls,
        input_text="\n".join(evidence),
        user_texts=[
            str(p["content"]) for p in prompts if p.get("role") == "user" and p.get("content")
        ],
        tool_results={
            str(p["tool_call_id"]): str(p.get("content") or "")
            for p in prompts
            if p.get("role") == "tool" and p.get("tool_call_id")
        },
        model=attributes.get("gen_ai.request.model") or attributes.get("llm.request.model"),
    )


def _tool_run(span: SpanRecord) -> ToolRun:
    attributes = span.attributes
    raw_input = attributes.get("traceloop.entity.input")
    entity_input = parse_jsonish(raw_input)
    arguments: Any = entity_input
    if isinstance(entity_input, dict) and ("kwargs" in entity_input or "args" in entity_input):
        kwargs = entity_input.get("kwargs") or {}
        args = entity_input.get("args") or []
        arguments = kwargs if kwargs or not args else (args[0] if len(args) == 1 else args)
    return tool_run(
        span,
        name=str(attributes.get("traceloop.entity.name") or span.name.removesuffix(".tool")),
        call_id=None,
        arguments=arguments,
        arguments_raw=as_text(raw_input),
        result_key="traceloop.entity.output",
    )


def observe(span: SpanRecord) -> Observation | None:
    attributes = span.attributes
    if attributes.get("llm.request.type") in ("chat", "completion") or (
        "gen_ai.prompt.0.role" in attributes or "gen_ai.completion.0.role" in attributes
    ):
        return _model_call(span)
    kind = attributes.get("traceloop.span.kind")
    if kind == "tool":
        return _tool_run(span)
    if kind == "agent":
        return AgentRun(span=span, name=str(attributes.get("traceloop.entity.name") or span.name))
    return None


def tool_definitions(span: SpanRecord) -> dict[str, Any]:
    """Legacy ``llm.request.functions.N.{name,parameters}`` as ``{name: JSON Schema}``."""
    out: dict[str, Any] = {}
    for function in unflatten(span.attributes, "llm.request.functions."):
        if not isinstance(function, dict) or not function.get("name"):
            continue
        schema = parse_jsonish(function.get("parameters"))
        if isinstance(schema, dict):
            out[str(function["name"])] = schema
    return out
