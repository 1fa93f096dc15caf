"""Level-2 scorecards: a conversation's total from the scores of its pipeline steps.

A processing pipeline's step spans (transcription, routing, language check, LLM analysis)
carry level-1 results; a scorecard config says which steps count and with what weight;
:func:`compute_total` turns the latest result of each step into a ``pending``, ``blocked``
or ``complete`` total, and :class:`ScorecardStore` keeps its versions. The span contract
and the rules are in ``docs/scorecards.md``.
"""

from aem.scorecards.extract import StepResult, latest_results
from aem.scorecards.scorecard import Scorecard, ScorecardError, load_scorecard, read_and_check
from aem.scorecards.totals import Total, compute_total
from aem.scorecards.versions import ScorecardStore, StoredTotal

__all__ = [
    "Scorecard",
    "ScorecardError",
    "ScorecardStore",
    "StepResult",
    "StoredTotal",
    "Total",
    "compute_total",
    "latest_results",
    "load_scorecard",
    "read_and_check",
]
