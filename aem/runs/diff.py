"""Compare two runs: which root causes disappeared, which appeared, what went away.

The seed's loop: fix one root cause, rerun, and see how many flagged turns vanished.
Runs are compared by root-cause signature (stable across runs by construction) and by
session id; both inputs are JSON reports written by ``aem audit --out``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from aem.foundation.model import AuditReport, Label


class SignatureChange(BaseModel):
    signature: str
    before: int
    after: int


class RunDiff(BaseModel):
    disappeared: list[SignatureChange] = Field(default_factory=list)
    appeared: list[SignatureChange] = Field(default_factory=list)
    changed: list[SignatureChange] = Field(default_factory=list)
    flagged_turns_before: int = 0
    flagged_turns_after: int = 0
    sessions_fixed: list[str] = Field(default_factory=list)
    sessions_broken: list[str] = Field(default_factory=list)


def _flagged(report: AuditReport) -> int:
    return sum(1 for s in report.sessions for t in s.turns if t.label is not Label.OK)


def diff_runs(before: AuditReport, after: AuditReport) -> RunDiff:
    """What changed between two runs of the same cases.

    >>> empty = AuditReport()
    >>> diff_runs(empty, empty).flagged_turns_after
    0
    """
    old = {r.signature: r.sessions for r in before.ranking}
    new = {r.signature: r.sessions for r in after.ranking}
    result = RunDiff(flagged_turns_before=_flagged(before), flagged_turns_after=_flagged(after))
    for signature in sorted(old.keys() | new.keys()):
        change = SignatureChange(
            signature=signature, before=old.get(signature, 0), after=new.get(signature, 0)
        )
        if change.after == 0:
            result.disappeared.append(change)
        elif change.before == 0:
            result.appeared.append(change)
        elif change.before != change.after:
            result.changed.append(change)
    failing_before = {s.session_id for s in before.sessions if s.root_causes}
    failing_after = {s.session_id for s in after.sessions if s.root_causes}
    seen_after = {s.session_id for s in after.sessions}
    result.sessions_fixed = sorted((failing_before - failing_after) & seen_after)
    result.sessions_broken = sorted(failing_after - failing_before)
    return result


def load_report(path: Path) -> AuditReport:
    return AuditReport.model_validate_json(Path(path).read_text(encoding="utf-8"))
