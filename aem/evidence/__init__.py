"""The evidence engine: what a text states, what a turn could see, and what supports it.

Why a package of its own, below the metrics: claims, citations, the passages a turn was
grounded on, the values it could see and whether a stated value or claim follows from
them are not metrics — several metrics (and the embedded judge) ask the same questions
and must get the same answers. None of it knows the metric framework; the metrics
import it from here, the package root, and never from its modules.
"""

from aem.evidence.bindings import (
    Call,
    Contradiction,
    contradiction,
    near_miss,
    parsed,
    worked_out_wrong,
    wrong_persons,
)
from aem.evidence.citations import Citation, Source, find_citations, resolve, strip_citations
from aem.evidence.claimed_success import ClaimedSuccess, claimed_successes, unrecovered_failures
from aem.evidence.claims import Claim, is_claim, sentence_pieces, split_claims
from aem.evidence.entailment import (
    ClaimCheck,
    ClaimStatus,
    Thresholds,
    check_claims,
)
from aem.evidence.grounding import Grounding, build_grounding, grounding_of, session_gathered
from aem.evidence.periods import RelativePeriod, day_of_session, relative_periods, session_date
from aem.evidence.queries import (
    Seen,
    SessionMatch,
    answers_to_user,
    final_turn,
    match_session,
    seen_by,
    task_texts,
    tool_turns,
)
from aem.evidence.recovery import recovered_by, reported_decline
from aem.evidence.refusal_cues import (
    EXEMPLARS,
    cyrillic,
    declines_as_impossible,
    has_cue,
    offers_help,
)
from aem.evidence.support import (
    SeenValues,
    ValueStatus,
    ValueVerdict,
    derive,
    is_distinctive,
    judge_value,
)

__all__ = [
    "EXEMPLARS",
    "Call",
    "Citation",
    "Claim",
    "ClaimCheck",
    "ClaimStatus",
    "ClaimedSuccess",
    "Contradiction",
    "Grounding",
    "RelativePeriod",
    "Seen",
    "SeenValues",
    "SessionMatch",
    "Source",
    "Thresholds",
    "ValueStatus",
    "ValueVerdict",
    "answers_to_user",
    "build_grounding",
    "check_claims",
    "claimed_successes",
    "contradiction",
    "cyrillic",
    "day_of_session",
    "declines_as_impossible",
    "derive",
    "final_turn",
    "find_citations",
    "grounding_of",
    "has_cue",
    "is_claim",
    "is_distinctive",
    "judge_value",
    "match_session",
    "near_miss",
    "offers_help",
    "parsed",
    "recovered_by",
    "relative_periods",
    "reported_decline",
    "resolve",
    "seen_by",
    "sentence_pieces",
    "session_date",
    "session_gathered",
    "split_claims",
    "strip_citations",
    "task_texts",
    "tool_turns",
    "unrecovered_failures",
    "worked_out_wrong",
    "wrong_persons",
]
