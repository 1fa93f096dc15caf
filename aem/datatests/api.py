"""The Python API of dataset tests: what the ``aem test`` commands call, for scripts.

from aem.datatests import api
store = api.open_store("aem.sqlite")
api.create_test(store, config, "nightly", Path("cases.yaml"), ["check.relevance"])
run = api.run_test(store, config, "nightly", agent="my_agent:answer")
assert run.status == "ok", run.as_json()  # not "below gate", not "not evaluable"
"""

from __future__ import annotations

from pathlib import Path

from aem.datatests.definition import (
    copy_test,
    create_test,
    list_tests,
    load_test,
    set_judge,
)
from aem.datatests.history import list_runs, load_run, rescore
from aem.datatests.runner import MAX_EVALUATIONS, CapError, run_test
from aem.datatests.tables import open_tables
from aem.datatests.thresholds import reset_threshold, set_threshold
from aem.store import Store, default_store_path


def open_store(path: Path | str | None = None) -> Store:
    """The store file (``$AEM_STORE`` or ``aem.sqlite`` by default) with the test tables."""
    return open_tables(Store(Path(path) if path else default_store_path()))


__all__ = [
    "MAX_EVALUATIONS",
    "CapError",
    "copy_test",
    "create_test",
    "list_runs",
    "list_tests",
    "load_run",
    "load_test",
    "open_store",
    "rescore",
    "reset_threshold",
    "run_test",
    "set_judge",
    "set_threshold",
]
