"""The plug-in example of docs/metrics.md works as documented: loaded by name from
configuration, its settings validated, its failures reported but never a root cause."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aem.config import ConfigError, load_config
from aem.evaluate import Evaluator
from aem.foundation.model import Label
from aem.testing import make_session, make_tool_call, make_turn

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "latency_metric"


@pytest.fixture(autouse=True)
def _example_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    sys.modules.pop("aem_latency", None)


def _slow_failing_session():  # type: ignore[no-untyped-def]
    query = make_tool_call("run_sql", {"q": "select 1"}, error="deadlock detected")
    answer = make_turn("answer", text="The database did not answer.")
    session = make_session(query, answer)
    for turn, seconds in zip(session.turns, (3.0, 0.5), strict=True):
        turn.start_unix_nano, turn.end_unix_nano = 0, int(seconds * 1e9)
    return session


def test_the_latency_plugin_reports_but_does_not_steal_the_root_cause(tmp_path: Path) -> None:
    config_file = tmp_path / "aem.toml"
    config_file.write_text(
        '[metrics]\nplugins = ["aem_latency:Latency"]\n[metrics.latency]\nmax_seconds = 1\n'
    )
    config = load_config(config_file)
    report = Evaluator(config).evaluate(_slow_failing_session())
    sql, answer = report.turns
    latency = next(m for m in sql.metrics if m.name == "latency")
    assert latency.outcome == "fail" and latency.threshold == 1.0
    assert sql.label is Label.ROOT_CAUSE
    assert [c.metrics for c in report.root_causes] == [["tool_execution"]]
    assert answer.label is not Label.ROOT_CAUSE


def test_the_example_settings_are_validated_at_load(tmp_path: Path) -> None:
    config_file = tmp_path / "aem.toml"
    config_file.write_text(
        '[metrics]\nplugins = ["aem_latency:Latency"]\n[metrics.latency]\nmax_secs = 1\n'
    )
    with pytest.raises(ConfigError, match="max_secs"):
        load_config(config_file)
