"""How the session's tool calls are matched against the case's expected calls.

Why next to matching: these settings are read by the matcher and by both metrics built
on its result (``tool_choice`` and ``argument_validity``), so they belong to neither
metric. ``aem.settings.AemConfig`` composes this model as ``[matching]``.
"""

from __future__ import annotations

from pydantic import Field

from aem.strict import StrictSettings


class MatchSettings(StrictSettings):
    """Tool-set matching configuration; unknown keys are errors, not silently ignored."""

    pass_threshold: float = Field(
        default=1.0,
        ge=0.0,
        le=1.0,
        description="share of expected calls that must be matched with correct arguments",
    )
    allow_extra_arguments: bool = Field(
        default=True, description="an actual call may pass arguments the reference does not name"
    )
    extra_calls_fail: bool = Field(
        default=True, description="an unmatched actual call (among match_tools) fails the verdict"
    )
    order_violations_fail: bool = Field(
        default=True, description="a violated order pair from the case fails the verdict"
    )
    embed_text_arguments: bool = Field(
        default=False,
        description="compare free-text arguments with embeddings; off by default to keep "
        "matching fast and deterministic (text is then compared after normalisation)",
    )
    argument_mismatch_cost: float = Field(
        default=1.0,
        gt=0.0,
        description="no effect (kept so existing configurations load): the pairing "
        "objective is lexicographic — most fully right pairs, then fewest wrong arguments — "
        "so scaling the cost of one wrong argument cannot change which calls pair",
    )
    count_failed_calls: bool = Field(
        default=False,
        description="match calls the tool rejected with an error too; by default they changed "
        "no state, so tool_execution judges them and the match leaves them out (shared by "
        "tool_choice and argument_validity, hence here)",
    )
