"""``aem test``, ``aem threshold`` and ``aem checks`` end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aem.cli import app
from aem.datatests import api

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SHOP_CASES = REPO / "examples" / "shop" / "cases.yaml"
AGENT = "examples.shop.agent:answer"
ALL = [
    "check.relevance",
    "check.faithfulness",
    "check.task_completion",
    "check.json_schema",
    "check.tool_calls",
]


def aem(*args: str, store: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [*args, "--store", str(store)])
    return result.exit_code, result.stdout, result.stderr


def create_shop(store: Path, name: str = "shop", *extra: str) -> None:
    checks = [a for c in ALL for a in ("--check", c)]
    code, _, err = aem(
        "test",
        "create",
        name,
        "--cases",
        str(SHOP_CASES),
        *checks,
        "--agent",
        AGENT,
        *extra,
        store=store,
    )
    assert code == 0, err


def test_agent_runs_twice_and_compare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "aem.sqlite"
    monkeypatch.chdir(REPO)
    create_shop(store, "shop", "--gate", "all=0.8")
    code, out, _ = aem("test", "run", "shop", "--json", store=store)
    first = json.loads(out)
    assert code == 0 and first["fully_evaluated"] and first["pass_rate"] >= 0.8
    by_case = {(e["case"], e["check"]): e for e in first["evaluations"]}
    assert by_case[("classify-ticket", "check.json_schema")]["verdict"] == "pass"
    assert by_case[("delivery-kazan", "check.tool_calls")]["verdict"] == "pass"
    assert by_case[("order-return", "check.tool_calls")]["score"] == 50.0
    monkeypatch.setenv("SHOP_AGENT_VARIANT", "v2")  # a "prompt change" breaks two answers
    code, out, _ = aem("test", "run", "shop", "--json", store=store)
    second = json.loads(out)
    assert code == 1 and second["pass_rate"] < first["pass_rate"]  # below the gate: exit 1
    code, out, _ = aem("test", "compare", str(first["run"]), str(second["run"]), store=store)
    assert code == 1 and "delivery-kazan" in out and "classify-ticket" in out
    code, out, _ = aem("test", "show", str(first["run"]), store=store)
    assert code == 0 and "pass rate 91%" in out and "gate all" in out


def test_2001_evaluations_are_refused_before_anything_runs(tmp_path: Path) -> None:
    store = tmp_path / "aem.sqlite"
    cases = tmp_path / "cases.jsonl"
    # 666 × 3 + 2 (no reference) + 1 (no question): fields a check lacks count nowhere
    rows = [{"session_id": f"c{i}", "question": "q", "reference_answer": "r"} for i in range(666)]
    rows.append({"session_id": "only-question", "question": "q"})
    rows.append(
        {"session_id": "only-reference", "reference_answer": "r", "json_schema": {"type": "object"}}
    )
    cases.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    checks = [a for c in ALL[:3] for a in ("--check", c)]
    assert (
        aem(
            "test",
            "create",
            "big",
            "--cases",
            str(cases),
            *checks,
            "--agent",
            "no_such_module:never_called",
            store=store,
        )[0]
        == 0
    )
    code, _, err = aem("test", "run", "big", store=store)
    assert code == 2 and "2001 evaluations" in err and "2,000" in err and "split" in err
    assert api.list_runs(api.open_store(store), "big") == []


def test_project_threshold_changes_do_not_reach_existing_tests(tmp_path: Path) -> None:
    store = tmp_path / "aem.sqlite"
    create_shop(store, "before")
    assert aem("threshold", "set", "check.relevance", "9", store=store)[0] == 0
    assert aem("threshold", "set", "check.tool_calls", "50%", store=store)[0] == 0
    create_shop(store, "after")
    opened = api.open_store(store)
    before, after = api.load_test(opened, "before"), api.load_test(opened, "after")
    assert before.check("check.relevance").threshold == 7.0
    assert before.check("check.tool_calls").threshold == 100.0
    assert after.check("check.relevance").threshold == 9.0
    assert after.check("check.tool_calls").threshold == 50.0
    assert aem("checks", store=store)[0] == 0
    _, out, _ = aem("checks", "--json", store=store)
    cards = {c["check"]: c for c in json.loads(out)}
    assert cards["check.relevance"]["overridden"] and cards["check.relevance"]["threshold"] == 9
    assert cards["check.json_schema"]["threshold"] is None
    assert cards["check.task_completion"]["recommended_judges"][0]["judge"] == "embedded"
    assert aem("threshold", "reset", "check.relevance", store=store)[0] == 0
    assert aem("threshold", "set", "check.relevance", "11", store=store)[0] == 2
    assert aem("threshold", "set", "check.json_schema", "5", store=store)[0] == 2


def test_judge_is_fixed_after_the_first_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "aem.sqlite"
    monkeypatch.chdir(REPO)
    create_shop(store)
    assert aem("test", "set-judge", "shop", "check.relevance", "embedded", store=store)[0] == 0
    code, out, _ = aem("test", "run", "shop", "--json", store=store)
    run_id = json.loads(out)["run"]
    code, _, err = aem("test", "set-judge", "shop", "check.relevance", "embedded", store=store)
    assert code == 2 and "fixed" in err and "test copy" in err and "rescore" in err
    code, out, _ = aem("test", "rescore", str(run_id), "--judge", "embedded", "--json", store=store)
    extra = json.loads(out)
    assert extra["evaluation"] == 1 and extra["judge"] == "embedded"
    original = api.load_run(api.open_store(store), run_id)
    assert original.pass_no == 0 and len(original.evaluations) == 25  # untouched, beside it
    assert aem("test", "copy", "shop", "shop2", "--judge", "embedded", store=store)[0] == 0
    code, out, _ = aem("test", "list", "--json", store=store)
    assert [t["test"] for t in json.loads(out)] == ["shop", "shop2"]


def test_unknown_names_are_clear_errors(tmp_path: Path) -> None:
    store = tmp_path / "aem.sqlite"
    code, _, err = aem(
        "test", "create", "x", "--cases", str(SHOP_CASES), "--check", "check.relevanse", store=store
    )
    assert code == 2 and "did you mean 'check.relevance'" in err
    code, _, err = aem(
        "test",
        "create",
        "x",
        "--cases",
        str(SHOP_CASES),
        "--check",
        "check.relevance",
        "--judge",
        "gpt-judge",
        store=store,
    )
    assert code == 2 and "no judge named 'gpt-judge'" in err
    assert aem("test", "run", "nope", store=store)[0] == 2


def test_run_from_trace_files_joins_sessions_to_cases(tmp_path: Path) -> None:
    store = tmp_path / "aem.sqlite"
    cases = tmp_path / "cases.jsonl"
    rows = [
        {"session_id": "weather-genai", "question": "q", "expected_tool_calls": [{"name": "add"}]},
        {"session_id": "never-recorded", "question": "q", "expected_tool_calls": [{"name": "x"}]},
    ]
    cases.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    traces = str(REPO / "sample_traces" / "weather_genai.otlp.jsonl")
    assert (
        aem(
            "test",
            "create",
            "files",
            "--cases",
            str(cases),
            "--check",
            "check.tool_calls",
            "--traces",
            traces,
            store=store,
        )[0]
        == 0
    )
    _, out, _ = aem("test", "run", "files", "--json", store=store)
    run = json.loads(out)
    assert run["no_answer"] == ["never-recorded"]
    verdicts = {e["case"]: (e["verdict"], e["explanation"]) for e in run["evaluations"]}
    assert verdicts["weather-genai"][0] == "pass"
    assert verdicts["never-recorded"] == ("fail", "no answer: no session joined this case")


def test_run_from_trace_files_honours_the_assembly_settings(tmp_path: Path) -> None:
    """Trace files become sessions as ``aem audit`` makes them, ``[assembly]`` included:
    a session over ``max_session_spans`` is evaluated on its first spans, so here the
    final answer (a later span) is not there to be checked."""
    store = tmp_path / "aem.sqlite"
    cases = tmp_path / "cases.jsonl"
    row = {"session_id": "weather-genai", "question": "q", "json_schema": {"type": "object"}}
    cases.write_text(json.dumps(row), encoding="utf-8")
    one_span = tmp_path / "aem.toml"
    one_span.write_text("[assembly]\nmax_session_spans = 1\n", encoding="utf-8")
    traces = str(REPO / "sample_traces" / "weather_genai.otlp.jsonl")
    create = ["test", "create", "files", "--cases", str(cases), "--check", "check.json_schema"]
    assert aem(*create, "--traces", traces, store=store)[0] == 0

    def explanation(*config: str) -> str:
        _, out, _ = aem("test", "run", "files", "--json", *config, store=store)
        [evaluation] = json.loads(out)["evaluations"]
        return str(evaluation["explanation"])

    assert explanation().startswith("not only JSON")  # the whole session: its answer is text
    assert explanation("--config", str(one_span)) == (
        "no answer: the session has no final answer to the user"
    )
