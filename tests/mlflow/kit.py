"""A real MLflow tracking server, started and stopped around a block of code.

Why a kit of its own: the MLflow tests (one server per test run, through the
``mlflow_server`` fixture) and the pull-speed bench (``bench/backends/run.py``) must
start the server the same way — MLflow's own virtualenv (``make mlflow`` builds
``.venv-mlflow``: its pins are not AEM's), a free loopback port, its SQLite store and
artifacts under a directory of the caller's, MLflow's background job runner off — and stop
it by its process group id. Each caller works in an experiment of its own.

The server is skipped (``pytest.skip``), with the reason, only when MLflow is not
installed or does not start; the bench reports that skip and measures the other backends.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def running_mlflow(data: Path) -> Iterator[MlflowServer]:
    """An MLflow server with its store under ``data``; skips when there is none."""
    if not (MLFLOW_VENV / "bin" / "mlflow").exists():
        pytest.skip(f"MLflow is not installed at {MLFLOW_VENV} (`make mlflow` failed)")
    data.mkdir(parents=True, exist_ok=True)
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
