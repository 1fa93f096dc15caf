"""Help texts say what a user types: no swallowed ``[serve]``, no ``<bool>`` after a
flag, and ``aem serve --help`` lists the settings that matter with their defaults."""

from __future__ import annotations

from typer.testing import CliRunner

from aem.cli import app


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


def test_root_help_states_the_exit_codes() -> None:
    text = " ".join(_help().split())
    assert "0 nothing found; 1 root causes found" in text
    assert "3 internal error (rerun with --debug" in text
