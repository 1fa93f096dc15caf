"""Retrieval turns: documents become evidence for the answers that follow them."""

from __future__ import annotations

import json

import aem
from aem.foundation.model import ClosedSession, SpanRecord, TurnKind
from collectors.sessions import build_session

TRACE = "1" * 32


def _span(span_id: str, parent: str | None, start: int, attributes: dict) -> SpanRecord:
    return SpanRecord(
        TRACE, span_id, parent, attributes.get("gen_ai.operation.name", "agent"),
        start_unix_nano=start, end_unix_nano=start + 5, attributes=attributes,
    )  # fmt: skip


def _session(answer: str):  # type: ignore[no-untyped-def]
    root = _span(
        "a" * 16,
        None,
        0,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "kb",
            "gen_ai.conversation.id": "kb-1",
        },
    )
    retrieval = _span(
        "b" * 16,
        "a" * 16,
        10,
        {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.retrieval.query.text": "refund window",
            "gen_ai.retrieval.documents": json.dumps(
                [
                    {
                        "id": "doc-7",
                        "score": 0.91,
                        "content": "Refunds are accepted within 30 days, fee €4.50.",
                    }
                ]
            ),
        },
    )
    chat = _span("c" * 16, "a" * 16, 20, {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([
            {"role": "user", "parts": [{"type": "text", "content": "What is the refund fee?"}]},
        ]),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
        ),
    })  # fmt: skip
    return build_session(
        ClosedSession("kb-1", "gen_ai.conversation.id", False, [root, retrieval, chat])
    )


def test_retrieval_turn_carries_its_documents() -> None:
    session = _session("The fee is €4.50 [1].")
    kinds = [t.kind for t in session.turns]
    assert kinds == [TurnKind.RETRIEVAL, TurnKind.ANSWER]
    [document] = session.turns[0].documents
    assert document.id == "doc-7" and document.score == 0.91 and "30 days" in document.content


def test_answer_values_are_checked_against_what_was_retrieved() -> None:
    good = aem.evaluate_session(_session("The fee is €4.50 [1]."))
    assert good.root_causes == []
    bad = aem.evaluate_session(_session("The fee is €9.90 [1]."))
    [cause] = bad.root_causes
    # A value no retrieved passage holds is unsupported by definition (groundedness); to
    # truthfulness, which binds values to records, it is a doubt.
    assert cause.metrics == ["groundedness"]
    truth = next(m for m in bad.turns[-1].metrics if m.name == "correctness.truthfulness")
    assert truth.outcome == "unverified" and "9.90" in truth.explanation
    explanation = next(m.explanation for m in bad.turns[-1].metrics if m.outcome == "fail")
    assert "9.90" in explanation and "4.5" in explanation
