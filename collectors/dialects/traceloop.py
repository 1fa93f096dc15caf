"""OpenLLMetry/Traceloop decorators: ``traceloop.span.kind`` tool and agent spans.

Both current (≥ 0.5) and legacy Traceloop wrap decorated functions the same way: the
entity's input is ``{"args": [...], "kwargs": {...}}`` in ``traceloop.entity.input``, its
return value in ``traceloop.entity.output``. Current Traceloop's model calls are GenAI
spans (``collectors.dialects.genai``); legacy ones are ``traceloop_legacy``.
Session key: the ``session_id`` association property.
"""

from __future__ import annotations

from typing import Any

from aem.foundation.model import SpanRecord
from collectors.dialects.base import (
    AgentRun,
    Operation,
    ToolRun,
    as_text,
    parse_jsonish,
    tool_run,
)
from collectors.dialects.protocol import BaseDialect, SessionKey

SPAN_KINDS = frozenset({"tool", "agent"})


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


class TraceloopDialect(BaseDialect):
    """Decorated ``@tool`` / ``@agent`` spans; workflows and tasks are glue."""

    name = "traceloop"
    band = "vendor"
    session_keys = (SessionKey("traceloop.association.properties.session_id", 20),)

    def claims(self, span: SpanRecord) -> bool:
        return span.attributes.get("traceloop.span.kind") in SPAN_KINDS

    def observe(self, span: SpanRecord) -> Operation | None:
        attributes = span.attributes
        if attributes.get("traceloop.span.kind") == "tool":
            return _tool_run(span)
        return AgentRun(span=span, name=str(attributes.get("traceloop.entity.name") or span.name))


dialect = TraceloopDialect()
