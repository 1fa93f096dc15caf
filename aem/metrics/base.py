"""The metric plug-in interface.

A metric is a class with three declarations and one method:

* ``name`` — its report name, which is also its configuration key
  (``[metrics."<name>"]``);
* ``role`` — ``"cause"`` (a failure can be a root cause and propagates to the turns
  that depend on it) or ``"observation"`` (reported, never a root cause);
* ``Settings`` — a pydantic model (:class:`MetricSettings`: unknown keys are errors,
  ``Literal`` for choices); AEM validates the metric's configuration table against it
  at load and builds the metric with ``Metric.from_settings(settings, services)``, the
  one convention of every plug-in kind (:class:`BaseMetric`'s returns ``cls(settings)``);
* ``band`` — where its results sit among a turn's results, one of the named bands of
  :data:`aem.foundation.plugins.METRIC_BANDS` (a plug-in's default, ``"plugin"``, is after every
  built-in metric and before the checks); the first failed cause names a root cause;
* ``case_fields`` — the case fields it reads, typed (:class:`~aem.cases.CaseField`):
  ``case_fields = (CaseField("expect_data", bool | list[str], required=False),)``. Read
  them with ``FIELD.value(context.case)``: the value is checked against the declared type
  and a wrong one is a :class:`~aem.cases.CaseFieldError` naming the case and the field.
  Checks (:mod:`aem.checks`) skip a case without their required fields, with the reason;
* ``evaluate(context)`` — :class:`~aem.foundation.model.MetricResult` items for the turns it judges.

Why the class holds its settings: one file per metric is then the whole cost of adding
one, and a plug-in's settings are checked exactly like a built-in's. A plug-in may omit
``role`` (then a cause) and ``Settings`` (then it takes none, and any key in its table
is an error). Metrics never do I/O: everything they may read is in the
:class:`~aem.metrics.context.MetricContext`, whose queries are computed once per session
and shared by every metric. Register a metric in the ``aem.metrics`` entry-point group
(as the built-ins are) or list it in ``metrics.plugins`` (``"package.module:attribute"``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Generic, Literal, Protocol, Self, TypeVar, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict

from aem.cases import AnyOf, CaseField, CaseFieldError, CaseFields
from aem.foundation.model import MetricResult
from aem.metrics.context import MetricContext

Role = Literal["cause", "observation"]
CAUSE: Role = "cause"
OBSERVATION: Role = "observation"
# Where a plug-in's results go among a turn's results when it declares no band.
DEFAULT_BAND = "plugin"


class MetricSettings(BaseModel):
    """Base of every metric's settings: a misspelt key fails at load, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoSettings(MetricSettings):
    """The settings of a metric that has none: any key in its table is an error."""


@runtime_checkable
class Metric(Protocol):
    """What the evaluator runs. ``role``, ``Settings``, ``band`` and ``from_settings`` are
    optional class attributes read by the registry (see the module docstring)."""

    name: str

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]: ...


S = TypeVar("S", bound=BaseModel)


class BaseMetric(Generic[S]):
    """Optional base: the declarations with their defaults, and ``self.settings``.

    A subclass sets ``name`` and, as needed, ``role``, ``band``, ``Settings`` and
    ``case_fields``; ``Metric()`` then runs with the default settings, ``Metric(settings)``
    with others, and ``from_settings(settings, services)`` is how AEM builds it.
    """

    name: ClassVar[str]
    role: ClassVar[Role] = CAUSE
    band: ClassVar[str] = DEFAULT_BAND
    Settings: ClassVar[type[BaseModel]] = NoSettings
    case_fields: ClassVar[CaseFields] = ()
    # Provenance of its verdicts (aem.foundation.provenance): what kind of evaluator decides, and
    # the
    # range its scores take. A metric whose settings name a judge reports "judge".
    evaluator_type: ClassVar[Literal["rule", "embedding", "judge"]] = "rule"
    score_range: ClassVar[tuple[float, float]] = (0.0, 1.0)

    def __init__(self, settings: S | None = None) -> None:
        self.settings: S = settings if settings is not None else cast(S, self.Settings())

    @classmethod
    def from_settings(cls, settings: S, services: Any = None) -> Self:
        """The one build convention of every plug-in kind (:mod:`aem.foundation.plugins`): a metric
        needs nothing lent (it reads ``context.services`` while it evaluates)."""
        del services
        return cls(settings)

    def evaluate(self, context: MetricContext) -> Iterable[MetricResult]:
        raise NotImplementedError


def role_of(metric: object) -> Role:
    """A metric's declared role; plug-ins written before roles existed are causes."""
    role = getattr(metric, "role", CAUSE)
    return OBSERVATION if role == OBSERVATION else CAUSE


# A result on a turn: the one constructor metrics share so results look alike.
result = MetricResult.for_turn


__all__ = [
    "CAUSE",
    "DEFAULT_BAND",
    "OBSERVATION",
    "AnyOf",
    "BaseMetric",
    "CaseField",
    "CaseFieldError",
    "CaseFields",
    "Metric",
    "MetricContext",
    "MetricSettings",
    "NoSettings",
    "Role",
    "result",
    "role_of",
]
