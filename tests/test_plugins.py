"""A team adds a metric without editing AEM: configured plug-in, real propagation."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from tests.conftest import SAMPLES, run_audit, session


def test_configured_plugin_metric_is_run_and_propagated(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "team_metrics.py").write_text(
        textwrap.dedent(
            """
            from aem.model import MetricResult, Outcome

            class NoAdd:
                name = "team.no_add"

                def evaluate(self, context):
                    for turn in context.session.turns:
                        if turn.name == "add":
                            yield MetricResult(name=self.name, turn_id=turn.turn_id,
                                               outcome=Outcome.FAIL, explanation="add is banned")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / "aem.toml"
    config.write_text('[metrics]\nplugins = ["team_metrics:NoAdd"]\n')
    code, report, _ = run_audit(str(SAMPLES / "weather_genai.otlp.jsonl"), "--config", str(config))
    weather = session(report, "weather-genai")
    labels = {t["name"]: t["label"] for t in weather["turns"]}
    assert labels["add"] == "root_cause" and labels["get_weather"] == "ok"
    assert weather["root_causes"][0]["metrics"] == ["team.no_add"]
    assert code == 1
    sys.modules.pop("team_metrics", None)


def test_broken_plugin_is_an_error_outcome_not_a_crash(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "broken_metrics.py").write_text(
        "class Boom:\n    name = 'team.boom'\n"
        "    def evaluate(self, context):\n        raise RuntimeError('bad')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    code, report, _ = run_audit(
        str(SAMPLES / "weather_genai.otlp.jsonl"),
        "--set",
        'metrics.plugins=["broken_metrics:Boom"]',
    )
    outcomes = {
        m["outcome"]
        for t in session(report, "weather-genai")["turns"]
        for m in t["metrics"]
        if m["name"] == "team.boom"
    }
    assert outcomes == {"error"} and code == 0
