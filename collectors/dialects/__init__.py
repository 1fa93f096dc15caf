"""Dialect mappers: OTel GenAI, OpenInference, OpenLLMetry/Traceloop → observations.

Table-driven on purpose: GenAI is still `development` stability and renames happen.
The first mapper whose marker attribute is present wins; OpenInference is checked
first because its spans may also carry ``gen_ai.*`` copies.
"""

from __future__ import annotations

from typing import Any

from aem.model import SpanRecord
from collectors.dialects import genai, openinference, traceloop
from collectors.dialects.base import Observation


def observe(span: SpanRecord) -> Observation | None:
    """What this span means for AEM, or ``None`` for glue (chains, tasks, prompts)."""
    attributes = span.attributes
    oi_kind = attributes.get("openinference.span.kind")
    if oi_kind is not None:
        return openinference.observe(span, str(oi_kind).upper())
    operation = attributes.get("gen_ai.operation.name")
    if operation is not None:
        observed = genai.observe(span, str(operation))
        if observed is not None:
            return observed
    return traceloop.observe(span)


def tool_definitions(span: SpanRecord) -> dict[str, Any]:
    """Tool JSON Schemas declared on a span, in any dialect."""
    found = genai.tool_definitions(span)
    found.update(openinference.tool_definitions(span))
    found.update(traceloop.tool_definitions(span))
    return found
