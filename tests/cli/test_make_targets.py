"""``make demo`` says each step as it starts: setup, the model's load, the audit, and
where the report is; ``.ci/run`` stops ``make test`` inside CI's 90-minute limit.

Was: three minutes of silence on a fresh machine (pip --quiet, then the model's first
load), which a new user reads as a hang. The steps after setup are ``scripts/demo.py``,
run here as the Makefile runs it, its output a pipe (as under ``make``); the Makefile's
recipe is read with ``make -n`` (prints, runs nothing). ``.ci/run`` is run with a
``make`` that never ends, first on the PATH, and a guard of a few seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_each_step_is_said_before_it_runs_and_the_report_is_where_it_says(
    tmp_path: Path,
) -> None:
    out_dir = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "scripts.demo", "--out-dir", str(out_dir)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    steps = [i for i, line in enumerate(lines) if line.startswith("make demo [")]
    said = [lines[i] for i in steps]
    assert [s.split("]")[0] for s in said] == ["make demo [2/4", "make demo [3/4", "make demo [4/4"]
    assert "loading the embedding model" in said[0] and "auditing" in said[1]
    assert "where the report is" in said[2]
    model, audit, where = steps
    assert lines[model + 1].startswith("  loaded: ")  # the load said how it went, and took
    first_table = next(i for i, line in enumerate(lines) if line.startswith("session "))
    assert audit < first_table < where  # announced before the audit printed anything
    shown = [Path(line.split()[0]) for line in lines[where + 1 :] if "report." in line]
    assert shown == [out_dir / "report.html", out_dir / "report.json"]
    assert all(path.stat().st_size > 1000 for path in shown)


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_the_makefile_says_setup_first_then_runs_the_steps() -> None:
    # Under `make test` this runs inside make: a sub-make says "Entering directory" first.
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "demo"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert "make demo [1/4] setting up" in lines[0]
    assert lines[-1].endswith("python -m scripts.demo")


def test_ci_run_stops_make_test_inside_the_limit_and_says_why(tmp_path: Path) -> None:
    never_ends = tmp_path / "make"
    never_ends.write_text("#!/bin/sh\nexec sleep 600\n", encoding="utf-8")
    never_ends.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [str(REPO / ".ci" / "run")],
        capture_output=True,
        text=True,
        env={**env, "CI_TEST_MINUTES": "0.05"},  # 3 seconds
        timeout=120,
    )
    assert done.returncode == 124
    assert "ran longer than 0.05 minutes and was stopped" in done.stderr
    default = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert 'minutes="${CI_TEST_MINUTES:-80}"' in default  # 10 minutes of margin under 90
