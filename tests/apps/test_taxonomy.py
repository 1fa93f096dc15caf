"""The failure taxonomy: rules name categories deterministically (same failures, same
categories, whatever the run or the input order); the samples ship a taxonomy that the
terminal view and the JSON report show; ``aem taxonomy suggest`` writes a rules file."""

from __future__ import annotations

import json
import re
from collections import Counter
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


SUGGEST_DISTANCES = [0.35, 0.8, 2.0]  # the default; wide (one rule took all); one cluster


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The JSON report of the bundled samples: 7 root causes of 6 metric x turn kinds."""
    report = tmp_path_factory.mktemp("suggest") / "report.json"
    code, _, _ = run_audit(
        str(SAMPLES), "--cases", str(SAMPLES / "cases.jsonl"), "--out", str(report)
    )
    assert code == 1
    return report


def _suggest(report: Path, rules_path: Path, distance: float) -> tuple[dict, str]:
    """``aem taxonomy suggest --json -o RULES``: (the JSON, what it printed on stderr)."""
    args = ["taxonomy", "suggest", str(report), "--json", "--distance", str(distance)]
    done = CliRunner().invoke(app, [*args, "-o", str(rules_path)], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def _root_causes(report: Path) -> list[tuple[str, str, str, str]]:
    """Each root cause of the report as the audit categorises it: first failed metric,
    turn kind, name, that metric's explanation."""
    found = []
    for session in json.loads(report.read_text())["sessions"]:
        turns = {t["turn_id"]: t for t in session["turns"]}
        for cause in session["root_causes"]:
            metric = cause["metrics"][0]
            result = next(m for m in turns[cause["turn_id"]]["metrics"] if m["name"] == metric)
            found.append((metric, cause["kind"], cause["name"], result["explanation"]))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("distance", [0.35, 2.0])
def test_every_suggested_rule_decides_root_causes_of_its_input_as_it_says(
    tmp_path: Path, sample_report: Path, distance: float
) -> None:
    rules_path = tmp_path / "rules.toml"
    suggestion, _ = _suggest(sample_report, rules_path, distance)
    code, audited, _ = run_audit(
        str(SAMPLES), "--cases", str(SAMPLES / "cases.jsonl"), "--taxonomy", str(rules_path)
    )
    assert code == 1
    decided = Counter(c for c in _categories(audited).values())
    claimed = {r["rule"]["category"]: r["decides"] for r in suggestion["rules"]}
    assert dict(decided) == claimed  # each rule fires, on as many root causes as it says
    assert all(count >= 1 for count in claimed.values())
    assert suggestion["root_causes"] == suggestion["categorised"] == 7
    assert suggestion["coverage"] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("distance", SUGGEST_DISTANCES)
def test_no_suggested_rule_is_a_catch_all(
    tmp_path: Path, sample_report: Path, distance: float
) -> None:
    """A catch-all: a rule with no condition, or one that alone matches every root cause
    of an input with root causes of more than one kind (failed metric x turn kind)."""
    causes = _root_causes(sample_report)
    assert len({(metric, kind) for metric, kind, _, _ in causes}) > 1
    _suggest(sample_report, tmp_path / "rules.toml", distance)
    rules = load_taxonomy(tmp_path / "rules.toml")
    assert rules
    for rule in rules:
        assert rule.metric or rule.kind or rule.name or rule.explanation, rule
        matched = [
            categorize(metric, kind, name, [rule], explanation=explanation)
            for metric, kind, name, explanation in causes
        ]
        assert None in matched, f"{rule.category} matches every root cause"


@pytest.mark.slow
def test_suggest_prints_and_writes_the_coverage_of_each_rule_and_of_the_set(
    tmp_path: Path, sample_report: Path
) -> None:
    rules_path = tmp_path / "rules.toml"
    suggestion, stderr = _suggest(sample_report, rules_path, 0.35)
    count = len(suggestion["rules"])
    assert f"{count} rule(s) categorise 7 of 7 root causes (100%)" in stderr
    text = rules_path.read_text()
    assert f"these {count} rule(s) categorise 7 of 7 root causes (100%)." in text
    for item in suggestion["rules"]:
        share = f"{item['decides']} of 7 root causes ({item['decides'] / 7:.0%})"
        assert f"# decides {share}, e.g.: " in text
        assert re.search(
            rf"│ {re.escape(item['rule']['category'])} +│ +{item['decides']} │", stderr
        )
    assert f"wrote {count} rule(s) to {rules_path}" in " ".join(stderr.split())


@pytest.mark.slow
def test_suggest_writes_the_same_editable_rules_file_for_the_same_report(
    tmp_path: Path, sample_report: Path
) -> None:
    rules_path = tmp_path / "rules.toml"
    _suggest(sample_report, rules_path, 0.35)
    text = rules_path.read_text()
    assert text.startswith("# A starting failure taxonomy") and "[[taxonomy]]" in text
    again = CliRunner().invoke(app, ["taxonomy", "suggest", str(sample_report)])
    assert again.stdout == text  # deterministic, and stdout holds only the rules file
    rules = load_taxonomy(rules_path)  # a valid rules file aem audit --taxonomy accepts
    assert len({r.category for r in rules}) == len(rules)
