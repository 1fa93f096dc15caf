"""Which earlier model call each model call continues (its history predecessor).

History is found by evidence, not by position: a model call's predecessor is the latest
earlier model call whose output (tool-call ids or text) appears in this call's input.
Only when the input was not captured do we fall back to "the previous model call of the
same agent context".
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from collectors.dialects.base import ModelCall
from collectors.sessions.contexts import Context

SNIPPET = 80  # characters of an output looked for in later inputs


def evidence_variants(text: str) -> list[str]:
    """A text's opening as it may appear in an input: raw, or JSON-escaped either way."""
    snippet = text.strip()[:SNIPPET]
    if not snippet:
        return []
    return list(
        dict.fromkeys(
            [
                snippet,
                json.dumps(snippet, ensure_ascii=False)[1:-1],
                json.dumps(snippet)[1:-1],
            ]
        )
    )


def output_evidence(call: ModelCall) -> list[str]:
    """What of this call's output a later input would contain if it continued from it."""
    evidence = [c.call_id for c in call.tool_calls if c.call_id]
    if call.text:
        evidence.extend(evidence_variants(call.text))
    return evidence


def history(model_calls: list[ModelCall], contexts: Mapping[str, Context]) -> dict[str, ModelCall]:
    """Each model call's history predecessor, by evidence; structural fallback."""
    ordered = sorted(model_calls, key=lambda m: (m.span.start_unix_nano, m.span.span_id))
    evidence = {id(m): output_evidence(m) for m in ordered}
    found: dict[str, ModelCall] = {}
    for position, call in enumerate(ordered):
        earlier = ordered[:position]
        if call.input_text:
            for candidate in reversed(earlier):
                if any(e in call.input_text for e in evidence[id(candidate)]):
                    found[call.span.span_id] = candidate
                    break
            continue
        context = contexts[call.span.span_id].key
        for candidate in reversed(earlier):
            if contexts[candidate.span.span_id].key == context:
                found[call.span.span_id] = candidate
                break
    return found
