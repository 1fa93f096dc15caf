"""One exit code per outcome, whatever the command: 0 nothing found, 1 root causes (or
another finding), 2 the user's input or set-up is wrong, 3 AEM itself broke (one line,
``--debug`` for the traceback), 4 not evaluable. Scripts and CI branch on these, so each
is pinned here, and so is the one table (:mod:`aem.cli.exit_codes`) they all come from."""

from __future__ import annotations

import ast
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aem.cli import ExitCode, app
from tests.conftest import SAMPLES

CLI = Path(__file__).resolve().parents[2] / "aem" / "cli"

BOOM = textwrap.dedent(
    """
    class Boom:
        name = "boom"

        def __init__(self):
            raise RuntimeError("the plug-in's own bug")

        def evaluate(self, context):
            return []
    """
)


def _aem(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_exit_0_when_no_root_cause() -> None:
    code, _, _ = _aem("audit", str(SAMPLES / "weather_genai.otlp.jsonl"), "--json")
    assert code == 0


def test_exit_1_when_root_causes_found() -> None:
    code, out, _ = _aem("audit", str(SAMPLES / "parallel_tools.otlp.jsonl"), "--json")
    assert code == 1 and '"root_causes"' in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["audit", "no/such/dir"], "no such file or directory: no/such/dir"),
        (["audit", str(SAMPLES), "--bogus"], "No such option: --bogus"),
        (["audit", str(SAMPLES), "--set", "matchng.x=1"], "did you mean 'matching'?"),
        (
            ["audit", str(SAMPLES), "--set", 'metrics.plugins=["no_such_module_xyz:Metric"]'],
            "'no_such_module_xyz:Metric'",
        ),
        (["report", "no-such.json", "-o", "x.html"], "no-such.json"),
    ],
)
def test_exit_2_on_bad_usage_input_config_or_plugin(args: list[str], message: str) -> None:
    code, _, err = _aem(*args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_exit_2_on_a_bad_cases_file(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"question": "no session_id"}\n')
    code, _, err = _aem("audit", str(SAMPLES), "--cases", str(cases))
    assert code == 2 and f"{cases}:1: invalid case" in err and "Traceback" not in err


@pytest.fixture
def boom_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "boom_plugin.py").write_text(BOOM)
    monkeypatch.syspath_prepend(str(tmp_path))
    return 'metrics.plugins=["boom_plugin:Boom"]'


def test_exit_3_on_an_internal_error_one_line_and_a_debug_hint(boom_plugin: str) -> None:
    code, _, err = _aem("audit", str(SAMPLES), "--set", boom_plugin)
    assert code == 3
    assert err.strip().splitlines() == [
        "error: internal error: RuntimeError: the plug-in's own bug "
        "(rerun with --debug for the traceback)"
    ]


def test_debug_lets_the_traceback_through(boom_plugin: str) -> None:
    result = CliRunner().invoke(app, ["--debug", "audit", str(SAMPLES), "--set", boom_plugin])
    assert isinstance(result.exception, RuntimeError)
    assert "the plug-in's own bug" in str(result.exception)


def test_version_prints_the_package_version() -> None:
    from importlib.metadata import version

    code, out, _ = _aem("--version")
    assert (code, out.strip()) == (0, f"aem {version('aem')}")


def _serve(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-c", "from aem.cli import main; main()", "serve",
        "--set", "serve.grpc_port=-1",
        "--set", f'serve.spool_path="{tmp_path / "spool.sqlite"}"',
        *extra,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_serve_exits_2_without_traceback_when_the_port_is_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve(tmp_path, "--set", f"serve.http_port={port}")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "cannot start" in done.stderr


@pytest.mark.slow
def test_serve_exits_2_without_traceback_on_a_bad_cases_file(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("not json\n")
    done = _serve(tmp_path, "--set", "serve.http_port=0", "--cases", str(cases))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{cases}:1: not valid JSON" in done.stderr


def test_python_dash_m_aem_cli_is_the_aem_command() -> None:
    """``python -m aem.cli`` must keep working where the console script is not on PATH."""
    from importlib.metadata import version

    run = subprocess.run(
        [sys.executable, "-m", "aem.cli", "--version"], capture_output=True, text=True, timeout=60
    )
    assert (run.returncode, run.stdout.strip()) == (0, f"aem {version('aem')}")


def test_the_table_is_0_to_4_with_a_one_line_meaning_each() -> None:
    assert [int(code) for code in ExitCode] == [0, 1, 2, 3, 4]
    for code in ExitCode:
        assert code.meaning and "\n" not in code.meaning


def _written_out_exit_numbers(source: str) -> list[int]:
    """Line numbers of an exit (``typer.Exit``, ``sys.exit``, ``SystemExit``,
    ``os._exit``, ``fail``) given a number written out instead of an :class:`ExitCode`."""
    exits = {"Exit", "exit", "_exit", "SystemExit", "fail"}
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        given = [*node.args, *(k.value for k in node.keywords)]
        if name in exits and any(
            isinstance(n, ast.Constant) and type(n.value) is int
            for arg in given
            for n in ast.walk(arg)
        ):
            found.append(node.lineno)
    return found


def test_the_finder_sees_a_written_out_exit_number() -> None:
    source = "raise typer.Exit(1 if x else 0)\nsys.exit(code=2)\nfail('m', ExitCode.OK)\n"
    assert _written_out_exit_numbers(source) == [1, 2]


def test_no_command_writes_an_exit_number_out() -> None:
    found = {
        path.name: lines
        for path in sorted(CLI.glob("*.py"))
        if (lines := _written_out_exit_numbers(path.read_text(encoding="utf-8")))
    }
    assert found == {}


# Each command group given input it cannot use: exit 2 with one ``error:`` line.
BAD_INPUT = [
    ["diff", "no-such-before.json", "no-such-after.json"],
    ["diverge", "no/such/before", "no/such/after"],
    ["agreement", "no-such-labels.jsonl", "no-such-report.json", "--metric", "groundedness"],
    ["calibrate", "no-such-pairs.jsonl"],
    ["scorecard", "check", "no-such.scorecard.toml"],
    ["scorecard", "recompute", "no-such.scorecard.toml"],
    ["audit", str(SAMPLES), "--scorecard", "no-such.scorecard.toml"],
    ["test", "run", "no-such-test", "--traces", str(SAMPLES)],
    ["checks", "--config", "no-such-config.toml"],
]


@pytest.mark.parametrize("args", BAD_INPUT, ids=lambda args: " ".join(args[:2]))
def test_every_command_exits_2_on_input_it_cannot_use(args: list[str], tmp_path: Path) -> None:
    code, _, err = _aem(*args, *(["--store", str(tmp_path / "s.db")] if _stores(args) else []))
    assert code == ExitCode.BAD_INPUT, err
    assert err.startswith("error: ") and "Traceback" not in err


def _stores(args: list[str]) -> bool:
    return args[0] in ("test", "checks") or args[:2] == ["scorecard", "recompute"]


def test_an_empty_scorecard_store_has_no_versions_exit_2(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    code, _, err = _aem("scorecard", "versions", "no-such-conversation", "--store", store)
    assert code == ExitCode.BAD_INPUT
    assert "no total stored for conversation 'no-such-conversation'" in err
