"""Thresholds and tolerances of the semantic comparison (issue 3 fills this in)."""

from __future__ import annotations

from pydantic import BaseModel


class CompareSettings(BaseModel):
    """Every threshold of the semantic comparison; none lives as a constant in code."""

    text_similarity_threshold: float = 0.8


class MatchSettings(BaseModel):
    """Tool-set matching configuration."""

    pass_threshold: float = 1.0
    allow_extra_arguments: bool = True
