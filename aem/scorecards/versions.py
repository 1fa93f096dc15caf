"""Totals in the store: the live state of each conversation, and immutable versions.

Why versions: a completed total is an assessment someone may appeal; recomputing it (a
step rescored, the config changed) must not overwrite what was shown before. Each
complete or blocked result that differs from the latest version becomes version n+1,
with the config hash it used and its 0–100 figure fixed at that moment. A pending total
is not a version: it is the conversation's current state (which steps are missing), kept
with the step results seen so far so that live totals survive a restart.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping

from pydantic import BaseModel, Field

from aem.scorecards.results import StepResult
from aem.scorecards.totals import Total
from aem.store import Store

CONCERN = "scorecards"
MIGRATIONS = {
    1: """
CREATE TABLE scorecard_conversations (
    pipeline TEXT NOT NULL,
    conversation TEXT NOT NULL,
    state TEXT NOT NULL,
    blocking_steps TEXT NOT NULL,
    latest_version INTEGER,
    results TEXT NOT NULL,
    root_trace_id TEXT,
    root_span_id TEXT,
    updated_at REAL NOT NULL,
    PRIMARY KEY (pipeline, conversation)
) WITHOUT ROWID;
CREATE TABLE scorecard_versions (
    pipeline TEXT NOT NULL,
    conversation TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    total REAL,
    max REAL NOT NULL,
    percent REAL,
    passed INTEGER,
    threshold REAL NOT NULL,
    blockers TEXT NOT NULL,
    blocking_steps TEXT NOT NULL,
    steps TEXT NOT NULL,
    results TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    computed_at REAL NOT NULL,
    emitted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (pipeline, conversation, version)
) WITHOUT ROWID;
CREATE INDEX scorecard_versions_unemitted ON scorecard_versions (emitted) WHERE emitted = 0
""",
}

_VERSION_COLUMNS = (
    "pipeline, conversation, version, state, total, max, percent, passed, threshold, "
    "blockers, blocking_steps, steps, results, config_hash, computed_at"
)


class StoredTotal(Total):
    """A version as stored: the total plus its number and when it was computed."""

    version: int
    computed_at: float
    results: dict[str, StepResult] = Field(default_factory=dict)


class ConversationState(BaseModel):
    """One line of ``aem scorecard show``: the current state and the latest version."""

    pipeline: str
    conversation: str
    state: str
    blocking_steps: list[str]
    latest: StoredTotal | None
    root: tuple[str, str] | None = None
    updated_at: float


def _results_json(results: Mapping[str, StepResult]) -> str:
    return json.dumps({k: v.model_dump(mode="json") for k, v in sorted(results.items())})


def _content(result: StepResult) -> dict[str, object]:
    """What a step said, without where it said it: a re-sent identical span is no rescore."""
    return result.model_dump(include={"kind", "failed", "criteria", "problems"})


def _changed(prev: StoredTotal, total: Total, results: Mapping[str, StepResult]) -> bool:
    if (prev.config_hash, prev.state, prev.total, prev.passed) != (
        total.config_hash,
        total.state,
        total.total,
        total.passed,
    ):
        return True
    if sorted(prev.blockers) != sorted(total.blockers):
        return True
    return any(
        name not in results or _content(results[name]) != _content(old)
        for name, old in prev.results.items()
    )


def _row_to_total(row: tuple[object, ...]) -> StoredTotal:
    data = dict(zip(_VERSION_COLUMNS.split(", "), row, strict=True))
    for key in ("blockers", "blocking_steps", "steps", "results"):
        data[key] = json.loads(str(data[key]))
    data["passed"] = None if data["passed"] is None else bool(data["passed"])
    return StoredTotal.model_validate(data)


class ScorecardStore:
    """The scorecard tables of a :class:`Store`; created or migrated when opened."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store.ensure(CONCERN, MIGRATIONS)

    def results(self, pipeline: str, conversation: str) -> dict[str, StepResult]:
        """The step results seen so far for a conversation (empty when unknown)."""
        rows = self.store.read(
            "SELECT results FROM scorecard_conversations WHERE pipeline = ? AND conversation = ?",
            (pipeline, conversation),
        )
        if not rows:
            return {}
        return {k: StepResult.model_validate(v) for k, v in json.loads(str(rows[0][0])).items()}

    def root(self, pipeline: str, conversation: str) -> tuple[str, str] | None:
        """The run's root span (the first one seen): where live totals are attached."""
        rows = self.store.read(
            "SELECT root_trace_id, root_span_id FROM scorecard_conversations "
            "WHERE pipeline = ? AND conversation = ?",
            (pipeline, conversation),
        )
        if not rows or not rows[0][0] or not rows[0][1]:
            return None
        return str(rows[0][0]), str(rows[0][1])

    def record(
        self,
        total: Total,
        results: Mapping[str, StepResult],
        root: tuple[str, str] | None = None,
    ) -> StoredTotal | None:
        """Save the current state; a changed complete/blocked total becomes a new version.

        Returns the new version, or None when no version was created.
        """
        now = time.time()
        with self.store.transaction() as conn:
            key = (total.pipeline, total.conversation)
            latest = self._latest(conn, *key)
            conn.execute(
                "INSERT INTO scorecard_conversations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (pipeline, conversation) DO UPDATE SET state = excluded.state, "
                "blocking_steps = excluded.blocking_steps, results = excluded.results, "
                "root_trace_id = coalesce(root_trace_id, excluded.root_trace_id), "
                "root_span_id = coalesce(root_span_id, excluded.root_span_id), "
                "updated_at = excluded.updated_at",
                (
                    *key,
                    total.state,
                    json.dumps(total.blocking_steps),
                    latest.version if latest else None,
                    _results_json(results),
                    *(root or (None, None)),
                    now,
                ),
            )
            if total.state == "pending" or (latest and not _changed(latest, total, results)):
                return None
            version = StoredTotal(
                **total.model_dump(),
                version=(latest.version if latest else 0) + 1,
                computed_at=now,
                results=dict(results),
            )
            self._insert(conn, version)
            conn.execute(
                "UPDATE scorecard_conversations SET latest_version = ? "
                "WHERE pipeline = ? AND conversation = ?",
                (version.version, *key),
            )
        return version

    @staticmethod
    def _latest(conn: sqlite3.Connection, pipeline: str, conversation: str) -> StoredTotal | None:
        row = conn.execute(
            f"SELECT {_VERSION_COLUMNS} FROM scorecard_versions "
            "WHERE pipeline = ? AND conversation = ? ORDER BY version DESC LIMIT 1",
            (pipeline, conversation),
        ).fetchone()
        return _row_to_total(row) if row else None

    @staticmethod
    def _insert(conn: sqlite3.Connection, v: StoredTotal) -> None:
        conn.execute(
            f"INSERT INTO scorecard_versions ({_VERSION_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                v.pipeline,
                v.conversation,
                v.version,
                v.state,
                v.total,
                v.max,
                v.percent,
                None if v.passed is None else int(v.passed),
                v.threshold,
                json.dumps(v.blockers),
                json.dumps(v.blocking_steps),
                json.dumps([s.model_dump(mode="json") for s in v.steps]),
                _results_json(v.results),
                v.config_hash,
                v.computed_at,
            ),
        )

    def versions(self, pipeline: str | None, conversation: str) -> list[StoredTotal]:
        """Every version of a conversation's total, oldest first."""
        rows = self.store.read(
            f"SELECT {_VERSION_COLUMNS} FROM scorecard_versions WHERE conversation = ? "
            "AND (? IS NULL OR pipeline = ?) ORDER BY pipeline, version",
            (conversation, pipeline, pipeline),
        )
        return [_row_to_total(r) for r in rows]

    def conversations(self, pipeline: str | None = None) -> list[ConversationState]:
        """Every conversation's current state with its latest version (stored figures)."""
        rows = self.store.read(
            "SELECT pipeline, conversation, state, blocking_steps, latest_version, "
            "root_trace_id, root_span_id, updated_at FROM scorecard_conversations "
            "WHERE ? IS NULL OR pipeline = ? ORDER BY pipeline, conversation",
            (pipeline, pipeline),
        )
        out = []
        for pipe, conv, state, blocking, latest, trace_id, span_id, updated in rows:
            versions = self.versions(str(pipe), str(conv)) if latest is not None else []
            out.append(
                ConversationState(
                    pipeline=str(pipe),
                    conversation=str(conv),
                    state=str(state),
                    blocking_steps=json.loads(str(blocking)),
                    latest=versions[-1] if versions else None,
                    root=(str(trace_id), str(span_id)) if trace_id and span_id else None,
                    updated_at=float(str(updated)),
                )
            )
        return out

    def unemitted(self) -> list[tuple[StoredTotal, tuple[str, str] | None]]:
        """Versions not yet handed to the outbox, with their conversation's root span."""
        rows = self.store.read(
            "SELECT v.pipeline, v.conversation, v.version, c.root_trace_id, c.root_span_id "
            "FROM scorecard_versions v JOIN scorecard_conversations c "
            "USING (pipeline, conversation) WHERE v.emitted = 0",
        )
        out: list[tuple[StoredTotal, tuple[str, str] | None]] = []
        for pipe, conv, version, trace_id, span_id in rows:
            found = [v for v in self.versions(str(pipe), str(conv)) if v.version == version]
            root = (str(trace_id), str(span_id)) if trace_id and span_id else None
            out.extend((v, root) for v in found)
        return out

    def mark_emitted(self, total: StoredTotal) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "UPDATE scorecard_versions SET emitted = 1 "
                "WHERE pipeline = ? AND conversation = ? AND version = ?",
                (total.pipeline, total.conversation, total.version),
            )
