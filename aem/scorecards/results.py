"""Level-1 results as every scorecard stage passes them: a step's criteria and what
went wrong reading them.

Why a module of their own: :mod:`aem.scorecards.extract` makes them from spans, totals
add them up and the store keeps them (:mod:`aem.scorecards.versions`); the two that only
read them need not depend on how spans are read, and the three cannot end up importing
each other through the one type they share.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class CriterionResult(BaseModel):
    """One criterion as a span reported it; ``fired`` is None when it was not a boolean."""

    model_config = ConfigDict(frozen=True, allow_inf_nan=False)

    name: str
    value: float | None = None
    max: float | None = None
    mode: str | None = None
    fired: bool | None = False


class StepResult(BaseModel):
    """What one step span says; stored as JSON so live totals survive a restart."""

    model_config = ConfigDict(frozen=True)

    step: str
    kind: str | None = None
    trace_id: str
    span_id: str
    parent_span_id: str | None = None
    end_unix_nano: int = 0
    failed: str | None = None
    criteria: tuple[CriterionResult, ...] = ()
    problems: tuple[str, ...] = ()
