"""The JSON report is a public interface: the keys in docs/semantics.md, a JSON Schema, taxonomy."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from aem.foundation.model import AuditReport
from tests.conftest import REPO, SAMPLES, run_audit, session

SCHEMA_FILE = REPO / "docs" / "report.schema.json"


def test_published_schema_is_the_models_schema() -> None:
    assert json.loads(SCHEMA_FILE.read_text()) == AuditReport.model_json_schema(), (
        "regenerate docs/report.schema.json: "
        "python -c 'import json; from aem.foundation.model import AuditReport; "
        "print(json.dumps(AuditReport.model_json_schema(), indent=2))'"
    )


def test_report_has_the_design_keys_and_validates(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    _, report, _ = run_audit(str(SAMPLES / "parallel_tools.otlp.jsonl"), "--out", str(out))
    assert json.loads(out.read_text()) == report
    jsonschema.validate(report, json.loads(SCHEMA_FILE.read_text()))
    assert report["version"] == "1.0"
    trip = session(report, "trip-planner-7")
    for turn in trip["turns"]:
        assert {"turn_id", "span_ids", "kind", "name", "label", "inherited_from", "metrics"} <= set(
            turn
        )
        for metric in turn["metrics"]:
            assert {"name", "outcome", "score", "threshold", "explanation"} <= set(metric)
    [cause] = trip["root_causes"]
    assert {"turn_id", "span_ids", "metrics", "category"} <= set(cause)
    [ranked] = report["ranking"]
    assert {"signature", "sessions", "share", "examples"} <= set(ranked)


def test_taxonomy_rules_categorise_root_causes(tmp_path: Path) -> None:
    config = tmp_path / "aem.toml"
    config.write_text(
        '[[taxonomy]]\ncategory = "flaky dependency"\nmetric = "tool_execution"\n\n'
        '[[taxonomy]]\ncategory = "other"\n'
    )
    _, report, _ = run_audit(str(SAMPLES), "--config", str(config))
    categories = {r["name"]: r["category"] for r in report["ranking"]}
    assert categories["get_hotels"] == categories["run_query"] == "flaky dependency"
    assert all(r["signature"].endswith("|" + r["category"]) for r in report["ranking"])
