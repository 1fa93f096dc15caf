"""The one extension kernel: every plug-in kind is data, loaded, checked and named one way.

A plug-in kind (metric, check, judge kind, sink, dialect, span source) is a
:class:`PluginKind`: its name, its entry-point group, the configuration table that
configures its plug-ins (where there is one) and the shape a plug-in must have. A
plug-in is whatever an entry point of that group names, declaring three members:

* ``name`` (a judge kind: ``kind``) — the name a configuration, a report or a URL
  scheme uses for it;
* ``Settings`` — a strict pydantic model (``extra="forbid"``), the keys of its table;
  optional for the kinds that are not configured per plug-in (metrics without
  settings, checks, dialects);
* ``from_settings(settings, services)`` — builds it; ``services`` is what AEM lends
  the plug-in (a URL and the environment for a span source, the judge's name and the
  comparator for a judge kind).

Why one kernel: six loaders had six shape checks and six wordings for the same mistake.
Here a broken plug-in is one :class:`PluginError` naming the kind, the entry point, the
module and distribution it came from and what is wrong — and it never hides the other
plug-ins of its kind, which still load (:class:`Loaded` keeps both).

Why this module sits on the bottom floor of the import layers: it imports nothing of
AEM. The configuration schema (:mod:`aem.settings`, below the sinks and the span
sources) validates ``[sinks.<name>]`` and ``[sources.<scheme>]`` through it; entry
points are imported by name, so no layer reaches up by importing a module.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import BaseModel, ConfigDict

Build = Callable[[Any, BaseModel, Any], Any]


class NoPluginSettings(BaseModel):
    """The settings of a plug-in that declares none: any key in its table is an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class PluginError(ValueError):
    """A plug-in that cannot be used: the kind, the entry point, where it came from and
    what is wrong, in one sentence a user can act on."""

    def __init__(self, kind: str, entry_point: str, origin: str, problem: str) -> None:
        super().__init__(f"{kind} plug-in {entry_point!r} from {origin}: {problem}")
        self.kind, self.entry_point, self.origin, self.problem = kind, entry_point, origin, problem

    @property
    def module(self) -> str:
        return self.origin.split(" (", 1)[0]

    @property
    def distribution(self) -> str:
        return self.origin.partition(" (")[2].removesuffix(")")


class UnknownPlugin(ValueError):
    """A configuration or a command asked for a plug-in no distribution registers."""


@dataclass(frozen=True)
class Member:
    """One thing a plug-in of a kind must declare, and how to tell it is there."""

    name: str
    wanted: str
    holds: Callable[[Any], bool]


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _strict_model(value: Any) -> bool:
    return (
        isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.model_config.get("extra") == "forbid"
    )


def _present(value: Any) -> bool:
    return value is not None


NAME = Member("name", "a non-empty string", _text)
SETTINGS = Member("Settings", "a pydantic model with extra='forbid'", _strict_model)
FROM_SETTINGS = Member("from_settings", "a callable from_settings(settings, services)", callable)


def _from_settings(target: Any, settings: BaseModel, services: Any) -> Any:
    """The common calling convention: ``from_settings(settings, services)``; a plug-in
    written before it, ``from_settings(settings)`` (a sink needs nothing lent), still
    builds."""
    build = target.from_settings
    try:
        takes = inspect.signature(build).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: assume the convention
        return build(settings, services)
    positional = [p for p in takes if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 2 and not any(p.kind is p.VAR_POSITIONAL for p in takes):
        return build(settings)
    return build(settings, services)


@dataclass(frozen=True)
class PluginKind:
    """A kind of plug-in, as data.

    ``identity`` is the member that names a plug-in (``kind`` for a judge kind, whose
    instances are named by the configuration); ``optional`` members may be left out
    (a missing ``Settings`` then means :class:`NoPluginSettings`); ``instantiate``: an
    entry point naming a class stands for one instance of it (a dialect); ``build`` is
    the kind's calling convention, :func:`_from_settings` unless an older signature is
    kept for the plug-ins already written against it.
    """

    kind: str
    group: str
    table: str | None
    shape: tuple[Member, ...]
    identity: str = "name"
    optional: frozenset[str] = frozenset()
    instantiate: bool = False
    build: Build = field(default=_from_settings, compare=False)

    def problem(self, obj: Any) -> str | None:
        """What ``obj`` lacks to be a plug-in of this kind, or None."""
        wrong = [
            f"`{m.name}` ({m.wanted})"
            for m in self.shape
            if not (m.name in self.optional and not hasattr(obj, m.name))
            and not m.holds(getattr(obj, m.name, None))
        ]
        if not wrong:
            return None
        return f"is not a {self.kind}: it needs {', '.join(wrong)}"


def _metric_build(target: Any, settings: BaseModel, services: Any) -> Any:
    """Metrics and checks: ``from_settings`` where declared, else the class is called
    with its settings (an instance is already built and takes none)."""
    if callable(getattr(target, "from_settings", None)):
        return target.from_settings(settings, services)
    if not isinstance(target, type):
        return target
    if not hasattr(target, "Settings"):
        return target()
    return target(settings)


EVALUATE = Member("evaluate", "a method evaluate(context)", callable)
CASE_FIELDS = Member("case_fields", "the case fields it reads", _present)
KIND = Member("kind", "a non-empty string, the table's `kind`", _text)
DIALECT_MEMBERS = (
    Member("order", "an int, its place among the dialects", lambda v: isinstance(v, int)),
    Member("exclusive", "a bool", lambda v: isinstance(v, bool)),
    Member("session_keys", "the session-key attributes it reads", _present),
    Member("claims", "a method claims(span)", callable),
    Member("observe", "a method observe(span)", callable),
    Member("tool_definitions", "a method tool_definitions(span)", callable),
    Member("repair", "a method repair(operations, spans)", callable),
)

METRIC = PluginKind(
    "metric",
    "aem.metrics",
    "metrics",
    (NAME, EVALUATE, SETTINGS),
    optional=frozenset({"Settings"}),
    build=_metric_build,
)
CHECK = PluginKind(
    "check",
    "aem.checks",
    "metrics",
    (NAME, EVALUATE, CASE_FIELDS, SETTINGS),
    optional=frozenset({"Settings"}),
    build=_metric_build,
)
JUDGE_KIND = PluginKind(
    "judge kind",
    "aem.judges",
    "judges",
    (KIND, SETTINGS, FROM_SETTINGS),
    identity="kind",
    # Kept for the kinds already written: from_settings(name, settings, resources).
    build=lambda t, s, services: t.from_settings(services.name, s, services.resources),
)
SINK = PluginKind(
    "sink",
    "aem.sinks",
    "sinks",
    (NAME, SETTINGS, FROM_SETTINGS),
)
DIALECT = PluginKind(
    "dialect",
    "aem.dialects",
    None,
    (NAME, *DIALECT_MEMBERS),
    instantiate=True,
)
SOURCE = PluginKind("span source", "aem.sources", "sources", (NAME, SETTINGS, FROM_SETTINGS))

KINDS: tuple[PluginKind, ...] = (DIALECT, SOURCE, METRIC, CHECK, JUDGE_KIND, SINK)


@dataclass(frozen=True)
class Plugin:
    """A loaded plug-in: what it is, what it is called, and where it came from."""

    kind: PluginKind
    name: str
    target: Any
    entry_point: str
    module: str
    distribution: str

    @property
    def origin(self) -> str:
        """``module (distribution)``, as errors and ``aem config show`` print it."""
        return f"{self.module} ({self.distribution})"

    @property
    def settings_model(self) -> type[BaseModel]:
        model = getattr(self.target, "Settings", NoPluginSettings)
        return model if isinstance(model, type) else NoPluginSettings

    def settings(self, table: Mapping[str, Any] | BaseModel | None) -> BaseModel:
        """``table`` checked against the plug-in's ``Settings`` (a ``ValidationError``
        locates the key relative to the table)."""
        if isinstance(table, self.settings_model):
            return table
        return self.settings_model.model_validate(dict(table or {}))

    def build(self, settings: BaseModel, services: Any = None) -> Any:
        """The plug-in, built the way its kind builds one."""
        return self.kind.build(self.target, settings, services)


@dataclass(frozen=True)
class Loaded:
    """Every plug-in of one kind, and the ones that could not be loaded, in group order."""

    kind: PluginKind
    plugins: tuple[Plugin, ...]
    errors: tuple[PluginError, ...]

    def names(self) -> list[str]:
        return [p.name for p in self.plugins]

    def get(self, name: str) -> Plugin | None:
        return next((p for p in self.plugins if p.name == name), None)

    def require(self, name: str, asked_by: str) -> Plugin:
        """The plug-in ``name``; a broken one is its own error, an unknown one lists the
        names there are (``asked_by`` is the key or option that asked)."""
        found = self.get(name)
        if found is not None:
            return found
        for error in self.errors:
            if error.entry_point == name:
                raise error
        known = ", ".join(sorted(self.names())) or "none"
        raise UnknownPlugin(f"{asked_by}: unknown {self.kind.kind} {name!r}; known: {known}")

    def raise_first_error(self) -> None:
        """For the kinds where every plug-in takes part in a verdict (metrics, checks,
        dialects): running without a broken one would change verdicts silently."""
        if self.errors:
            raise self.errors[0]


def _origin(ep: EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    where = f"{dist.name} {dist.version}" if dist is not None else "no distribution"
    return ep.module, where


def checked(kind: PluginKind, obj: Any, ep_name: str, module: str, dist: str) -> Plugin:
    """``obj`` checked against the kind's shape (a class instantiated where the kind
    says so); the one place a plug-in's shape is judged."""
    origin = f"{module} ({dist})"
    if kind.instantiate and isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:
            raise PluginError(kind.kind, ep_name, origin, f"cannot be created: {exc}") from exc
    problem = kind.problem(obj)
    if problem is not None:
        raise PluginError(kind.kind, ep_name, origin, problem)
    return Plugin(kind, getattr(obj, kind.identity), obj, ep_name, module, dist)


def load_entry_points(kind: PluginKind, found: Iterable[EntryPoint]) -> Loaded:
    """``found`` loaded and checked; one error per broken entry point, the rest kept.

    A second plug-in declaring a name already taken is an error of its own (the first
    keeps the name); the same entry point seen twice (a distribution on the path twice)
    is read once.
    """
    plugins: dict[str, Plugin] = {}
    errors: list[PluginError] = []
    seen: set[tuple[str, str]] = set()
    for ep in found:
        if (ep.name, ep.value) in seen:
            continue
        seen.add((ep.name, ep.value))
        module, dist = _origin(ep)
        try:
            obj = ep.load()
        except Exception as exc:
            problem = f"cannot be loaded: {type(exc).__name__}: {exc}"
            errors.append(PluginError(kind.kind, ep.name, f"{module} ({dist})", problem))
            continue
        try:
            plugin = checked(kind, obj, ep.name, module, dist)
        except PluginError as exc:
            errors.append(exc)
            continue
        taken = plugins.get(plugin.name)
        if taken is not None:
            errors.append(
                PluginError(
                    kind.kind,
                    ep.name,
                    plugin.origin,
                    f"declares the name {plugin.name!r}, already taken by {taken.origin}",
                )
            )
            continue
        plugins[plugin.name] = plugin
    return Loaded(kind, tuple(plugins.values()), tuple(errors))


@cache
def _loaded_on(kind: PluginKind, path: tuple[str, ...]) -> Loaded:
    del path  # the cache key: entry_points() reads sys.path itself
    return load_entry_points(kind, entry_points(group=kind.group))


def load(kind: PluginKind) -> Loaded:
    """Every plug-in of ``kind`` the installed distributions register, loaded once per
    ``sys.path`` (a plug-in put on the path later is found then)."""
    return _loaded_on(kind, tuple(sys.path))


def reload() -> None:
    """Forget every loaded plug-in; the next :func:`load` reads the entry points again."""
    _loaded_on.cache_clear()


def from_reference(kind: PluginKind, reference: str, asked_by: str) -> Plugin:
    """A plug-in named in the configuration as ``"package.module:attribute"``
    (``metrics.plugins``), checked exactly like an entry point's."""
    module, _, attribute = reference.partition(":")
    origin = f"{module} (configured in {asked_by})"
    if not attribute:
        raise PluginError(kind.kind, reference, origin, "must be written 'module:attribute'")
    try:
        obj = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise PluginError(kind.kind, reference, origin, f"cannot be loaded: {exc}") from exc
    return checked(kind, obj, reference, module, f"configured in {asked_by}")


def validate_tables(kind: PluginKind, raw: Any) -> dict[str, BaseModel]:
    """``[<table>.<name>]`` tables → each plug-in's checked settings.

    Raises ``ValueError`` naming the table for an unknown or broken plug-in, and
    pydantic's ``ValidationError`` (locations relative to the table) for a bad key.
    """
    if not isinstance(raw, Mapping):
        raise ValueError(
            f"[{kind.table}] must hold one [{kind.table}.<name>] table per {kind.kind}"
        )
    loaded = load(kind)
    validated: dict[str, BaseModel] = {}
    for name, table in raw.items():
        plugin = loaded.require(name, f"{kind.table}.{name}")
        if not isinstance(table, Mapping | BaseModel):
            raise ValueError(f"{kind.table}.{name}: expected a table of settings")
        validated[name] = plugin.settings(table)
    return validated


def every_loaded() -> list[Loaded]:
    """Every kind's plug-ins and errors, for ``aem config show``."""
    return [load(kind) for kind in KINDS]


__all__ = [
    "CHECK",
    "DIALECT",
    "JUDGE_KIND",
    "KINDS",
    "METRIC",
    "SINK",
    "SOURCE",
    "Loaded",
    "Member",
    "NoPluginSettings",
    "Plugin",
    "PluginError",
    "PluginKind",
    "UnknownPlugin",
    "checked",
    "every_loaded",
    "from_reference",
    "load",
    "load_entry_points",
    "reload",
    "validate_tables",
]
