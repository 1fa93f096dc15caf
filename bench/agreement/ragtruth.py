"""RAGTruth Summary: does ``groundedness`` fail exactly the answers with a hallucination.

AEM runs as ``aem audit`` would, with the cases file and the citation requirement off
(the answers carry no ``[N]`` citations). An answer is predicted hallucinated when its
``groundedness`` verdict is ``fail``. Baselines: every answer fails; an answer fails when
it states a number the article does not contain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aem.audit import audit_paths
from aem.cases import load_cases
from aem.config import load_config
from bench.agreement import otlp
from bench.agreement.baselines import unseen_number
from bench.agreement.figures import (
    Cell,
    Figure,
    f1,
    false_positive_rate,
    figure,
    precision,
    recall,
)
from bench.agreement.split import half

SET = "ragtruth"
DIRECTORY = "ragtruth-summary-dev"
NO_CITATIONS = "metrics.groundedness.require_citation=never"
METHODS = ("AEM", "every answer fails", "fails on a number not in the article")
SCORES = {
    "precision": (precision, "higher"),
    "recall": (recall, "higher"),
    "F1": (f1, "higher"),
    "clean answers failed": (false_positive_rate, "lower"),
}


@dataclass(frozen=True)
class RagRow:
    """One answer: its label and each method's prediction (True = hallucinated)."""

    hallucinated: bool
    predicted: dict[str, bool]


def groundedness_failed(session: Any) -> bool:
    """Some turn of the session report failed ``groundedness``."""
    return any(
        m.name == "groundedness" and str(m.outcome) == "fail"
        for turn in session.turns
        for m in turn.metrics
    )


def texts(spans: list[otlp.SpanView], derived: dict[str, Any]) -> tuple[str, str]:
    """The answer's text and the retrieved article's, read off the trace."""
    by_id = {s.span_id: s for s in spans}
    answer = by_id.get(derived.get("answer_span_id", ""))
    retrieval = by_id.get(derived.get("retrieval_span_id", ""))
    output = json.loads(answer.attributes.get("gen_ai.output.messages", "[]")) if answer else []
    documents = (
        json.loads(retrieval.attributes.get("gen_ai.retrieval.documents", "[]"))
        if retrieval
        else []
    )
    answer_text = " ".join(p.get("content", "") for m in output for p in m.get("parts", []))
    return answer_text, " ".join(str(d.get("content", "")) for d in documents)


def figures(rows: list[tuple[str, RagRow]]) -> list[Figure]:
    result = []
    for name, (score, better) in SCORES.items():
        for method in METHODS:
            result.append(figure(SET, name, method, rows, _scorer(score, method), better))
    return result


def _scorer(score: Any, method: str) -> Any:
    def apply(rows: list[RagRow]) -> Cell:
        return score([(r.predicted[method], r.hallucinated) for r in rows])

    return apply


def measure(root: Path, workers: int) -> list[Figure]:
    data = root / DIRECTORY
    report = audit_paths(
        [str(data / "traces.otlp.jsonl")],
        cases=load_cases(data / "cases.jsonl"),
        config=load_config(None, [NO_CITATIONS]),
        workers=workers,
    )
    by_id = {s.session_id: s for s in report.sessions}
    spans = dict(otlp.sessions(data / "traces.otlp.jsonl"))
    rows = []
    with (data / "references.jsonl").open(encoding="utf-8") as lines:
        for ref in map(json.loads, lines):
            sid = ref["session_id"]
            answer, article = texts(spans.get(sid, []), ref.get("derived") or {})
            predicted = {
                METHODS[0]: sid in by_id and groundedness_failed(by_id[sid]),
                METHODS[1]: True,
                METHODS[2]: unseen_number(answer, article),
            }
            rows.append((half(SET, sid), RagRow(bool(ref["outcome"]["hallucinated"]), predicted)))
    return figures(rows)
