"""Run a test: get the answers, evaluate them with the test's checks, store everything.

A run is an audit whose metrics include the test's checks, built with the test's own
thresholds and judges: each check's verdict lands on the answer turn, takes part in
propagation, and the run keeps the JSON report beside its evaluations. The 2,000 cap is
checked before any agent or judge is called, and bounds both: the agent is asked only the
cases some check evaluates.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable
from typing import Any

from aem.cases import Case
from aem.checks.registry import applicable, judged_checks, metric_checks, missing_fields
from aem.compare.core import SemanticComparator
from aem.datatests.definition import TestError, TestSpec, dataset_cases, load_test
from aem.datatests.results import Evaluation, RunResult
from aem.evaluate import Evaluator, build_report
from aem.evidence import answers_to_user, tool_turns
from aem.foundation.model import ClosedSession, InputIssue, MetricResult, Outcome, SessionReport
from aem.judges.prompts import PROMPT_VERSION
from aem.judges.registry import build_judge
from aem.metrics.base import Metric
from aem.metrics.registry import ResolvedMetrics, build, resolve
from aem.runs.gates import GATE_METRICS, case_result
from aem.settings import AemConfig
from aem.store import Store

MAX_EVALUATIONS = 2_000
NO_SESSION = "no answer: no session joined this case"


class CapError(TestError):
    """More evaluations than one run may hold."""


def count_evaluations(cases: Iterable[Case], checks: list[str]) -> int:
    """Cases × the checks that apply to each (skips count nowhere, so not here either)."""
    return sum(len(applicable(checks, case)) for case in cases)


def check_cap(count: int, already: int = 0, cases: int = 0) -> None:
    """Refuse, before anything is called, a run above :data:`MAX_EVALUATIONS`."""
    total = count + already
    if total <= MAX_EVALUATIONS:
        return
    parts = math.ceil(total / MAX_EVALUATIONS)
    extra = f" ({already} already in the run)" if already else ""
    per = f" of at most {math.floor(cases / parts)} cases each" if cases else ""
    raise CapError(
        f"{total} evaluations{extra} exceed the limit of {MAX_EVALUATIONS:,} per run "
        f"(evaluations = cases × applicable checks); split the cases into {parts} "
        f"tests{per}, or choose fewer checks"
    )


def check_metrics(
    spec: TestSpec, resolved: ResolvedMetrics, comparator: Callable[[], SemanticComparator]
) -> list[Metric]:
    """The test's checks, built with the test's thresholds and judges."""
    config = resolved.config
    specs = {s.name: s for s in resolved.specs}
    judged = judged_checks()
    built: list[Metric] = []
    for choice in spec.checks:
        if choice.name in GATE_METRICS:  # groundedness: its metrics as configured
            names = GATE_METRICS[choice.name]
            built.extend(build(specs[n], config.metrics.tables.get(n, {})) for n in names)
            continue
        table = dict(config.metrics.tables.get(choice.name, {}))
        if choice.threshold is not None:
            table["threshold"] = choice.threshold
        if choice.name in judged:
            table["judge"] = choice.judge
        metric = build(specs[choice.name], table)
        if choice.name in judged and choice.judge:
            metric.judge = build_judge(choice.judge, config, comparator)  # type: ignore[attr-defined]
        built.append(metric)
    return built


def as_evaluation(item: MetricResult, case: Case, check: str | None = None) -> Evaluation:
    """``item`` as the evaluation of ``check`` (its own name by default; a groundedness
    evaluation decided by refusal says so in its explanation)."""
    judge = next((e.actual for e in item.evidence if e.field == "judge"), None)
    usage = next((e.detail for e in item.evidence if e.field == "judge" and e.detail), None)
    check = check or item.name
    return Evaluation(
        case.session_id,
        case.type,
        check,
        None if judge is None else str(judge),
        item.threshold,
        item.outcome,
        item.score,
        item.explanation if item.name == check else f"{item.name}: {item.explanation}",
        json.loads(usage) if usage else {},
    )


def no_answer(case: Case, checks: list[str], spec: TestSpec, why: str) -> list[Evaluation]:
    """A case the agent did not answer fails every check that applies to it (score 0)."""
    return [
        Evaluation(
            case.session_id,
            case.type,
            c,
            spec.check(c).judge,
            spec.check(c).threshold,
            Outcome.FAIL,
            0.0,
            why,
        )
        for c in applicable(checks, case)
    ]


def _sessions(
    spec: TestSpec,
    cases: list[Case],
    issues: list[InputIssue],
    traces: list[str] | None,
    agent: str | None,
    config: AemConfig,
) -> Iterable[ClosedSession]:
    from aem.datatests.sources import load_agent, sessions_from_agent, sessions_from_traces

    traces = traces or spec.source.get("traces")
    agent = agent or spec.source.get("agent")
    if agent:
        return sessions_from_agent(load_agent(agent), cases, issues, config.assembly)
    if traces:
        return sessions_from_traces(traces, issues, config.assembly)
    raise TestError(f"test {spec.name!r} has no source: give --traces PATH or --agent module:fn")


def _store_run(
    store: Store,
    spec: TestSpec,
    source: dict[str, Any],
    report: str,
    evaluations: list[Evaluation],
    answers: dict[str, tuple[str | None, list[str]]],
    started: float,
) -> int:
    with store.transaction() as conn:
        cursor = conn.execute(
            "INSERT INTO dt_runs (test, started_at, finished_at, source, prompt_version, report)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (spec.name, started, time.time(), json.dumps(source), PROMPT_VERSION, report),
        )
        run_id = int(cursor.lastrowid or 0)
        conn.execute("INSERT INTO dt_passes VALUES (?, 0, NULL, ?)", (run_id, time.time()))
        conn.executemany(
            "INSERT INTO dt_answers VALUES (?, ?, ?, ?)",
            [(run_id, cid, text, json.dumps(tools)) for cid, (text, tools) in answers.items()],
        )
        insert_evaluations(conn, run_id, 0, evaluations)
    return run_id


def insert_evaluations(conn: Any, run_id: int, pass_no: int, rows: list[Evaluation]) -> None:
    conn.executemany(
        "INSERT INTO dt_evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                run_id,
                pass_no,
                e.case_id,
                e.case_type,
                e.check,
                e.judge,
                e.threshold,
                e.outcome.value,
                e.score,
                e.explanation,
                json.dumps(e.usage) if e.usage else None,
            )
            for e in rows
        ],
    )


def _evaluate_case(
    case: Case,
    report: SessionReport | None,
    spec: TestSpec,
    checks: list[str],
    issues: list[InputIssue],
) -> list[Evaluation]:
    if not applicable(checks, case):  # the agent was not asked: say why, per check
        return [_not_applicable(case, c, spec) for c in checks]
    found = {c: r for c in checks if report and (r := _check_result(report, c)) is not None}
    if report is None or not found:
        raised = (
            f"no answer: {i.message}"
            for i in issues
            if i.session_id == case.session_id and i.kind == "agent_error"
        )
        why = NO_SESSION if report is None else "no answer: the session has no turns"
        return no_answer(case, checks, spec, next(raised, why))
    return [as_evaluation(found[c], case, c) for c in checks if c in found]


def _not_applicable(case: Case, check: str, spec: TestSpec) -> Evaluation:
    """``skip`` with the fields ``case`` lacks for ``check`` (as the check words it)."""
    choice = spec.check(check)
    why = missing_fields(check, case) or "the case lacks the check's fields"
    return Evaluation(
        case.session_id, case.type, check, choice.judge, choice.threshold, Outcome.SKIP, None, why
    )


def _check_result(report: SessionReport, check: str) -> MetricResult | None:
    """The session's result for ``check``: the gate's case verdict for groundedness (a
    skip saying why when neither metric applied), else the check's last result."""
    if check in GATE_METRICS:
        found = case_result(report, check)
        if found is None and report.turns:
            found = MetricResult(
                name=check,
                turn_id=report.turns[-1].turn_id,
                outcome=Outcome.SKIP,
                explanation="not judged: the case has no type and the session retrieved "
                "nothing and called no tool (or gave no answer)",
            )
        return found
    results = [m for t in report.turns for m in t.metrics if m.name == check]
    return results[-1] if results else None


def run_test(
    store: Store,
    config: AemConfig | ResolvedMetrics,
    name: str,
    *,
    traces: list[str] | None = None,
    agent: str | None = None,
) -> RunResult:
    """One run of test ``name``: answers from ``traces``/``agent`` (else the test's source).

    ``config`` is the configuration, or what the loader resolved from it
    (:func:`aem.config.load_resolved`), so the command's metrics are not resolved again.
    """
    resolved = config if isinstance(config, ResolvedMetrics) else resolve(config)
    config = resolved.config
    spec = load_test(store, name)
    cases = dataset_cases(store, spec.dataset_hash)
    checks = [c.name for c in spec.checks]
    check_cap(count_evaluations(cases, checks), cases=len(cases))
    by_id = {c.session_id: c for c in cases}
    evaluator = Evaluator(config, by_id, [])
    built = check_metrics(spec, resolved, evaluator.comparator)
    # Checks run only as the test built them (its thresholds and judges), never as configured.
    names = {m.name for m in built} | set(metric_checks())
    evaluator.metrics.extend(
        m for m in resolved.metrics if not m.name.startswith("check.") and m.name not in names
    )
    evaluator.metrics.extend(built)
    issues: list[InputIssue] = []
    started = time.time()
    reports: dict[str, SessionReport] = {}
    answers: dict[str, tuple[str | None, list[str]]] = {}
    # The agent is asked only what a check will evaluate: at most one call per case with
    # an evaluation, so the 2,000 cap bounds the agent calls as it bounds the judge's.
    asked = [c for c in cases if applicable(checks, c)]
    for closed in _sessions(spec, asked, issues, traces, agent, config):
        if closed.session_id not in by_id:
            continue
        session = evaluator.build(closed)
        reports[session.session_id] = evaluator.evaluate(session)
        said = answers_to_user(session)
        answers[session.session_id] = (
            said[-1].text if said else None,
            [t.tool_call.name for t in tool_turns(session) if t.tool_call],
        )
    evaluations = [
        e for c in cases for e in _evaluate_case(c, reports.get(c.session_id), spec, checks, issues)
    ]
    missing = [c.session_id for c in cases if c.session_id not in reports]
    report = build_report(reports.values(), issues).model_dump_json()
    source = {"traces": traces} if traces else {"agent": agent} if agent else spec.source
    run_id = _store_run(store, spec, source, report, evaluations, answers, started)
    return RunResult(run_id, name, 0, None, evaluations, checks, spec.gates, missing)
