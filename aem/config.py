"""AEM configuration: one pydantic model, loaded from TOML, overridable by ``--set``.

Why strict: every threshold must be named, defaulted and validated once, and a misspelt
key that is silently ignored leaves a verdict judged by a threshold nobody chose. So
every table forbids unknown keys, and the error names the key as it is written in TOML
(``metrics."correctness.truthfulness".require_suport: unknown setting``).

Each metric owns its settings: ``[metrics."<report name>"]`` is validated against that
metric's own settings model (``aem.metrics.base``) when the configuration is loaded —
built-ins and plug-ins alike.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aem.compare.settings import CompareSettings
from aem.judges.settings import JudgeSettings
from aem.matching.settings import MatchSettings

# Tables of the same TOML file that another command reads and validates (``aem serve``).
OTHER_COMMANDS_TABLES = frozenset({"serve"})


class ConfigError(ValueError):
    """The configuration cannot be used; each line names the offending key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricsSettings(BaseModel):
    """Which metrics run, plus one settings table per metric, keyed by its report name.

    Every key other than ``disabled`` and ``plugins`` is a metric's report name; its table
    is checked against that metric's settings model when metrics are resolved, so an
    unknown name is an error, not an ignored table.
    """

    model_config = ConfigDict(extra="allow")

    disabled: list[str] = Field(
        default_factory=list, description="report names of metrics not to run"
    )
    plugins: list[str] = Field(
        default_factory=list, description="extra metrics as 'module:attribute'"
    )

    @model_validator(mode="after")
    def _tables_are_tables(self) -> MetricsSettings:
        for name, table in self.tables.items():
            if not isinstance(table, dict):
                raise ValueError(f"{dotted_key(('metrics', name))}: expected a table of settings")
        return self

    @property
    def tables(self) -> dict[str, Any]:
        """``{report name: raw settings table}`` as written in the configuration."""
        return dict(self.model_extra or {})


class TaxonomyRule(_Strict):
    """One ``[[taxonomy]]`` rule: every condition given must hold (docs/taxonomy.md)."""

    category: str
    metric: str | None = None
    kind: str | None = None
    name: str | None = None
    # A regular expression searched in the failed metric's explanation (case-sensitive
    # unless it starts with ``(?i)``); checked when the configuration is loaded.
    explanation: str | None = None

    @model_validator(mode="after")
    def _pattern_compiles(self) -> TaxonomyRule:
        if self.explanation is not None:
            try:
                re.compile(self.explanation)
            except re.error as exc:
                raise ValueError(
                    f"explanation: not a regular expression ({exc}): {self.explanation!r}"
                ) from exc
        return self


class AssemblySettings(_Strict):
    """How spans become sessions, and how large one session may grow.

    The size limits bound time and memory: a session over one is evaluated on its first
    spans (or turns) and marked ``cut`` with an issue naming the limit; 0 turns a limit
    off. The defaults are those of ``collectors.assembler.DEFAULT_MAX_SESSION_SPANS`` and
    ``collectors.sessions.build.DEFAULT_MAX_SESSION_TURNS``.
    """

    # Files have no wall clock: a session whose root span has ended is closed after this
    # many further spans without one of its own (bounds memory on huge files).
    idle_spans: int = Field(default=20_000, ge=1)
    max_session_spans: int = Field(
        default=100_000,
        ge=0,
        description="spans held for one session; the rest are counted, not kept, and the "
        "session is evaluated on its first spans and marked cut (0: no limit)",
    )
    max_session_turns: int = Field(
        default=20_000,
        ge=0,
        description="turns evaluated in one session; a session with more keeps its first "
        "turns and is marked cut (0: no limit)",
    )

    @property
    def span_limit(self) -> int | None:
        """``max_session_spans`` as the assembler takes it (None: no limit)."""
        return self.max_session_spans or None

    @property
    def turn_limit(self) -> int | None:
        """``max_session_turns`` as session building takes it (None: no limit)."""
        return self.max_session_turns or None


class AemConfig(_Strict):
    compare: CompareSettings = Field(default_factory=CompareSettings)
    matching: MatchSettings = Field(default_factory=MatchSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    taxonomy: list[TaxonomyRule] = Field(default_factory=list)
    assembly: AssemblySettings = Field(default_factory=AssemblySettings)
    # Named judges for the LLM checks and ``judge.step`` (aem.judges.settings); the
    # embedded judge exists without a table.
    judges: dict[str, JudgeSettings] = Field(default_factory=dict)


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
# Keys that moved when metrics came to own their settings: say where to, not just "unknown".
MOVED_KEYS = {
    ("metrics", "tool_set"): "matching.count_failed_calls",
    ("metrics", "truthfulness"): 'metrics."correctness.truthfulness"',
    ("metrics", "completeness"): 'metrics."correctness.completeness"',
}


def dotted_key(path: Iterable[Any]) -> str:
    """A key path as written in TOML: ``metrics."correctness.truthfulness".enabled``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        text = str(part)
        text = text if _BARE_KEY.match(text) else '"' + text.replace('"', '\\"') + '"'
        out += f".{text}" if out else text
    return out


def closest(word: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` when a known word is close, else ``""``."""
    found = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {found[0]!r}?)" if found else ""


def _error_line(error: Any, prefix: Sequence[Any], model: type[BaseModel] | None) -> str:
    loc = [*prefix, *(p for p in error["loc"] if p not in ("function-after",))]
    if error["type"] == "extra_forbidden":
        moved = MOVED_KEYS.get(tuple(loc[:2]))
        if moved:
            return f"{dotted_key(loc)}: moved to {moved}"
        known = _fields_at(model, error["loc"][:-1]) if model is not None else ()
        return f"{dotted_key(loc)}: unknown setting{closest(str(loc[-1]), known)}"
    message = str(error["msg"]).removeprefix("Value error, ")
    if message.startswith(dotted_key(loc[:1])) or not loc:
        return message
    return f"{dotted_key(loc)}: {message} (got {error.get('input')!r})"


def _fields_at(model: type[BaseModel], path: Sequence[Any]) -> Iterable[str]:
    """The setting names of the table at ``path`` (for "did you mean")."""
    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return ()
        current = field.annotation
        while not (isinstance(current, type) and issubclass(current, BaseModel)):
            args = get_args(current)
            if not args:
                return ()
            current = args[0]
    names: Iterable[str] = getattr(current, "model_fields", ())
    return names


def config_error(
    exc: ValidationError, prefix: Sequence[Any] = (), model: type[BaseModel] | None = None
) -> ConfigError:
    """A pydantic error as one line per key, keys spelt as in TOML."""
    return ConfigError("\n".join(_error_line(e, prefix, model) for e in exc.errors()))


def apply_override(data: dict[str, Any], item: str) -> None:
    """Apply one ``--set key.path=value`` to raw configuration data, in place.

    The key is a TOML dotted key, so a quoted part may hold dots; the value is a TOML
    value, or else taken as a bare string.

    >>> data: dict[str, Any] = {}
    >>> apply_override(data, 'metrics."correctness.truthfulness".require_support=false')
    >>> data
    {'metrics': {'correctness.truthfulness': {'require_support': False}}}
    """
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {item!r} is not key.path=value")
    try:
        keys = _parse_key(key.strip())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"override {item!r}: {key.strip()!r} is not a TOML key") from exc
    _set_keys(data, keys, raw.strip())


def _parse_key(dotted: str) -> list[str]:
    """``a."b.c".d`` → ``["a", "b.c", "d"]``, by letting TOML parse the key."""
    node: Any = tomllib.loads(f"{dotted} = 0")
    keys = []
    while isinstance(node, dict):
        ((key, node),) = node.items()
        keys.append(key)
    return keys


def _set_keys(data: dict[str, Any], keys: list[str], raw: str) -> None:
    node = data
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    try:
        value: Any = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    node[keys[-1]] = value


def validate_config(data: dict[str, Any]) -> AemConfig:
    """Raw TOML data → a checked ``AemConfig``, metric tables included.

    Resolving the metrics here (importing configured plug-ins) is what makes a misspelt
    metric setting fail at load rather than when the first session is evaluated.
    """
    data = {k: v for k, v in data.items() if k not in OTHER_COMMANDS_TABLES}
    try:
        config = AemConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, (), AemConfig) from exc
    from aem.metrics.registry import resolve_metrics

    resolve_metrics(config)
    return config


def load_config(path: Path | None = None, overrides: list[str] | None = None) -> AemConfig:
    """Load configuration from a TOML file, then apply ``key.path=value`` overrides.

    >>> load_config(overrides=["matching.pass_threshold=0.5"]).matching.pass_threshold
    0.5
    """
    data = read_toml(path) if path is not None else {}
    for item in overrides or []:
        apply_override(data, item)
    return validate_config(data)


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's tables; invalid TOML is a ``ConfigError`` naming the file."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


# Where an effective setting came from, as ``aem config show`` prints it.
SOURCE_DEFAULT, SOURCE_FILE, SOURCE_SET = "default", "file", "--set"


def config_sources(
    path: Path | None = None, overrides: list[str] | None = None
) -> list[tuple[str, Any, str]]:
    """Every effective setting as ``(TOML key, value, source)``, sources being
    ``default``, ``file`` or ``--set`` — so a user can see which threshold judged a run
    without reading the defaults in the source.

    Each metric's table is shown in full (its settings model's defaults filled in),
    because that is what the metric runs with.

    >>> rows = config_sources(overrides=["matching.pass_threshold=0.5"])
    >>> [r for r in rows if r[0] == "matching.pass_threshold"]
    [('matching.pass_threshold', 0.5, '--set')]
    """
    file_data = read_toml(path) if path is not None else {}
    set_data: dict[str, Any] = {}
    for item in overrides or []:
        apply_override(set_data, item)
    config = load_config(path, overrides)
    effective = config.model_dump(mode="json")
    effective["metrics"] = _metric_tables(config)
    rows = []
    for keys, value in _leaves(effective, ()):
        if _holds(set_data, keys):
            source = SOURCE_SET
        elif _holds(file_data, keys):
            source = SOURCE_FILE
        else:
            source = SOURCE_DEFAULT
        rows.append((dotted_key(keys), value, source))
    return rows


def _metric_tables(config: AemConfig) -> dict[str, Any]:
    """``disabled``, ``plugins`` and every registered metric's full settings table."""
    from aem.metrics.registry import registered_metrics

    tables: dict[str, Any] = {
        "disabled": list(config.metrics.disabled),
        "plugins": list(config.metrics.plugins),
    }
    for spec in registered_metrics(config.metrics.plugins):
        raw = config.metrics.tables.get(spec.name, {})
        tables[spec.name] = spec.settings_model.model_validate(raw).model_dump(mode="json")
    return tables


def _leaves(node: Any, keys: tuple[Any, ...]) -> Iterable[tuple[tuple[Any, ...], Any]]:
    """Key paths to scalar or list values; an empty table is a leaf of its own."""
    if isinstance(node, dict) and node:
        for key, child in node.items():
            yield from _leaves(child, (*keys, key))
    else:
        yield keys, node


def _holds(data: dict[str, Any], keys: tuple[Any, ...]) -> bool:
    """Whether raw configuration ``data`` sets ``keys`` (or a table containing them)."""
    node: Any = data
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True
