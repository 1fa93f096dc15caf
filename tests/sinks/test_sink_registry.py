"""Sinks are plug-ins: one module plus one entry-point line, settings validated per sink.

The third-party sink here is registered the way a real package registers one — a
``*.dist-info/entry_points.txt`` on the path — and receives verdicts from a real
``python -m aem.serve`` process through the outbox, configured by its own generated flag.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from aem.serve.command import load_settings
from aem.serve.settings import ServeSettings
from aem.sinks.jsonl import JsonlSettings
from aem.sinks.otlp import OtlpSettings
from tests.conftest import SAMPLES
from tests.serve.conftest import post_otlp_json, stop_with_sigterm

PLUGIN = """
from pathlib import Path
from aem.sinks.base import SinkSettings


class TeeSettings(SinkSettings):
    target: Path
    tag: str = "tee"


class TeeSink:
    name = "tee"
    Settings = TeeSettings

    @classmethod
    def from_settings(cls, settings, services):
        return cls(settings)

    def __init__(self, settings):
        self._settings = settings

    def deliver(self, items):
        with self._settings.target.open("a") as out:
            for item in items:
                out.write(self._settings.tag + " " + item.key + "\\n")
        return [item.key for item in items]

    def close(self):
        pass
"""


def _install_plugin(root: Path) -> None:
    (root / "tee_sink.py").write_text(PLUGIN)
    info = root / "tee_sink-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tee-sink\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[aem.sinks]\ntee = tee_sink:TeeSink\n")


def test_sink_tables_are_validated_by_each_sinks_own_model(tmp_path: Path) -> None:
    path = tmp_path / "aem.toml"
    path.write_text(
        '[serve.sinks.jsonl]\npath = "v.jsonl"\n[serve.sinks.otlp]\nendpoint = "http://x:4317"\n'
    )
    settings = load_settings(path, ["serve.sinks.otlp.protocol=http/protobuf"])
    assert isinstance(settings.sinks["jsonl"], JsonlSettings)
    otlp = settings.sinks["otlp"]
    assert isinstance(otlp, OtlpSettings) and otlp.protocol == "http/protobuf"


@pytest.mark.parametrize(
    ("sinks", "named"),
    [
        ({"nosuch": {}}, "sinks.nosuch: unknown sink"),
        ({"jsonl": {"pth": "v.jsonl"}}, "pth"),
        ({"otlp": {"endpoint": "http://x", "protocol": "carrier-pigeon"}}, "protocol"),
    ],
)
def test_unknown_sinks_misspelt_keys_and_bad_choices_fail_at_load(sinks: dict, named: str) -> None:
    with pytest.raises(ValidationError, match=named):
        ServeSettings(sinks=sinks)


@pytest.mark.slow
def test_a_third_party_sink_receives_verdicts_from_a_real_server(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    _install_plugin(plugins)
    ports, received = tmp_path / "ports.json", tmp_path / "tee.txt"
    command = [
        sys.executable, "-m", "aem.serve",
        "--grpc-port", "-1", "--http-port", "0",
        "--ports-file", str(ports), "--spool-path", str(tmp_path / "spool.sqlite"),
        "--session-idle-seconds", "0.5",
        "--tee-target", str(received), "--tee-tag", "seen",
    ]  # fmt: skip
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")]),
    }
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (ports.exists() and ports.stat().st_size) and time.monotonic() < deadline:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            time.sleep(0.2)
        port = json.loads(ports.read_text())["http"]
        post_otlp_json(port, (SAMPLES / "parallel_tools.otlp.jsonl").read_text().splitlines())
        while time.monotonic() < deadline and not (received.exists() and received.read_text()):
            time.sleep(0.3)
        lines = received.read_text().splitlines()
        assert lines and all(line.startswith("seen trip-planner-7") for line in lines)
    finally:
        returncode = stop_with_sigterm(server)
    assert returncode == 0
