"""What the engine tests share: one CLI run per input and options for the whole test
session (the Ray tests compare with the single-process runs tests/engines/test_engines.py made),
and a byte-for-byte comparison that shows where two reports part.

A module of its own, imported as ``tests.engines_kit`` by both test files, so the cache
is one object whatever name pytest gives the test modules.
"""

from __future__ import annotations

import contextlib
import difflib
import functools

import pytest
from typer.testing import CliRunner

from scripts.golden_reports import INPUTS, REPO


@functools.cache
def audit_json(name: str, *options: str) -> str:
    """``aem audit --json`` on one golden input, run from the repository root (each run
    once per test session: the Ray tests compare with the same single-process runs)."""
    from aem.cli import app

    paths, cases = INPUTS[name]
    with_cases = ["--cases", cases] if cases else []
    with contextlib.chdir(REPO):
        result = CliRunner().invoke(
            app, ["audit", *paths, *with_cases, "--json", "--no-progress", *options]
        )
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def assert_same(expected: str, actual: str, what: str) -> None:
    """Fail with the first lines where the reports part, not a wall of two JSON blobs."""
    if actual != expected:
        delta = difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True), n=2
        )
        pytest.fail(f"{what} differs:\n{''.join(list(delta)[:60])}")
