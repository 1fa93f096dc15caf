"""An ``AuditReport`` in a failed assertion: counts, not the report.

Was: ``assert report.sessions_with_root_cause == 0`` on the samples' report printed the
whole report (every session, turn and metric) under ``-vv``, and the assertion was lost
in it. The failure is run in a real pytest, in its own process, as a user's test fails,
on the samples' audit report as ``tests/golden`` pins it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from aem.foundation.model import AuditReport

GOLDEN = Path(__file__).resolve().parents[1] / "golden"

FAILING_TEST = """
from aem.foundation.model import AuditReport


def test_no_root_cause():
    report = AuditReport.model_validate_json(open({path!r}, encoding="utf-8").read())
    assert report.sessions_with_root_cause == 0
"""


def test_a_failed_assertion_on_a_report_shows_its_counts_in_a_few_lines(tmp_path: Path) -> None:
    report_path = GOLDEN / "sample_traces.report.json"  # the samples' audit, pinned
    report = AuditReport.model_validate_json(report_path.read_text(encoding="utf-8"))
    assert len(report.model_dump_json()) > 20_000  # a report worth hiding
    test_file = tmp_path / "test_user.py"
    test_file.write_text(FAILING_TEST.format(path=str(report_path)), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-vv", "-p", "no:cacheprovider", str(test_file)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        timeout=300,
    )
    assert done.returncode == 1, done.stdout
    failure = done.stdout[done.stdout.index("FAILURES") :]
    where = next(line for line in failure.splitlines() if "where" in line)
    roots = report.sessions_with_root_cause
    assert f"sessions={len(report.sessions)}" in where
    assert f"sessions_with_root_cause={roots}" in where
    assert len(failure.splitlines()) < 40 and max(map(len, failure.splitlines())) < 400
    assert report.sessions[0].session_id not in failure  # counts, not the sessions


def test_the_repr_is_counts_and_the_json_keeps_everything() -> None:
    report = AuditReport()
    assert repr(report) == (
        "AuditReport(sessions=0, turns=0, sessions_with_root_cause=0, "
        "sessions_with_suspect_only=0, root_causes_ranked=0, suspects_ranked=0, "
        "spans_read=0, issues=0, gates_failed=0)"
    )
    assert AuditReport.model_validate_json(report.model_dump_json()) == report
