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
            from aem.metrics.base import BaseMetric
            from aem.foundation.model import MetricResult, Outcome

            class NoAdd(BaseMetric):
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
        "from aem.metrics.base import BaseMetric\n"
        "class Boom(BaseMetric):\n    name = 'team.boom'\n"
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


TEAM_METRIC = """
from typing import Literal

from aem.metrics.base import BaseMetric, MetricSettings, result
from aem.foundation.model import Outcome


class BannedSettings(MetricSettings):
    tool: str = "add"
    severity: Literal["fail", "skip"] = "fail"


class Banned(BaseMetric[BannedSettings]):
    name = "team.banned_tool"
    Settings = BannedSettings

    def evaluate(self, context):
        for turn in context.tool_turns:
            if turn.name == self.settings.tool:
                yield result(self.name, turn, Outcome(self.settings.severity), "banned")


class BannedNote(Banned):
    name = "team.banned_note"
    role = "observation"
"""


def _team(tmp_path: Path, monkeypatch, toml: str) -> tuple[int, dict, str]:
    (tmp_path / "team_banned.py").write_text(TEAM_METRIC)
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / "aem.toml"
    config.write_text(toml)
    try:
        return run_audit(str(SAMPLES / "weather_genai.otlp.jsonl"), "--config", str(config))
    finally:
        sys.modules.pop("team_banned", None)


def test_a_plugin_owns_its_settings_table(tmp_path: Path, monkeypatch) -> None:
    plugins = '[metrics]\nplugins = ["team_banned:Banned"]\n'
    code, report, _ = _team(
        tmp_path, monkeypatch, plugins + '[metrics."team.banned_tool"]\ntool = "get_weather"\n'
    )
    weather = session(report, "weather-genai")
    assert weather["root_causes"][0]["name"] == "get_weather" and code == 1
    code, _, err = _team(
        tmp_path, monkeypatch, plugins + '[metrics."team.banned_tool"]\ntol = "x"\n'
    )
    assert code == 2 and 'metrics."team.banned_tool".tol: unknown setting' in " ".join(err.split())
    code, _, err = _team(
        tmp_path, monkeypatch, plugins + '[metrics."team.banned_tool"]\nseverity = "loud"\n'
    )
    assert code == 2 and "severity" in err


def test_an_observation_is_reported_but_never_a_root_cause(tmp_path: Path, monkeypatch) -> None:
    code, report, _ = _team(
        tmp_path, monkeypatch, '[metrics]\nplugins = ["team_banned:BannedNote"]\n'
    )
    weather = session(report, "weather-genai")
    add = next(t for t in weather["turns"] if t["name"] == "add")
    assert any(m["name"] == "team.banned_note" and m["outcome"] == "fail" for m in add["metrics"])
    assert add["label"] == "ok" and weather["root_causes"] == [] and code == 0
