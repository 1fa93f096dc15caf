"""``aem agreement``: κ, its interval and base rates, the confusion matrix, every miss
linked to its session and turn, the unscored counted apart, and a κ floor for CI.

Reports are built as ``aem audit --out`` writes them (the public report model); one test
audits real recorded traces first, so the whole path a user takes is covered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest
from typer.testing import CliRunner

from aem.cli import app
from aem.foundation.model import (
    AuditReport,
    Label,
    MetricResult,
    Outcome,
    SessionReport,
    TurnKind,
    TurnVerdict,
)
from aem.runs.agreement import HumanLabel, agreement, kappa, read_labels
from tests.conftest import run_audit

METRIC = "judge.step"


def _report(outcomes: dict[str, list[Outcome]]) -> AuditReport:
    sessions = []
    for session_id, per_turn in outcomes.items():
        turns = [
            TurnVerdict(
                turn_id=f"t{i}",
                span_ids=[f"s{i}"],
                kind=TurnKind.ANSWER,
                name="answer",
                label=Label.OK,
                metrics=[
                    MetricResult(
                        name=METRIC,
                        turn_id=f"t{i}",
                        outcome=o,
                        explanation=f"{o.value} on {session_id}/t{i}",
                    )
                ],
            )
            for i, o in enumerate(per_turn, start=1)
        ]
        sessions.append(SessionReport(session_id=session_id, turns=turns))
    return AuditReport(sessions=sessions)


def _labels(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


P, F, U = Outcome.PASS, Outcome.FAIL, Outcome.UNVERIFIED


def test_kappa_matches_the_textbook_example() -> None:
    # 20 agree pass, 15 agree fail, 5 + 10 disagree: po = .70, pe = .50 -> κ = .40
    pairs = (
        [("pass", "pass")] * 20
        + [("fail", "fail")] * 15
        + [("pass", "fail")] * 5
        + [("fail", "pass")] * 10
    )
    assert kappa(pairs) == pytest.approx(0.4)


def test_misses_name_session_and_turn_and_unscored_items_are_counted_not_dropped(
    tmp_path: Path,
) -> None:
    report = _report({"a": [P, F, U], "b": [P, P]})
    labels = read_labels(
        _labels(
            tmp_path / "l.jsonl",
            [
                {"id": "a/t1", "label": "fail"},  # metric passed: a false pass
                {"id": "a/t2", "label": "fail"},
                {"id": "a/t3", "label": "pass"},  # unverified: not in κ
                {"session_id": "b", "turn_id": "t1", "label": "pass"},
                {"id": "b/t2", "label": "fail"},  # a second false pass
                {"id": "zz/t1", "label": "pass"},  # not in the run
                {"id": "a", "label": "fail"},  # the session: it failed a turn
            ],
        )
    )
    result = agreement(labels, report, METRIC, rounds=200)
    assert result.scored == 5
    assert [m.id for m in result.false_passes] == ["a/t1", "b/t2"]
    assert result.false_passes[0].session_id == "a" and result.false_passes[0].turn_id == "t1"
    assert result.false_fails == []
    assert result.confusion == {"pass": {"pass": 1, "fail": 0}, "fail": {"pass": 2, "fail": 2}}
    assert result.unscored == {"unverified": 1, "not in the run": 1}
    assert result.unscored_ids == ["a/t3", "zz/t1"]
    assert result.human_fail_rate == pytest.approx(0.8)
    assert result.metric_fail_rate == pytest.approx(0.4)


def test_the_interval_brackets_kappa_and_narrows_with_more_labels() -> None:
    def run(copies: int) -> tuple[float, float, float]:
        outcomes = [P, P, P, F, F, P] * copies
        human: list[Literal["pass", "fail"]] = ["pass", "pass", "fail", "fail", "fail", "pass"]
        human = human * copies
        report = _report({"s": outcomes})
        labels = [read_labels_row(f"s/t{i}", h, i) for i, h in enumerate(human, start=1)]
        r = agreement(labels, report, METRIC, rounds=500)
        assert r.kappa is not None and r.kappa_low is not None and r.kappa_high is not None
        return r.kappa_low, r.kappa, r.kappa_high

    low, k, high = run(5)
    assert low <= k <= high
    wide = high - low
    low, k, high = run(40)
    assert low <= k <= high and high - low < wide


def read_labels_row(item: str, label: Literal["pass", "fail"], line: int) -> HumanLabel:
    session, _, turn = item.partition("/")
    return HumanLabel(session_id=session, turn_id=turn, label=label, line=line)


def test_kappa_is_undefined_when_chance_explains_everything(tmp_path: Path) -> None:
    report = _report({"s": [P, P, P]})
    labels = read_labels(
        _labels(tmp_path / "l.jsonl", [{"id": f"s/t{i}", "label": "pass"} for i in (1, 2, 3)])
    )
    result = agreement(labels, report, METRIC)
    assert result.kappa is None and "chance" in (result.kappa_undefined or "")


def test_a_bad_label_line_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = _labels(tmp_path / "l.jsonl", [{"id": "s/t1", "label": "pass"}])
    path.write_text(path.read_text() + '{"id": "s/t2", "label": "maybe"}\n')
    with pytest.raises(ValueError, match=r"l\.jsonl:2"):
        read_labels(path)


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["agreement", *args], env={"COLUMNS": "200"})
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    report = tmp_path / "run.json"
    report.write_text(_report({"a": [P, F, P, F], "b": [P, F]}).model_dump_json())
    labels = _labels(
        tmp_path / "l.jsonl",
        [
            {"id": "a/t1", "label": "pass"},
            {"id": "a/t2", "label": "fail"},
            {"id": "a/t3", "label": "fail"},
            {"id": "a/t4", "label": "fail"},
            {"id": "b/t1", "label": "pass"},
            {"id": "b/t2", "label": "pass"},
        ],
    )
    return labels, report


def test_cli_prints_kappa_and_every_miss_and_gates_on_the_floor(files: tuple[Path, Path]) -> None:
    labels, report = files
    code, out, _ = _cli(str(labels), str(report), "--metric", METRIC)
    assert code == 0
    assert "κ" in out and "a/t3" in out and "b/t2" in out and "95% CI" in out
    code, _, _ = _cli(str(labels), str(report), "--metric", METRIC, "--min-kappa", "0.9")
    assert code == 1
    code, out, _ = _cli(str(labels), str(report), "--metric", METRIC, "--json")
    data = json.loads(out)
    assert [m["id"] for m in data["false_passes"]] == ["a/t3"]
    assert [m["id"] for m in data["false_fails"]] == ["b/t2"]


def test_cli_unknown_metric_is_a_usage_error_listing_the_known(files: tuple[Path, Path]) -> None:
    labels, report = files
    code, _, err = _cli(str(labels), str(report), "--metric", "nope")
    assert code == 2 and METRIC in err


def test_on_a_real_audit_report_of_the_bundled_samples(tmp_path: Path) -> None:
    """The path a user takes: audit, then label two turns the metric judged."""
    out = tmp_path / "run.json"
    run_audit("sample_traces/", "--out", str(out))
    report = AuditReport.model_validate_json(out.read_text())
    judged = [
        (s.session_id, m.turn_id, m.outcome)
        for s in report.sessions
        for t in s.turns
        for m in t.metrics
        if m.name == "tool_execution" and m.outcome in (P, F)
    ]
    assert {o for *_, o in judged} == {P, F}, "the samples must hold both verdicts"
    rows = [{"id": f"{s}/{t}", "label": o.value} for s, t, o in judged]
    rows[0]["label"] = "fail" if rows[0]["label"] == "pass" else "pass"  # one disagreement
    labels = _labels(tmp_path / "l.jsonl", rows)
    code, text, _ = _cli(str(labels), str(out), "--metric", "tool_execution", "--json")
    data = json.loads(text)
    assert code == 0 and data["scored"] == len(rows)
    assert len(data["false_passes"]) + len(data["false_fails"]) == 1
    assert data["kappa"] is not None and data["kappa"] < 1


def test_repeated_labels_do_not_move_kappa_or_its_interval(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    """Was: the same labels 200 times turned a failing κ into 0.995 with a tight interval."""
    labels, report = files
    once = json.loads(_cli(str(labels), str(report), "--metric", METRIC, "--json")[1])
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text(labels.read_text() * 200)
    code, out, err = _cli(str(repeated), str(report), "--metric", METRIC, "--json")
    data = json.loads(out)
    assert code == 0 and data["scored"] == once["scored"] == 6
    assert (data["kappa"], data["kappa_low"], data["kappa_high"]) == (
        once["kappa"],
        once["kappa_low"],
        once["kappa_high"],
    )
    assert data["duplicates_collapsed"] == 6 * 199
    assert "1194 repeated label line(s) collapsed" in " ".join(err.split())
    floor = str(once["kappa"] + 0.1)
    assert _cli(str(repeated), str(report), "--metric", METRIC, "--min-kappa", floor)[0] == 1
    code, _, err = _cli(str(repeated), str(report), "--metric", METRIC, "--duplicates", "refuse")
    assert code == 2
    assert "6 id(s) labelled more than once: 'a/t1' on lines 1, 7, 13," in " ".join(err.split())


def test_an_id_labelled_both_pass_and_fail_is_reported_and_left_out(
    files: tuple[Path, Path],
) -> None:
    labels, report = files
    labels.write_text(labels.read_text() + json.dumps({"id": "a/t1", "label": "fail"}) + "\n")
    code, out, err = _cli(str(labels), str(report), "--metric", METRIC, "--json")
    data = json.loads(out)
    assert code == 0 and data["scored"] == 5 and data["conflicting_ids"] == ["a/t1"]
    assert "1 id(s) labelled both pass and fail, left out of κ until settled: 'a/t1'" in (
        " ".join(err.split())
    )


def test_ids_holding_escape_sequences_are_printed_escaped(tmp_path: Path) -> None:
    hostile = "a\x1b]0;owned\x07\x1b[2J"
    report = tmp_path / "run.json"
    report.write_text(_report({hostile: [P, F]}).model_dump_json())
    labels = _labels(
        tmp_path / "l.jsonl",
        [{"id": f"{hostile}/t1", "label": "fail"}, {"id": f"{hostile}/t2", "label": "fail"}],
    )
    code, out, _ = _cli(str(labels), str(report), "--metric", METRIC)
    assert code == 0 and "\x1b" not in out and "\x07" not in out
    assert "a\\x1b]0;owned\\x07\\x1b[2J/t1" in out


def test_the_bootstrap_is_seeded_and_scales_to_100000_labels() -> None:
    outcomes = [P, P, F, F, P] * 20_000
    human: list[Literal["pass", "fail"]] = ["pass", "fail", "fail", "pass", "pass"] * 20_000
    report = _report({"s": outcomes})
    labels = [read_labels_row(f"s/t{i}", h, i) for i, h in enumerate(human, start=1)]
    first = agreement(labels, report, METRIC)
    again = agreement(labels, report, METRIC)
    assert first.scored == 100_000 and first.kappa is not None
    assert first.kappa_low is not None and first.kappa_high is not None
    assert first.kappa_low <= first.kappa <= first.kappa_high
    assert first.kappa_high - first.kappa_low < 0.02
    assert (first.kappa_low, first.kappa_high) == (again.kappa_low, again.kappa_high)


def _silent_report(outcomes: dict[str, list[Outcome]]) -> AuditReport:
    """As :func:`_report`, but every result without an explanation (as many passes are)."""
    report = _report(outcomes)
    for session in report.sessions:
        for turn in session.turns:
            for result in turn.metrics:
                result.explanation = ""
    return report


def test_cli_a_false_pass_line_always_says_why(tmp_path: Path) -> None:
    """Was: ``a/t1 (session a, turn t1): `` and nothing after it."""
    report = tmp_path / "run.json"
    report.write_text(_silent_report({"a": [P, P], "b": [P, F]}).model_dump_json())
    labels = _labels(
        tmp_path / "l.jsonl",
        [
            {"id": "a/t1", "label": "fail"},  # a turn the metric passed without a word
            {"id": "a", "label": "fail"},  # the session as a whole: it failed none
            {"id": "b", "label": "fail"},
            {"id": "b/t1", "label": "pass"},
        ],
    )
    code, out, _ = _cli(str(labels), str(report), "--metric", METRIC)
    assert code == 0
    lines = {line.split(" (")[0].strip(): line for line in out.splitlines() if " (session " in line}
    assert set(lines) == {"a/t1", "a"}  # the two false passes
    assert lines["a/t1"].rstrip().endswith("pass (the metric gave no explanation)")
    assert lines["a"].rstrip().endswith("passed turn(s) t1, t2, failed none (2 pass)")
    for line in lines.values():
        assert not line.rstrip().endswith(":")


def test_cli_unverified_is_never_counted_as_a_pass_and_it_says_so(tmp_path: Path) -> None:
    """Was: a session with a passed turn and an unverified one counted as a pass, unsaid."""
    report = tmp_path / "run.json"
    report.write_text(_report({"a": [P, U], "b": [P, P], "c": [U, F]}).model_dump_json())
    labels = _labels(
        tmp_path / "l.jsonl",
        [{"id": "a", "label": "pass"}, {"id": "b", "label": "pass"}, {"id": "c", "label": "fail"}],
    )
    code, out, _ = _cli(str(labels), str(report), "--metric", METRIC, "--json")
    data = json.loads(out)
    assert code == 0 and data["scored"] == 2  # b passed, c failed (a fail outranks doubt)
    assert data["unscored"] == {"unverified": 1} and data["unscored_ids"] == ["a"]
    _, text, _ = _cli(str(labels), str(report), "--metric", METRIC)
    said = " ".join(text.split())
    assert "not in κ (the run gave no pass or fail): 1 unverified" in said
    assert "unverified is neither pass nor fail" in said


def test_cli_help_gives_the_label_id_format() -> None:
    result = CliRunner().invoke(app, ["agreement", "--help"], env={"COLUMNS": "200"})
    said = " ".join(result.stdout.split())
    assert result.exit_code == 0
    assert '{"id": "SESSION/TURN", "label": "pass"}' in said
    assert "turn id of the report (t1, t2 …)" in said
    assert "Unverified is neither pass nor fail" in said
