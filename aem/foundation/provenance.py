"""Who produced a verdict and how to read it: the provenance every emitted verdict carries.

Why: a score in a backend is only comparable with another when both came from the same
evaluator — the same rule at the same version, the same embedding model, or the same
judge model. A team that upgrades AEM or swaps its judge must be able to tell an evaluator
change from an agent change in its dashboards.

Attribute names: where the GenAI conventions define one it is used as is
(``gen_ai.request.model`` for a judge's model); where they only *propose* one (evaluator
identity, version and type; score range; test case and run ids) the proposed name is
used under ``aem.`` so that it never squats on the conventions' namespace. The table is
in ``docs/provenance.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal

EvaluatorType = Literal["rule", "embedding", "judge"]

EVALUATOR_ID = "aem.evaluation.evaluator.id"
EVALUATOR_VERSION = "aem.evaluation.evaluator.version"
EVALUATOR_TYPE = "aem.evaluation.evaluator.type"
SCORE_RANGE = "aem.evaluation.score.range"
JUDGE_MODEL = "gen_ai.request.model"
CASE_ID = "aem.test.case.id"
RUN_ID = "aem.test.suite.run.id"


@cache
def aem_version() -> str:
    """AEM's installed version (``0+unknown`` when run from a tree that is not installed)."""
    try:
        return version("aem")
    except PackageNotFoundError:
        return "0+unknown"


def evaluator_type(metric: Any) -> EvaluatorType:
    """A metric's declared kind of evaluator, ``judge`` whenever its settings name a judge
    other than the embedded default (then a model decides, whatever the metric is)."""
    judge = getattr(getattr(metric, "settings", None), "judge", None)
    if judge and judge != "embedded":
        return "judge"
    declared = getattr(metric, "evaluator_type", "rule")
    kinds: dict[str, EvaluatorType] = {"rule": "rule", "embedding": "embedding", "judge": "judge"}
    return kinds.get(declared, "rule")


def _judge_model(metric: Any, judges: Mapping[str, Any]) -> str | None:
    judge = getattr(getattr(metric, "settings", None), "judge", None)
    table = judges.get(judge) if judge else None
    model = getattr(table, "model", None) if table is not None else None
    if model is None and isinstance(table, Mapping):
        model = table.get("model")
    return str(model) if model else None


def metric_provenance(metric: Any, judges: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The provenance attributes of one metric's verdicts.

    >>> class Rule:
    ...     name = "tool_execution"
    >>> p = metric_provenance(Rule())
    >>> p["aem.evaluation.evaluator.type"], p["aem.evaluation.score.range"]
    ('rule', [0.0, 1.0])
    """
    kind = evaluator_type(metric)
    low, high = getattr(metric, "score_range", (0.0, 1.0))
    attributes: dict[str, Any] = {
        EVALUATOR_ID: f"aem/{metric.name}",
        EVALUATOR_VERSION: aem_version(),
        EVALUATOR_TYPE: kind,
        SCORE_RANGE: [float(low), float(high)],
    }
    model = _judge_model(metric, judges or {}) if kind == "judge" else None
    if model:
        attributes[JUDGE_MODEL] = model
    return attributes


def provenance_by_metric(
    metrics: Iterable[Any], judges: Mapping[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """Per metric name, the attributes each of its verdicts carries."""
    return {m.name: metric_provenance(m, judges) for m in metrics}


def run_attributes(case_id: str | None, run_id: str | None) -> dict[str, str]:
    """The test case and run a verdict belongs to, when there are any."""
    found = {CASE_ID: case_id, RUN_ID: run_id}
    return {k: v for k, v in found.items() if v}
