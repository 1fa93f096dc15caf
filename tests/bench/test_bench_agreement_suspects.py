"""Proven root causes and suspects apart in the benches: the arithmetic on made-up reports.

Why: the Who&When and tau-bench figures now split "AEM proved a wrong thing" from "AEM
proved nothing" (precision, coverage) and score the first suspect only where nothing is
proven. Small hand-made reports and rows only — no development data, no model.
"""

from __future__ import annotations

from typing import Any

from aem.foundation.model import RootCause, SessionReport, TurnKind
from bench.agreement import tau as tau_figures
from bench.agreement import whowhen as who_figures
from bench.agreement.baselines import MESSAGE, Step
from bench.agreement.figures import Cell
from bench.agreement.split import ALL, TUNE
from bench.tau_agreement import first_suspect, score
from bench.whowhen.run import Attribution, attribute, proven_and_suspected, proven_table


def _cause(turn: str, spans: list[str], agent: str | None = None) -> RootCause:
    return RootCause(
        turn_id=turn,
        span_ids=spans,
        kind=TurnKind.AGENT,
        name=f"name-{turn}",
        metrics=["m"],
        signature=turn,
        agent=agent,
    )


def _report(causes: list[RootCause], suspects: list[RootCause]) -> SessionReport:
    return SessionReport(session_id="s", root_causes=causes, suspects=suspects)


def _who_reference() -> dict[str, Any]:
    return {
        "outcome": {"mistake_agent": "Coder", "mistake_step": 2},
        "derived": {"step_span_ids": ["a", "b", "c", "d"]},
    }


def test_the_first_suspect_is_the_earliest_and_only_read_without_a_root_cause() -> None:
    late, early = _cause("t10", ["d"], "Planner"), _cause("t2", ["c"], "Coder")
    alone = attribute(_report([], [late, early]), _who_reference())
    assert not alone.proven and alone.suspect == ("Coder", 2) and alone.suspect_used
    assert (alone.agent, alone.step) == (None, None)  # no root cause: no attribution
    proven = attribute(_report([_cause("t9", ["b"], "Planner")], [early]), _who_reference())
    assert proven.proven and proven.suspect is None and not proven.suspect_used
    assert (proven.agent, proven.step) == ("Planner", 1)
    assert first_suspect(_report([], [late, early])) == early
    assert first_suspect(_report([late], [early])) is None


def _attribution(
    agent: str | None, step: int | None, suspect: tuple[str | None, int | None] | None = None
) -> Attribution:
    return Attribution("s", agent, step, "A", 1, proven=agent is not None, suspect=suspect)


def test_precision_and_coverage_count_only_the_sessions_with_a_root_cause() -> None:
    rows = [
        _attribution("A", 1),  # proven, both right
        _attribution("A", 5),  # proven, agent right
        _attribution("B", 1),  # proven, step right
        _attribution(None, None, ("A", 1)),  # suspect, both right
        _attribution(None, None, ("C", 1)),  # suspect, step right
        _attribution(None, None),  # nothing at all
    ]
    counts = proven_and_suspected(rows)
    assert counts["root-cause coverage"] == (3, 6)
    assert counts["root-cause agent precision"] == (2, 3)
    assert counts["root-cause step precision"] == (2, 3)
    assert counts["first suspect used (no root cause)"] == (2, 3)
    assert counts["first suspect agent accuracy"] == (1, 2)
    assert counts["first suspect step accuracy"] == (2, 2)
    lines = proven_table({"AG": rows, "HC": rows[:1]})
    assert "66.7% (2/3)" in lines[2] and "100.0% (1/1)" in lines[2]  # agent precision
    assert "0.0% (0/0)" in lines[4]  # HC: no session without a root cause


def _cell(figures: list[Any], name: str, method: str) -> Cell:
    found = [f for f in figures if f.figure == name and f.method == method]
    assert len(found) == 1, (name, method)
    return found[0].cells[ALL]


def test_who_when_figures_put_baselines_on_the_same_sessions() -> None:
    steps = [Step(0, "B", MESSAGE), Step(1, "A", MESSAGE), Step(2, "A", MESSAGE)]
    rows = [
        (TUNE, who_figures.row(_attribution("A", 1), steps)),
        (TUNE, who_figures.row(_attribution("B", 0), steps)),
        (TUNE, who_figures.row(_attribution(None, None, ("A", 2)), steps)),
        (TUNE, who_figures.row(_attribution(None, None), steps)),
    ]
    figures = who_figures.figures("AG", rows)
    assert _cell(figures, "AG agent accuracy", "AEM") == Cell(0.25, "1/4")
    assert _cell(figures, "AG agent accuracy", who_figures.EITHER) == Cell(0.5, "2/4")
    assert _cell(figures, "AG root-cause coverage", "AEM") == Cell(0.5, "2/4")
    precision = "AG agent precision (sessions with a root cause)"
    assert _cell(figures, precision, "AEM") == Cell(0.5, "1/2")
    assert _cell(figures, precision, "most messages") == Cell(1.0, "2/2")  # "A" both times
    used = "AG first suspect used (no root cause)"
    assert _cell(figures, used, who_figures.SUSPECT) == Cell(0.5, "1/2")
    step = "AG first suspect step accuracy"
    assert _cell(figures, step, who_figures.SUSPECT) == Cell(0.0, "0/1")  # said 2, label 1
    assert _cell(figures, step, "most messages") == Cell(1.0, "1/1")  # A's first message


def _tau_reference(reward: float, deviation: str | None) -> dict[str, Any]:
    derived = {"first_deviation": {"span_id": deviation, "kind": "k"}} if deviation else {}
    return {"session_id": "s", "outcome": {"reward": reward}, "derived": derived}


def test_tau_scores_the_first_suspect_on_failed_runs_without_a_root_cause() -> None:
    hit = score(_tau_reference(0, "w1"), _report([], [_cause("t5", ["x"]), _cause("t3", ["w1"])]))
    assert hit.suspect_only and hit.suspect_applies and hit.suspect_hit
    assert not hit.session_agrees and not hit.span_hit  # proven figures are unchanged
    miss = score(_tau_reference(0, "w1"), _report([], []))
    assert miss.suspect_applies and not miss.suspect_hit and not miss.suspect_only
    proven = score(_tau_reference(0, "w1"), _report([_cause("t4", ["w1"])], [_cause("t1", ["w1"])]))
    assert proven.span_hit and not proven.suspect_applies and not proven.suspect_only
    assert proven.any_suspect and not miss.any_suspect
    passed = score(_tau_reference(1, None), _report([], [_cause("t1", ["a"])]))
    assert passed.session_agrees and passed.suspect_only and not passed.suspect_applies


def test_tau_suspect_figures_beside_the_first_write_on_the_same_sessions() -> None:
    def row(reward: float, suspect_span: str | None, first_write: str) -> tau_figures.TauRow:
        suspects = [_cause("t1", [suspect_span])] if suspect_span else []
        ref = _tau_reference(reward, "w1" if reward == 0 else None)
        return tau_figures.TauRow(
            score(ref, _report([], suspects)), reward == 0, "w1", False, first_write
        )

    rows = [(TUNE, row(0, "w1", "w2")), (TUNE, row(0, None, "w1")), (TUNE, row(1, "a", "w1"))]
    figures = tau_figures.figures(rows)
    assert _cell(figures, tau_figures.ANY_SUSPECT, "AEM") == Cell(2 / 3, "2/3")
    assert _cell(figures, tau_figures.SUSPECT_ONLY, "AEM") == Cell(2 / 3, "2/3")
    assert _cell(figures, tau_figures.SUSPECT_ONLY, "AEM, passed runs") == Cell(1.0, "1/1")
    hit = tau_figures.SUSPECT_HIT
    assert _cell(figures, hit, "AEM first suspect") == Cell(0.5, "1/2")
    assert _cell(figures, hit, "first state-changing call") == Cell(0.5, "1/2")


def test_the_perturbation_bench_counts_suspects_apart_and_strict_mode_fails_them() -> None:
    """By default a changed number nothing binds is a suspect: neither a false pass nor
    proven. Under ``unsupported = "fail"`` (the strict rows) it fails; a number a record
    binds is proven wrong in both modes."""
    import random

    from aem.config import load_config
    from aem.testing import make_session, make_tool_call, make_turn
    from bench.support import run

    session = make_session(
        make_tool_call("get_refund", {"order_id": "ORD-1"}, result={"refund": "$450"}),
        make_turn("answer", text="Your refund is $450. Your total spend is $1,200."),
    )
    tallies = {}
    for mode, config in (
        ("default", None),
        ("strict", load_config(None, ["verdicts.unsupported=fail"])),
    ):
        tally = run.Tally()
        run.measure(session, None, tally, random.Random(8), 3, config)
        tallies[mode] = tally
    default, strict = tallies["default"], tallies["strict"]
    # "$450" changed contradicts the record's refund (proven); "$1,200" changed binds to
    # nothing (a suspect): neither passes
    assert (default.perturbed, default.proven_perturbed, default.passed_perturbed) == (2, 1, 0)
    # the answer as written: its unbound "$1,200" fails only in the strict mode (and a
    # failed turn is not perturbed further)
    assert (default.failed_turns, strict.failed_turns, strict.perturbed) == (0, 1, 0)
