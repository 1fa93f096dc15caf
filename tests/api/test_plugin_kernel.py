"""One extension kernel for every plug-in kind (aem.foundation.plugins).

The plug-ins come from distributions OUTSIDE aem — tests/fixtures/aem_thirdparty_plugin
(one of each kind) and tests/fixtures/aem_broken_plugin (one malformed of each kind) —
installed the way pip leaves a package: the source on ``sys.path`` and a ``*.dist-info``
whose ``entry_points.txt`` is generated from the fixture's own pyproject. importlib.metadata
finds them as real distributions; nothing in the loader is patched.
"""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aem.cli import app
from aem.config import ConfigError, load_config
from aem.foundation import plugins
from aem.judges.registry import build_judge
from collectors.dialects import registry as dialects
from tests.conftest import SAMPLES, run_audit, session

FIXTURES = Path(__file__).parents[1] / "fixtures"
GOOD, BROKEN = "aem_thirdparty_plugin", "aem_broken_plugin"
WEATHER = SAMPLES / "weather_genai.otlp.jsonl"
GOOD_NAMES = {
    plugins.DIALECT: "team",
    plugins.METRIC: "team.no_add",
    plugins.CHECK: "check.team_answered",
    plugins.JUDGE_KIND: "fixed",
    plugins.SINK: "teamlog",
    plugins.SOURCE: "teamfile",
}
BROKEN_NAMES = {
    plugins.DIALECT: ("mute", "is not a dialect: it needs `exclusive`"),
    plugins.METRIC: ("broken.metric", "is not a metric: it needs `evaluate`"),
    plugins.CHECK: ("check.broken", "is not a check: it needs `case_fields`"),
    plugins.JUDGE_KIND: ("loose", "`Settings` (a pydantic model with extra='forbid')"),
    plugins.SINK: ("nowhere", "is not a sink: it needs `from_settings`"),
    plugins.SOURCE: ("gone", "cannot be loaded: ModuleNotFoundError"),
}


def _install(site: Path, package: str) -> None:
    """``package``'s dist-info in ``site``, its entry points read from its pyproject."""
    project = tomllib.loads((FIXTURES / package / "pyproject.toml").read_text())["project"]
    info = site / f"{package}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = []
    for group, points in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))

    def install(package: str) -> None:
        _install(site, package)
        monkeypatch.syspath_prepend(str(FIXTURES / package))
        dialects.reload()

    yield install
    monkeypatch.undo()
    dialects.reload()
    for name in [m for m in sys.modules if m.startswith((GOOD, BROKEN))]:
        del sys.modules[name]


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_each_kind_loads_from_the_third_party_distribution(install) -> None:
    install(GOOD)
    for kind, name in GOOD_NAMES.items():
        loaded = plugins.load(kind)
        plugin = loaded.get(name)
        assert plugin is not None, (kind.kind, loaded.errors)
        assert plugin.distribution == "aem-thirdparty-plugin 0.1.0"
        assert plugin.module.startswith(f"{GOOD}.")
        assert not loaded.errors
        assert len(loaded.plugins) > 1  # AEM's own of the same kind load beside it


def test_config_show_lists_every_plugin_with_its_kind_name_and_origin(install) -> None:
    install(GOOD)
    code, out, _ = _cli("config", "show", "--plugins", "--json")
    rows = {(r["kind"], r["name"]): r for r in json.loads(out)}
    assert code == 0
    for kind, name in GOOD_NAMES.items():
        row = rows[(kind.kind, name)]
        assert row["distribution"] == "aem-thirdparty-plugin 0.1.0" and GOOD in row["module"]
    assert rows[("sink", "jsonl")]["module"] == "aem.sinks.jsonl"
    assert rows[("span source", "phoenix")]["distribution"].startswith("aem ")
    code, out, _ = _cli("config", "show")
    assert code == 0 and "teamfile" in out and "matching.pass_threshold" in out


def test_the_span_source_metric_dialect_and_sink_work_end_to_end(install, tmp_path) -> None:
    install(GOOD)
    from aem_thirdparty_plugin.dialect import ASKED  # type: ignore[import-not-found]

    delivered = tmp_path / "verdicts.txt"
    config = tmp_path / "aem.toml"
    config.write_text(
        f'[sinks.teamlog]\npath = "{delivered}"\ntag = "seen"\n'
        "[sources.teamfile]\nbatch_spans = 2\n"
    )
    ASKED.clear()
    code, report, err = run_audit(
        "--from", f"teamfile://{WEATHER}", "--config", str(config), "--sink", "teamlog"
    )
    assert code == 1, err
    weather = session(report, "weather-genai")
    labels = {t["name"]: t["label"] for t in weather["turns"]}
    assert labels["add"] == "root_cause" and "team.no_add" in weather["root_causes"][0]["metrics"]
    assert len(ASKED) == report["spans_read"] > 0  # the dialect was asked about every span
    lines = delivered.read_text().splitlines()
    assert lines and all(line.startswith("seen ") for line in lines)


def test_the_judge_kind_and_the_check_are_built_from_their_tables(install, tmp_path) -> None:
    install(GOOD)
    config = tmp_path / "aem.toml"
    config.write_text('[judges.replay]\nkind = "fixed"\nscore = 0.25\n')
    judge = build_judge("replay", load_config(config))
    assert type(judge).__name__ == "FixedJudge" and judge.name == "replay"
    assert judge.score == 0.25
    from aem.checks.registry import check_names

    assert "check.team_answered" in check_names()


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('[sinks.teamlog]\npath = "v"\ntagg = "x"\n', "sinks.teamlog.tagg: unknown setting"),
        ("[sources.teamfile]\nbatch_spans = 'many'\n", "sources.teamfile.batch_spans"),
        ("[sources.zipkin]\n", "sources.zipkin: unknown span source 'zipkin'"),
        ('[judges.replay]\nkind = "fixed"\nscroe = 1\n', "judges.replay.scroe: unknown setting"),
        ('[metrics."team.no_add"]\ntol = "x"\n', 'metrics."team.no_add".tol: unknown setting'),
    ],
)
def test_a_bad_plugin_table_fails_at_load_naming_the_file_and_the_table(
    install, tmp_path: Path, table: str, says: str
) -> None:
    install(GOOD)
    config = tmp_path / "team.toml"
    config.write_text(table)
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert str(caught.value).startswith(f"{config}: ") and says in str(caught.value)


def test_each_malformed_plugin_is_one_clear_error_and_the_others_still_load(install) -> None:
    install(GOOD)
    install(BROKEN)
    for kind, (name, says) in BROKEN_NAMES.items():
        loaded = plugins.load(kind)
        [error] = loaded.errors
        assert error.entry_point == name and says in str(error), str(error)
        assert str(error).startswith(f"{kind.kind} plug-in {name!r} from {BROKEN}")
        assert "(aem-broken-plugin 0.1.0)" in str(error)
        assert loaded.get(GOOD_NAMES[kind]) is not None  # the good one of its kind loads
    code, out, _ = _cli("config", "show", "--plugins", "--json")
    rows = json.loads(out)
    assert code == 0 and sum("error" in r for r in rows) == len(BROKEN_NAMES)


def test_a_malformed_plugin_fails_only_what_needs_it(install, tmp_path: Path) -> None:
    install(GOOD)
    install(BROKEN)
    # Every metric and dialect takes part in a verdict: an audit refuses to run without one.
    code, _, err = run_audit(str(WEATHER))
    assert code == 2 and "plug-in" in err and "aem_broken_plugin" in err
    # A sink, a source or a judge kind is chosen by name: only choosing the broken one fails.
    config = tmp_path / "aem.toml"
    config.write_text("[sinks.nowhere]\n")
    with pytest.raises(ConfigError, match="sink plug-in 'nowhere' from aem_broken_plugin"):
        load_config(config)
    config.write_text('[judges.j]\nkind = "loose"\n')
    with pytest.raises(ConfigError, match="judge kind plug-in 'loose'"):
        load_config(config)
    from collectors.backends import BackendError, open_source

    with pytest.raises(BackendError, match="span source plug-in 'gone'"):
        open_source("gone://x/y", {})
    assert open_source(f"teamfile://{WEATHER}", {}).name == f"teamfile://{WEATHER}"


class _Strict(plugins.NoPluginSettings):
    pass


def test_a_plugin_written_to_an_older_build_convention_is_named_at_load() -> None:
    """One convention, from_settings(settings, services), checked when the plug-in loads:
    a judge kind's old (name, settings, resources) or a sink's old (settings) is an error
    naming the entry point and what it needs, not a TypeError when a run builds it."""

    class OldJudge:
        kind, Settings = "old", _Strict

        @classmethod
        def from_settings(cls, name, settings, resources):
            return cls()

    class OldSink:
        name, Settings = "oldsink", _Strict

        @classmethod
        def from_settings(cls, settings):
            return cls()

    needs = r"needs `from_settings` \(a callable from_settings\(settings, services\)\)"
    for kind, old in ((plugins.JUDGE_KIND, OldJudge), (plugins.SINK, OldSink)):
        with pytest.raises(plugins.PluginError, match=f"plug-in 'old' from team .*{needs}"):
            plugins.checked(kind, old, "old", "team", "team 1.0")


def test_a_metric_class_without_from_settings_still_builds_with_a_deprecation() -> None:
    class Legacy:
        name, Settings = "legacy", _Strict

        def __init__(self, settings):
            self.settings = settings

        def evaluate(self, context):
            return iter(())

    plugin = plugins.checked(plugins.METRIC, Legacy, "legacy", "team", "team 1.0")
    with pytest.warns(DeprecationWarning, match="'legacy' from team .*declares no from_settings"):
        built = plugin.build(plugin.settings({}))
    assert isinstance(built, Legacy) and isinstance(built.settings, _Strict)


def test_a_plugin_naming_a_band_the_kind_does_not_have_is_named_with_the_bands() -> None:
    class Early:
        name, band = "early", "first"

        def evaluate(self, context):
            return iter(())

    with pytest.raises(plugins.PluginError, match=r"`band` \(one of execution, choice, "):
        plugins.checked(plugins.METRIC, Early, "early", "team", "team 1.0")
