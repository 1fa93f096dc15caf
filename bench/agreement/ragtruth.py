"""RAGTruth Summary: does ``groundedness`` fail exactly the answers with a hallucination.

AEM runs as ``aem audit`` would, with the cases file and the citation requirement off
(the answers carry no ``[N]`` citations). An answer is predicted hallucinated when its
``groundedness`` verdict is ``fail``. Baselines: every answer fails; an answer fails when
it states a number the article does not contain.

One more row reads the labels, not the answers: the *ceiling without a judge*. Under
the evidence contract a judge-free rule fails an answer only on a value it can check (a
number, date, id or name), so at best it catches the answers whose labelled span states
one. The row predicts exactly those: its recall is the most any such rule can reach,
its F1 the most at perfect precision. Generous on purpose (any value AEM's extractor
reads, any capitalised word after the span's first), so the true ceiling is lower.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aem.audit import audit_paths
from aem.cases import load_cases
from aem.compare.extract import extract_claims
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
CEILING = "ceiling without a judge: the labelled span states a value"
METHODS = ("AEM", "every answer fails", "fails on a number not in the article", CEILING)
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


_CAPITALISED = re.compile(r"(?<!^)\b[A-ZА-ЯЁ][\w'-]*")


def states_a_value(span: str) -> bool:
    """Whether a labelled span holds anything a judge-free rule could check: a value the
    extractor reads or a capitalised word that is not the span's first."""
    return bool(extract_claims(span)) or bool(_CAPITALISED.search(span.strip()))


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
                CEILING: any(states_a_value(span["text"]) for span in ref["outcome"]["spans"]),
            }
            rows.append((half(SET, sid), RagRow(bool(ref["outcome"]["hallucinated"]), predicted)))
    return figures(rows)
