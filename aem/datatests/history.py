"""Stored runs read back: one run (or one of its extra evaluations), a test's runs, and
extra evaluations by another judge, stored beside the original and never over it.
"""

from __future__ import annotations

import json
import time

from aem.cases import Case
from aem.checks.registry import applicable, find_check, judged_checks
from aem.datatests.definition import TestError, dataset_cases, load_test
from aem.datatests.results import Evaluation, RunResult
from aem.datatests.runner import NO_SESSION, as_evaluation, check_cap, insert_evaluations
from aem.datatests.tables import rows as _rows
from aem.datatests.thresholds import project_threshold
from aem.foundation.model import Outcome, Turn, TurnKind
from aem.judges.base import Judge, verdict_of
from aem.judges.registry import build_judge
from aem.judges.verdicts import usage_detail, verdict_result
from aem.settings import AemConfig
from aem.store import Store


def run_test_name(store: Store, run_id: int) -> str:
    rows = _rows(store, "SELECT test FROM dt_runs WHERE id = ?", (run_id,))
    if not rows:
        raise TestError(f"no run {run_id}")
    return str(rows[0][0])


def passes_of(store: Store, run_id: int) -> list[tuple[int, str | None]]:
    rows = _rows(
        store, "SELECT pass_no, judge FROM dt_passes WHERE run_id = ? ORDER BY pass_no", (run_id,)
    )
    return [(int(p), None if j is None else str(j)) for p, j in rows]


def load_run(store: Store, run_id: int, pass_no: int = 0) -> RunResult:
    """Run ``run_id`` as stored: its original evaluations, or extra evaluation ``pass_no``."""
    name = run_test_name(store, run_id)
    spec = load_test(store, name)
    passes = dict(passes_of(store, run_id))
    if pass_no not in passes:
        raise TestError(f"run {run_id} has no evaluation {pass_no} (has {sorted(passes)})")
    rows = _rows(
        store,
        "SELECT case_id, case_type, check_name, judge, threshold, outcome, score, explanation, "
        "usage FROM dt_evaluations WHERE run_id = ? AND pass_no = ? ORDER BY rowid",
        (run_id, pass_no),
    )
    evaluations = [
        Evaluation(
            str(c),
            None if t is None else str(t),
            str(k),
            None if j is None else str(j),
            None if th is None else float(th),
            Outcome(str(o)),
            None if s is None else float(s),
            str(x),
            json.loads(str(u)) if u else {},
        )
        for c, t, k, j, th, o, s, x, u in rows
    ]
    checks = (
        list(dict.fromkeys(e.check for e in evaluations))
        if pass_no
        else [c.name for c in spec.checks]
    )
    missing = [
        str(r[0])
        for r in _rows(
            store,
            "SELECT DISTINCT case_id FROM dt_evaluations WHERE run_id = ? AND pass_no = 0 AND "
            "explanation = ?",
            (run_id, NO_SESSION),
        )
    ]
    return RunResult(
        run_id, name, pass_no, passes[pass_no], evaluations, checks, spec.gates, missing
    )


def _judged(
    judge: Judge, case: Case, check: str, answer: str | None, threshold: float
) -> Evaluation:
    if answer is None or not answer.strip():
        return Evaluation(
            case.session_id,
            case.type,
            check,
            judge.name,
            threshold,
            Outcome.FAIL,
            0.0,
            "no answer: the run has no answer for this case",
        )
    verdict = verdict_of(judge, find_check(check).judge_request(case, answer))
    # The stored answer stands alone: a turn of its own, not a span of any trace.
    turn = Turn(
        turn_id="answer", index=0, kind=TurnKind.ANSWER, name="answer",
        span_ids=["span-answer"], trace_id="0" * 32,
    )  # fmt: skip
    found = verdict_result(check, turn, verdict, threshold=threshold, detail=usage_detail(verdict))
    return as_evaluation(found, case)


def rescore(
    store: Store,
    config: AemConfig,
    run_id: int,
    judge_name: str,
    checks: list[str] | None = None,
) -> RunResult:
    """An extra evaluation of run ``run_id``'s answers by ``judge_name``, stored beside it.

    It uses the project's *current* thresholds (an extra evaluation is new work), and
    counts towards the run's 2,000 evaluations.
    """
    spec = load_test(store, run_test_name(store, run_id))
    judged = judged_checks()
    chosen = [c.name for c in spec.checks if c.name in judged]
    if checks:
        unknown = [c for c in checks if c not in chosen]
        if unknown:
            raise TestError(f"not LLM checks of test {spec.name!r}: {', '.join(unknown)}")
        chosen = checks
    if not chosen:
        raise TestError(f"test {spec.name!r} has no LLM check to evaluate again")
    cases = dataset_cases(store, spec.dataset_hash)
    answers = {
        str(c): None if a is None else str(a)
        for c, a in _rows(
            store, "SELECT case_id, answer FROM dt_answers WHERE run_id = ?", (run_id,)
        )
    }
    todo = [(case, check) for case in cases for check in applicable(chosen, case)]
    already = _rows(
        store,
        "SELECT COUNT(*) FROM dt_evaluations WHERE run_id = ? AND outcome != 'skip'",
        (run_id,),
    )[0][0]
    check_cap(len(todo), int(already), len(cases))
    judge = build_judge(judge_name, config)
    thresholds = {c: project_threshold(c, store, config) or 7.0 for c in chosen}
    rows = [
        _judged(judge, case, check, answers.get(case.session_id), thresholds[check])
        for case, check in todo
    ]
    with store.transaction() as conn:
        pass_no = int(
            conn.execute(
                "SELECT COALESCE(MAX(pass_no), 0) + 1 FROM dt_passes WHERE run_id = ?", (run_id,)
            ).fetchone()[0]
        )
        conn.execute(
            "INSERT INTO dt_passes VALUES (?, ?, ?, ?)", (run_id, pass_no, judge_name, time.time())
        )
        insert_evaluations(conn, run_id, pass_no, rows)
    return load_run(store, run_id, pass_no)


def list_runs(store: Store, name: str) -> list[tuple[int, float, int]]:
    """``(run id, started at, extra evaluations)`` of test ``name``."""
    load_test(store, name)
    rows = _rows(
        store,
        "SELECT r.id, r.started_at, (SELECT COUNT(*) - 1 FROM dt_passes p WHERE p.run_id = r.id)"
        " FROM dt_runs r WHERE r.test = ? ORDER BY r.id",
        (name,),
    )
    return [(int(i), float(s), int(n)) for i, s, n in rows]
