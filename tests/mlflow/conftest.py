"""A real MLflow tracking server for the MLflow source, sink and guide tests.

MLflow lives in a virtualenv of its own (``make mlflow`` builds ``.venv-mlflow``: its
pins are not AEM's). One server per test run, on a free loopback port, with its SQLite
store and artifacts in a temporary directory and MLflow's background job runner off; it
is stopped by its process group id. Each test works in an experiment of its own.

Skipped, with the reason, only when MLflow is not installed or does not start.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.serve.conftest import ROOT, free_port, stop_process_group, wait_http

MLFLOW_VENV = Path(os.environ.get("AEM_MLFLOW_VENV", ROOT / ".venv-mlflow"))
MLFLOW_START_SECONDS = 240  # the first start creates and migrates the SQLite schema


@dataclass(frozen=True)
class MlflowServer:
    """A running ``mlflow server``: its base URL and ``host:port`` for ``mlflow://`` URLs."""

    base: str
    hostport: str
    log: Path

    def experiment(self, prefix: str = "aem") -> tuple[str, str]:
        """A new experiment: ``(name, id)``."""
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        answer = httpx.post(
            f"{self.base}/api/2.0/mlflow/experiments/create", json={"name": name}, timeout=30
        )
        answer.raise_for_status()
        return name, str(answer.json()["experiment_id"])


def start_command(data: Path, port: int) -> list[str]:
    """The ``mlflow server`` line of docs/integrations/mlflow.md, for this venv and port."""
    return [
        str(MLFLOW_VENV / "bin" / "mlflow"),
        "server",
        "--backend-store-uri",
        f"sqlite:///{data / 'mlflow.db'}",
        "--default-artifact-root",
        str(data / "artifacts"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
    ]


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    if not (MLFLOW_VENV / "bin" / "mlflow").exists():
        pytest.skip(f"MLflow is not installed at {MLFLOW_VENV} (`make mlflow` failed)")
    data = tmp_path_factory.mktemp("mlflow")
    port = free_port()
    log = data / "mlflow.log"
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    env.pop("PYTHONPATH", None)  # the server runs MLflow's venv, not AEM's tree
    with log.open("wb") as out:
        proc = subprocess.Popen(
            start_command(data, port),
            cwd=data,
            env=env,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        if not wait_http(f"{base}/health", proc, MLFLOW_START_SECONDS):
            text = log.read_text(errors="replace")[-1500:]
            pytest.skip(f"MLflow did not start on {base}:\n{text}")
        yield MlflowServer(base, f"127.0.0.1:{port}", log)
    finally:
        stop_process_group(proc)
