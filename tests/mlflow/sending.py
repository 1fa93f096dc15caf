"""Spans into a real MLflow server the way an instrumented agent sends them.

``tests/serve/sender.py`` re-exports sample spans through the OTel SDK's own
``OTLPSpanExporter`` (HTTP/protobuf) in a process of its own; MLflow 3 takes OTLP at
``/v1/traces`` and files each trace under the experiment named by the
``x-mlflow-experiment-id`` header, which the exporter reads from the standard
``OTEL_EXPORTER_OTLP_TRACES_HEADERS`` variable.

MLflow's trace ids are global (``tr-`` + the OTel trace id), not per experiment: the same
sample sent to two experiments of one server lands in the first only, so each test sends
samples no other test of the run sends.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.serve.conftest import send


def send_to_mlflow(base: str, experiment_id: str, files: list[Path]) -> int:
    """Export ``files``' spans to the experiment; the number of spans MLflow accepted."""
    headers = f"x-mlflow-experiment-id={experiment_id}"
    previous = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
    os.environ["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] = headers
    try:
        result = send("http", f"{base}/v1/traces", files)
    finally:
        if previous is None:
            os.environ.pop("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
        else:
            os.environ["OTEL_EXPORTER_OTLP_TRACES_HEADERS"] = previous
    assert result["returncode"] == 0 and result["failed"] == 0, result
    return int(result["exported"])
