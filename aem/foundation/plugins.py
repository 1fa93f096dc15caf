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
  comparator for a judge kind, nothing for a metric or a sink). Every kind builds this
  one way: the base classes (``BaseMetric``, ``BaseDialect``…) declare a default that
  returns ``cls(settings)``;
* ``band`` — for the kinds whose plug-ins take turns (metrics and checks: the order of a
  turn's results; dialects: who reads a span first), one of the kind's named bands, in
  the kind's order; inside a band, the order of the entry-point group.

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
import io
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import BaseModel, ConfigDict

# The distribution AEM ships as: its entry points are the built-ins, whose names no other
# distribution may take.
BUILTIN_DISTRIBUTION = "aem"
# How a refusal of a plug-in taking a built-in's name begins.
_IMPOSTOR = "takes the built-in name"
# How long another distribution's plug-in may take to import, and the variable that sets it.
IMPORT_SECONDS_ENV = "AEM_PLUGIN_IMPORT_SECONDS"
DEFAULT_IMPORT_SECONDS = 60.0
# What is kept of the output a plug-in printed while it failed to load, for the message.
_PRINTED_CHARS = 300


class NoPluginSettings(BaseModel):
    """The settings of a plug-in that declares none: any key in its table is an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class PluginError(ValueError):
    """A plug-in that cannot be used: the kind, the entry point, where it came from and
    what is wrong, in one sentence a user can act on."""

    def __init__(self, kind: str, entry_point: str, origin: str, problem: str) -> None:
        super().__init__(f"{kind} plug-in {entry_point!r} from {origin}: {problem}")
        self.kind, self.entry_point, self.origin, self.problem = kind, entry_point, origin, problem
        self.impostor = problem.startswith(_IMPOSTOR)
        # The built-in name an impostor claimed (its entry point may be named otherwise).
        self.claimed = problem.split("'", 2)[1] if self.impostor else None

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


def _builds(value: Any) -> bool:
    """``value`` can be called as ``from_settings(settings, services)``: the one
    convention, checked once at load so a plug-in written to an older one (a judge kind's
    ``(name, settings, resources)``, a sink's ``(settings)``) is named there, never
    guessed at when it is built."""
    if not callable(value):
        return False
    try:
        inspect.signature(value).bind(None, None)
    except TypeError:
        return False
    except ValueError:  # a builtin without a signature: taken at its word
        return True
    return True


NAME = Member("name", "a non-empty string", _text)
SETTINGS = Member("Settings", "a pydantic model with extra='forbid'", _strict_model)
FROM_SETTINGS = Member("from_settings", "a callable from_settings(settings, services)", _builds)


@dataclass(frozen=True)
class PluginKind:
    """A kind of plug-in, as data.

    ``identity`` is the member that names a plug-in (``kind`` for a judge kind, whose
    instances are named by the configuration); ``optional`` members may be left out
    (a missing ``Settings`` then means :class:`NoPluginSettings`); ``instantiate``: an
    entry point naming a class stands for one instance of it (a dialect); ``bands``:
    the named bands its plug-ins take turns in, in order (``default_band`` for a plug-in
    that declares none). Why names, not numbers: a plug-in says where it belongs ("after
    the built-ins, before the checks") instead of guessing a number between ours.
    """

    kind: str
    group: str
    table: str | None
    shape: tuple[Member, ...]
    identity: str = "name"
    optional: frozenset[str] = frozenset()
    instantiate: bool = False
    bands: tuple[str, ...] = ()
    default_band: str = ""

    def problem(self, obj: Any) -> str | None:
        """What ``obj`` lacks to be a plug-in of this kind, or None."""
        wrong = [
            f"`{m.name}` ({m.wanted})"
            for m in self.shape
            if not (m.name in self.optional and not hasattr(obj, m.name))
            and not m.holds(getattr(obj, m.name, None))
        ]
        if self.bands and getattr(obj, "band", self.default_band) not in self.bands:
            wrong.append(f"`band` (one of {', '.join(self.bands)})")
        if not wrong:
            return None
        return f"is not a {self.kind}: it needs {', '.join(wrong)}"

    def rank(self, target: Any) -> int:
        """The place of ``target``'s band among the kind's bands (0 for an unbanded kind)."""
        if not self.bands:
            return 0
        return self.bands.index(getattr(target, "band", self.default_band))


EVALUATE = Member("evaluate", "a method evaluate(context)", callable)
CASE_FIELDS = Member("case_fields", "the case fields it reads", _present)
KIND = Member("kind", "a non-empty string, the table's `kind`", _text)
ROLE = Member("role", "'cause' or 'observation'", lambda v: v in ("cause", "observation"))
DIALECT_MEMBERS = (
    Member("exclusive", "a bool", lambda v: isinstance(v, bool)),
    Member("session_keys", "the session-key attributes it reads", _present),
    Member("claims", "a method claims(span)", callable),
    Member("observe", "a method observe(span)", callable),
    Member("tool_definitions", "a method tool_definitions(span)", callable),
    Member("repair", "a method repair(operations, spans)", callable),
)

# A turn's results, in the order of these bands (the first failed cause names a root
# cause): what the calls did, then what the answers state, then the plug-ins', then the
# judged step and the dataset-test checks. The built-ins each hold a band of their own.
METRIC_BANDS = (
    "execution",  # tool_execution: did the call run
    "choice",  # tool_choice: the expected calls, no unexpected one
    "arguments",  # argument_validity
    "truth",  # correctness.truthfulness
    "grounding",  # groundedness
    "refusal",  # refusal
    "completeness",  # correctness.completeness
    "repetition",  # tool_repetition
    "plugin",  # a plug-in that names no band
    "judged",  # judge.step
    "check",  # the checks (aem.checks), so a root cause keeps the name it had
)
# Who reads a span first: the frameworks' own conventions, the OpenTelemetry GenAI
# conventions, the older and vendor ones, the fallback readers, then the plug-ins.
DIALECT_BANDS = ("framework", "convention", "legacy", "vendor", "fallback", "plugin")

METRIC = PluginKind(
    "metric",
    "aem.metrics",
    "metrics",
    (NAME, EVALUATE, SETTINGS, ROLE, FROM_SETTINGS),
    optional=frozenset({"Settings", "role", "from_settings"}),
    bands=METRIC_BANDS,
    default_band="plugin",
)
# A check is a metric of the answer turn (``evaluate``), or a criterion over metrics
# (``decided_by``: the metrics whose verdicts decide it, as ``groundedness``).
CHECK = PluginKind(
    "check",
    "aem.checks",
    "metrics",
    (NAME, EVALUATE, CASE_FIELDS, SETTINGS, ROLE, FROM_SETTINGS),
    optional=frozenset({"Settings", "evaluate", "role", "from_settings"}),
    bands=METRIC_BANDS,
    default_band="check",
)
JUDGE_KIND = PluginKind(
    "judge kind", "aem.judges", "judges", (KIND, SETTINGS, FROM_SETTINGS), identity="kind"
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
    bands=DIALECT_BANDS,
    default_band="plugin",
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
    builtin: bool = False  # served by AEM's own distribution

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
        """The plug-in, built: ``from_settings(settings, services)``, the one convention
        (an entry point naming an instance without it stands for itself).

        A class without ``from_settings`` (a metric or check written before the
        convention) is still called with its settings, with a ``DeprecationWarning``:
        it stops loading in the next release."""
        make = getattr(self.target, "from_settings", None)
        if callable(make):
            return make(settings, services)
        if not isinstance(self.target, type):
            return self.target
        warnings.warn(
            f"{self.kind.kind} plug-in {self.entry_point!r} from {self.origin} declares no "
            "from_settings(settings, services); calling its class is deprecated and stops "
            "working in the next release (derive from AEM's base class, or add it)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.target(settings) if hasattr(self.target, "Settings") else self.target()


@dataclass(frozen=True)
class Loaded:
    """Every plug-in of one kind, and the ones that could not be loaded, in group order."""

    kind: PluginKind
    plugins: tuple[Plugin, ...]
    errors: tuple[PluginError, ...]

    def names(self) -> list[str]:
        return [p.name for p in self.plugins]

    def get(self, name: str) -> Plugin | None:
        """The plug-in ``name``, or None; a name another distribution also declared is its
        refusal (:class:`PluginError`), so a run never goes on as if nothing happened."""
        for error in self.errors:
            if error.impostor and name in (error.entry_point, error.claimed):
                raise error
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


def _builtin(ep: EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) or ""
    return name.lower().replace("_", "-") == BUILTIN_DISTRIBUTION


def _shown(text: str) -> str:
    """A plug-in's own words, on one line, control characters escaped."""
    flat = " ".join(text.split())[:_PRINTED_CHARS]
    return flat.encode("unicode_escape").decode("ascii")


def contained(load: Callable[[], Any]) -> Any:
    """``load()`` (a plug-in's import), contained: what it prints goes to standard error,
    never to the standard output a report is written on; anything it raises — a
    ``SystemExit`` from ``sys.exit`` or from an ``argparse`` reading AEM's arguments
    included — becomes a :class:`ValueError` saying what it was and what it printed.
    Only a ``KeyboardInterrupt`` passes: a user's Ctrl-C stops AEM."""
    printed = io.StringIO()
    try:
        with redirect_stdout(printed), redirect_stderr(printed):
            obj = load()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a plug-in must not end or silence AEM
        what = (
            f"exited while being imported (SystemExit: {exc.code!r})"
            if isinstance(exc, SystemExit)
            else f"cannot be loaded: {type(exc).__name__}: {exc}"
        )
        said = printed.getvalue().strip()
        raise ValueError(f"{what}; it printed: {_shown(said)}" if said else what) from exc
    if printed.getvalue():
        sys.stderr.write(printed.getvalue())
    return obj


def import_seconds() -> float:
    """The import deadline of a plug-in from another distribution (``$AEM_PLUGIN_IMPORT_
    SECONDS``, else :data:`DEFAULT_IMPORT_SECONDS`)."""
    try:
        seconds = float(os.environ.get(IMPORT_SECONDS_ENV) or DEFAULT_IMPORT_SECONDS)
    except ValueError:
        return DEFAULT_IMPORT_SECONDS
    return seconds if seconds > 0 else DEFAULT_IMPORT_SECONDS


def within_deadline(load: Callable[[], Any], seconds: float) -> Any:
    """``load()`` run in a thread of its own and waited for ``seconds``: an import that
    sleeps or waits for ever is an error (it is left running in the background; the
    command goes on, or ends, without it). A ``KeyboardInterrupt`` raised there is the
    plug-in's own — a user's Ctrl-C reaches the main thread, which is only waiting —
    so it is an error like any other."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = load()
        except BaseException as exc:  # handed to the caller, which contains it
            box["error"] = exc

    thread = threading.Thread(target=run, name="aem-plugin-import", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise TimeoutError(
            f"its import did not finish within {seconds:g} s ({IMPORT_SECONDS_ENV}); "
            "it was left running"
        )
    error = box.get("error")
    if isinstance(error, KeyboardInterrupt):
        raise RuntimeError("its import raised KeyboardInterrupt (no user pressed Ctrl-C)")
    if error is not None:
        raise error
    return box["value"]


def checked(
    kind: PluginKind, obj: Any, ep_name: str, module: str, dist: str, *, builtin: bool = False
) -> Plugin:
    """``obj`` checked against the kind's shape (a class instantiated where the kind
    says so); the one place a plug-in's shape is judged."""
    origin = f"{module} ({dist})"
    if kind.instantiate and isinstance(obj, type):
        try:
            obj = contained(obj)
        except ValueError as exc:
            raise PluginError(kind.kind, ep_name, origin, f"cannot be created: {exc}") from exc
    problem = kind.problem(obj)
    if problem is not None:
        raise PluginError(kind.kind, ep_name, origin, problem)
    return Plugin(kind, getattr(obj, kind.identity), obj, ep_name, module, dist, builtin)


def load_entry_points(kind: PluginKind, found: Iterable[EntryPoint]) -> Loaded:
    """``found`` loaded and checked; one error per broken entry point, the rest kept.

    A second plug-in declaring a name already taken is an error of its own (the first
    keeps the name); the same entry point seen twice (a distribution on the path twice)
    is read once. AEM's own plug-ins are loaded first and keep their names whatever the
    order of the path: another distribution declaring a built-in's name is refused before
    its module is imported (it would otherwise win or lose by directory order, and a
    span source named ``phoenix`` would be handed ``PHOENIX_API_KEY``).
    """
    points = list({(ep.name, ep.value): ep for ep in found}.values())
    builtin_names = {ep.name for ep in points if _builtin(ep)}
    plugins: dict[str, Plugin] = {}
    place: dict[str, int] = {}  # a plug-in's place in the group, kept in what is loaded
    errors: list[PluginError] = []
    others = [n for n, ep in enumerate(points) if not _builtin(ep)]
    for n in [*(n for n, ep in enumerate(points) if _builtin(ep)), *others]:
        try:
            plugin = _load_one(kind, points[n], builtin_names, plugins)
        except PluginError as exc:
            errors.append(exc)
            continue
        plugins[plugin.name], place[plugin.name] = plugin, n
        if plugin.builtin:
            builtin_names.add(plugin.name)
    ordered = sorted(plugins.values(), key=lambda p: (kind.rank(p.target), place[p.name]))
    return Loaded(kind, tuple(ordered), tuple(errors))


def _load_one(
    kind: PluginKind, ep: EntryPoint, builtin_names: set[str], plugins: Mapping[str, Plugin]
) -> Plugin:
    """One entry point loaded, contained and checked, or the :class:`PluginError` that
    says why not."""
    module, dist = _origin(ep)
    origin, builtin = f"{module} ({dist})", _builtin(ep)
    if not builtin and ep.name in builtin_names:
        raise PluginError(kind.kind, ep.name, origin, _impostor(ep.name, plugins.get(ep.name)))
    load = ep.load if builtin else lambda: within_deadline(ep.load, import_seconds())
    try:
        obj = contained(load)
    except ValueError as exc:
        raise PluginError(kind.kind, ep.name, origin, str(exc)) from exc
    declared = getattr(obj, kind.identity, None)
    if not builtin and isinstance(declared, str) and declared in builtin_names:
        raise PluginError(kind.kind, ep.name, origin, _impostor(declared, plugins.get(declared)))
    plugin = checked(kind, obj, ep.name, module, dist, builtin=builtin)
    taken = plugins.get(plugin.name)
    if taken is not None:
        raise PluginError(
            kind.kind,
            ep.name,
            plugin.origin,
            f"declares the name {plugin.name!r}, already taken by {taken.origin}",
        )
    return plugin


def _impostor(name: str, builtin: Plugin | None) -> str:
    served = f" ({builtin.module}, {builtin.distribution})" if builtin is not None else ""
    return (
        f"{_IMPOSTOR} {name!r}{served}; refused: a built-in's "
        "name cannot be taken by another distribution (give the plug-in a name of its own)"
    )


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
        imported = contained(
            lambda: within_deadline(lambda: importlib.import_module(module), import_seconds())
        )
        obj = getattr(imported, attribute)
    except AttributeError as exc:
        raise PluginError(kind.kind, reference, origin, f"cannot be loaded: {exc}") from exc
    except ValueError as exc:
        raise PluginError(kind.kind, reference, origin, str(exc)) from exc
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
    "DIALECT_BANDS",
    "JUDGE_KIND",
    "KINDS",
    "METRIC",
    "METRIC_BANDS",
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
    "contained",
    "every_loaded",
    "from_reference",
    "load",
    "load_entry_points",
    "reload",
    "validate_tables",
]
