"""Turn the spans of one session into turns, with the link keys the turn graph needs.

Steps, each a small function: repair the span tree (duplicates, orphans, parent
cycles — each reported), map every span through its dialect, find each agent's
context, pair tool-call requests with tool runs, then cut turns in time order.

History is found by evidence, not by position: a model call's predecessor is the latest
earlier model call whose output (tool-call ids or text) appears in this call's input.
Only when the input was not captured do we fall back to "the previous model call of the
same agent context".
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from aem.model import ClosedSession, Document, InputIssue, Session, SpanRecord, ToolCall, Turn, TurnKind
from collectors.dialects import genai, observe, tool_definitions
from collectors.dialects.base import (
    AgentRun,
    ModelCall,
    Observation,
    RetrievalRun,
    ToolCallRequest,
    ToolRun,
    as_text,
    parse_jsonish,
)

_ROOT_CONTEXT = "root"


def _issue(kind: str, message: str, span: SpanRecord, session_id: str) -> InputIssue:
    return InputIssue(
        kind=kind,
        message=message,
        source=span.origin.source if span.origin else None,
        line=span.origin.line if span.origin else None,
        session_id=session_id,
        span_id=span.span_id,
        trace_id=span.trace_id,
    )


def repair_span_tree(
    spans: list[SpanRecord], session_id: str
) -> tuple[list[SpanRecord], list[InputIssue]]:
    """Drop duplicate span ids, detach orphans and break parent cycles — reporting each.

    The span tree must be a forest before contexts can be computed; every repair is
    an :class:`InputIssue` so nothing changes silently.
    """
    issues: list[InputIssue] = []
    unique: dict[str, SpanRecord] = {}
    for span in spans:
        if span.span_id in unique:
            issues.append(
                _issue(
                    "duplicate_span",
                    f"span id {span.span_id} seen again; the first copy was kept",
                    span,
                    session_id,
                )
            )
            issues[-1].spans_skipped = 1
            continue
        unique[span.span_id] = span
    for span in unique.values():
        if span.parent_span_id is not None and span.parent_span_id not in unique:
            issues.append(
                _issue(
                    "orphan_span",
                    f"parent {span.parent_span_id} of span {span.span_id} never arrived; "
                    "the span was evaluated as a root",
                    span,
                    session_id,
                )
            )
            span.parent_span_id = None
    state: dict[str, int] = {}  # 1 = on the current walk, 2 = known acyclic
    for start in unique.values():
        path: list[SpanRecord] = []
        node: SpanRecord | None = start
        while node is not None and state.get(node.span_id) is None:
            state[node.span_id] = 1
            path.append(node)
            node = unique.get(node.parent_span_id) if node.parent_span_id else None
        if node is not None and state.get(node.span_id) == 1:
            cycle = path[path.index(node) :]
            breaker = min(cycle, key=lambda s: (s.start_unix_nano, s.span_id))
            issues.append(
                _issue(
                    "parent_cycle",
                    "parent cycle "
                    + " -> ".join(s.span_id for s in cycle)
                    + f"; span {breaker.span_id} was evaluated as a root",
                    breaker,
                    session_id,
                )
            )
            breaker.parent_span_id = None
        for visited in path:
            state[visited.span_id] = 2
    return list(unique.values()), issues


@dataclass(slots=True)
class _Context:
    """Which agent instance a span belongs to, and what started that agent."""

    key: str
    agent: str | None
    agent_span: SpanRecord | None
    parent_key: str | None


def _contexts(
    spans: dict[str, SpanRecord], observations: dict[str, Observation]
) -> dict[str, _Context]:
    """Context of every span: the nearest enclosing agent run with a new name.

    An agent nested in an agent of the same name (a workflow wrapper, a graph node) is
    the same agent; a differently named one is a sub-agent with its own context.
    Top-level agents of one name share a context across traces (one conversation).
    """
    memo: dict[str, _Context] = {}

    def context_of(span: SpanRecord) -> _Context:
        chain: list[SpanRecord] = []
        node: SpanRecord | None = span
        while node is not None and node.span_id not in memo:
            chain.append(node)
            node = spans.get(node.parent_span_id) if node.parent_span_id else None
        inherited = (
            memo[node.span_id] if node is not None else _Context(_ROOT_CONTEXT, None, None, None)
        )
        for item in reversed(chain):
            observed = observations.get(item.span_id)
            if isinstance(observed, AgentRun) and observed.name != inherited.agent:
                key = (
                    f"agent:{observed.name}"
                    if inherited.agent_span is None
                    else f"agent:{observed.name}@{item.span_id}"
                )
                inherited = _Context(key, observed.name, item, inherited.key)
            memo[item.span_id] = inherited
        return memo[span.span_id]

    return {span_id: context_of(span) for span_id, span in spans.items()}


def _arguments_key(value: object) -> str:
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _pair_tool_runs(
    calls: list[tuple[ModelCall, ToolCallRequest]], runs: list[ToolRun]
) -> dict[int, ToolRun]:
    """Pair each requested call (by position in ``calls``) with the tool run that executed it.

    By call id first, scoped to runs that started after the request (ids are reused in
    real traces); then by name and arguments, then by name alone, in time order.
    """
    paired: dict[int, ToolRun] = {}
    used: set[str] = set()
    for matcher in ("id", "name_args", "name"):
        for index, (model_call, request) in enumerate(calls):
            if index in paired:
                continue
            for run in runs:
                if run.span.span_id in used or run.span.start_unix_nano < (
                    model_call.span.start_unix_nano
                ):
                    continue
                if matcher == "id":
                    ok = request.call_id is not None and run.call_id == request.call_id
                elif run.call_id is not None and request.call_id is not None:
                    ok = False  # both carry ids and they differ
                elif matcher == "name_args":
                    ok = run.name == request.name and _arguments_key(run.arguments) == (
                        _arguments_key(request.arguments)
                    )
                else:
                    ok = run.name == request.name
                if ok:
                    paired[index] = run
                    used.add(run.span.span_id)
                    break
    return paired


def _evidence_variants(text: str) -> list[str]:
    snippet = text.strip()[:80]
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


def _output_evidence(call: ModelCall) -> list[str]:
    evidence = [c.call_id for c in call.tool_calls if c.call_id]
    if call.text:
        evidence.extend(_evidence_variants(call.text))
    return evidence


def build_session(closed: ClosedSession) -> Session:
    """One closed session's turns, from its spans (any mix of dialects)."""
    session_id, session_key = closed.session_id, closed.session_key
    fallback, spans, cut = closed.fallback, list(closed.spans), closed.cut
    spans, issues = repair_span_tree(spans, session_id)
    spans.sort(key=lambda s: (s.start_unix_nano, s.end_unix_nano, s.span_id))
    by_id = {s.span_id: s for s in spans}
    observations: dict[str, Observation] = {}
    definitions: dict[str, object] = {}
    for span in spans:
        observed = observe(span)
        if observed is not None:
            observations[span.span_id] = observed
        if (
            "gen_ai.tool.definitions" in span.attributes
            or any(k.startswith(("llm.tools.", "llm.request.functions.")) for k in span.attributes)
            or span.attributes.get("openinference.span.kind") == "TOOL"
        ):
            definitions.update(tool_definitions(span))
    contexts = _contexts(by_id, observations)
    model_calls = [o for o in observations.values() if isinstance(o, ModelCall)]
    tool_runs = [o for o in observations.values() if isinstance(o, ToolRun)]
    _fill_langgraph_tool_context(tool_runs, by_id)

    requests = [(mc, req) for mc in model_calls for req in mc.tool_calls]
    paired = _pair_tool_runs(requests, tool_runs)
    paired_runs = {run.span.span_id for run in paired.values()}
    run_for_request = {id(requests[i][1]): run for i, run in paired.items()}

    history = _history(model_calls, contexts)
    turns: list[Turn] = []

    def new_turn(
        kind: TurnKind, name: str, span_ids: list[str], span: SpanRecord, **kw: object
    ) -> Turn:
        context = contexts[span.span_id]
        turn = Turn(
            turn_id=f"t{len(turns) + 1}",
            index=len(turns) + 1,
            kind=kind,
            name=name,
            span_ids=span_ids,
            trace_id=span.trace_id,
            agent=context.agent,
            context=context.key,
            start_unix_nano=span.start_unix_nano,
            end_unix_nano=span.end_unix_nano,
            **kw,  # type: ignore[arg-type]
        )
        turns.append(turn)
        return turn

    first_call_of_context: set[str] = set()
    known_call_ids: list[str] = []
    events: list[tuple[int, int, Observation]] = [
        (o.span.start_unix_nano, i, o)
        for i, o in enumerate(observations.values())
        if isinstance(o, ModelCall | RetrievalRun)
        or (isinstance(o, ToolRun) and o.span.span_id not in paired_runs)
    ]
    events.sort(key=lambda e: (e[0], e[1]))
    for _, _, observed in events:
        span = observed.span
        context = contexts[span.span_id]
        if isinstance(observed, ModelCall):
            predecessor = history.get(span.span_id)
            consumed = [cid for cid in dict.fromkeys(known_call_ids) if cid in observed.input_text]
            if predecessor is not None:
                consumed = [cid for cid in consumed if cid not in predecessor.input_text]
            delegated_by = None
            if context.key not in first_call_of_context:
                first_call_of_context.add(context.key)
                delegated_by = _delegating_span(context, by_id, observations)
            link = {
                "model_span_id": span.span_id,
                "consumes_call_ids": consumed,
                "history_from": predecessor.span.span_id if predecessor else None,
                "delegated_by_span": delegated_by,
                "seen_inputs": [observed.input_text] if observed.input_text else [],
            }
            name = context.agent or observed.model or span.name
            if observed.text and observed.tool_calls:
                new_turn(TurnKind.REASONING, name, [span.span_id], span, text=observed.text, **link)
            elif observed.text:
                new_turn(TurnKind.ANSWER, name, [span.span_id], span, text=observed.text, **link)
            for request in observed.tool_calls:
                run = run_for_request.get(id(request))
                tool_call = _tool_call(request, run, model_calls)
                span_ids = [run.span.span_id, span.span_id] if run else [span.span_id]
                new_turn(
                    TurnKind.TOOL_CALL,
                    request.name,
                    span_ids,
                    run.span if run else span,
                    tool_call=tool_call,
                    **link,
                )
                if request.call_id:
                    known_call_ids.append(request.call_id)
        elif isinstance(observed, ToolRun):
            tool_call = _tool_call(
                ToolCallRequest(
                    observed.call_id, observed.name, observed.arguments, observed.arguments_raw
                ),
                observed,
                model_calls,
            )
            new_turn(TurnKind.TOOL_CALL, observed.name, [span.span_id], span, tool_call=tool_call)
            if observed.call_id:
                known_call_ids.append(observed.call_id)
        elif isinstance(observed, RetrievalRun):
            new_turn(
                TurnKind.RETRIEVAL,
                span.name,
                [span.span_id],
                span,
                query=observed.query,
                documents=[
                    Document(
                        id=as_text(d.get("id")),
                        content=as_text(d.get("content")) or "",
                        score=d.get("score") if isinstance(d.get("score"), int | float) else None,
                    )
                    for d in observed.documents
                ],
            )
    _mark_returns(turns, contexts)
    user_inputs = next((mc.user_texts for mc in model_calls if mc.user_texts), [])
    if not user_inputs and model_calls:
        user_inputs = genai.user_texts(model_calls[0].input_text)
    return Session(
        session_id=session_id,
        session_key=session_key,
        fallback=fallback,
        spans=spans,
        turns=turns,
        tool_definitions=definitions,
        user_inputs=user_inputs,
        issues=issues,
        cut=cut,
    )


def _history(model_calls: list[ModelCall], contexts: dict[str, _Context]) -> dict[str, ModelCall]:
    """Each model call's history predecessor, by evidence; structural fallback."""
    ordered = sorted(model_calls, key=lambda m: (m.span.start_unix_nano, m.span.span_id))
    evidence = {id(m): _output_evidence(m) for m in ordered}
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


def _delegating_span(
    context: _Context, spans: dict[str, SpanRecord], observations: dict[str, Observation]
) -> str | None:
    """The span that started a sub-agent: the enclosing tool run, else the agent span."""
    if context.agent_span is None or context.parent_key is None:
        return None
    node = spans.get(context.agent_span.parent_span_id or "")
    while node is not None:
        if isinstance(observations.get(node.span_id), ToolRun):
            return node.span_id
        if isinstance(observations.get(node.span_id), AgentRun):
            break
        node = spans.get(node.parent_span_id or "")
    return context.agent_span.span_id


def _mark_returns(turns: list[Turn], contexts: dict[str, _Context]) -> None:
    """The last answer of each sub-agent flows back to the context that started it."""
    last_answer: dict[str, Turn] = {}
    parents: dict[str, str | None] = {c.key: c.parent_key for c in contexts.values()}
    for turn in turns:
        if turn.kind is TurnKind.ANSWER and parents.get(turn.context) is not None:
            last_answer[turn.context] = turn
    for context_key, turn in last_answer.items():
        turn.returns_to_context = parents[context_key]


def _tool_call(
    request: ToolCallRequest, run: ToolRun | None, model_calls: Iterable[ModelCall]
) -> ToolCall:
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
    # No tool span: the result may still be visible in a later model input.
    result_raw = None
    if request.call_id:
        for call in model_calls:
            if request.call_id in call.tool_results:
                result_raw = call.tool_results[request.call_id]
                break
            if request.call_id in call.input_text and call.input_text.lstrip().startswith("["):
                results = genai.tool_results(call.input_text)
                if request.call_id in results:
                    result_raw = results[request.call_id]
                    break
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


def _fill_langgraph_tool_context(runs: list[ToolRun], spans: dict[str, SpanRecord]) -> None:
    """LangGraph's OpenInference TOOL spans lack the call id (and, for one-argument tools,
    the argument name); its parent ``tools`` chain holds the full ``tool_call``."""
    for run in runs:
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
