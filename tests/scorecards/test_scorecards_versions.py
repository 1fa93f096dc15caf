"""Versions of a total: a rescore or a changed config makes version n+1 and keeps the old
ones with their config hash; the 0–100 figure is the one fixed at completion; the store
records its schema version per concern."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.scorecards_kit import (
    REPO,
    SAMPLE_CONFIG,
    SAMPLE_DIR,
    SAMPLE_PIPELINE,
    audit_totals,
    cli,
    show,
    support_steps,
    versions,
    write_run,
)


def test_a_rescore_creates_version_2_and_keeps_version_1(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    first = write_run(tmp_path / "run.otlp.jsonl", "conv-r", support_steps((8, 9), (13, 8)))
    assert audit_totals(store, SAMPLE_CONFIG, first)["conv-r"]["version"] == 1
    # Later, in a new trace of the same conversation, the resolution step is rescored.
    rescore = write_run(
        tmp_path / "rescore.otlp.jsonl",
        "conv-r",
        support_steps(None, (15, 10))[3:],
        seed="conv-r/rescore",
        minute=30,
    )
    again = audit_totals(store, SAMPLE_CONFIG, first, rescore)["conv-r"]
    assert again["version"] == 2 and again["new_version"]
    assert again["total"]["total"] == 42 and again["total"]["percent"] == 93.3
    v1, v2 = versions(store, "conv-r")
    assert (v1["version"], v1["total"], v1["percent"]) == (1, 38, 84.4)
    assert (v2["version"], v2["total"], v2["percent"]) == (2, 42, 93.3)
    assert v1["config_hash"] == v2["config_hash"]
    assert v1["results"]["resolution"]["span_id"] != v2["results"]["resolution"]["span_id"]
    assert show(store)["conv-r"]["latest"]["version"] == 2


def test_the_same_input_twice_makes_no_new_version(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    audit_totals(store, SAMPLE_CONFIG, SAMPLE_DIR)
    again = audit_totals(store, SAMPLE_CONFIG, SAMPLE_DIR)
    assert again["call-1001"]["version"] == 1 and not again["call-1001"]["new_version"]
    assert [v["version"] for v in versions(store, "call-1001")] == [1]


def test_the_0_100_figure_is_fixed_at_completion(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    audit_totals(store, SAMPLE_CONFIG, SAMPLE_DIR / "call-1001.otlp.jsonl")
    # The config changes (greeting now counts double); nothing is recomputed yet, so the
    # list still shows the figure fixed when the total completed.
    doubled = tmp_path / "doubled.toml"
    doubled.write_text(
        SAMPLE_CONFIG.read_text()
        .replace('step = "greeting"\nweight = 1', 'step = "greeting"\nweight = 2')
        .replace('definition = "support-qa.pipeline.yaml"', f'definition = "{SAMPLE_PIPELINE}"')
    )
    assert show(store)["call-1001"]["latest"]["percent"] == 84.4
    code, out, err = cli("scorecard", "recompute", str(doubled), "--store", str(store))
    assert code == 0, err
    v1, v2 = versions(store, "call-1001")
    assert (v1["total"], v1["max"], v1["percent"]) == (38, 45, 84.4)
    assert (v2["total"], v2["max"], v2["percent"]) == (55, 65, 84.6)
    assert v1["config_hash"] != v2["config_hash"]
    assert show(store)["call-1001"]["latest"]["percent"] == 84.6
    code, out, _ = cli("scorecard", "versions", "call-1001", "--store", str(store))
    assert code == 0 and v1["config_hash"] in out and v2["config_hash"] in out


def test_the_store_records_its_schema_version_and_refuses_a_newer_one(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    audit_totals(store, SAMPLE_CONFIG, SAMPLE_DIR)
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT concern, version FROM store_schema").fetchall() == [
            ("scorecards", 1)
        ]
        conn.execute("UPDATE store_schema SET version = 99 WHERE concern = 'scorecards'")
    code, _, err = cli("scorecard", "show", "--store", str(store))
    assert code == 2 and "scorecards schema is version 99" in " ".join(err.split())


def test_the_store_path_comes_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AEM_STORE", str(tmp_path / "env.sqlite"))
    code, _out, err = cli(
        "audit", str(SAMPLE_DIR), "--scorecard", str(SAMPLE_CONFIG), "--json", "--no-progress"
    )
    assert code == 0, err
    assert show(tmp_path / "env.sqlite")["call-1001"]["latest"]["percent"] == 84.4


def test_the_generator_reproduces_the_committed_samples(tmp_path: Path) -> None:
    script = REPO / "scripts" / "generate_scorecard_traces.py"
    run = subprocess.run(
        [sys.executable, str(script), "--out", str(tmp_path)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    generated = sorted(p.name for p in tmp_path.glob("*.otlp.jsonl"))
    assert generated == sorted(p.name for p in SAMPLE_DIR.glob("*.otlp.jsonl"))
    for name in generated:
        assert (tmp_path / name).read_bytes() == (SAMPLE_DIR / name).read_bytes(), name
