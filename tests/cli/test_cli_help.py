"""Help texts say what a user types: no swallowed ``[serve]``, no ``<bool>`` after a
flag, ``aem serve --help`` lists the settings that matter with their defaults, and every
command's help ends with the one exit-code table, one code a line."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from aem.cli import ExitCode, app


def _help(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0
    return result.stdout


def test_flags_are_shown_without_a_value() -> None:
    text = _help("audit")
    assert "--json " in text and "<bool>" not in text
    assert "--progress / --no-progress" in text


def test_brackets_in_help_survive() -> None:
    assert "[serve]" in _help("serve")


def test_serve_help_lists_key_settings_with_defaults() -> None:
    text = _help("serve")
    for shown in (
        "serve.host [127.0.0.1]",
        "serve.grpc_port [4317]",
        "serve.http_port [4318]",
        "serve.spool_path [",
        "serve.bearer_token [none]",
        "serve.tls_cert_file [none]",
        "serve.sinks [none]",
    ):
        assert shown in text


def _command_paths(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group under ``command``, as the words that reach it."""
    paths = [path]
    for name, sub in getattr(command, "commands", {}).items():
        paths += _command_paths(sub, (*path, name))
    return paths


COMMANDS = _command_paths(typer.main.get_command(app))


def test_the_tree_walk_finds_every_command_group_and_subcommand() -> None:
    assert {(), ("audit",), ("test", "run"), ("scorecard", "check"), ("config",)} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "aem")
def test_every_help_ends_with_the_one_exit_code_table(path: tuple[str, ...]) -> None:
    lines = [line.strip() for line in _help(*path).splitlines()]
    table = lines[lines.index("Exit codes:") + 1 :]
    assert table == [f"{code.value}  {code.meaning}" for code in ExitCode]
