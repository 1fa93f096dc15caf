"""Cut a session's operations into turns, in time order, with their link keys.

A model call gives a reasoning or answer turn and one tool-call turn per requested call
(merged with the run that executed it); a tool run nobody asked for (traced without its
model call) and a retrieval give their own turns. Each model-call turn carries the keys
the turn graph needs: what history it continues, which call results it consumes and
which span delegated to its agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aem.foundation.model import Document, Session, SpanRecord, Turn, TurnKind
from aem.foundation.textindex import PatternFinder
from collectors.dialects.base import (
    ModelCall,
    Operation,
    RetrievalRun,
    ToolCallRequest,
    ToolRun,
    as_text,
)
from collectors.sessions.contexts import Context, delegating_span
from collectors.sessions.pairing import FedBackResults, to_tool_call


@dataclass(slots=True)
class TurnCutter:
    """The session as turn cutting reads it, and the turns cut so far."""

    spans: Mapping[str, SpanRecord]
    operations: Mapping[str, Operation]
    contexts: Mapping[str, Context]
    run_for_request: dict[int, ToolRun]  # by id() of the ToolCallRequest
    history: Mapping[str, ModelCall]
    fed_back: FedBackResults  # results of calls no tool span ran, from later inputs
    call_ids: PatternFinder  # every call id of the session, to find them in inputs
    turns: list[Turn] = field(default_factory=list)
    _started_contexts: set[str] = field(default_factory=set)
    _known_call_ids: dict[str, int] = field(default_factory=dict)  # id → first seen
    _ids_memo: dict[str, set[str]] = field(default_factory=dict)  # span id → ids in input

    def cut(self) -> list[Turn]:
        """Turns of every model call, retrieval and unpaired tool run, by start time."""
        paired_runs = {run.span.span_id for run in self.run_for_request.values()}
        events = [
            (o.span.start_unix_nano, i, o)
            for i, o in enumerate(self.operations.values())
            if isinstance(o, ModelCall | RetrievalRun)
            or (isinstance(o, ToolRun) and o.span.span_id not in paired_runs)
        ]
        events.sort(key=lambda e: (e[0], e[1]))
        for _, _, observed in events:
            if isinstance(observed, ModelCall):
                self._model_call(observed)
            elif isinstance(observed, ToolRun):
                self._tool_run(observed)
            elif isinstance(observed, RetrievalRun):
                self._retrieval(observed)
        return self.turns

    def _add(
        self, kind: TurnKind, name: str, span_ids: list[str], span: SpanRecord, **kw: Any
    ) -> Turn:
        context = self.contexts[span.span_id]
        turn = Turn(
            turn_id=f"t{len(self.turns) + 1}",
            index=len(self.turns) + 1,
            kind=kind,
            name=name,
            span_ids=span_ids,
            trace_id=span.trace_id,
            agent=context.agent,
            context=context.key,
            start_unix_nano=span.start_unix_nano,
            end_unix_nano=span.end_unix_nano,
            **kw,
        )
        self.turns.append(turn)
        return turn

    def _links(self, observed: ModelCall) -> dict[str, Any]:
        """The graph keys of a model call: history, consumed call ids, delegation."""
        span = observed.span
        context = self.contexts[span.span_id]
        predecessor = self.history.get(span.span_id)
        known = self._known_call_ids
        present = [cid for cid in self._ids_in(observed) if cid in known]
        consumed = sorted(present, key=known.__getitem__)
        if predecessor is not None and consumed:
            # Ids already in the history it continues were consumed there (found through
            # the index too: an input holding the whole history holds every id so far).
            before = self._ids_in(predecessor)
            consumed = [cid for cid in consumed if cid not in before]
        delegated_by = None
        if context.key not in self._started_contexts:
            self._started_contexts.add(context.key)
            delegated_by = delegating_span(context, self.spans, self.operations)
        return {
            "model_span_id": span.span_id,
            "consumes_call_ids": consumed,
            "history_from": predecessor.span.span_id if predecessor else None,
            "delegated_by_span": delegated_by,
            "seen_inputs": [observed.input_text] if observed.input_text else [],
        }

    def _ids_in(self, call: ModelCall) -> set[str]:
        """The session's call ids in a model input; the last few remembered, since the
        next call usually continues this one and asks again."""
        found = self._ids_memo.get(call.span.span_id)
        if found is None:
            found = self._ids_memo[call.span.span_id] = self.call_ids.find(call.input_text)
            if len(self._ids_memo) > 4:
                del self._ids_memo[next(iter(self._ids_memo))]
        return found

    def _model_call(self, observed: ModelCall) -> None:
        span = observed.span
        link = self._links(observed)
        # The speaker the span names itself (a group chat's member) before the agent
        # run around it: otherwise every turn of a group chat bears the chat's name.
        name = observed.agent or self.contexts[span.span_id].agent or observed.model or span.name
        if observed.text:
            kind = TurnKind.REASONING if observed.tool_calls else TurnKind.ANSWER
            turn = self._add(kind, name, [span.span_id], span, text=observed.text, **link)
            turn.agent = observed.agent or turn.agent
        for request in observed.tool_calls:
            run = self.run_for_request.get(id(request))
            tool_call = to_tool_call(request, run, self.fed_back)
            span_ids = [run.span.span_id, span.span_id] if run else [span.span_id]
            turn = self._add(
                TurnKind.TOOL_CALL,
                request.name,
                span_ids,
                run.span if run else span,
                tool_call=tool_call,
                **link,
            )
            turn.agent = observed.agent or turn.agent
            if request.call_id:
                self._known_call_ids.setdefault(request.call_id, len(self._known_call_ids))

    def _tool_run(self, observed: ToolRun) -> None:
        request = ToolCallRequest(
            observed.call_id, observed.name, observed.arguments, observed.arguments_raw
        )
        tool_call = to_tool_call(request, observed, self.fed_back)
        span = observed.span
        self._add(TurnKind.TOOL_CALL, observed.name, [span.span_id], span, tool_call=tool_call)
        if observed.call_id:
            self._known_call_ids.setdefault(observed.call_id, len(self._known_call_ids))

    def _retrieval(self, observed: RetrievalRun) -> None:
        span = observed.span
        documents = [
            Document(
                id=as_text(d.get("id")),
                content=as_text(d.get("content")) or "",
                score=d.get("score") if isinstance(d.get("score"), int | float) else None,
            )
            for d in observed.documents
        ]
        self._add(
            TurnKind.RETRIEVAL,
            span.name,
            [span.span_id],
            span,
            query=observed.query,
            documents=documents,
        )


def session_turn(session: Session) -> Turn | None:
    """The session as one turn (kind ``session``, span: the earliest root span).

    For a verdict about the whole session when the agent left no turn at all (no model
    call, no tool run); ``None`` when the session has no spans either.
    """
    roots = [s for s in session.spans if s.parent_span_id is None] or session.spans
    if not roots:
        return None
    root = min(roots, key=lambda s: (s.start_unix_nano, s.span_id))
    return Turn(
        turn_id=f"t{len(session.turns) + 1}",
        index=len(session.turns) + 1,
        kind=TurnKind.SESSION,
        name=root.name,
        span_ids=[root.span_id],
        trace_id=root.trace_id,
        start_unix_nano=root.start_unix_nano,
        end_unix_nano=root.end_unix_nano,
    )
