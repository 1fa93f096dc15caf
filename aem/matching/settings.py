"""How the session's tool calls are matched against the case's expected calls.

Why next to matching: these settings are read by the matcher and by both metrics built
on its result (``tool_choice`` and ``argument_validity``), so they belong to neither
metric. ``aem.settings.AemConfig`` composes this model as ``[matching]``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from aem.foundation.strict import StrictSettings

ExtraCalls = Literal["fail", "writes", "allow"]


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
    extra_calls: ExtraCalls = Field(
        default="writes",
        description="a call the case does not list (among match_tools): 'fail' fails every "
        "one; 'writes' passes a call whose tool only reads (a case, [matching] or the tool's "
        "definition says so, else its name's verb), and fails the rest; 'allow' passes all",
    )
    extra_calls_fail: bool | None = Field(
        default=None,
        description="the older switch, kept so existing configurations load: true is "
        "extra_calls = 'fail', false is 'allow'; unset, extra_calls decides",
    )
    read_only_tools: list[str] = Field(
        default_factory=list,
        description="tools that only read, whatever their names say (a case's own list comes "
        "first); spelling-insensitive",
    )
    state_changing_tools: list[str] = Field(
        default_factory=list,
        description="tools that change state, whatever their names say (a case's own list "
        "comes first)",
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

    @property
    def extra_mode(self) -> ExtraCalls:
        """What an unlisted call gets: ``extra_calls``, unless the older
        ``extra_calls_fail`` is set (true: ``fail``, false: ``allow``)."""
        if self.extra_calls_fail is None:
            return self.extra_calls
        return "fail" if self.extra_calls_fail else "allow"
