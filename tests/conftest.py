"""Shared fixtures: the bundled sample traces and an in-process CLI runner."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# `aem audit` evaluates in one process per core by default; tests run it in-process, where
# the registries they patch are the ones that evaluate (tests/engines/test_engines*.py pass
# --workers / --engine themselves and compare the engines with this path).
os.environ.setdefault("AEM_WORKERS", "1")

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "sample_traces"


@pytest.fixture
def samples() -> Path:
    return SAMPLES


def run_audit(*args: str) -> tuple[int, dict[str, Any], str]:
    """Run ``aem audit ... --json`` through the real CLI; return (exit code, report, stderr)."""
    from aem.cli import app

    result = CliRunner().invoke(app, ["audit", *args, "--json"])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    report = json.loads(result.stdout) if result.stdout.strip() else {}
    return result.exit_code, report, result.stderr


def session(report: dict[str, Any], session_id: str) -> dict[str, Any]:
    return next(s for s in report["sessions"] if s["session_id"] == session_id)
