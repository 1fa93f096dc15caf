"""A plug-in cannot silence, hijack or impersonate AEM.

Each plug-in here is a real distribution outside AEM, installed the way pip leaves one (its
module and a ``*.dist-info`` with ``entry_points.txt`` in a directory on ``PYTHONPATH``),
and each test runs the installed ``aem`` command in a process of its own, so the exit code
and the output are what a user's shell sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

AEM = str(Path(sys.executable).with_name("aem"))
WEATHER = str(SAMPLES / "weather_genai.otlp.jsonl")


def install(site: Path, dist: str, group: str, name: str, source: str) -> str:
    """A distribution ``dist`` whose module (its name, with underscores) declares the
    entry point ``name`` in ``group`` as ``module:Plugin``; the module's text is
    ``source``."""
    module = dist.replace("-", "_")
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {module}:Plugin\n")
    return module


def aem(site: Path, *args: str, **env: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [AEM, *args],
        env={**os.environ, "PYTHONPATH": str(site), "HF_HUB_OFFLINE": "1", **env},
        capture_output=True,
        text=True,
        timeout=300,
        cwd=site,
    )
    return done.returncode, done.stdout, " ".join(done.stderr.split())


@pytest.fixture
def site(tmp_path: Path) -> Path:
    where = tmp_path / "site"
    where.mkdir()
    return where


def test_a_metric_that_calls_sys_exit_at_import_is_exit_2_naming_it(site: Path) -> None:
    """Was: every command exited 0 with no output and no report."""
    install(site, "team-quiet", "aem.metrics", "team.quiet", "import sys\nsys.exit(0)\n")
    code, out, err = aem(site, "audit", WEATHER, "--json")
    assert code == 2 and out == ""
    assert "metric plug-in 'team.quiet' from team_quiet (team-quiet 1.0)" in err
    assert "exited while being imported (SystemExit: 0)" in err


def test_a_plugin_running_argparse_at_import_does_not_speak_as_aem(site: Path) -> None:
    source = """
        import argparse
        parser = argparse.ArgumentParser(prog="teamtool")
        parser.add_argument("--team", required=True)
        parser.parse_args()
    """
    install(site, "team-args", "aem.metrics", "team.args", source)
    code, out, err = aem(site, "audit", WEATHER, "--json")
    assert code == 2 and out == ""
    assert err.startswith("error: metric plug-in 'team.args' from team_args (team-args 1.0)")
    assert "exited while being imported (SystemExit: 2); it printed: usage: teamtool" in err


def test_output_printed_at_import_goes_to_stderr_not_into_the_report(site: Path) -> None:
    source = """
        from aem.metrics.tool_execution import ToolExecution
        print("team metrics loaded")

        class Plugin(ToolExecution):
            name = "team.loud"
    """
    install(site, "team-loud", "aem.metrics", "team.loud", source)
    code, out, err = aem(site, "audit", WEATHER, "--json")
    assert code in (0, 1), err
    assert json.loads(out)["sessions"] and "team metrics loaded" in err


IMPOSTOR = """
    from pathlib import Path
    Path("imported").write_text("the impostor ran")

    class Plugin:
        name = "{name}"
"""


def test_a_distribution_declaring_a_builtin_source_name_is_refused_unimported(
    site: Path,
) -> None:
    """Was: the impostor won or lost by directory order, and was handed PHOENIX_API_KEY."""
    install(site, "team-phoenix", "aem.sources", "phoenix", IMPOSTOR.format(name="phoenix"))
    code, out, err = aem(
        site, "audit", "--from", "phoenix://127.0.0.1:9/default", PHOENIX_API_KEY="s3cret"
    )
    assert code == 2 and out == ""
    assert "span source plug-in 'phoenix' from team_phoenix (team-phoenix 1.0)" in err
    assert "takes the built-in name 'phoenix' (collectors.backends, aem " in err
    assert not (site / "imported").exists()


def test_a_builtin_name_declared_by_the_plugin_object_is_refused_and_listed(
    site: Path,
) -> None:
    """The entry point's name is its own; the name the object declares is a built-in's."""
    install(site, "team-sink", "aem.sinks", "teamsink", IMPOSTOR.format(name="jsonl"))
    code, out, _ = aem(site, "config", "show", "--plugins", "--json")
    assert code == 0
    rows = [r for r in json.loads(out) if r["kind"] == "sink"]
    [jsonl] = [r for r in rows if r["name"] == "jsonl"]
    assert jsonl["distribution"].startswith("aem ")
    code, out, _ = aem(site, "config", "show", "--plugins")
    assert "takes the built-in name 'jsonl' (aem.sinks.jsonl, aem " in " ".join(out.split())


RECORDER = """
    import json
    from pydantic import BaseModel, ConfigDict

    class Settings(BaseModel):
        model_config = ConfigDict(extra="forbid")

    class Plugin:
        name = "teamenv"
        Settings = Settings

        @classmethod
        def from_settings(cls, settings, services):
            with open(services.url.path, "w") as out:
                json.dump(sorted(services.environ), out)
            raise RuntimeError("recorded")
"""


def test_secrets_go_to_a_third_party_source_only_when_the_config_names_it(
    site: Path,
) -> None:
    install(site, "team-env", "aem.sources", "teamenv", RECORDER)
    lent = site / "lent.json"
    url = f"teamenv://{lent}"
    aem(site, "audit", "--from", url, PHOENIX_API_KEY="s3cret", TEAM_TOKEN="t")
    given = json.loads(lent.read_text())
    assert "PHOENIX_API_KEY" not in given and "TEAM_TOKEN" not in given and "PATH" in given
    config = site / "aem.toml"
    config.write_text("[sources.teamenv]\n")
    aem(site, "audit", "--config", str(config), "--from", url, PHOENIX_API_KEY="s3cret")
    assert "PHOENIX_API_KEY" in json.loads(lent.read_text())


def test_an_import_that_hangs_ends_at_its_deadline_naming_the_plugin(site: Path) -> None:
    """Was: an import that sleeps hung every command."""
    install(site, "team-slow", "aem.metrics", "team.slow", "import time\ntime.sleep(600)\n")
    started = time.monotonic()
    code, out, err = aem(site, "audit", WEATHER, "--json", AEM_PLUGIN_IMPORT_SECONDS="2")
    assert code == 2 and out == "" and time.monotonic() - started < 60
    assert "metric plug-in 'team.slow' from team_slow (team-slow 1.0)" in err
    assert "did not finish within 2 s (AEM_PLUGIN_IMPORT_SECONDS)" in err


def test_a_keyboard_interrupt_raised_by_an_import_is_its_error_not_exit_130(
    site: Path,
) -> None:
    install(site, "team-intr", "aem.metrics", "team.intr", "raise KeyboardInterrupt\n")
    code, out, err = aem(site, "audit", WEATHER, "--json")
    assert code == 2 and out == ""
    assert "metric plug-in 'team.intr' from team_intr (team-intr 1.0)" in err
    assert "its import raised KeyboardInterrupt (no user pressed Ctrl-C)" in err
