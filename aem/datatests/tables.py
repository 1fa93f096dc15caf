"""The dataset-test tables in AEM's store: datasets, tests, runs, answers, evaluations.

Why these tables: a test must stay reproducible after everything around it changes.
The cases file is stored by content hash (a later edit is a new dataset, old runs keep
theirs); each test's checks carry the threshold and judge copied at creation; every run
keeps the answers it judged (so another judge can evaluate the same answers later) and
each evaluation with the threshold it used. Extra evaluations are new rows beside the
original (``pass_no`` > 0), never updates. Project thresholds are a separate concern.
"""

from __future__ import annotations

from typing import Any

from aem.store import Store

CONCERN = "dataset_tests"
THRESHOLDS = "check_thresholds"

MIGRATIONS = {
    1: """
CREATE TABLE dt_datasets (
    hash TEXT PRIMARY KEY, filename TEXT NOT NULL, content TEXT NOT NULL,
    cases INTEGER NOT NULL, stored_at REAL NOT NULL);
CREATE TABLE dt_tests (
    name TEXT PRIMARY KEY, dataset_hash TEXT NOT NULL REFERENCES dt_datasets(hash),
    created_at REAL NOT NULL, copied_from TEXT, gates TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE dt_test_checks (
    test TEXT NOT NULL REFERENCES dt_tests(name), check_name TEXT NOT NULL,
    threshold REAL, judge TEXT, PRIMARY KEY (test, check_name));
CREATE TABLE dt_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, test TEXT NOT NULL REFERENCES dt_tests(name),
    started_at REAL NOT NULL, finished_at REAL, source TEXT NOT NULL,
    prompt_version TEXT NOT NULL, report TEXT);
CREATE TABLE dt_answers (
    run_id INTEGER NOT NULL REFERENCES dt_runs(id), case_id TEXT NOT NULL,
    answer TEXT, tools TEXT NOT NULL, PRIMARY KEY (run_id, case_id));
CREATE TABLE dt_passes (
    run_id INTEGER NOT NULL REFERENCES dt_runs(id), pass_no INTEGER NOT NULL,
    judge TEXT, created_at REAL NOT NULL, PRIMARY KEY (run_id, pass_no));
CREATE TABLE dt_evaluations (
    run_id INTEGER NOT NULL, pass_no INTEGER NOT NULL, case_id TEXT NOT NULL,
    case_type TEXT, check_name TEXT NOT NULL, judge TEXT, threshold REAL,
    outcome TEXT NOT NULL, score REAL, explanation TEXT NOT NULL, usage TEXT,
    PRIMARY KEY (run_id, pass_no, case_id, check_name),
    FOREIGN KEY (run_id, pass_no) REFERENCES dt_passes(run_id, pass_no));
CREATE INDEX dt_runs_by_test ON dt_runs(test, id)
""",
}

THRESHOLD_MIGRATIONS = {
    1: """
CREATE TABLE check_thresholds (
    check_name TEXT PRIMARY KEY, value REAL NOT NULL, set_at REAL NOT NULL)
""",
}


def open_tables(store: Store) -> Store:
    """``store`` with both concerns' tables at their newest schema."""
    store.ensure(CONCERN, MIGRATIONS)
    store.ensure(THRESHOLDS, THRESHOLD_MIGRATIONS)
    return store


def rows(store: Store, sql: str, args: tuple[object, ...] = ()) -> list[Any]:
    """Rows typed ``Any``: their types are what the tables above declare."""
    return store.read(sql, args)
