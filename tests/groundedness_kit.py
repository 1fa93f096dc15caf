"""Small sessions for the groundedness and refusal tests: a retrieval (or a tool call)
feeding one answer, built as turns with their graph, no spans needed."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from aem.audit import audit_paths
from aem.cases import Case, load_cases
from aem.config import AemConfig
from aem.evaluate import Evaluator
from aem.graph import TurnGraph
from aem.metrics.base import Metric
from aem.model import AuditReport, Document, SessionReport, ToolCall, Turn, TurnKind
from aem.model import Session as ModelSession

REPO = Path(__file__).resolve().parent.parent
HELPDESK = REPO / "sample_traces" / "helpdesk_rag.otlp.jsonl"
CASES = REPO / "sample_traces" / "cases.jsonl"


def rag_session(
    answer: str,
    documents: Sequence[str] = (),
    *,
    question: str = "How long do I have to return an item?",
    tool_result: str | None = None,
    session_id: str = "s1",
    tool_name: str = "lookup",
    tool_error: str | None = None,
) -> ModelSession:
    """question → retrieval (``documents``) or tool call (``tool_result``) → answer."""
    turns: list[Turn] = []
    if documents:
        turns.append(
            Turn(
                turn_id="t1",
                index=1,
                kind=TurnKind.RETRIEVAL,
                name="retrieval kb",
                span_ids=["a1"],
                trace_id="tr",
                documents=[Document(id=f"kb-{i}", content=d) for i, d in enumerate(documents, 1)],
            )
        )
    if tool_result is not None:
        call = ToolCall(
            name=tool_name, arguments={}, has_result=True, result_raw=tool_result, error=tool_error
        )
        turns.append(
            Turn(
                turn_id=f"t{len(turns) + 1}",
                index=len(turns) + 1,
                kind=TurnKind.TOOL_CALL,
                name=tool_name,
                span_ids=["a2"],
                trace_id="tr",
                tool_call=call,
            )
        )
    n = len(turns) + 1
    turns.append(
        Turn(
            turn_id=f"t{n}",
            index=n,
            kind=TurnKind.ANSWER,
            name="chat",
            span_ids=["a3"],
            trace_id="tr",
            text=answer,
        )
    )
    graph = TurnGraph(turns)
    for turn in turns[:-1]:
        graph.link(
            turn.turn_id,
            turns[-1].turn_id,
            "retrieval" if turn.kind is TurnKind.RETRIEVAL else "tool_result",
        )
    return ModelSession(
        session_id=session_id,
        session_key="gen_ai.conversation.id",
        fallback=False,
        spans=[],
        turns=turns,
        user_inputs=[question],
        graph=graph,
    )


def evaluate(
    session: ModelSession,
    metrics: list[Metric],
    case: dict[str, Any] | None = None,
    config: AemConfig | None = None,
) -> SessionReport:
    cases = (
        {session.session_id: Case.model_validate({"session_id": session.session_id, **case})}
        if case
        else {}
    )
    return Evaluator(config or AemConfig(), cases, metrics).evaluate(session)


def results(report: SessionReport, name: str) -> list[Any]:
    return [m for t in report.turns for m in t.metrics if m.name == name]


@cache
def helpdesk_report() -> AuditReport:
    """The audit of the seven help-desk sample sessions, with their cases (run once)."""
    return audit_paths([str(HELPDESK)], cases=load_cases(CASES))


def session_results(session_id: str, name: str) -> list[Any]:
    report = helpdesk_report()
    session = next(s for s in report.sessions if s.session_id == session_id)
    return results(session, name)
