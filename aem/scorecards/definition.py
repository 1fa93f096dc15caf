"""The pipeline definition: its steps, their kinds, and the level-1 scoring of each prompt.

Why a separate document from the scorecard config: the definition describes what the
pipeline *is* (owned by whoever builds it); the scorecard config says how its steps add up
(owned by QA). Validation reads both, because most refusals are about the two disagreeing.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError, model_validator

from aem.scorecards.contract import CriterionMode, StepKind
from aem.scorecards.files import DocumentError, read_document
from aem.strict import FrozenSettings


class Criterion(FrozenSettings):
    """One level-1 criterion of a prompt: points up to ``max``, or a pipeline blocker."""

    name: str = Field(min_length=1)
    max: float = Field(0.0, ge=0, description="most points the criterion can give")
    mode: CriterionMode = CriterionMode.SCORE

    @model_validator(mode="after")
    def _score_has_points(self) -> Criterion:
        if self.mode is CriterionMode.SCORE and self.max <= 0:
            raise ValueError(f"criterion {self.name!r}: a scoring criterion needs max > 0")
        return self


class Scoring(FrozenSettings):
    """A prompt's level-1 scoring: its criteria; the step's maximum is their sum."""

    criteria: list[Criterion] = Field(min_length=1)

    @property
    def maximum(self) -> float:
        return sum(c.max for c in self.criteria if c.mode is CriterionMode.SCORE)

    def criterion(self, name: str) -> Criterion | None:
        return next((c for c in self.criteria if c.name == name), None)


class Prompt(FrozenSettings):
    scoring: Scoring | None = None


class Step(FrozenSettings):
    name: str = Field(min_length=1)
    kind: StepKind
    prompt: str | None = None


class PipelineDefinition(FrozenSettings):
    """Steps in order, and the prompts LLM-analysis steps refer to."""

    name: str = Field(min_length=1)
    steps: list[Step] = Field(min_length=1)
    prompts: dict[str, Prompt] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique_steps(self) -> PipelineDefinition:
        names = [s.name for s in self.steps]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"step names must be unique; repeated: {', '.join(twice)}")
        return self

    def step(self, name: str) -> Step | None:
        return next((s for s in self.steps if s.name == name), None)

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
