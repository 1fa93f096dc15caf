"""The configuration's schema: one strict pydantic model per table, and the raw TOML
reading and ``--set`` overrides that come before validation.

Why apart from loading (``aem.config``): this module imports no metric, so everything
below the metrics (judges, the evaluator's services, rankings) can read settings without
pulling in the metric registry. A metric's own ``[metrics."<name>"]`` table is kept raw
here and checked against that metric's settings model by the loader, which sits above the
metrics. The tables of the plug-in kinds above the metrics — ``[sinks.<name>]`` and
``[sources.<scheme>]`` — are checked here, through the extension kernel
(:mod:`aem.foundation.plugins`), which imports a plug-in by its entry point and so no layer above.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    SerializeAsAny,
    ValidationError,
    model_validator,
)

from aem.compare.settings import CompareSettings
from aem.foundation import plugins
from aem.foundation.strict import ConfigError, StrictSettings, config_error, dotted_key
from aem.judges.settings import JudgeSettings
from aem.matching.settings import MatchSettings
from collectors.limits import (
    DEFAULT_IDLE_SPANS,
    DEFAULT_MAX_SESSION_SPANS,
    DEFAULT_MAX_SESSION_TURNS,
)

# Tables of the same TOML file that another command reads and validates: ``[serve]`` is
# the section ``aem serve``'s model adds (:class:`aem.serve.settings.ServeConfig`).
OTHER_COMMANDS_TABLES = frozenset({"serve"})


def _plugin_tables(kind: plugins.PluginKind) -> Any:
    """A validator of ``[<kind's table>.<name>]`` tables: each checked at load against its
    plug-in's own ``Settings``, errors naming the key as written (``sinks.jsonl.pth``)."""

    def validate(raw: Any) -> dict[str, BaseModel]:
        if not isinstance(raw, dict):
            raise ValueError(
                f"{kind.table}: expected one [{kind.table}.<name>] table per {kind.kind}"
            )
        validated: dict[str, BaseModel] = {}
        for name, table in raw.items():
            try:
                validated.update(plugins.validate_tables(kind, {name: table}))
            except ValidationError as exc:
                plugin = plugins.load(kind).get(name)
                model = plugin.settings_model if plugin is not None else None
                raise ValueError(str(config_error(exc, (kind.table, name), model))) from exc
            except (plugins.PluginError, plugins.UnknownPlugin) as exc:
                message = str(exc)
                prefix = dotted_key((kind.table, name))
                named = message if message.startswith(prefix) else f"{prefix}: {message}"
                raise ValueError(named) from exc
        return validated

    return PlainValidator(validate)


# ``[sinks.<name>]``: one table per sink, read by ``aem serve`` and ``aem audit --sink``.
SinkTables = Annotated[dict[str, SerializeAsAny[BaseModel]], _plugin_tables(plugins.SINK)]
# ``[sources.<scheme>]``: one table per span source (``aem audit --from <scheme>://…``).
SourceTables = Annotated[dict[str, SerializeAsAny[BaseModel]], _plugin_tables(plugins.SOURCE)]


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


class TaxonomyRule(StrictSettings):
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


class AssemblySettings(StrictSettings):
    """How spans become sessions, and how large one session may grow.

    The size limits bound time and memory: a session over one is evaluated on its first
    spans (or turns) and marked ``cut`` with an issue naming the limit; 0 turns a limit
    off. The defaults are the assembler's and session building's own
    (:mod:`collectors.limits`).
    """

    # Files have no wall clock: a session whose root span has ended is closed after this
    # many further spans without one of its own (bounds memory on huge files).
    idle_spans: int = Field(default=DEFAULT_IDLE_SPANS, ge=1)
    max_session_spans: int = Field(
        default=DEFAULT_MAX_SESSION_SPANS,
        ge=0,
        description="spans held for one session; the rest are counted, not kept, and the "
        "session is evaluated on its first spans and marked cut (0: no limit)",
    )
    max_session_turns: int = Field(
        default=DEFAULT_MAX_SESSION_TURNS,
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


class VerdictSettings(StrictSettings):
    """What a verdict may rest on (docs/semantics.md, "A fail is a proof").

    A value the trace neither supports nor contradicts is, by default, a *suspect*: the
    metric says ``unverified``, the turn may be labelled ``suspect``, nothing fails.
    Teams that want every unsupported value to fail set ``fail``.
    """

    unsupported: Literal["suspect", "fail"] = Field(
        default="suspect",
        description="an unsupported value (stated, neither supported nor contradicted by the "
        "trace): 'suspect' = unverified, ranked apart; 'fail' = a failure like a contradiction",
    )

    @property
    def unsupported_fails(self) -> bool:
        """Whether an unsupported value fails its turn (the strict teams' setting)."""
        return self.unsupported == "fail"


class AemConfig(StrictSettings):
    compare: CompareSettings = Field(default_factory=CompareSettings)
    matching: MatchSettings = Field(default_factory=MatchSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    taxonomy: list[TaxonomyRule] = Field(default_factory=list)
    assembly: AssemblySettings = Field(default_factory=AssemblySettings)
    verdicts: VerdictSettings = Field(default_factory=VerdictSettings)
    # Named judges for the LLM checks and ``judge.step`` (aem.judges.settings); the
    # embedded judge exists without a table.
    judges: dict[str, JudgeSettings] = Field(default_factory=dict)
    # Plug-in tables of the kinds above the metrics, checked here through the extension
    # kernel (aem.foundation.plugins) so a misspelt sink or source setting fails at load.
    sinks: SinkTables = Field(default_factory=dict)
    sources: SourceTables = Field(default_factory=dict)


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


# TOML is read here and nowhere else (a ruff banned-API rule): the one place that turns
# its errors into ours. Other readers of TOML documents (scorecard files) parse through
# these two names.
TomlError = tomllib.TOMLDecodeError
parse_toml = tomllib.loads


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's tables; invalid TOML is a ``ConfigError`` naming the file."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
