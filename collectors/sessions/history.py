"""Which earlier model call each model call continues (its history predecessor).

History is found by evidence, not by position: a model call's predecessor is the latest
earlier model call whose output (tool-call ids or text) appears in this call's input.
Only when the input was not captured do we fall back to "the previous model call of the
same agent context".
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping

from aem.foundation.textindex import PatternFinder
from collectors.dialects.base import ModelCall
from collectors.sessions.contexts import Context

SNIPPET = 80  # characters of an output looked for in later inputs
RECENT = 4  # calls before this one tested directly, before the index is asked


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
    """Each model call's history predecessor, by evidence; structural fallback.

    The latest earlier call any of whose evidence is in the input: found through an
    index of every call's evidence (:class:`PatternFinder`), so a session costs about
    the length of its inputs, not inputs × earlier calls.
    """
    ordered = sorted(model_calls, key=lambda m: (m.span.start_unix_nano, m.span.span_id))
    evidence = [output_evidence(call) for call in ordered]
    owners: dict[str, list[int]] = {}
    for position, found_in in enumerate(evidence):
        for pattern in dict.fromkeys(found_in):
            owners.setdefault(pattern, []).append(position)
    finder = PatternFinder(owners)
    found: dict[str, ModelCall] = {}
    latest_in_context: dict[str, ModelCall] = {}
    for position, call in enumerate(ordered):
        context = contexts[call.span.span_id].key
        if call.input_text:
            predecessor = _recent_evidenced(call.input_text, position, evidence)
            if predecessor is None and position > RECENT:
                predecessor = _latest_evidenced(call.input_text, position - RECENT, finder, owners)
            if predecessor is not None:
                found[call.span.span_id] = ordered[predecessor]
        elif context in latest_in_context:
            found[call.span.span_id] = latest_in_context[context]
        latest_in_context[context] = call
    return found


def _recent_evidenced(text: str, position: int, evidence: list[list[str]]) -> int | None:
    """The latest of the ``RECENT`` calls before ``position`` whose evidence is in the
    text, tested directly: a conversation's input usually holds the previous output."""
    for earlier in range(position - 1, max(position - RECENT, 0) - 1, -1):
        if any(e in text for e in evidence[earlier]):
            return earlier
    return None


def _latest_evidenced(
    text: str, position: int, finder: PatternFinder, owners: Mapping[str, list[int]]
) -> int | None:
    """The latest position before ``position`` whose evidence occurs in ``text``
    (none when ``position`` is 0 or less).

    Candidates are confirmed latest first, so the usual case (the previous call's output
    is in the input) costs one confirmation.
    """
    latest: dict[str, tuple[int, bool]] = {}
    for pattern, certain in finder.candidates(text):
        earlier = owners[pattern]
        before = bisect.bisect_left(earlier, position)
        if before:
            _, known = latest.get(pattern, (0, False))
            latest[pattern] = (earlier[before - 1], known or certain)
    for owner, pattern, certain in sorted(
        ((o, p, c) for p, (o, c) in latest.items()), reverse=True
    ):
        if certain or pattern in text:
            return owner
    return None
