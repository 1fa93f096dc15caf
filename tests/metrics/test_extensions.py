"""Every extension kind from one package outside ``aem/``, found through its entry points.

The package is installed the way pip installs one — its modules plus a
``*.dist-info/entry_points.txt`` on the path — and the commands run in fresh processes,
so each kind is found by ``importlib.metadata`` exactly as a team's own package would be:
a dialect and a metric with settings used by ``aem audit``, a sink fed by ``aem serve``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import post_otlp_json, stop_with_sigterm
from tests.team_dialect_kit import TEAM_DIALECT

pytestmark = pytest.mark.slow

TEAM_PACKAGE = """
from pathlib import Path

from aem.metrics.base import BaseMetric, MetricSettings, result
from aem.foundation.model import Outcome, SpanRecord
from aem.sinks.base import SinkSettings


class BannedSettings(MetricSettings):
    tool: str = "nothing-is-banned"


class BannedTool(BaseMetric[BannedSettings]):
    name = "team.banned_tool"
    Settings = BannedSettings

    def evaluate(self, context):
        for turn in context.tool_turns:
            if turn.name == self.settings.tool:
                yield result(self.name, turn, Outcome.FAIL, f"{turn.name} is banned")


class TeeSettings(SinkSettings):
    target: Path


class TeeSink:
    name = "tee"
    Settings = TeeSettings

    @classmethod
    def from_settings(cls, settings, services):
        return cls(settings.target)

    def __init__(self, target):
        self.target = target

    def deliver(self, items):
        with self.target.open("a") as out:
            for item in items:
                out.write(item.key + "\\n")
        return [item.key for item in items]

    def close(self):
        pass
"""

ENTRY_POINTS = """
[aem.dialects]
team = teamext:TeamDialect

[aem.metrics]
team.banned_tool = teamext:BannedTool

[aem.sinks]
tee = teamext:TeeSink
"""


def _install(root: Path) -> Path:
    """``teamext`` as pip would leave it in site-packages: the module and its dist-info."""
    root.mkdir()
    (root / "teamext.py").write_text(TEAM_DIALECT + textwrap.dedent(TEAM_PACKAGE))
    info = root / "teamext-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: teamext\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return root


def _env(plugins: Path) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(plugins), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": path}


def _attributes(values: dict[str, str]) -> list[dict[str, Any]]:
    return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]


def _team_trace() -> str:
    """One OTLP/JSON request: two tool spans of the team's tracer, one conversation."""
    start = 1_776_852_000 * 10**9
    spans = [
        {
            "traceId": "7" * 32,
            "spanId": span_id * 16,
            "name": tool,
            "kind": 1,
            "startTimeUnixNano": str(start + i * 10**9),
            "endTimeUnixNano": str(start + i * 10**9 + 10**8),
            "attributes": _attributes(
                {"team.step": "tool", "team.tool": tool, "team.conversation": "team-7",
                 "team.result": "ok"}
            ),
        }
        for i, (span_id, tool) in enumerate([("a", "lookup"), ("b", "wire_money")])
    ]  # fmt: skip
    resource = {"attributes": _attributes({"service.name": "team-bot"})}
    request = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": spans}]}]}
    return json.dumps(request)


@pytest.fixture
def plugins(tmp_path: Path) -> Path:
    return _install(tmp_path / "site")


def test_a_dialect_and_a_metric_with_settings_from_a_package_are_used_by_aem_audit(
    tmp_path: Path, plugins: Path
) -> None:
    trace = tmp_path / "team.otlp.jsonl"
    trace.write_text(_team_trace() + "\n")
    config = tmp_path / "aem.toml"
    config.write_text('[metrics."team.banned_tool"]\ntool = "wire_money"\n')
    run = subprocess.run(
        [sys.executable, "-m", "aem.cli", "audit", str(trace), "--config", str(config), "--json"],
        env=_env(plugins), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr
    (session,) = json.loads(run.stdout)["sessions"]
    assert session["session_key"] == "team.conversation" and session["session_id"] == "team-7"
    labels = {t["name"]: t["label"] for t in session["turns"]}
    assert labels == {"lookup": "ok", "wire_money": "root_cause"}
    assert session["root_causes"][0]["metrics"] == ["team.banned_tool"]


def test_a_sink_from_a_package_receives_the_verdicts_of_aem_serve(
    tmp_path: Path, plugins: Path
) -> None:
    ports, received = tmp_path / "ports.json", tmp_path / "tee.txt"
    server = subprocess.Popen(
        [sys.executable, "-m", "aem.serve", "--grpc-port", "-1", "--http-port", "0",
         "--ports-file", str(ports), "--spool-path", str(tmp_path / "spool.sqlite"),
         "--session-idle-seconds", "0.5", "--tee-target", str(received)],
        env=_env(plugins), stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (ports.exists() and ports.stat().st_size) and time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            time.sleep(0.2)
        post_otlp_json(json.loads(ports.read_text())["http"], [_team_trace()])
        keys: set[tuple[str, ...]] = set()
        while time.monotonic() < deadline and ("team-7", "t2", "tool_execution") not in keys:
            time.sleep(0.3)
            if received.exists():
                keys = {tuple(line.split("\x1f")) for line in received.read_text().splitlines()}
        # One item per result, for both turns the team's dialect made of its spans.
        assert {key[:2] for key in keys} == {("team-7", "t1"), ("team-7", "t2")}
        assert ("team-7", "t2", "tool_execution") in keys
    finally:
        returncode = stop_with_sigterm(server)
    assert returncode == 0
