"""Level-1 results out of step spans: which step ran, and what its criteria scored.

Why both forms are read — ``aem.score.criterion.<c>.<field>`` attributes and
``gen_ai.evaluation.result`` events on the step span: instrumentations that write results
while the span is open use attributes; evaluators that run afterwards (and GenAI
conventions) use events. A criterion reported both ways with different numbers is a
conflict, and the step then has no usable result rather than a guessed one.

Why a value of the wrong type is a problem and not coerced: ``fired = "false"`` is a
non-empty string, true to Python, and read as such it would block a conversation on a
blocker that did not fire. A score that is not a finite number, or a fired flag that is
not a boolean, leaves the step without a usable result and names the span instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aem.foundation.model import SpanRecord
from aem.scorecards import contract as c
from aem.scorecards.results import CriterionResult, StepResult

# The results are defined in aem.scorecards.results; read from here too, where they are made.
__all__ = [
    "CriterionResult",
    "StepResult",
    "is_step_span",
    "latest_results",
    "root_span",
    "step_result",
]


def is_step_span(span: SpanRecord, pipeline: str) -> bool:
    """A span of ``pipeline`` that names a step (pipeline name on the span or its resource)."""
    return bool(span.attributes.get(c.STEP_NAME)) and span.attr(c.PIPELINE_NAME) == pipeline


def _number(value: Any) -> float | None:
    """A finite number, or None (``inf``, ``nan``, text, a bool are not points)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _set(fields: dict[str, Any], problems: list[str], name: str, key: str, value: Any) -> None:
    """Record one field of a criterion; a different second value is a conflict."""
    if key in fields and fields[key] != value:
        problems.append(f"criterion {name!r}: {key} reported as {fields[key]!r} and {value!r}")
        return
    fields[key] = value


def _field_value(key: str, raw: Any, name: str, problems: list[str]) -> Any:
    if key in (c.FIELD_VALUE, c.FIELD_MAX):
        number = _number(raw)
        if number is None:
            problems.append(f"criterion {name!r}: {key} {raw!r} is not a finite number")
        return number
    if key == c.FIELD_FIRED:
        if not isinstance(raw, bool):
            problems.append(f"criterion {name!r}: {key} {raw!r} is not a boolean")
            return None
        return raw
    return str(raw)


def _from_attributes(
    attrs: Mapping[str, Any], found: dict[str, dict[str, Any]], problems: list[str]
) -> None:
    for key, raw in attrs.items():
        if not key.startswith(c.CRITERION_PREFIX):
            continue
        name, _, field = key[len(c.CRITERION_PREFIX) :].rpartition(".")
        if name and field in c.CRITERION_FIELDS:
            value = _field_value(field, raw, name, problems)
            _set(found.setdefault(name, {}), problems, name, field, value)


def _from_events(span: SpanRecord, found: dict[str, dict[str, Any]], problems: list[str]) -> None:
    pairs = (
        (c.EVENT_VALUE, c.FIELD_VALUE),
        (c.EVENT_MAX, c.FIELD_MAX),
        (c.EVENT_MODE, c.FIELD_MODE),
        (c.EVENT_FIRED, c.FIELD_FIRED),
    )
    for event in span.events:
        name = event.attributes.get(c.EVENT_NAME)
        if event.name != c.EVALUATION_EVENT or not name:
            continue
        fields = found.setdefault(str(name), {})
        for attr, field in pairs:
            if attr in event.attributes:
                value = _field_value(field, event.attributes[attr], str(name), problems)
                _set(fields, problems, str(name), field, value)


def step_result(span: SpanRecord) -> StepResult:
    """The step result one step span carries (attributes and events merged)."""
    found: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    _from_attributes(span.attributes, found, problems)
    _from_events(span, found, problems)
    kind = span.attributes.get(c.STEP_KIND)
    return StepResult(
        step=str(span.attributes[c.STEP_NAME]),
        kind=str(kind) if kind is not None else None,
        trace_id=span.trace_id,
        span_id=span.span_id,
        parent_span_id=span.parent_span_id,
        end_unix_nano=span.end_unix_nano,
        failed=(span.status_message or "status ERROR") if span.status_code == 2 else None,
        criteria=tuple(CriterionResult(name=n, **f) for n, f in sorted(found.items())),
        problems=tuple(problems),
    )


def latest_results(
    spans: Iterable[SpanRecord],
    pipeline: str,
    on_result: Callable[[SpanRecord, StepResult], None] | None = None,
) -> dict[str, StepResult]:
    """One result per step: the span that ended last wins (a rescore replaces a score).

    ``on_result`` sees every step span with its result, superseded ones too, so a span
    with a bad field is reported even when a later one replaces it.
    """
    out: dict[str, StepResult] = {}
    for span in spans:
        if not is_step_span(span, pipeline):
            continue
        result = step_result(span)
        if on_result is not None:
            on_result(span, result)
        held = out.get(result.step)
        if held is None or result.end_unix_nano >= held.end_unix_nano:
            out[result.step] = result
    return out


def root_span(spans: Iterable[SpanRecord]) -> tuple[str, str] | None:
    """``(trace id, span id)`` of the run's root: a span without a parent, the first seen."""
    return next(((s.trace_id, s.span_id) for s in spans if not s.parent_span_id), None)
