"""The pytest plug-in: ``pytest --aem-traces`` fails one test per root cause."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SAMPLES

pytestmark = pytest.mark.slow

USES_FIXTURE = """
def test_report_is_available(aem_report):
    assert [s.session_id for s in aem_report.sessions] == ["trip-planner-7"]
"""


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A pytest run in its own process and directory, the plug-in loaded by entry point."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", *args]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


def test_one_failing_test_per_root_cause_and_the_fixture(tmp_path: Path) -> None:
    (tmp_path / "test_agent.py").write_text(USES_FIXTURE)
    done = _pytest(
        tmp_path,
        f"--aem-traces={SAMPLES / 'parallel_tools.otlp.jsonl'}",
        f"--aem-traces={SAMPLES / 'weather_genai.otlp.jsonl'}",
        f"--aem-cases={SAMPLES / 'cases.jsonl'}",
        "test_agent.py",
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    failed = [line for line in out.splitlines() if line.startswith("FAILED aem::")]
    assert len(failed) == 1 and failed[0].startswith("FAILED aem::trip-planner-7::")
    assert "tool_execution" in failed[0]
    assert "root cause in session 'trip-planner-7'" in out  # the explanation is the message
    assert "PASSED test_agent.py::test_report_is_available" not in out  # two sessions: fails
    assert "FAILED test_agent.py::test_report_is_available" in out
    assert any(line.startswith("PASSED aem::") for line in out.splitlines())


def test_without_traces_nothing_is_added_and_the_fixture_skips(tmp_path: Path) -> None:
    (tmp_path / "test_agent.py").write_text(USES_FIXTURE)
    done = _pytest(tmp_path, "test_agent.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "aem::" not in done.stdout
    assert "SKIPPED" in done.stdout and "no --aem-traces given" in done.stdout
