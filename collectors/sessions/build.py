"""One closed session → its turns: the steps in order, each in its own module.

Repair the span tree (``repair``), read every span through the registered dialects and
let them repair what single spans leave out (``collectors.dialects.registry``), find each
agent's context (``contexts``), pair tool-call requests with tool runs (``pairing``),
find each model call's history (``history``), then cut turns in time order (``turns``).
Nothing here knows a dialect, so a new dialect needs no change in this package.
"""

from __future__ import annotations

from typing import Literal

from aem.foundation.gcpause import cyclic_gc_paused
from aem.foundation.model import ClosedSession, InputIssue, Session, SpanRecord
from aem.foundation.textindex import PatternFinder
from collectors.dialects import registry
from collectors.dialects.annotations import tool_annotations
from collectors.dialects.base import ModelCall, Operation, ToolRun
from collectors.limits import DEFAULT_MAX_SESSION_TURNS
from collectors.sessions.contexts import contexts, mark_returns
from collectors.sessions.history import history
from collectors.sessions.pairing import FedBackResults, pair_tool_runs
from collectors.sessions.repair import public_span_id, repair_span_tree
from collectors.sessions.rounds import conversation_turns, runs
from collectors.sessions.turns import TurnCutter, session_turn

# Turns kept for one session; the rest are dropped and the session marked cut.
# Proposed setting: [assembly] max_session_turns.


@cyclic_gc_paused()
def build_session(
    closed: ClosedSession, *, max_turns: int | Literal["default"] | None = "default"
) -> Session:
    """One closed session's turns, from its spans (any mix of dialects).

    A session of more than ``max_turns`` turns keeps the first ones, in turn order, and
    is marked cut with an issue naming the limit: evaluation time stays bounded.
    """
    spans, issues = repair_span_tree(list(closed.spans), closed.session_id)
    issues = [*closed.issues, *issues]
    spans.sort(key=lambda s: (s.start_unix_nano, s.end_unix_nano, s.span_id))
    by_id = {s.span_id: s for s in spans}
    operations, definitions = _observe(spans)
    annotations = _annotations(spans)
    registry.repair(operations, by_id)
    span_contexts = contexts(by_id, operations)
    model_calls = [o for o in operations.values() if isinstance(o, ModelCall)]
    tool_runs = [o for o in operations.values() if isinstance(o, ToolRun)]
    requests = [(mc, req) for mc in model_calls for req in mc.tool_calls]
    paired = pair_tool_runs(requests, tool_runs)
    unpaired = [req.call_id for i, (_, req) in enumerate(requests) if i not in paired]
    call_ids = [req.call_id for _, req in requests] + [run.call_id for run in tool_runs]
    predecessors = history(model_calls, span_contexts)
    turns = TurnCutter(
        spans=by_id,
        operations=operations,
        contexts=span_contexts,
        run_for_request={id(requests[i][1]): run for i, run in paired.items()},
        history=predecessors,
        fed_back=FedBackResults(model_calls, (cid for cid in unpaired if cid)),
        call_ids=PatternFinder(cid for cid in call_ids if cid),
    ).cut()
    cut = closed.cut
    if max_turns == "default":
        max_turns = DEFAULT_MAX_SESSION_TURNS
    if max_turns is not None and len(turns) > max_turns:
        issues.insert(0, _turns_cut(closed, len(turns), max_turns))
        del turns[max_turns:]
        cut = True
    mark_returns(turns, span_contexts)
    boundaries, exchanges = conversation_turns(by_id, operations)
    session = Session(
        session_id=closed.session_id,
        session_key=closed.session_key,
        fallback=closed.fallback,
        spans=spans,
        turns=turns,
        tool_definitions=definitions,
        tool_annotations=annotations,
        user_inputs=_user_inputs(model_calls),
        issues=issues,
        cut=cut,
        boundaries=boundaries,
        conversation_turns=exchanges,
        runs=runs(model_calls, predecessors),
        public_span_ids={s: public_span_id(s) for s in by_id if public_span_id(s) != s},
    )
    session.session_turn = session_turn(session)
    return session


def _turns_cut(closed: ClosedSession, found: int, limit: int) -> InputIssue:
    """Why a session was evaluated on its first turns only: the limit, by name."""
    return InputIssue(
        kind="session_cut",
        message=(
            f"session {closed.session_id!r} has {found} turns, over the limit of {limit} "
            f"(max_session_turns); the first {limit} were evaluated"
        ),
        session_id=closed.session_id,
    )


def _observe(spans: list[SpanRecord]) -> tuple[dict[str, Operation], dict[str, object]]:
    """Every span's operation by span id, and the tool schemas declared anywhere
    (a later span's schema for a name replaces an earlier one)."""
    operations: dict[str, Operation] = {}
    definitions: dict[str, object] = {}
    for span in spans:
        observed = registry.observe(span)
        if observed is not None:
            operations[span.span_id] = observed
        definitions.update(registry.tool_definitions(span))
    return operations, definitions


def _annotations(spans: list[SpanRecord]) -> dict[str, object]:
    """The tools' annotations declared anywhere (a later span's replace an earlier one's)."""
    found: dict[str, object] = {}
    for span in spans:
        found.update(tool_annotations(span))
    return found


def _user_inputs(model_calls: list[ModelCall]) -> list[str]:
    """The user's messages: from the first model call whose dialect parsed them, else
    read on demand from the first model call's input."""
    found = next((mc.user_texts for mc in model_calls if mc.user_texts), [])
    if not found and model_calls and model_calls[0].read_user_texts is not None:
        found = model_calls[0].read_user_texts(model_calls[0].input_text)
    return found
