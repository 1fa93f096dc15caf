"""Pair the tool calls a model asked for with the tool runs that executed them, and with
their results.

Real traces reuse call ids, omit them on tool spans, or carry them on one side only, so
pairing tries the strictest evidence first and only then weaker ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from aem.model import ToolCall
from collectors.dialects.base import ModelCall, ToolCallRequest, ToolRun

MATCHERS = ("id", "name_args", "name")


def arguments_key(value: object) -> str:
    """Arguments as comparable text: key order and number formatting do not matter."""
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _matches(matcher: str, request: ToolCallRequest, run: ToolRun) -> bool:
    if matcher == "id":
        return request.call_id is not None and run.call_id == request.call_id
    if run.call_id is not None and request.call_id is not None:
        return False  # both carry ids and they differ
    if matcher == "name_args":
        return run.name == request.name and arguments_key(run.arguments) == (
            arguments_key(request.arguments)
        )
    return run.name == request.name


def pair_tool_runs(
    calls: list[tuple[ModelCall, ToolCallRequest]], runs: list[ToolRun]
) -> dict[int, ToolRun]:
    """Pair each requested call (by position in ``calls``) with the tool run that executed it.

    By call id first, scoped to runs that started after the request (ids are reused in
    real traces); then by name and arguments, then by name alone, in time order.
    """
    paired: dict[int, ToolRun] = {}
    used: set[str] = set()
    for matcher in MATCHERS:
        for index, (model_call, request) in enumerate(calls):
            if index in paired:
                continue
            for run in runs:
                if run.span.span_id in used or run.span.start_unix_nano < (
                    model_call.span.start_unix_nano
                ):
                    continue
                if _matches(matcher, request, run):
                    paired[index] = run
                    used.add(run.span.span_id)
                    break
    return paired


def to_tool_call(
    request: ToolCallRequest, run: ToolRun | None, model_calls: Iterable[ModelCall]
) -> ToolCall:
    """The reported tool call: request and run merged; without a run, the result may
    still be visible in a later model input (the tool ran but was not traced)."""
    if run is not None:
        arguments = run.arguments if isinstance(run.arguments, dict) else request.arguments
        if request.arguments is None:
            arguments = run.arguments
        return ToolCall(
            call_id=request.call_id or run.call_id,
            name=request.name or run.name,
            arguments=arguments,
            arguments_raw=request.arguments_raw or run.arguments_raw,
            has_result=run.has_result,
            result=run.result,
            result_raw=run.result_raw,
            error=run.error,
            error_type=run.error_type,
            executed=True,
        )
    result_raw = _result_in_inputs(request.call_id, model_calls) if request.call_id else None
    return ToolCall(
        call_id=request.call_id,
        name=request.name,
        arguments=request.arguments,
        arguments_raw=request.arguments_raw,
        has_result=result_raw is not None,
        result=result_raw,
        result_raw=result_raw,
        executed=False,
    )


def _result_in_inputs(call_id: str, model_calls: Iterable[ModelCall]) -> str | None:
    """A tool result fed back to a model under this call id, first model call first."""
    for call in model_calls:
        if call_id in call.tool_results:
            return call.tool_results[call_id]
        if (
            call.read_tool_results is not None
            and call_id in call.input_text
            and call.input_text.lstrip().startswith("[")
        ):
            results = call.read_tool_results(call.input_text)
            if call_id in results:
                return results[call_id]
    return None
