"""Pair the tool calls a model asked for with the tool runs that executed them, and with
their results.

Real traces reuse call ids, omit them on tool spans, or carry them on one side only, so
pairing tries the strictest evidence first and only then weaker ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from aem.foundation.model import ToolCall
from aem.foundation.textindex import PatternFinder
from collectors.dialects.base import ModelCall, ToolCallRequest, ToolRun

MATCHERS = ("id", "name_args", "name")


def arguments_key(value: object) -> str:
    """Arguments as comparable text: key order and number formatting do not matter."""
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _match_key(matcher: str, name: str, arguments: object) -> tuple[str, ...]:
    """What a request and a run must share to pair under ``matcher`` (besides ids)."""
    return (name, arguments_key(arguments)) if matcher == "name_args" else (name,)


@dataclass(slots=True)
class _Queue:
    """Runs of one match key in time order; ``head`` passes runs that can no longer pair."""

    runs: list[ToolRun] = field(default_factory=list)
    head: int = 0

    def take(self, not_before: int, used: set[str]) -> ToolRun | None:
        """The first unused run that started at ``not_before`` or later.

        Requests come in time order, so a run used or started too early for one request
        is so for every later one: the head only moves forward (each run passed once).
        """
        runs = self.runs
        while self.head < len(runs) and (
            runs[self.head].span.span_id in used
            or runs[self.head].span.start_unix_nano < not_before
        ):
            self.head += 1
        return runs[self.head] if self.head < len(runs) else None


def _queues(matcher: str, runs: list[ToolRun], used: set[str]) -> dict[tuple[Any, ...], _Queue]:
    """The runs still free, by what a request must share with them under ``matcher``.

    Key ``("id", call id)``; else ``(True, key)`` holds every run of a key and
    ``(False, key)`` only runs without a call id (a request with an id pairs only those:
    when both sides carry ids and they differ, they are different calls).
    """
    queues: dict[tuple[Any, ...], _Queue] = {}
    for run in runs:
        if run.span.span_id in used:
            continue
        if matcher == "id":
            if run.call_id is not None:
                queues.setdefault(("id", run.call_id), _Queue()).runs.append(run)
            continue
        key = _match_key(matcher, run.name, run.arguments)
        queues.setdefault((True, *key), _Queue()).runs.append(run)
        if run.call_id is None:
            queues.setdefault((False, *key), _Queue()).runs.append(run)
    return queues


def _request_key(matcher: str, request: ToolCallRequest) -> tuple[Any, ...] | None:
    """The queue a request takes its run from under ``matcher`` (see :func:`_queues`)."""
    if matcher == "id":
        return None if request.call_id is None else ("id", request.call_id)
    return (request.call_id is None, *_match_key(matcher, request.name, request.arguments))


def pair_tool_runs(
    calls: list[tuple[ModelCall, ToolCallRequest]], runs: list[ToolRun]
) -> dict[int, ToolRun]:
    """Pair each requested call (by position in ``calls``) with the tool run that executed it.

    By call id first, scoped to runs that started after the request (ids are reused in
    real traces); then by name and arguments, then by name alone, in time order. Each
    request takes the first free run of its key (an index, not a scan of every run).
    """
    starts = [mc.span.start_unix_nano for mc, _ in calls]
    if starts != sorted(starts):
        return pair_tool_runs_by_scan(calls, runs)
    paired: dict[int, ToolRun] = {}
    used: set[str] = set()
    for matcher in MATCHERS:
        queues = _queues(matcher, runs, used)
        for index, (model_call, request) in enumerate(calls):
            if index in paired:
                continue
            key = _request_key(matcher, request)
            if key is None:
                continue
            queue = queues.get(key)
            run = queue.take(model_call.span.start_unix_nano, used) if queue else None
            if run is not None:
                paired[index] = run
                used.add(run.span.span_id)
    return paired


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


def pair_tool_runs_by_scan(
    calls: list[tuple[ModelCall, ToolCallRequest]], runs: list[ToolRun]
) -> dict[int, ToolRun]:
    """:func:`pair_tool_runs` by testing every run for every request: for inputs not in
    time order (never from :func:`collectors.sessions.build_session`, which sorts)."""
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
    request: ToolCallRequest, run: ToolRun | None, fed_back: FedBackResults
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
    result_raw = fed_back.get(request.call_id) if request.call_id else None
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


class FedBackResults:
    """Tool results fed back to a model, by call id: the first model call (in the order
    given) that carries the id's result, as parsed by its dialect.

    Found in one pass over the inputs for the ids asked about (the requests no tool run
    executed), each input searched through an index of those ids, not once per id.
    """

    def __init__(self, model_calls: Iterable[ModelCall], call_ids: Iterable[str]) -> None:
        self._found: dict[str, str] = {}
        wanted = set(call_ids)
        finder = PatternFinder(wanted) if wanted else None
        for call in model_calls:
            if not wanted:
                break
            for call_id in wanted.intersection(call.tool_results):
                self._found[call_id] = call.tool_results[call_id]
            wanted.difference_update(self._found)
            if (
                finder is None
                or call.read_tool_results is None
                or not call.input_text.lstrip().startswith("[")
            ):
                continue
            present = wanted.intersection(finder.find(call.input_text))
            if present:
                results = call.read_tool_results(call.input_text)
                for call_id in present.intersection(results):
                    self._found[call_id] = results[call_id]
                wanted.difference_update(self._found)

    def get(self, call_id: str) -> str | None:
        """The result fed back under ``call_id``; None when no input carries it."""
        return self._found.get(call_id)
