"""MLflow 3 scorers: ``mlflow.genai.evaluate(data=traces, scorers=aem_scorers())``.

Why a scorer and not only the sink: teams that already evaluate in MLflow run their
scorers over traces with ``mlflow.genai.evaluate``; AEM then is one more scorer there,
with no server of its own. The trace becomes spans through the same conversion as
``aem audit --from mlflow://…`` (:func:`collectors.backends.mlflow.trace_spans`), its
sessions are evaluated by the same :class:`Evaluator`, and the verdicts become the same
feedback the MLflow sink writes (:mod:`aem.sinks.mlflow`), under the same names:

- the trace's own verdict, which ``result_df`` shows in one row per trace: ``aem.label``
  (the worst label of its turns, the explanation as rationale), ``aem.root_cause`` (the
  root-cause turn's id, or ``none``) and one per metric under its plain name (its worst
  outcome over the trace's turns, the deciding turn named);
- per turn: ``<turn>.aem.label`` and ``<turn>.<metric>`` (``t1.correctness.truthfulness``),
  names unique in the trace, so no column shows one turn's value for the whole trace.

Why several scorers: ``mlflow.genai.evaluate`` aggregates a scorer's feedback into the
run's ``metrics`` only under the scorer's own name, so the counts are scorers of their
own (``aem.root_causes``, ``aem.suspects``, ``aem.sessions``, each summed:
``metrics["aem.root_causes/sum"]``). They share one evaluation of each trace.

The verdicts are those of the spans of one trace: a session whose turns span several
traces is judged here trace by trace, in ``aem audit`` as a whole.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aem.cases import Case
from aem.evaluate import Evaluator
from aem.foundation.model import InputIssue, Label, SessionReport
from aem.metrics.registry import resolve
from aem.settings import AemConfig
from aem.sinks.mlflow import SESSION_NAME, SOURCE_ID, feedback, mlflow_trace_id, trace_feedbacks
from aem.sinks.records import SPAN_ITEM_KINDS, verdict_items
from collectors.backends.mlflow import trace_spans
from collectors.reading import assemble_all

ROOT_CAUSE_NAME = "aem.root_cause"
# The counting scorers: name → what each counts in one trace's reports.
COUNTS: dict[str, Callable[[Sequence[SessionReport]], int]] = {
    "aem.root_causes": lambda reports: sum(len(r.root_causes) for r in reports),
    "aem.suspects": lambda reports: sum(
        1 for r in reports for t in r.turns if t.label is Label.SUSPECT
    ),
    "aem.sessions": len,
}
# Traces whose reports are kept for the other scorers of the same evaluation.
CACHED_TRACES = 256


class TraceVerdicts:
    """AEM's verdicts on the spans of one MLflow trace (as JSON, the REST shape).

    One evaluator for every trace (the metrics and the embedding model load once);
    ``mlflow.genai.evaluate`` calls scorers from several threads, so evaluation is
    serialised, and the last traces' reports are kept for the scorers that count.
    """

    def __init__(
        self, config: AemConfig | None = None, cases: Mapping[str, Case] | None = None
    ) -> None:
        resolved = resolve(config or AemConfig())
        self._span_limit = resolved.config.assembly.span_limit
        self._evaluator = Evaluator(resolved.config, cases, list(resolved.metrics))
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, list[SessionReport]] = OrderedDict()

    def reports(self, trace: Mapping[str, Any]) -> list[SessionReport]:
        """The session reports of the trace's spans (``trace_info`` + ``spans``)."""
        trace_id = str((trace.get("trace_info") or {}).get("trace_id") or "")
        with self._lock:
            if trace_id and trace_id in self._cache:
                return self._cache[trace_id]
            issues: list[InputIssue] = []
            spans = trace_spans(trace, "mlflow trace", issues)
            closed = assemble_all(spans, self._span_limit, issues.append)
            found = [self._evaluator.evaluate(session) for session in closed]
            if trace_id:
                self._cache[trace_id] = found
                while len(self._cache) > CACHED_TRACES:
                    self._cache.popitem(last=False)
            return found

    def feedback(self, trace: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The assessments (REST shape) the MLflow sink would write for the trace: per
        turn, then the trace's own (no session-level one: evaluate files none)."""
        per_turn, on_trace = [], []
        for report in self.reports(trace):
            for item in verdict_items(report, completed_at=0.0):
                if item.kind in SPAN_ITEM_KINDS:
                    per_turn.append(feedback(item, SOURCE_ID))
                else:
                    on_trace += [
                        body
                        for body in trace_feedbacks(item, SOURCE_ID)
                        if body["assessment_name"] != SESSION_NAME
                    ]
                    on_trace.append(_root_cause(item.payload))
        return per_turn + on_trace


def _root_cause(session: Mapping[str, Any]) -> dict[str, Any]:
    """``aem.root_cause``: the root-cause turn's id (``none`` without one), the session's
    explanation as rationale."""
    root = session.get("root_cause") or {}
    trace_id = root.get("trace_id") or session["traces"][0]["trace_id"]
    return {
        "assessment_name": ROOT_CAUSE_NAME,
        "trace_id": mlflow_trace_id(trace_id),
        "feedback": {"value": root.get("turn_id") or "none"},
        "rationale": session["explanation"],
        "metadata": {"aem.session_id": session["session_id"]},
    }


def _as_json(trace: Any) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict

    found: dict[str, Any] = MessageToDict(trace.to_proto(), preserving_proto_field_name=True)
    return found


def _total(values: list[float]) -> float:
    return float(sum(values))


_total.__name__ = "sum"  # the metric's key: "aem.root_causes/sum"


def aem_scorers(
    config: AemConfig | None = None,
    cases: Mapping[str, Case] | None = None,
    name: str = "aem",
) -> list[Any]:
    """AEM's verdicts scorer (:func:`aem_scorer`) and the three that count root causes,
    suspects and sessions into the run's ``metrics``; one evaluation per trace for all."""
    from mlflow.genai.scorers import scorer

    verdicts = TraceVerdicts(config, cases)
    found = [aem_scorer(name=name, verdicts=verdicts)]
    for count_name, count in COUNTS.items():
        counting = scorer(name=count_name, aggregations=[_total])
        found.append(counting(_counter(verdicts, count)))
    return found


def _counter(
    verdicts: TraceVerdicts, count: Callable[[Sequence[SessionReport]], int]
) -> Callable[[Any], int]:
    """A scorer function (MLflow reads its parameters: ``trace`` only) counting ``count``."""

    def counted(trace: Any) -> int:
        return count(verdicts.reports(_as_json(trace)))

    return counted


def aem_scorer(
    config: AemConfig | None = None,
    cases: Mapping[str, Case] | None = None,
    name: str = "aem",
    verdicts: TraceVerdicts | None = None,
) -> Any:
    """An ``mlflow.genai`` scorer returning AEM's verdicts on a trace as ``Feedback``."""
    from mlflow.entities import AssessmentSource, Feedback
    from mlflow.genai.scorers import scorer

    shared = verdicts or TraceVerdicts(config, cases)

    @scorer(name=name)  # type: ignore[untyped-decorator, unused-ignore]  # untyped without mlflow
    def aem(trace: Any) -> list[Any]:
        return [
            Feedback(
                name=f["assessment_name"],
                value=f["feedback"]["value"],
                rationale=f["rationale"],
                span_id=f.get("span_id"),
                metadata=f["metadata"],
                source=AssessmentSource(source_type="CODE", source_id=SOURCE_ID),
            )
            for f in shared.feedback(_as_json(trace))
        ]

    return aem
