"""Small sessions for the groundedness and refusal tests: a retrieval (or a tool call)
feeding one answer, built as turns with their graph, no spans needed."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from aem import testing
from aem.audit import audit_paths
from aem.cases import Case, load_cases
from aem.config import AemConfig
from aem.evaluate import Evaluator
from aem.foundation.model import AuditReport, Document, SessionReport, ToolCall, Turn, TurnKind
from aem.foundation.model import Session as ModelSession
from aem.metrics.base import Metric

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
    """question → retrieval (``documents``) or tool call (``tool_result``) → answer, built
    with :mod:`aem.testing` as a plug-in author would."""
    turns: list[Turn] = []
    edges: list[tuple[str, str, str]] = []
    if documents:
        passages = [Document(id=f"kb-{i}", content=d) for i, d in enumerate(documents, 1)]
        turns.append(testing.make_turn(TurnKind.RETRIEVAL, "retrieval kb", documents=passages))
    if tool_result is not None:
        call = ToolCall(
            name=tool_name, arguments={}, has_result=True, result_raw=tool_result, error=tool_error
        )  # fmt: skip  (the result as the trace gave it: text)
        turns.append(testing.make_turn(TurnKind.TOOL_CALL, tool_name, tool_call=call))
    turns.append(testing.make_turn(TurnKind.ANSWER, "chat", text=answer))
    answer_id = f"t{len(turns)}"
    for i, turn in enumerate(turns[:-1], start=1):
        reason = "retrieval" if turn.kind is TurnKind.RETRIEVAL else "tool_result"
        edges.append((f"t{i}", answer_id, reason))
    return testing.make_session(*turns, edges=edges, session_id=session_id, user_inputs=[question])


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
