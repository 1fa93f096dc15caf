"""The groundedness gate in dataset tests: ``aem test create --check groundedness --gate
groundedness=0.85`` scores a run exactly as ``aem audit --gate`` does (groundedness for
happy / edge cases, refusal for oos ones), exits 1 below the gate, and the run record in
the store keeps each case's type, verdict and explanation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aem.cli import app
from tests.api.test_sample_traces_generator import HELPDESK_SESSIONS as HELPDESK_IDS
from tests.groundedness_kit import CASES, HELPDESK

pytestmark = pytest.mark.slow


def aem(store: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, [*args, "--store", str(store)])
    return result.exit_code, result.stdout + result.stderr


def helpdesk_cases(tmp_path: Path) -> Path:
    """The seven help-desk cases of the sample cases file (the others have no session in
    the help-desk traces, and a case without a session fails as unanswered)."""
    rows = [
        line
        for line in CASES.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["session_id"] in HELPDESK_IDS
    ]
    path = tmp_path / "helpdesk.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_dataset_test_gate_matches_the_audit_gate(tmp_path: Path) -> None:
    store = tmp_path / "aem.sqlite"
    cases = helpdesk_cases(tmp_path)
    create = ["test", "create", "--cases", str(cases), "--check", "groundedness"]
    source = ["--traces", str(HELPDESK)]
    code, out = aem(
        store, *create[:2], "strict", *create[2:], "--gate", "groundedness=0.85", *source
    )
    assert code == 0, out
    code, out = aem(store, "test", "run", "strict", "--json")
    run = json.loads(out)
    assert code == 1  # 3 of 7 < 0.85
    assert run["gates"] == [
        {
            "check": "groundedness",
            "minimum": 0.85,
            "pass_rate": 3 / 7,
            "ok": False,
            "status": "below",
            "judge_errors": 0,
            "reason": None,
        }
    ]
    rows = {e["case"]: e for e in run["evaluations"]}
    assert set(rows) == HELPDESK_IDS and {e["check"] for e in rows.values()} == {"groundedness"}
    assert {c: e["verdict"] for c, e in rows.items()} == {
        "rag-cited": "pass",
        "rag-invented": "fail",
        "rag-no-citation": "fail",
        "rag-dangling": "fail",
        "oos-honest": "pass",
        "oos-invented": "fail",
        "rag-russian": "pass",
    }
    assert rows["oos-invented"]["type"] == "oos"
    assert rows["oos-invented"]["explanation"].startswith("refusal: states '6-month'")
    assert rows["rag-dangling"]["explanation"].startswith("dangling citation [4]")
    # The run record: the stored run shows the same rows and the gate below its minimum.
    code, shown = aem(store, "test", "show", str(run["run"]))
    assert code == 1 and "gate groundedness ≥ 85%: 43% (3 of 7 passed) BELOW GATE" in shown
    code, out = aem(store, "test", "show", str(run["run"]), "--json")
    assert code == 1 and json.loads(out)["evaluations"] == run["evaluations"]
    code, out = aem(
        store, *create[:2], "lenient", *create[2:], "--gate", "groundedness=0.4", *source
    )
    assert code == 0, out
    code, out = aem(store, "test", "run", "lenient", "--json")
    assert code == 0 and json.loads(out)["gates"][0]["ok"] is True


def test_groundedness_is_a_check_with_no_threshold(tmp_path: Path) -> None:
    store = tmp_path / "aem.sqlite"
    code, out = aem(store, "threshold", "set", "groundedness", "5")
    assert code == 2 and "groundedness has no threshold" in out
    code, out = aem(store, "checks", "--json")
    assert code == 0, out
    card = next(c for c in json.loads(out) if c["check"] == "groundedness")
    assert card["threshold"] is None and "refusal" in card["evaluates"]
