"""Real instrumentations' traces: AEM's verdicts against the pinned golden report.

These are correct runs of a tiny scripted agent, so a root cause on any of them counts
against AEM; and a session whose turn labels or metric outcomes differ from the golden
report (``tests/golden/instrumented.report.json``) means a verdict moved.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aem.audit import audit_paths
from aem.config import load_config
from bench.agreement.figures import Figure, figure, share
from bench.agreement.split import half

SET = "instrumented"
DIRECTORY = "instrumented"
GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden" / "instrumented.report.json"


def verdicts(session: dict[str, Any]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """Per turn: its id, label and each metric's outcome (a report session as JSON)."""
    return [
        (t["turn_id"], t["label"], [(m["name"], m["outcome"]) for m in t.get("metrics", [])])
        for t in session.get("turns", [])
    ]


def measure(root: Path, workers: int) -> list[Figure]:
    traces = sorted(str(p) for p in (root / DIRECTORY).glob("*.otlp.jsonl"))
    report = audit_paths(traces, config=load_config(None, []), workers=workers)
    ours = {s.session_id: s.model_dump(mode="json") for s in report.sessions}
    golden = {
        s["session_id"]: s for s in json.loads(GOLDEN.read_text(encoding="utf-8"))["sessions"]
    }
    rows = [
        (
            half(SET, sid),
            (
                sid in ours and verdicts(ours[sid]) == verdicts(g),
                sid in ours and bool(ours[sid]["root_causes"]),
            ),
        )
        for sid, g in sorted(golden.items())
    ]
    rows += [
        (half(SET, sid), (False, bool(s["root_causes"])))
        for sid, s in ours.items()
        if sid not in golden
    ]
    return [
        figure(
            SET,
            "sessions with the golden verdicts",
            "AEM",
            rows,
            lambda rs: share([r[0] for r in rs]),
        ),
        figure(
            SET,
            "correct runs with a root cause",
            "AEM",
            rows,
            lambda rs: share([r[1] for r in rs]),
            "lower",
        ),
    ]
