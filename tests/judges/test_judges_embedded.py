"""The embedded judge: its agreement with an OpenAI-compatible judge's scripted verdicts on
a small labelled set (tests/fixtures/judge_agreement.jsonl), and its honest skips.

The labelled scores are what a careful LLM judge gives these answers on the rubric; they
reach AEM through the real OpenAI-compatible client and a local server. The figures this
test measures are published in docs/tests.md; the floors pin them against regressions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aem.cases import Case
from aem.checks.registry import find_check
from aem.compare import SemanticComparator
from aem.judges.base import JudgeRequest
from aem.judges.embedded import EmbeddedJudge
from aem.judges.openai import OpenAIJudge
from aem.judges.settings import OpenAIJudgeSettings
from tests.judge_server import Reply, judge_server

pytestmark = pytest.mark.slow
LABELLED = Path(__file__).parents[1] / "fixtures" / "judge_agreement.jsonl"
THRESHOLD = 7.0


def labelled() -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]


def request(item: dict) -> JudgeRequest:  # type: ignore[type-arg]
    """The request the item's check sends (its own prompt and embedded scoring)."""
    fields = {k: item.get(k) for k in ("question", "reference_answer", "judge_instruction")}
    case = Case(session_id="labelled", **fields)
    return find_check(item["check"]).judge_request(case, item["answer"])


def test_embedded_agreement_with_the_scripted_llm_judge() -> None:
    items = labelled()
    with judge_server(
        lambda b, n: Reply(content=json.dumps({"score": items[n]["llm_score"]}))
    ) as srv:
        llm = OpenAIJudge("scripted", OpenAIJudgeSettings(base_url=srv.url, model="m"))
        llm_scores = [llm.judge(request(item)).score for item in items]
    embedded = EmbeddedJudge(SemanticComparator())
    verdicts = [embedded.judge(request(item)) for item in items]
    scored = [
        (v.score, s) for v, s in zip(verdicts, llm_scores, strict=True) if v.score is not None
    ]
    agree = sum((e >= THRESHOLD) == (s >= THRESHOLD) for e, s in scored)
    coverage, agreement = len(scored) / len(items), agree / len(scored)
    print(
        f"embedded judge: scored {len(scored)}/{len(items)} ({coverage:.0%}), pass/fail "
        f"agreement {agree}/{len(scored)} ({agreement:.0%}) at threshold {THRESHOLD:g}"
    )
    assert all(v.status in ("scored", "skip") for v in verdicts)
    assert coverage >= 0.6 and agreement >= 0.85


def test_embedded_skips_what_it_cannot_score() -> None:
    embedded = EmbeddedJudge(SemanticComparator())
    no_reference = embedded.judge(
        request({"check": "check.relevance", "question": "q?", "answer": "an answer"})
    )
    instruction = embedded.judge(
        request(
            {
                "check": "check.task_completion",
                "question": "q?",
                "answer": "a",
                "judge_instruction": "check 1) and 2)",
            }
        )
    )
    assert no_reference.status == "skip" and no_reference.score is None
    assert instruction.status == "skip" and "instruction" in instruction.explanation
