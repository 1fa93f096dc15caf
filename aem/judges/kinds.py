"""Judge kinds: the ``aem.judges`` entry-point group, and the checking of judge tables.

A judge kind is a class with three declarations::

    class MyJudge:
        kind = "mine"                    # [judges.<name>] kind = "mine" chooses it
        Settings = MyJudgeSettings       # a pydantic model: the table's other keys

        @classmethod
        def from_settings(cls, name, settings, resources): ...   # -> a Judge

registered in a package's ``pyproject.toml`` as ``[project.entry-points."aem.judges"]
mine = "my_package:MyJudge"``. AEM's own kinds, ``embedded`` and ``openai``, are
registered the same way. ``resources`` (:class:`JudgeResources`) holds what AEM shares
with a judge: the semantic comparator, built once.

Why a registry: a team adds a judge (a house model gateway, a rules engine, a recorded
replay) without editing AEM, and its table is validated exactly like a built-in's — at
load, with errors that name the key (``judges.local.base_urll: unknown setting``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, create_model

if TYPE_CHECKING:
    from aem.compare.core import SemanticComparator
    from aem.judges.base import Judge

ENTRY_POINT_GROUP = "aem.judges"
EMBEDDED = "embedded"


@dataclass(frozen=True)
class JudgeResources:
    """What AEM lends a judge it builds: the comparator, or a factory of it (so a judge
    that never compares text never loads the embedding model)."""

    comparator: SemanticComparator | Callable[[], SemanticComparator]


class JudgeKindError(ValueError):
    """A registered judge kind does not declare ``kind``, ``Settings`` and
    ``from_settings``; the message names the entry point."""


def _checked(obj: Any, origin: str) -> type:
    kind, model = getattr(obj, "kind", None), getattr(obj, "Settings", None)
    if not (
        isinstance(obj, type)
        and isinstance(kind, str)
        and isinstance(model, type)
        and issubclass(model, BaseModel)
        and callable(getattr(obj, "from_settings", None))
    ):
        raise JudgeKindError(
            f"{origin} is not a judge kind (needs `kind`, a pydantic `Settings` and "
            "`from_settings(name, settings, resources)`)"
        )
    return obj


def judge_kinds() -> dict[str, Any]:
    """Every registered judge kind (a class) by its ``kind`` name, in registration order."""
    kinds: dict[str, Any] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found: Any = _checked(ep.load(), f"judge kind entry point {ep.name} ({ep.value})")
        kinds.setdefault(found.kind, found)
    return kinds


def _kind_choice(kinds: dict[str, Any]) -> type[BaseModel]:
    """A model of the ``kind`` key alone, so a missing or unknown kind is an error at
    ``judges.<name>.kind`` listing the kinds there are."""
    choice: Any = Literal[tuple(kinds)] if kinds else str
    return create_model("JudgeKind", kind=(choice, ...))


def validate_judge_settings(table: Any) -> BaseModel:
    """A ``[judges.<name>]`` table → its kind's settings; ``ValidationError`` locations
    are relative to the table (``("kind",)``, ``("base_url",)``)."""
    if isinstance(table, BaseModel):
        return table
    kinds = judge_kinds()
    data = dict(table) if isinstance(table, dict) else table
    chosen = _kind_choice(kinds).model_validate(
        {"kind": data.get("kind")} if isinstance(data, dict) and "kind" in data else data
    )
    model: type[BaseModel] = kinds[cast(Any, chosen).kind].Settings
    if "kind" not in model.model_fields:
        data = {k: v for k, v in data.items() if k != "kind"}
    return model.model_validate(data)


def validate_judge_table(name: str, table: Any) -> BaseModel:
    """The settings of judge ``name``'s table, for the configuration loader.

    Raises ``pydantic.ValidationError`` with locations relative to the table: prefix them
    with ``("judges", name)`` to name the key as written in TOML.
    """
    del name  # every kind is chosen by the table's own ``kind``; the name is the caller's
    return validate_judge_settings(table)


def kind_of(settings: BaseModel) -> Any:
    """The registered kind (a class) whose settings model ``settings`` is."""
    for kind in judge_kinds().values():
        if type(settings) is kind.Settings:
            return kind
    raise JudgeKindError(f"no registered judge kind has settings {type(settings).__name__}")


def build_from_settings(name: str, settings: BaseModel, resources: JudgeResources) -> Judge:
    """Judge ``name`` of the kind ``settings`` belong to."""
    built: Judge = kind_of(settings).from_settings(name, settings, resources)
    return built


__all__ = [
    "EMBEDDED",
    "ENTRY_POINT_GROUP",
    "JudgeKindError",
    "JudgeResources",
    "build_from_settings",
    "judge_kinds",
    "kind_of",
    "validate_judge_settings",
    "validate_judge_table",
]
