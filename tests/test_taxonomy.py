"""The failure taxonomy: rules name categories deterministically (same failures, same
categories, whatever the run or the input order); the samples ship a taxonomy that the
terminal view and the JSON report show; ``aem taxonomy suggest`` writes a rules file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aem.cli import app
from aem.ranking import categorize, load_taxonomy
from tests.conftest import SAMPLES, run_audit

TAXONOMY = SAMPLES / "taxonomy.toml"
FILES = ["parallel_tools.otlp.jsonl", "multi_agent.otlp.jsonl", "march_refunds.otlp.jsonl"]


def _categories(report: dict) -> dict[tuple[str, str], str | None]:
    return {
        (s["session_id"], c["turn_id"]): c["category"]
        for s in report["sessions"]
        for c in s["root_causes"]
    }


def _reversed_copy(tmp_path: Path) -> list[str]:
    """The same spans, files in reverse order and each file's lines reversed."""
    out = []
    for name in reversed(FILES):
        lines = (SAMPLES / name).read_text().splitlines()
        path = tmp_path / name
        path.write_text("\n".join(reversed(lines)) + "\n")
        out.append(str(path))
    return out


def test_same_failures_land_in_the_same_categories_across_runs_and_orders(tmp_path: Path) -> None:
    cases = ["--cases", str(SAMPLES / "cases.jsonl"), "--taxonomy", str(TAXONOMY)]
    first = run_audit(*[str(SAMPLES / f) for f in FILES], *cases)
    again = run_audit(*[str(SAMPLES / f) for f in FILES], *cases)
    reordered = run_audit(*_reversed_copy(tmp_path), *cases)
    assert first[0] == again[0] == reordered[0] == 1
    categories = _categories(first[1])
    assert categories == _categories(again[1]) == _categories(reordered[1])
    assert categories and all(categories.values())  # every root cause has a category
    assert [r["category"] for r in first[1]["ranking"]] == [
        r["category"] for r in reordered[1]["ranking"]
    ]


def test_no_taxonomy_no_category() -> None:
    _, report, _ = run_audit(str(SAMPLES / "parallel_tools.otlp.jsonl"))
    assert {c for c in _categories(report).values()} == {None}


def test_terminal_view_groups_root_causes_by_category() -> None:
    result = CliRunner().invoke(
        app,
        ["audit", str(SAMPLES / "parallel_tools.otlp.jsonl"), "--taxonomy", str(TAXONOMY)],
        env={"COLUMNS": "120"},
    )
    assert result.exit_code == 1
    assert "failure categories" in result.stdout
    assert "100% of failures fall in one category: dependency down" in result.stdout
    assert "1 session, 1 with a root cause" in result.stdout  # not "1 sessions"


def test_explanation_pattern_rule_is_deterministic_and_first_match_wins() -> None:
    rules = load_taxonomy(TAXONOMY)
    timeout = "tool get_hotels failed: TimeoutError: hotel search timed out after 30 s"
    assert categorize("tool_execution", "tool_call", "x", rules, explanation=timeout) == (
        "dependency down"
    )
    bad_table = "tool run_query failed: sqlite3.OperationalError: no such table: tickets"
    assert categorize("tool_execution", "tool_call", "x", rules, explanation=bad_table) == (
        "tool failed"
    )


def test_explanation_rule_categorises_through_the_audit() -> None:
    _, report, _ = run_audit(
        str(SAMPLES / "parallel_tools.otlp.jsonl"), "--taxonomy", str(TAXONOMY)
    )
    assert set(_categories(report).values()) == {"dependency down"}  # a timeout


BAD_FILES = [
    ('[[taxonomy]]\ncategory = "x"\nmetrc = "y"\n', "taxonomy[0].metrc: unknown setting"),
    ('[[taxonomy]]\ncategory = "x"\nexplanation = "("\n', "not a regular expression"),
    ("[matching]\npass_threshold = 1\n", "matching: a taxonomy file holds only [[taxonomy]]"),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES)
def test_a_bad_taxonomy_file_is_exit_2_naming_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "taxonomy.toml"
    path.write_text(text)
    code, _, err = run_audit(str(SAMPLES / "parallel_tools.otlp.jsonl"), "--taxonomy", str(path))
    assert code == 2 and message in err


@pytest.mark.slow
def test_suggest_writes_an_editable_rules_file_covering_every_failure(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    code, _, _ = run_audit(
        str(SAMPLES), "--cases", str(SAMPLES / "cases.jsonl"), "--out", str(report)
    )
    assert code == 1
    rules_path = tmp_path / "rules.toml"
    runner = CliRunner()
    done = runner.invoke(app, ["taxonomy", "suggest", str(report), "-o", str(rules_path)])
    assert done.exit_code == 0, done.stderr
    text = rules_path.read_text()
    assert text.startswith("# A starting failure taxonomy") and "[[taxonomy]]" in text
    again = runner.invoke(app, ["taxonomy", "suggest", str(report)])
    assert again.stdout == text  # deterministic
    rules = load_taxonomy(rules_path)  # a valid rules file aem audit --taxonomy accepts
    assert len({r.category for r in rules}) == len(rules)
    for session in json.loads(report.read_text())["sessions"]:
        for turn in session["turns"]:
            if turn["label"] != "root_cause":
                continue
            for metric in turn["metrics"]:
                if metric["outcome"] == "fail":
                    found = categorize(
                        metric["name"], turn["kind"], turn["name"], rules,
                        explanation=" ".join(metric["explanation"].split()),
                    )  # fmt: skip
                    assert found is not None, metric
