"""The pipeline definition: its steps, their kinds, and the level-1 scoring of each prompt.

Why a separate document from the scorecard config: the definition describes what the
pipeline *is* (owned by whoever builds it); the scorecard config says how its steps add up
(owned by QA). Validation reads both, because most refusals are about the two disagreeing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from aem.foundation.strict import FrozenSettings
from aem.scorecards.contract import CriterionMode, StepKind
from aem.scorecards.files import DocumentError, read_document

# The most points one criterion may give. Why a bound at all: a maximum of ``1e308`` is
# finite, yet a weighted sum of two overflows to ``inf``; below this bound every sum the
# scale checks allow (``config.MAX_SCALE``) is an exact-enough float.
MAX_CRITERION_POINTS = 1_000_000.0


class _Named(Protocol):
    @property
    def name(self) -> str: ...


Named = TypeVar("Named", bound=_Named)


def repeated(names: Iterable[str]) -> list[str]:
    """The names that occur more than once, sorted (one pass, not one count per name)."""
    return sorted(name for name, count in Counter(names).items() if count > 1)


def by_unique_name(items: Sequence[Named], what: str) -> dict[str, Named]:
    """``items`` by name, built once; a name used twice is a ValueError naming it."""
    twice = repeated(item.name for item in items)
    if twice:
        raise ValueError(f"{what} names must be unique; repeated: {', '.join(twice)}")
    return {item.name: item for item in items}


class FiniteSettings(FrozenSettings):
    """Finite numbers only: ``inf`` and ``nan`` are refused where the file states them."""

    model_config = ConfigDict(allow_inf_nan=False)


class Criterion(FiniteSettings):
    """One level-1 criterion of a prompt: points up to ``max``, or a pipeline blocker."""

    name: str = Field(min_length=1)
    max: float = Field(
        0.0, ge=0, le=MAX_CRITERION_POINTS, description="most points the criterion can give"
    )
    mode: CriterionMode = CriterionMode.SCORE

    @model_validator(mode="after")
    def _score_has_points(self) -> Criterion:
        if self.mode is CriterionMode.SCORE and self.max <= 0:
            raise ValueError(f"criterion {self.name!r}: a scoring criterion needs max > 0")
        return self


class Scoring(FrozenSettings):
    """A prompt's level-1 scoring: its criteria; the step's maximum is their sum.

    Criterion names are unique: a criterion listed twice would count twice in the
    maximum and twice in every score, from one reported value.
    """

    criteria: list[Criterion] = Field(min_length=1)
    _by_name: dict[str, Criterion] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _unique_criteria(self) -> Scoring:
        self._by_name = by_unique_name(self.criteria, "criterion")
        return self

    @property
    def maximum(self) -> float:
        return sum(c.max for c in self.criteria if c.mode is CriterionMode.SCORE)

    def criterion(self, name: str) -> Criterion | None:
        return self._by_name.get(name)


class Prompt(FrozenSettings):
    scoring: Scoring | None = None


class Step(FrozenSettings):
    name: str = Field(min_length=1)
    kind: StepKind
    prompt: str | None = None


class PipelineDefinition(FrozenSettings):
    """Steps in order, and the prompts LLM-analysis steps refer to.

    Steps are looked up by name through an index built once: validation and totals ask
    for a step per listed step, which must not cost a scan of the pipeline each time.
    """

    name: str = Field(min_length=1)
    steps: list[Step] = Field(min_length=1)
    prompts: dict[str, Prompt] = Field(default_factory=dict)
    _by_name: dict[str, Step] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _unique_steps(self) -> PipelineDefinition:
        self._by_name = by_unique_name(self.steps, "step")
        return self

    def step(self, name: str) -> Step | None:
        return self._by_name.get(name)

    def scoring_of(self, step: Step) -> Scoring | None:
        """The level-1 scoring a step's prompt declares (None: it can never give a score)."""
        if step.prompt is None or step.prompt not in self.prompts:
            return None
        return self.prompts[step.prompt].scoring


def load_definition(path: Path) -> PipelineDefinition:
    """Parse and check a pipeline definition file (YAML or TOML)."""
    data = read_document(path)
    try:
        return PipelineDefinition.model_validate(data)
    except ValidationError as exc:
        raise DocumentError(f"{path}: invalid pipeline definition:\n{_lines(exc)}") from exc


def _lines(exc: ValidationError) -> str:
    """One line per pydantic error, with the key path as written in the file."""
    out = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        out.append(f"  {where}: {err['msg']}")
    return "\n".join(out)
