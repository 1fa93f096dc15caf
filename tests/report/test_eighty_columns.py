"""On a real 80-column terminal no identifier is cut in two: the audit's session tables
give way to one line per turn when they do not fit, `aem config show` keeps every setting
name whole, and an explanation is cut at a space, never inside a value.

The commands run in a pseudo-terminal sized 80 columns (what a person at a default
terminal sees), not through a pipe (which AEM widens to 120).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.conftest import run_audit
from tests.runs_kit import split_names

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

pytestmark = pytest.mark.slow


def _on_terminal(*args: str, columns: int = 80) -> str:
    """``aem ARGS`` with its stdout on a pseudo-terminal ``columns`` wide."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "HF_HUB_OFFLINE": "1", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "aem.cli", *args],
        stdout=follower, stderr=subprocess.DEVNULL, cwd=REPO, env=env,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(leader)
    return ANSI.sub("", b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n"))


def _report_names() -> list[str]:
    _, report, _ = run_audit("sample_traces/", "--cases", "sample_traces/cases.jsonl")
    names = {s["session_id"] for s in report["sessions"]}
    for session in report["sessions"]:
        for turn in session["turns"]:
            names.add(turn["name"])
            names.update(m["name"] for m in turn["metrics"])
    return sorted(n for n in names if len(n) > 3)


def test_the_audit_on_80_columns_breaks_no_metric_name_or_id() -> None:
    output = _on_terminal("audit", "sample_traces/", "--cases", "sample_traces/cases.jsonl")
    assert max(len(line) for line in output.splitlines()) <= 80
    assert "correctness.truthfulness" in output  # the names are there, whole
    assert split_names(output, _report_names()) == []


def test_config_show_on_80_columns_keeps_every_setting_name_whole() -> None:
    output = _on_terminal("config", "show")
    first_words = [line.split()[0] for line in output.splitlines() if line[:1].isalpha()]
    settings = [w for w in first_words if "." in w]
    assert any(s.startswith("metrics.") for s in settings)
    assert [s for s in settings if s.endswith("…")] == []
    assert 'metrics."check.relevance".recommended_judges' in settings
