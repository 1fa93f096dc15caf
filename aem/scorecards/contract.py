"""The span contract of pipeline runs: the attribute names AEM reads, in one place.

Why constants and not literals scattered over the readers: the names are a public
contract (``docs/scorecards.md``); the generator, the extractor and the live tracker must
agree on them exactly, and a rename has to be one edit.
"""

from __future__ import annotations

from enum import StrEnum

# --- on every step span (and, optionally, the run's root span) ----------------------------
PIPELINE_NAME = "aem.pipeline.name"
STEP_NAME = "aem.pipeline.step.name"
STEP_KIND = "aem.pipeline.step.kind"
STEP_PROMPT = "aem.pipeline.step.prompt"

# --- level-1 results as span attributes: aem.score.criterion.<criterion>.<field> ----------
CRITERION_PREFIX = "aem.score.criterion."
FIELD_VALUE = "value"
FIELD_MAX = "max"
FIELD_MODE = "mode"
FIELD_FIRED = "fired"
CRITERION_FIELDS = (FIELD_VALUE, FIELD_MAX, FIELD_MODE, FIELD_FIRED)

# --- level-1 results as gen_ai.evaluation.result events on the step span -------------------
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVENT_NAME = "gen_ai.evaluation.name"
EVENT_VALUE = "gen_ai.evaluation.score.value"
EVENT_MAX = "aem.criterion.max"
EVENT_MODE = "aem.criterion.mode"
EVENT_FIRED = "aem.criterion.fired"

# --- what AEM emits for a completed / blocked total (aem serve) ---------------------------
TOTAL_EVALUATION_NAME = "aem.scorecard"


class StepKind(StrEnum):
    """What a pipeline step does; only LLM analysis can produce a level-1 score."""

    TRANSCRIPTION = "transcription"
    ROUTING = "routing"
    LANGUAGE_CHECK = "language_check"
    LLM_ANALYSIS = "llm_analysis"

    @property
    def can_score(self) -> bool:
        return self is StepKind.LLM_ANALYSIS


class CriterionMode(StrEnum):
    """``score`` adds points to its step; ``blocker`` forces the whole total to 0 when fired."""

    SCORE = "score"
    BLOCKER = "blocker"


def criterion_attribute(criterion: str, field: str) -> str:
    """``aem.score.criterion.<criterion>.<field>``: the attribute form of one result field."""
    return f"{CRITERION_PREFIX}{criterion}.{field}"
