"""Judge kinds: the ``aem.judges`` entry-point group (loaded by the extension kernel,
:mod:`aem.plugins`), and the checking of judge tables.

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
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, create_model

from aem import plugins

if TYPE_CHECKING:
    from aem.compare.core import SemanticComparator
    from aem.judges.base import Judge

ENTRY_POINT_GROUP = plugins.JUDGE_KIND.group
EMBEDDED = "embedded"


@dataclass(frozen=True)
class JudgeResources:
    """What AEM lends a judge it builds: the comparator, or a factory of it (so a judge
    that never compares text never loads the embedding model)."""

    comparator: SemanticComparator | Callable[[], SemanticComparator]


class JudgeKindError(plugins.PluginError):
    """A registered judge kind does not declare ``kind``, ``Settings`` and
    ``from_settings``; the message names the entry point."""


@dataclass(frozen=True)
class JudgeServices:
    """What the kernel hands a judge kind's ``from_settings``: the judge's name (a judge
    kind is configured under many names) and the resources AEM lends it."""

    name: str
    resources: JudgeResources


def judge_kinds() -> dict[str, Any]:
    """Every registered judge kind (a class) that loads, by its ``kind`` name, in
    registration order. A broken one is an error only where a table chooses it."""
    return {p.name: p.target for p in plugins.load(plugins.JUDGE_KIND).plugins}


def _chosen(kind: str) -> plugins.Plugin:
    try:
        return plugins.load(plugins.JUDGE_KIND).require(kind, "judges.<name>.kind")
    except plugins.PluginError as exc:
        raise JudgeKindError(exc.kind, exc.entry_point, exc.origin, exc.problem) from exc


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
    kinds.update({e.entry_point: None for e in plugins.load(plugins.JUDGE_KIND).errors})
    data = dict(table) if isinstance(table, dict) else table
    chosen = _kind_choice(kinds).model_validate(
        {"kind": data.get("kind")} if isinstance(data, dict) and "kind" in data else data
    )
    model: type[BaseModel] = _chosen(cast(Any, chosen).kind).settings_model
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


def _plugin_of(settings: BaseModel) -> plugins.Plugin:
    for plugin in plugins.load(plugins.JUDGE_KIND).plugins:
        if type(settings) is plugin.settings_model:
            return plugin
    raise ValueError(f"no registered judge kind has settings {type(settings).__name__}")


def kind_of(settings: BaseModel) -> Any:
    """The registered kind (a class) whose settings model ``settings`` is."""
    return _plugin_of(settings).target


def build_from_settings(name: str, settings: BaseModel, resources: JudgeResources) -> Judge:
    """Judge ``name`` of the kind ``settings`` belong to."""
    built: Judge = _plugin_of(settings).build(settings, JudgeServices(name, resources))
    return built


__all__ = [
    "EMBEDDED",
    "ENTRY_POINT_GROUP",
    "JudgeKindError",
    "JudgeResources",
    "JudgeServices",
    "build_from_settings",
    "judge_kinds",
    "kind_of",
    "validate_judge_settings",
    "validate_judge_table",
]
