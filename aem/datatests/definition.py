"""Tests: a stored cases file, the chosen checks, and per check its copied threshold and
(for LLM checks) its judge.

Why copy at creation: all runs of one test must use one threshold and one judge, or
their pass rates cannot be compared. So ``create`` copies the project threshold, later
``aem threshold set`` changes only new tests (and extra evaluations), and the judge is
fixed once a run exists — a different judge is a copy of the test, or an extra
evaluation of a run.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aem.cases import Case, load_cases
from aem.checks.registry import check_names, judged_checks
from aem.config import AemConfig, closest
from aem.datatests.tables import rows as _rows
from aem.datatests.thresholds import project_threshold
from aem.judges.registry import known_judges
from aem.metrics.registry import registered_metrics
from aem.store import Store


class TestError(ValueError):
    """A test cannot be created, changed or run as asked; the message says why and what to do."""


@dataclass(frozen=True)
class CheckChoice:
    name: str
    threshold: float | None
    judge: str | None


@dataclass
class TestSpec:
    name: str
    dataset_hash: str
    checks: list[CheckChoice]
    gates: dict[str, float] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    copied_from: str | None = None

    def check(self, name: str) -> CheckChoice:
        return next(c for c in self.checks if c.name == name)


def store_dataset(store: Store, path: Path) -> str:
    """Store the cases file's content under its hash (validated first); the hash."""
    data = Path(path).read_bytes()
    cases = load_cases(Path(path))
    digest = hashlib.sha256(data).hexdigest()
    with store.transaction() as conn:
        conn.execute(
            "INSERT OR IGNORE INTO dt_datasets VALUES (?, ?, ?, ?, ?)",
            (digest, Path(path).name, data.decode("utf-8"), len(cases), time.time()),
        )
    return digest


def dataset_cases(store: Store, digest: str) -> list[Case]:
    """The cases of a stored dataset, in file order, read as the cases loader reads them."""
    rows = _rows(store, "SELECT filename, content FROM dt_datasets WHERE hash = ?", (digest,))
    if not rows:
        raise TestError(f"dataset {digest[:12]} is not in the store")
    filename, content = str(rows[0][0]), str(rows[0][1])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / filename
        path.write_text(content, encoding="utf-8")
        return list(load_cases(path).values())


def _judge_for(check: str, wanted: dict[str, str], config: AemConfig) -> str:
    known = known_judges(config)
    name = wanted.get(check) or wanted.get("*")
    if name is None:
        spec = next(s for s in registered_metrics(config.metrics.plugins) if s.name == check)
        table = spec.settings_model.model_validate(config.metrics.tables.get(check, {}))
        recommended: list[str] = list(table.recommended_judges)  # type: ignore[attr-defined]
        name = next((j for j in recommended if j in known), known[0])
    if name not in known:
        raise TestError(f"no judge named {name!r}{closest(name, known)}; known: {', '.join(known)}")
    return name


def _validate_checks(checks: list[str], gates: dict[str, float]) -> None:
    known = check_names()
    if not checks:
        raise TestError("choose at least one check (--check); checks: " + ", ".join(known))
    for name in [*checks, *(g for g in gates if g != "all")]:
        if name not in known:
            raise TestError(f"unknown check {name!r}{closest(name, known)}")
    for name in gates:
        if name != "all" and name not in checks:
            raise TestError(f"gate on {name}, which the test does not run")
        if not 0.0 <= gates[name] <= 1.0:
            raise TestError(f"gate {name}={gates[name]:g}: a pass rate between 0 and 1")


def create_test(
    store: Store,
    config: AemConfig,
    name: str,
    cases_path: Path,
    checks: list[str],
    *,
    judges: dict[str, str] | None = None,
    gates: dict[str, float] | None = None,
    source: dict[str, Any] | None = None,
) -> TestSpec:
    """Store the cases, copy each check's project threshold, choose each LLM check's judge."""
    gates = dict(gates or {})
    checks = list(dict.fromkeys(checks))
    _validate_checks(checks, gates)
    if _rows(store, "SELECT 1 FROM dt_tests WHERE name = ?", (name,)):
        raise TestError(f"a test named {name!r} exists; pick another name or `aem test copy`")
    judged = judged_checks()
    chosen = [
        CheckChoice(
            c,
            project_threshold(c, store, config),
            _judge_for(c, judges or {}, config) if c in judged else None,
        )
        for c in checks
    ]
    spec = TestSpec(name, store_dataset(store, cases_path), chosen, gates, dict(source or {}))
    save_test(store, spec)
    return spec


def save_test(store: Store, spec: TestSpec) -> None:
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO dt_tests VALUES (?, ?, ?, ?, ?, ?)",
            (
                spec.name,
                spec.dataset_hash,
                time.time(),
                spec.copied_from,
                json.dumps(spec.gates),
                json.dumps(spec.source),
            ),
        )
        conn.executemany(
            "INSERT INTO dt_test_checks VALUES (?, ?, ?, ?)",
            [(spec.name, c.name, c.threshold, c.judge) for c in spec.checks],
        )


def load_test(store: Store, name: str) -> TestSpec:
    rows = _rows(
        store,
        "SELECT dataset_hash, gates, source, copied_from FROM dt_tests WHERE name = ?",
        (name,),
    )
    if not rows:
        names = [str(r[0]) for r in _rows(store, "SELECT name FROM dt_tests")]
        raise TestError(f"no test named {name!r}{closest(name, names)}")
    digest, gates, source, copied = rows[0]
    checks = [
        CheckChoice(str(c), None if t is None else float(t), None if j is None else str(j))
        for c, t, j in _rows(
            store,
            "SELECT check_name, threshold, judge FROM dt_test_checks WHERE test = ? ORDER BY rowid",
            (name,),
        )
    ]
    return TestSpec(
        name,
        str(digest),
        checks,
        json.loads(str(gates)),
        json.loads(str(source)),
        None if copied is None else str(copied),
    )


def runs_of(store: Store, name: str) -> list[int]:
    return [
        int(r[0])
        for r in _rows(
            store,
            "SELECT id FROM dt_runs WHERE test = ? ORDER BY id",
            (name,),
        )
    ]


def set_judge(store: Store, config: AemConfig, name: str, check: str, judge: str) -> TestSpec:
    """Change an LLM check's judge — only before the test's first run."""
    spec = load_test(store, name)
    runs = runs_of(store, name)
    if runs:
        raise TestError(
            f"the judge of test {name!r} is fixed: it has run (run {runs[0]}), so its scores "
            f"are comparable only with one judge. For later runs with {judge!r}: "
            f"`aem test copy {name} NEW --judge {check}={judge}`; to score run {runs[-1]}'s "
            f"answers with it too: `aem test rescore {runs[-1]} --judge {judge}`"
        )
    if check not in judged_checks() or check not in {c.name for c in spec.checks}:
        raise TestError(f"{check} is not an LLM check of test {name!r}")
    resolved = _judge_for(check, {check: judge}, config)
    with store.transaction() as conn:
        conn.execute(
            "UPDATE dt_test_checks SET judge = ? WHERE test = ? AND check_name = ?",
            (resolved, name, check),
        )
    return load_test(store, name)


def copy_test(
    store: Store, config: AemConfig, name: str, new: str, judges: dict[str, str]
) -> TestSpec:
    """A new test with the same dataset, checks, thresholds and gates, other judges."""
    spec = load_test(store, name)
    if _rows(store, "SELECT 1 FROM dt_tests WHERE name = ?", (new,)):
        raise TestError(f"a test named {new!r} exists")
    checks = [
        CheckChoice(
            c.name,
            c.threshold,
            _judge_for(c.name, judges, config) if judges and c.judge else c.judge,
        )
        for c in spec.checks
    ]
    copy = TestSpec(new, spec.dataset_hash, checks, spec.gates, spec.source, copied_from=name)
    save_test(store, copy)
    return copy


def list_tests(store: Store) -> list[tuple[str, int, int]]:
    """``(name, cases, runs)`` per test."""
    rows = _rows(
        store,
        "SELECT t.name, d.cases, (SELECT COUNT(*) FROM dt_runs r WHERE r.test = t.name) "
        "FROM dt_tests t JOIN dt_datasets d ON d.hash = t.dataset_hash ORDER BY t.created_at",
    )
    return [(str(n), int(c), int(r)) for n, c, r in rows]
