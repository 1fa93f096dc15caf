"""Legacy OpenLLMetry/Traceloop (semconv-ai < 0.5): flattened ``gen_ai.prompt.N.*`` and
``gen_ai.completion.N.*`` on LLM spans, tool schemas in ``llm.request.functions.N.*``.

Still written by unmigrated instrumentation packages, sometimes on spans that also carry
a current ``gen_ai.operation.name`` (the GenAI dialect leaves those to this one).
"""

from __future__ import annotations

from typing import Any

from aem.foundation.model import SpanRecord
from collectors.dialects.base import ModelCall, Operation, ToolCallRequest, parse_jsonish
from collectors.dialects.flatten import unflatten
from collectors.dialects.protocol import BaseDialect


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


class TraceloopLegacyDialect(BaseDialect):
    """Model calls in the flattened legacy shape; asked before the decorator dialect."""

    name = "traceloop_legacy"
    band = "legacy"

    def claims(self, span: SpanRecord) -> bool:
        attributes = span.attributes
        return attributes.get("llm.request.type") in ("chat", "completion") or (
            "gen_ai.prompt.0.role" in attributes or "gen_ai.completion.0.role" in attributes
        )

    def observe(self, span: SpanRecord) -> Operation | None:
        return _model_call(span)

    def tool_definitions(self, span: SpanRecord) -> dict[str, Any]:
        return tool_definitions(span)


dialect = TraceloopLegacyDialect()
