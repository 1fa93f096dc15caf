"""The refusals: a scorecard config that would score conversations wrongly is not saved.

Why every check runs and all violations come back together: whoever fixes a config should
see everything wrong with it at once, not one refusal per attempt. Each message says what
would happen to the totals if the config were accepted.

Every check is one pass over the lists (steps are found through the definition's index):
a pipeline of 20,000 steps validates in well under a second, not in minutes
(``python -m bench.scorecards.run``).
"""

from __future__ import annotations

from dataclasses import dataclass

from aem.scorecards.config import MAX_SCALE, ScorecardConfig
from aem.scorecards.definition import PipelineDefinition, Step, repeated

# The five refusals of the level-2 semantics, and the scale checks that keep a total sane.
QA_WITHOUT_LEVEL2 = "qa_without_level2"
UNKNOWN_STEP = "unknown_step"
WEIGHTED_NON_SCORING_STEP = "weighted_non_scoring_step"
UNLISTED_SCORING_STEP = "unlisted_scoring_step"
WEIGHTED_STEP_WITHOUT_SCORING = "weighted_step_without_scoring"
DUPLICATE_STEP = "duplicate_step"
SCALE = "scale"


@dataclass(frozen=True)
class Violation:
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def _names(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names)


def check(config: ScorecardConfig, definition: PipelineDefinition) -> list[Violation]:
    """Every violation of ``config`` against ``definition`` (empty: the config is valid)."""
    if config.level2 is None:
        if config.qa:
            return [
                Violation(
                    QA_WITHOUT_LEVEL2,
                    f"pipeline {definition.name!r} is flagged QA but has no level-2 config "
                    "([level2] with a participation list, scale and pass threshold): "
                    "no conversation could be scored",
                )
            ]
        return []
    found = _participation(config, definition)
    # The scale is derived from the participation list: judge it only once the list is right.
    return found or _scale(config, definition)


def _participation(config: ScorecardConfig, definition: PipelineDefinition) -> list[Violation]:
    assert config.level2 is not None
    listed = [p.step for p in config.level2.participation]
    weighted = {p.step for p in config.level2.participation if p.weight > 0}
    steps = [s for s in definition.steps if s.name in weighted]
    checks = (
        _duplicates(listed),
        _unknown(listed, definition),
        _weighted_non_scoring(steps),
        _unlisted(listed, definition),
        _unscored(steps, definition),
    )
    return [v for v in checks if v is not None]


def _duplicates(listed: list[str]) -> Violation | None:
    twice = repeated(listed)
    if not twice:
        return None
    return Violation(
        DUPLICATE_STEP,
        f"steps listed more than once: {_names(twice)}; which weight counts would be a guess",
    )


def _unknown(listed: list[str], definition: PipelineDefinition) -> Violation | None:
    unknown = [n for n in dict.fromkeys(listed) if definition.step(n) is None]
    if not unknown:
        return None
    return Violation(
        UNKNOWN_STEP,
        f"the participation list names steps pipeline {definition.name!r} does not have: "
        f"{_names(unknown)}; no result would ever arrive for them",
    )


def _weighted_non_scoring(weighted: list[Step]) -> Violation | None:
    non_scoring = [f"{s.name} ({s.kind})" for s in weighted if not s.kind.can_score]
    if not non_scoring:
        return None
    return Violation(
        WEIGHTED_NON_SCORING_STEP,
        f"non-zero weight on {', '.join(non_scoring)}: transcription, routing and "
        "language-check steps cannot produce a score and would block every conversation "
        "forever (give them weight 0 or leave them out)",
    )


def _unlisted(listed: list[str], definition: PipelineDefinition) -> Violation | None:
    named = set(listed)
    unlisted = [s.name for s in definition.steps if s.kind.can_score and s.name not in named]
    if not unlisted:
        return None
    return Violation(
        UNLISTED_SCORING_STEP,
        f"scoring steps missing from the participation list: {_names(unlisted)}; each would "
        "silently drop out of the total (list it, with weight 0 if it must not count)",
    )


def _unscored(weighted: list[Step], definition: PipelineDefinition) -> Violation | None:
    unscored = [
        f"{s.name} (prompt {s.prompt!r})" if s.prompt else f"{s.name} (no prompt)"
        for s in weighted
        if s.kind.can_score and definition.scoring_of(s) is None
    ]
    if not unscored:
        return None
    return Violation(
        WEIGHTED_STEP_WITHOUT_SCORING,
        f"weighted steps whose prompt has no level-1 scoring configured: "
        f"{', '.join(unscored)}; such a step would never produce a score and would block "
        "the conversation",
    )


def _scale(config: ScorecardConfig, definition: PipelineDefinition) -> list[Violation]:
    """The scale is the weighted sum of the steps' own maxima; a stated max must agree."""
    assert config.level2 is not None
    level2 = config.level2
    derived = 0.0
    for p in level2.participation:
        step = definition.step(p.step)
        scoring = definition.scoring_of(step) if step is not None else None
        if p.weight > 0 and scoring is not None:
            derived += p.weight * scoring.maximum
    out: list[Violation] = []
    if derived <= 0:
        out.append(Violation(SCALE, "no participating step can give points: the scale is empty"))
        return out
    if derived > MAX_SCALE:
        out.append(
            Violation(
                SCALE,
                f"the participating steps' maxima times their weights add up to {derived:g} "
                f"points, above {MAX_SCALE:g}: a total that large is not summed exactly",
            )
        )
        return out
    if level2.scale.max is not None and level2.scale.max != derived:
        out.append(
            Violation(
                SCALE,
                f"scale max {level2.scale.max:g} differs from {derived:g}, the sum of the "
                "participating steps' own maxima (times their weights); totals would be "
                f"shown against the wrong maximum (like 156 / 100)",
            )
        )
    if not level2.scale.min <= level2.pass_threshold <= derived:
        out.append(
            Violation(
                SCALE,
                f"pass threshold {level2.pass_threshold:g} is outside the scale "
                f"{level2.scale.min:g}–{derived:g}",
            )
        )
    if level2.scale.min >= derived:
        out.append(Violation(SCALE, f"scale min {level2.scale.min:g} is not below {derived:g}"))
    return out
