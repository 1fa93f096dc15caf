"""The cases file: per-session references (fields in docs/semantics.md, "The cases file").

One case per session, joined on ``session_id``. Unknown fields are kept as metadata.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ExpectedToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Case(BaseModel):
    model_config = ConfigDict(extra="allow")

    session_id: str
    type: Literal["happy", "edge", "oos"] | None = None
    question: str | None = None
    reference_answer: str | None = None
    judge_instruction: str | None = None
    key_points: list[str] = Field(default_factory=list)
    json_schema: dict[str, Any] | None = None
    expected_tool_calls: list[ExpectedToolCall] | None = None
    order: list[tuple[int, int]] = Field(default_factory=list)
    match_tools: list[str] | None = None
    facts: dict[str, Any] = Field(default_factory=dict)

    @property
    def metadata(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class CasesError(ValueError):
    """The cases file cannot be used; the message names the file and the record."""


def load_cases(path: Path) -> dict[str, Case]:
    """Read a JSONL or YAML cases file into ``{session_id: Case}``.

    A malformed record is an error naming its line: a silently ignored reference would
    turn a failing session into a passing one.
    """
    text = Path(path).read_text(encoding="utf-8")
    records: list[tuple[int, Any]] = []
    if path.suffix in {".yaml", ".yml"}:
        try:
            loaded = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise CasesError(f"{path}: not valid YAML: {exc}") from exc
        items = loaded.get("cases", loaded) if isinstance(loaded, dict) else loaded
        records = [(i + 1, item) for i, item in enumerate(items or [])]
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise CasesError(f"{path}:{number}: not valid JSON: {exc}") from exc
    cases: dict[str, Case] = {}
    for number, record in records:
        try:
            case = Case.model_validate(record)
        except ValidationError as exc:
            raise CasesError(f"{path}:{number}: invalid case: {exc}") from exc
        for before, after in case.order:
            n = len(case.expected_tool_calls or [])
            if not (0 <= before < n and 0 <= after < n):
                raise CasesError(
                    f"{path}:{number}: order pair {[before, after]} is outside "
                    f"expected_tool_calls (0..{n - 1})"
                )
        cases[case.session_id] = case
    return cases
