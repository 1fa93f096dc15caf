"""The cases file: per-session references (fields in docs/semantics.md, "The cases file").

One case per session, joined on ``session_id``. Unknown fields are kept as metadata; a
check or metric that reads one declares it (:class:`CaseField`), typed, and reads it
through the declaration, so a wrong type is an error naming the case and the field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


class ExpectedToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    # A look-up the agent may skip (it already knew the value): not made, it is "not
    # required"; made, it is matched like any other call.
    optional: bool = False


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
    # What the tools do, when their names do not say it (aem.matching.effects), and this
    # case's own [matching] extra_calls.
    read_only_tools: list[str] = Field(default_factory=list)
    state_changing_tools: list[str] = Field(default_factory=list)
    extra_calls: Literal["fail", "writes", "allow"] | None = None
    facts: dict[str, Any] = Field(default_factory=dict)

    @property
    def metadata(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class CaseFieldError(ValueError):
    """One case's field has the wrong type; the message names the case and the field.

    Raised when the field is read, not when the file loads: the other cases still load
    and are evaluated, and only the readers of this field report the error.
    """


@cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind, config=ConfigDict(strict=True))


def _type_name(kind: Any) -> str:
    return kind.__name__ if isinstance(kind, type) else str(kind)


@dataclass(frozen=True)
class CaseField:
    """A case field a check or metric reads, with the type it must have.

    ``required``: a check skips a case without it (the reason names the field, with
    ``note`` after it); an optional field is only read. A field is *given* when it is set
    and is not empty text or an empty list (``{}`` is a schema that accepts everything).
    """

    name: str
    type: Any
    required: bool = True
    note: str = ""

    def value(self, case: Case | None) -> Any:
        """The field's value (None when absent); :class:`CaseFieldError` on a wrong type."""
        if case is None:
            return None
        if self.name in Case.model_fields:
            return getattr(case, self.name)  # validated with the case when the file loaded
        raw = (case.model_extra or {}).get(self.name)
        if raw is None:
            return None
        try:
            return _adapter(self.type).validate_python(raw)
        except ValidationError as exc:
            raise CaseFieldError(
                f"case {case.session_id!r}: field {self.name!r} must be "
                f"{_type_name(self.type)}, got {raw!r}"
            ) from exc

    def given(self, case: Case) -> bool:
        """Set, and not empty text or an empty list (its type is :meth:`value`'s concern:
        a case with a wrongly typed field is evaluated, and that field's reader reports it)."""
        if self.name in Case.model_fields:
            value = getattr(case, self.name)
        else:
            value = (case.model_extra or {}).get(self.name)
        return value is not None and value != "" and value != []

    def describe(self) -> str:
        return f"{self.name} ({self.note})" if self.note else self.name


@dataclass(frozen=True)
class AnyOf:
    """A requirement met by any one of ``fields`` (``reference_answer or judge_instruction``)."""

    fields: tuple[CaseField, ...]
    required: ClassVar[bool] = True

    def __init__(self, *fields: CaseField) -> None:
        object.__setattr__(self, "fields", fields)

    def given(self, case: Case) -> bool:
        return any(f.given(case) for f in self.fields)

    def describe(self) -> str:
        return " or ".join(f.describe() for f in self.fields)


CaseFields = Sequence[CaseField | AnyOf]


def declared_fields(declared: CaseFields) -> list[CaseField]:
    """Every field of a declaration, groups flattened, in declaration order."""
    return [f for item in declared for f in (item.fields if isinstance(item, AnyOf) else (item,))]


def needs(declared: CaseFields) -> str:
    """What a case must carry, as the skip reason and the check cards word it."""
    return ", ".join(item.describe() for item in declared if item.required)


def missing_reason(declared: CaseFields, case: Case | None) -> str | None:
    """Why a reader of ``declared`` does not evaluate ``case``, or None when it does."""
    if case is None:
        return "no case for this session"
    missing: Iterable[CaseField | AnyOf] = (
        item for item in declared if item.required and not item.given(case)
    )
    named = [item.describe() for item in missing]
    return f"the case has no {', no '.join(named)}" if named else None


class CasesError(ValueError):
    """The cases file cannot be used; the message names the file and the record."""


# Deeper references are refused: nothing in a case needs them, and a deep enough document
# ends a parser or a comparison in a RecursionError.
MAX_CASE_DEPTH = 64


class _CasesYamlLoader(yaml.SafeLoader):
    """``safe_load`` without aliases and with a depth limit: a few hundred bytes of nested
    ``*alias`` expand to billions of nodes (a "billion laughs" document hangs the run),
    and a cases file has no use for them; deep nesting is refused before the recursive
    composer runs into Python's recursion limit."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            raise self._refuse(f"alias *{event.anchor} not allowed in a cases file", event)
        if self._depth >= MAX_CASE_DEPTH + 2:  # the document and its list of cases
            raise self._refuse(f"nested deeper than {MAX_CASE_DEPTH} levels", event)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    @staticmethod
    def _refuse(problem: str, event: yaml.Event) -> yaml.YAMLError:
        line = event.start_mark.line + 1 if event.start_mark else "?"
        return yaml.YAMLError(f"{problem} (line {line})")


def load_cases(path: Path) -> dict[str, Case]:
    """Read a JSONL or YAML cases file into ``{session_id: Case}``.

    A malformed record is an error naming its line: a silently ignored reference would
    turn a failing session into a passing one. So is a second case for the same session
    (naming both lines): letting the last one win would hide the first one's verdicts.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CasesError(f"{path}: not UTF-8 text: {exc}") from exc
    if path.suffix in {".yaml", ".yml"}:
        records = _yaml_records(path, text)
    else:
        records = _jsonl_records(path, text)
    cases: dict[str, Case] = {}
    first_line: dict[str, int] = {}
    for number, record in records:
        case = _validate(path, number, record)
        if case.session_id in cases:
            raise CasesError(
                f"{path}:{number}: duplicate session_id {case.session_id!r} "
                f"(first at line {first_line[case.session_id]})"
            )
        cases[case.session_id] = case
        first_line[case.session_id] = number
    return cases


def _validate(path: Path, number: int, record: Any) -> Case:
    if _depth(record) > MAX_CASE_DEPTH:
        raise CasesError(f"{path}:{number}: nested deeper than {MAX_CASE_DEPTH} levels")
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
    return case


def _jsonl_records(path: Path, text: str) -> list[tuple[int, Any]]:
    records: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise CasesError(f"{path}:{number}: not valid JSON: {exc}") from exc
        except RecursionError as exc:
            raise CasesError(f"{path}:{number}: nested too deeply") from exc
    return records


def _yaml_records(path: Path, text: str) -> list[tuple[int, Any]]:
    """The cases of a YAML file (a list, or a mapping with a ``cases`` list), each with
    the line it starts on."""
    loader = _CasesYamlLoader(text)
    try:
        node = loader.get_single_node()
        loaded = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise CasesError(f"{path}: not valid YAML: {exc}") from exc
    except RecursionError as exc:
        raise CasesError(f"{path}: nested too deeply") from exc
    finally:
        loader.dispose()
    if isinstance(loaded, dict) and "cases" in loaded and isinstance(node, yaml.MappingNode):
        node = next(v for k, v in node.value if k.value == "cases")
        loaded = loaded["cases"]
    if loaded is None:
        return []
    if not isinstance(loaded, list) or not isinstance(node, yaml.SequenceNode):
        raise CasesError(
            f"{path}: expected a list of cases (or a mapping with a 'cases' list), "
            f"got {type(loaded).__name__}"
        )
    return [(item.start_mark.line + 1, case) for item, case in zip(node.value, loaded, strict=True)]


def _depth(value: Any) -> int:
    """How deeply lists and mappings nest in ``value`` (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend(
                (child, level + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
    return deepest
