"""AEM configuration: one pydantic model, loaded from TOML, overridable by ``--set``.

Why one place: every threshold must be named, defaulted and validated once (the OTel
SDK's habit), and every verdict reports the threshold it used.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from aem.compare.settings import CompareSettings, MatchSettings


class ToolExecutionSettings(BaseModel):
    # A tool error the agent recovered from (a later call of the same tool succeeded)
    # is reported, but is it a root cause? ``fail`` counts it; ``pass`` notes it only.
    recovered_error_outcome: str = "pass"


class ToolSetSettings(BaseModel):
    # A call the tool rejected changed no state; by default it is judged by
    # tool_execution only and left out of the expected-call match.
    count_failed_calls: bool = False


class TruthfulnessSettings(BaseModel):
    enabled: bool = True
    # Reasoning and answer turns: every distinctive number, date or id they state must be
    # supported by what the turn could see (inputs, ancestor tool results, documents).
    require_support: bool = True
    # "A day later" is reasoning, not invention: a stated day this close to a seen date
    # counts as supported. 0 makes dates exact.
    support_date_slack_days: int = 1


class CompletenessSettings(BaseModel):
    # Cosine similarity at or above which an answer sentence covers a key point.
    key_point_threshold: float = 0.6


class MetricsSettings(BaseModel):
    tool_execution: ToolExecutionSettings = Field(default_factory=ToolExecutionSettings)
    truthfulness: TruthfulnessSettings = Field(default_factory=TruthfulnessSettings)
    tool_set: ToolSetSettings = Field(default_factory=ToolSetSettings)
    completeness: CompletenessSettings = Field(default_factory=CompletenessSettings)
    disabled: list[str] = Field(default_factory=list)
    plugins: list[str] = Field(
        default_factory=list, description="extra metrics as 'module:attribute'"
    )


class TaxonomyRule(BaseModel):
    category: str
    metric: str | None = None
    kind: str | None = None
    name: str | None = None


class AssemblySettings(BaseModel):
    # Files have no wall clock: a session whose root span has ended is closed after this
    # many further spans without one of its own (bounds memory on huge files).
    idle_spans: int = Field(default=20_000, ge=1)


class AemConfig(BaseModel):
    compare: CompareSettings = Field(default_factory=CompareSettings)
    matching: MatchSettings = Field(default_factory=MatchSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    taxonomy: list[TaxonomyRule] = Field(default_factory=list)
    assembly: AssemblySettings = Field(default_factory=AssemblySettings)


def _set_dotted(data: dict[str, Any], dotted: str, raw: str) -> None:
    keys = dotted.split(".")
    node = data
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    try:
        value: Any = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    node[keys[-1]] = value


def load_config(path: Path | None = None, overrides: list[str] | None = None) -> AemConfig:
    """Load configuration from a TOML file, then apply ``key.path=value`` overrides.

    >>> load_config(overrides=["matching.pass_threshold=0.5"]).matching.pass_threshold
    0.5
    """
    data: dict[str, Any] = {}
    if path is not None:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    for item in overrides or []:
        if "=" not in item:
            raise ValueError(f"override {item!r} is not key.path=value")
        key, raw = item.split("=", 1)
        _set_dotted(data, key.strip(), raw.strip())
    return AemConfig.model_validate(data)
