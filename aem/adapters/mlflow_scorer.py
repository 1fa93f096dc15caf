"""An MLflow 3 scorer: ``mlflow.genai.evaluate(data=traces, scorers=[aem_scorer()])``.

Why a scorer and not only the sink: teams that already evaluate in MLflow run their
scorers over traces with ``mlflow.genai.evaluate``; AEM then is one more scorer there,
with no server of its own. The trace becomes spans through the same conversion as
``aem audit --from mlflow://…`` (:func:`collectors.backends.mlflow.trace_spans`), its
sessions are evaluated by the same :class:`Evaluator`, and the verdicts become the same
feedback the MLflow sink writes (:func:`aem.sinks.mlflow.feedback`): one per metric and
turn (name = the metric, value = its outcome, rationale = its explanation) and one
``aem.label`` per turn naming the root-cause spans, each on the turn's first span.

The verdicts are those of the spans of one trace: a session whose turns span several
traces is judged here trace by trace, in ``aem audit`` as a whole.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from aem.cases import Case
from aem.evaluate import Evaluator
from aem.metrics.registry import resolve
from aem.model import InputIssue, SessionReport
from aem.settings import AemConfig
from aem.sinks.mlflow import SOURCE_ID, feedback
from aem.sinks.records import SPAN_ITEM_KINDS, verdict_items
from collectors.backends.mlflow import trace_spans
from collectors.reading import assemble_all


class TraceVerdicts:
    """AEM's verdicts on the spans of one MLflow trace (as JSON, the REST shape).

    One evaluator for every trace (the metrics and the embedding model load once);
    ``mlflow.genai.evaluate`` calls scorers from several threads, so evaluation is
    serialised.
    """

    def __init__(
        self, config: AemConfig | None = None, cases: Mapping[str, Case] | None = None
    ) -> None:
        resolved = resolve(config or AemConfig())
        self._span_limit = resolved.config.assembly.span_limit
        self._evaluator = Evaluator(resolved.config, cases, list(resolved.metrics))
        self._lock = threading.Lock()

    def reports(self, trace: Mapping[str, Any]) -> list[SessionReport]:
        """The session reports of the trace's spans (``trace_info`` + ``spans``)."""
        issues: list[InputIssue] = []
        spans = trace_spans(trace, "mlflow trace", issues)
        with self._lock:
            closed = assemble_all(spans, self._span_limit, issues.append)
            return [self._evaluator.evaluate(session) for session in closed]

    def feedback(self, trace: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The assessments (REST shape) the MLflow sink would write for the trace."""
        return [
            feedback(item, SOURCE_ID)
            for report in self.reports(trace)
            for item in verdict_items(report, completed_at=0.0)
            if item.kind in SPAN_ITEM_KINDS  # evaluate puts every feedback on the root span
        ]


def aem_scorer(
    config: AemConfig | None = None,
    cases: Mapping[str, Case] | None = None,
    name: str = "aem",
) -> Any:
    """An ``mlflow.genai`` scorer returning AEM's per-turn verdicts as ``Feedback``."""
    from google.protobuf.json_format import MessageToDict
    from mlflow.entities import AssessmentSource, Feedback
    from mlflow.genai.scorers import scorer

    verdicts = TraceVerdicts(config, cases)

    @scorer(name=name)  # type: ignore[untyped-decorator, unused-ignore]  # untyped without mlflow
    def aem(trace: Any) -> list[Any]:
        as_json = MessageToDict(trace.to_proto(), preserving_proto_field_name=True)
        return [
            Feedback(
                name=f["assessment_name"],
                value=f["feedback"]["value"],
                rationale=f["rationale"],
                span_id=f["span_id"],
                metadata=f["metadata"],
                source=AssessmentSource(source_type="CODE", source_id=SOURCE_ID),
            )
            for f in verdicts.feedback(as_json)
        ]

    return aem
