"""A conversation's level-2 total from its step results: pending, blocked or complete.

Why the states are strict: a QA total assesses a person. A step with no usable result
keeps the total ``pending`` (naming the step) instead of showing a lowered number; a fired
blocker forces 0 / not passed at once, whatever else is still running; only a total with
every counting step scored is ``complete``. Step scores are added in their own points,
times their weights; the 0–100 figure is derived from that sum, never the other way round.

Why only the pipeline's own steps are read: a span naming a step the definition lacks
(a typo, another pipeline's step) has no declared criteria to check it against, so its
"blocker fired" is no proof; it is listed in ``ignored_steps`` and changes nothing. A
blocker whose ``fired`` flag could not be read proves nothing either way: the total
stays pending on it (``undecided_blockers``) unless another blocker did fire.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from aem.scorecards.contract import CriterionMode
from aem.scorecards.results import StepResult
from aem.scorecards.scorecard import Participant, Scorecard

State = Literal["pending", "blocked", "complete"]


class StepLine(BaseModel):
    """One listed step in a total: its own score and maximum, and whether it counted."""

    model_config = ConfigDict(allow_inf_nan=False)

    step: str
    kind: str
    weight: float
    score: float | None = None
    max: float
    counted: bool
    note: str = ""


class Total(BaseModel):
    """A conversation's total; every number in it is finite (``--json`` is strict JSON)."""

    model_config = ConfigDict(allow_inf_nan=False)

    pipeline: str
    conversation: str
    state: State
    total: float | None = None
    max: float
    percent: float | None = None
    passed: bool | None = None
    threshold: float
    blocking_steps: list[str] = Field(default_factory=list)
    blockers: list[str] = Field(default_factory=list)
    undecided_blockers: list[str] = Field(
        default_factory=list, description="step.criterion of blockers whose fired was unreadable"
    )
    ignored_steps: list[str] = Field(
        default_factory=list, description="steps reported by spans that the pipeline lacks"
    )
    steps: list[StepLine] = Field(default_factory=list)
    config_hash: str


def _score(participant: Participant, result: StepResult | None) -> tuple[float | None, str]:
    """The step's points in its own scale, or None and why there is no usable score."""
    step, scoring = participant.step, participant.scoring
    if result is None:
        return None, "no result yet"
    if result.failed:
        return None, f"step failed: {result.failed}"
    if result.problems:
        return None, "; ".join(result.problems)
    if result.kind is not None and result.kind != step.kind:
        return None, f"span says kind {result.kind!r}, the pipeline says {step.kind!r}"
    if scoring is None:
        return None, "its prompt has no level-1 scoring"
    reported = {cr.name: cr for cr in result.criteria}
    points = 0.0
    for criterion in scoring.criteria:
        if criterion.mode is not CriterionMode.SCORE:
            continue
        got = reported.get(criterion.name)
        if got is None or got.value is None:
            return None, f"criterion {criterion.name!r} not reported"
        label = f"criterion {criterion.name!r}"
        if got.max is not None and got.max != criterion.max:
            return None, f"{label}: max {got.max:g}, declared {criterion.max:g}"
        if not 0 <= got.value <= criterion.max:
            return None, f"{label}: {got.value:g} outside 0–{criterion.max:g}"
        points += got.value
    declared = {cr.name for cr in scoring.criteria}
    extra = [n for n, cr in reported.items() if n not in declared and cr.mode != "blocker"]
    if extra:
        return None, f"criteria not in the prompt's scoring: {', '.join(sorted(extra))}"
    return points, ""


def blockers_of(
    scorecard: Scorecard, results: Mapping[str, StepResult]
) -> tuple[list[str], list[tuple[str, str]]]:
    """``step.criterion`` of every blocker that fired, and ``(step, criterion)`` of every
    blocker whose ``fired`` could not be read, on the pipeline's steps only."""
    fired: list[str] = []
    undecided: list[tuple[str, str]] = []
    for name, result in sorted(results.items()):
        step = scorecard.definition.step(name)
        if step is None:
            continue
        scoring = scorecard.definition.scoring_of(step)
        for cr in result.criteria:
            declared = scoring.criterion(cr.name) if scoring is not None else None
            mode = str(declared.mode) if declared is not None else cr.mode
            if mode != CriterionMode.BLOCKER:
                continue
            if cr.fired is None:
                undecided.append((name, cr.name))
            elif cr.fired:
                fired.append(f"{name}.{cr.name}")
    return fired, undecided


def unknown_steps(scorecard: Scorecard, results: Mapping[str, StepResult]) -> list[str]:
    """Steps with a result that the pipeline definition does not have."""
    return sorted(name for name in results if scorecard.definition.step(name) is None)


def compute_total(
    scorecard: Scorecard, conversation: str, results: Mapping[str, StepResult]
) -> Total:
    """The total of one conversation from the latest result of each step."""
    lines: list[StepLine] = []
    waiting: list[str] = []
    points = 0.0
    for p in scorecard.participants:
        score, why = _score(p, results.get(p.step.name))
        lines.append(
            StepLine(
                step=p.step.name,
                kind=str(p.step.kind),
                weight=p.weight,
                score=score,
                max=p.maximum,
                counted=p.counts,
                note=why if p.counts else "weight 0: listed, not counted",
            )
        )
        if p.counts and score is None:
            waiting.append(p.step.name)
        elif p.counts and score is not None:
            points += p.weight * score
    blockers, undecided = blockers_of(scorecard, results)
    waiting += [s for s in dict.fromkeys(step for step, _ in undecided) if s not in waiting]
    base = Total(
        pipeline=scorecard.pipeline,
        conversation=conversation,
        state="pending",
        max=scorecard.scale_max,
        threshold=scorecard.pass_threshold,
        steps=lines,
        config_hash=scorecard.config_hash,
        blocking_steps=waiting,
        undecided_blockers=[f"{step}.{criterion}" for step, criterion in undecided],
        ignored_steps=unknown_steps(scorecard, results),
    )
    if blockers:
        update = {"state": "blocked", "total": 0.0, "percent": 0.0, "passed": False}
        return base.model_copy(update={**update, "blockers": blockers})
    if waiting:
        return base
    return base.model_copy(
        update={
            "state": "complete",
            "total": points,
            "percent": percent(scorecard, points),
            "passed": points >= scorecard.pass_threshold,
        }
    )


def percent(scorecard: Scorecard, points: float) -> float:
    """The 0–100 figure of a total in step points, to one decimal (fixed at completion)."""
    span = scorecard.scale_max - scorecard.scale_min
    return round(100.0 * (points - scorecard.scale_min) / span, 1)
