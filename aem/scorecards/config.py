"""The level-2 scorecard configuration of one pipeline (a TOML or YAML file).

Why every key is strict (``extra="forbid"``): a misspelt ``wieght`` silently ignored would
change an operator's assessment; the loader names the key instead.

    definition = "support-qa.pipeline.yaml"   # the pipeline definition, relative to this file
    qa = true

    [level2]
    pass_threshold = 30          # in step points, like the total
    scale = { min = 0 }          # max: the sum of the participating steps' maxima

    [[level2.participation]]
    step = "greeting"
    weight = 1
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import Field, ValidationError

from aem.foundation.strict import FrozenSettings
from aem.scorecards.definition import FiniteSettings, PipelineDefinition
from aem.scorecards.files import DocumentError, read_document

# Why bounds on numbers a file states: ``weight = inf`` or ``1e308`` is a float, and the
# total it produces is ``inf`` or ``nan`` -- a number no one can read as an assessment. A
# step counted a thousand times is a typo, not a weighting; a scale of a trillion points
# is still summed exactly enough in a float (integers stay exact to 2**53).
MAX_WEIGHT = 1000.0
MAX_SCALE = 1e12


class Participation(FiniteSettings):
    """One step of the explicit participation list; weight 0 is a recorded "does not count"."""

    step: str = Field(min_length=1)
    weight: float = Field(ge=0, le=MAX_WEIGHT)


class Scale(FiniteSettings):
    """The total's scale in step points. ``max`` is derived; a stated one must match it."""

    min: float = Field(0.0, ge=0, le=MAX_SCALE)
    max: float | None = Field(None, gt=0, le=MAX_SCALE)


class Level2(FiniteSettings):
    participation: list[Participation]
    scale: Scale = Field(default_factory=lambda: Scale.model_validate({}))
    pass_threshold: float = Field(
        ge=0, le=MAX_SCALE, description="a total at or above it has passed"
    )


class ScorecardConfig(FrozenSettings):
    definition: Path | None = Field(
        None, description="the pipeline definition file, relative to this config"
    )
    qa: bool = Field(False, description="results assess a human operator's work")
    level2: Level2 | None = None


def load_config_document(path: Path) -> ScorecardConfig:
    """Parse a scorecard config; a relative ``definition`` is resolved against its file."""
    data = read_document(path)
    try:
        config = ScorecardConfig.model_validate(data)
    except ValidationError as exc:
        lines = [
            f"  {'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in exc.errors()
        ]
        raise DocumentError(f"{path}: invalid scorecard config:\n" + "\n".join(lines)) from exc
    if config.definition is not None and not config.definition.is_absolute():
        config = config.model_copy(update={"definition": Path(path).parent / config.definition})
    return config


def config_hash(config: ScorecardConfig, definition: PipelineDefinition) -> str:
    """A short content hash of what a total depends on: config and definition, not paths.

    Stored with every version, so a total can always say which rules produced it.
    """
    canonical = json.dumps(
        {
            "config": config.model_dump(mode="json", exclude={"definition"}),
            "definition": definition.model_dump(mode="json"),
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]
