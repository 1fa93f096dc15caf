"""Builders for testing metrics without writing OTLP JSON: turns, sessions, cases.

Why: a metric reads turns, not spans, so its tests should state the turns they mean
(``make_tool_call("get_weather", {"city": "Paris"}, result={"temp": 14})``) instead of
rewriting a sample trace and hoping the collectors map it as intended. The same
builders serve plug-in authors: ``run_metric(MyMetric(), make_session(...))``.

    >>> session = make_session(
    ...     make_tool_call("add", {"a": 2, "b": 3}, result=5),
    ...     make_turn("answer", text="2+3=5"),
    ... )
    >>> [(t.turn_id, t.kind.value) for t in session.turns]
    [('t1', 'tool_call'), ('t2', 'answer')]
    >>> session_graph(session).edges
    [TurnLink(source='t1', target='t2', reason='stated')]
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aem.cases import Case
from aem.foundation.model import Document, MetricResult, Session, ToolCall, Turn, TurnEdge, TurnKind
from aem.graph import session_graph
from aem.metrics.base import Metric
from aem.metrics.context import MetricContext
from aem.services import services_from
from aem.settings import AemConfig
from aem.sinks.memory import InMemorySink

__all__ = [
    "InMemorySink",
    "make_case",
    "make_session",
    "make_tool_call",
    "make_turn",
    "run_metric",
]

SESSION_ID = "s1"
# The reason of the edges a test states (``make_session(edges=...)``), not found in a trace.
STATED = "stated"
_NO_RESULT: Any = object()


def _raw(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def make_turn(
    kind: TurnKind | str = TurnKind.ANSWER,
    name: str | None = None,
    *,
    text: str | None = None,
    tool_call: ToolCall | None = None,
    context: str = "",
    seen_inputs: Sequence[str] = (),
    documents: Sequence[str | Document] = (),
    turn_id: str = "",
) -> Turn:
    """One turn; ``make_session`` numbers it (``t1``, ``t2`` …) unless ``turn_id`` is set.

    ``context`` is the agent context (sub-agents have their own); ``seen_inputs`` is what
    the model was shown (user messages, tool results) when it produced this turn;
    ``documents`` (a retrieval's passages) are texts, or :class:`Document` with an id.
    """
    kind = TurnKind(kind)
    return Turn(
        turn_id=turn_id,
        index=0,
        kind=kind,
        name=name or (tool_call.name if tool_call else kind.value),
        span_ids=[f"span-{turn_id}"],
        trace_id="0" * 32,
        context=context,
        text=text,
        tool_call=tool_call,
        documents=[d if isinstance(d, Document) else Document(content=d) for d in documents],
        seen_inputs=list(seen_inputs),
    )


def make_tool_call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    result: Any = _NO_RESULT,
    error: str | None = None,
    error_type: str | None = None,
    executed: bool = True,
    context: str = "",
    turn_id: str = "",
) -> Turn:
    """A tool-call turn: the call, and its result or error (omit both: no result seen).

    ``arguments`` as a string is kept as the trace gave it (JSON text, or not JSON at all).
    """
    args: Any = arguments if isinstance(arguments, str) else dict(arguments or {})
    call = ToolCall(
        name=name,
        arguments=args,
        arguments_raw=_raw(args),
        has_result=result is not _NO_RESULT,
        result=None if result is _NO_RESULT else result,
        result_raw=None if result is _NO_RESULT else _raw(result),
        error=error,
        error_type=error_type,
        executed=executed,
    )
    return make_turn(TurnKind.TOOL_CALL, name, tool_call=call, context=context, turn_id=turn_id)


def make_session(
    *turns: Turn,
    edges: Iterable[tuple[str, str] | tuple[str, str, str]] | None = None,
    session_id: str = SESSION_ID,
    tool_definitions: Mapping[str, Any] | None = None,
    user_inputs: Sequence[str] = (),
) -> Session:
    """A session of ``turns`` in order, with its turn graph's edges stated.

    Without ``edges`` each turn consumed the previous one's output (the plain agent loop:
    ``t1 → t2 → …``); pass ``edges`` (turn-id pairs) to state the dependencies instead,
    each with a third element naming the edge's reason (``retrieval``, ``tool_result`` …)
    where a metric reads it, else ``stated``. The evaluator and :func:`run_metric` build
    the :class:`aem.graph.TurnGraph` from them (:func:`aem.graph.session_graph`), as from
    a trace's link keys.
    """
    numbered = [
        t.model_copy(
            update={
                "turn_id": t.turn_id or f"t{i}",
                "index": i - 1,
                "span_ids": [f"span-{t.turn_id or f't{i}'}"],
            }
        )
        for i, t in enumerate(turns, start=1)
    ]
    ids = [t.turn_id for t in numbered]
    stated = [
        TurnEdge(source=edge[0], target=edge[1], kind=edge[2] if len(edge) == 3 else STATED)
        for edge in (edges if edges is not None else itertools.pairwise(ids))
    ]
    session = Session(
        session_id=session_id,
        session_key="gen_ai.conversation.id",
        fallback=False,
        spans=[],
        turns=numbered,
        tool_definitions=dict(tool_definitions or {}),
        user_inputs=list(user_inputs),
        stated_edges=stated,
    )
    session_graph(session)  # an edge naming no turn of the session is an error here
    return session


def make_case(session_id: str = SESSION_ID, **fields: Any) -> Case:
    """A case for ``session_id`` with the given fields (``expected_tool_calls``, ``facts``,
    ``key_points`` …), validated exactly as a cases file is."""
    return Case.model_validate({"session_id": session_id, **fields})


def run_metric(
    metric: Metric,
    session: Session,
    case: Case | None = None,
    config: AemConfig | None = None,
) -> list[MetricResult]:
    """The results ``metric`` gives on ``session`` (no propagation, no report)."""
    services = services_from(config or AemConfig())
    context = MetricContext(
        session=session, case=case, services=services, graph=session_graph(session)
    )
    return list(metric.evaluate(context))
