"""What a step span says wrongly is an input issue naming the span, never a verdict.

``fired = "false"`` is true to Python and used to block the conversation; a step the
pipeline lacks used to be able to block it too; ``Infinity`` and ``NaN`` used to reach
``--json`` as tokens JSON does not have. Each is reproduced with spans recorded by the
real OTel SDK, through ``aem audit --scorecard`` and ``aem scorecard``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.scorecards_kit import (
    SAMPLE_CONFIG,
    StepRun,
    audit_scorecard,
    cli,
    support_steps,
    write_run,
)


def strict_loads(text: str) -> Any:
    """JSON as the standard defines it: ``NaN`` / ``Infinity`` are an error, not a number."""

    def refuse(token: str) -> None:
        raise AssertionError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def audit(tmp_path: Path, run: Path) -> dict[str, Any]:
    code, out, err = audit_scorecard(tmp_path / "s.db", SAMPLE_CONFIG, run, json_=True)
    assert code == 0, err
    return dict(strict_loads(out))


def span_id_of(run: Path, step: str) -> str:
    """The id of the step's span, as written in the OTLP/JSON file."""
    for line in run.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    attrs = {a["key"]: a["value"] for a in span["attributes"]}
                    if attrs.get("aem.pipeline.step.name", {}).get("stringValue") == step:
                        return str(span["spanId"])
    raise AssertionError(f"no span for step {step!r}")


def scorecard_issues(report: dict[str, Any]) -> list[dict[str, Any]]:
    issues = report["issues"] + [i for s in report["sessions"] for i in s["issues"]]
    return [i for i in issues if i["kind"].startswith("scorecard_")]


def test_fired_as_the_string_false_is_an_input_issue_not_a_blocker(tmp_path: Path) -> None:
    steps = support_steps((8, 9), (13, 8))
    steps[3].blockers = {"abusive_language": "false"}  # type: ignore[dict-item]
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-str", steps)
    report = audit(tmp_path, run)
    total = report["scorecards"][0]["total"]
    assert total["state"] == "pending" and total["blockers"] == []  # before: blocked, 0
    assert total["undecided_blockers"] == ["greeting.abusive_language"]
    assert total["blocking_steps"] == ["greeting"]
    (issue,) = scorecard_issues(report)
    span = span_id_of(run, "greeting")
    assert issue["span_id"] == span and issue["source"] == str(run)
    assert f"step 'greeting' (span {span})" in issue["message"]
    assert "fired 'false' is not a boolean" in issue["message"]
    assert report["skipped"]["by_kind"]["scorecard_bad_step_span"] == 1


def test_a_score_of_the_wrong_type_names_the_span(tmp_path: Path) -> None:
    steps = support_steps((8, 9), (13, 8), resolution_as_events=False)
    steps[-1].scores = {"solved": ("13", 15), "clarity": (8, 10)}  # type: ignore[dict-item]
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-text", steps)
    report = audit(tmp_path, run)
    total = report["scorecards"][0]["total"]
    assert total["state"] == "pending" and total["blocking_steps"] == ["resolution"]
    (issue,) = scorecard_issues(report)
    assert issue["span_id"] == span_id_of(run, "resolution")
    assert "value '13' is not a finite number" in issue["message"]


def test_a_span_for_a_step_the_pipeline_lacks_is_reported_and_ignored(tmp_path: Path) -> None:
    stray = StepRun("sentiment", "llm_analysis", blockers={"angry": True})
    run = write_run(
        tmp_path / "run.otlp.jsonl", "conv-stray", [*support_steps((8, 9), (13, 8)), stray]
    )
    report = audit(tmp_path, run)
    total = report["scorecards"][0]["total"]
    # Before: the stray span's "blocker fired" blocked the conversation (0, not passed).
    assert (total["state"], total["total"], total["percent"]) == ("complete", 38, 84.4)
    assert total["ignored_steps"] == ["sentiment"]
    (issue,) = scorecard_issues(report)
    assert issue["kind"] == "scorecard_unknown_step"
    assert issue["span_id"] == span_id_of(run, "sentiment")
    assert "pipeline 'support-qa' has no such step" in issue["message"]


def test_json_never_carries_infinity_or_nan(tmp_path: Path) -> None:
    """A blocked total (a version) whose other step reported inf and NaN scores."""
    steps = support_steps((8, 9), (13, 8), abusive=True, resolution_as_events=False)
    steps[-1].scores = {"solved": (float("inf"), 15), "clarity": (float("nan"), 10)}
    run = write_run(tmp_path / "run.otlp.jsonl", "conv-nan", steps)
    assert "Infinity" in run.read_text()  # the exporter wrote them, as OTLP/JSON allows
    report = audit(tmp_path, run)
    assert report["scorecards"][0]["total"]["state"] == "blocked"
    messages = [i["message"] for i in scorecard_issues(report)]
    assert any("value inf is not a finite number" in m for m in messages)
    assert any("value nan is not a finite number" in m for m in messages)
    store = str(tmp_path / "s.db")
    code, out, err = cli("scorecard", "show", "--store", store, "--json")
    assert code == 0, err
    shown = strict_loads(out)[0]["latest"]["results"]["resolution"]["criteria"]
    assert {c["name"]: c["value"] for c in shown} == {"clarity": None, "solved": None}
    code, out, err = cli("scorecard", "versions", "conv-nan", "--store", store, "--json")
    assert code == 0 and strict_loads(out)[0]["state"] == "blocked"
