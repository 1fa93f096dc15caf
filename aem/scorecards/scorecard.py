"""A loaded scorecard: config and definition read, checked, and reduced to what totals need.

Why validation happens on load too (not only in ``aem scorecard check``): ``aem audit`` and
``aem serve`` must never compute totals from a config that ``check`` would refuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aem.scorecards.config import ScorecardConfig, config_hash, load_config_document
from aem.scorecards.definition import PipelineDefinition, Scoring, Step, load_definition
from aem.scorecards.files import DocumentError
from aem.scorecards.validation import Violation, check


class ScorecardError(ValueError):
    """The config is refused; ``violations`` holds every reason (may be empty for I/O)."""

    def __init__(self, message: str, violations: list[Violation] | None = None) -> None:
        super().__init__(message)
        self.violations = violations or []


@dataclass(frozen=True)
class Participant:
    """A listed step with what a total needs of it."""

    step: Step
    weight: float
    scoring: Scoring | None

    @property
    def counts(self) -> bool:
        return self.weight > 0

    @property
    def maximum(self) -> float:
        """The step's own declared maximum (before its weight)."""
        return self.scoring.maximum if self.scoring is not None else 0.0


@dataclass(frozen=True)
class Scorecard:
    config: ScorecardConfig
    definition: PipelineDefinition
    config_hash: str
    participants: tuple[Participant, ...]
    scale_min: float
    scale_max: float
    pass_threshold: float

    @property
    def pipeline(self) -> str:
        return self.definition.name

    @property
    def counting(self) -> tuple[Participant, ...]:
        return tuple(p for p in self.participants if p.counts)


def read_and_check(
    config_path: Path, definition_path: Path | None = None
) -> tuple[ScorecardConfig, PipelineDefinition, list[Violation]]:
    """Both documents, parsed, and every violation of the pair (empty: valid)."""
    try:
        config = load_config_document(config_path)
        path = definition_path or config.definition
        if path is None:
            raise ScorecardError(
                f'{config_path}: no pipeline definition: set `definition = "FILE"` in the '
                "config or pass --pipeline FILE"
            )
        definition = load_definition(path)
    except DocumentError as exc:
        raise ScorecardError(str(exc)) from exc
    return config, definition, check(config, definition)


def load_scorecard(config_path: Path, definition_path: Path | None = None) -> Scorecard:
    """A scorecard ready to total conversations, or :class:`ScorecardError` with all reasons."""
    return build_scorecard(config_path, *read_and_check(config_path, definition_path))


def build_scorecard(
    config_path: Path,
    config: ScorecardConfig,
    definition: PipelineDefinition,
    violations: list[Violation],
) -> Scorecard:
    """The scorecard of documents :func:`read_and_check` returned (read once, not twice)."""
    if violations:
        lines = "\n".join(f"  {v}" for v in violations)
        raise ScorecardError(
            f"{config_path}: refused ({len(violations)} violations):\n{lines}", violations
        )
    if config.level2 is None:
        raise ScorecardError(
            f"{config_path}: pipeline {definition.name!r} has no [level2]: nothing to total"
        )
    participants = []
    for entry in config.level2.participation:
        step = definition.step(entry.step)
        assert step is not None  # check() refused unknown steps
        participants.append(Participant(step, entry.weight, definition.scoring_of(step)))
    return Scorecard(
        config=config,
        definition=definition,
        config_hash=config_hash(config, definition),
        participants=tuple(participants),
        scale_min=config.level2.scale.min,
        scale_max=sum(p.weight * p.maximum for p in participants if p.counts),
        pass_threshold=config.level2.pass_threshold,
    )
