"""A real MLflow tracking server for the MLflow source, sink and guide tests.

One server per test run (started by :func:`tests.mlflow.kit.running_mlflow`, which the
pull-speed bench shares), its store in a temporary directory; each test works in an
experiment of its own. Skipped, with the reason, only when MLflow is not installed or
does not start. ``written``: a two-trace conversation (:mod:`tests.mlflow.conversation`)
sent, audited and written by the sink, once per test module that asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from aem.sinks.mlflow import MlflowSink
from aem.sinks.records import verdict_items
from tests.mlflow.auditing import audit_source
from tests.mlflow.conversation import write_conversation
from tests.mlflow.kit import MlflowServer, running_mlflow
from tests.mlflow.mlflow_client import assessments, search
from tests.mlflow.sending import send_to_mlflow


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    with running_mlflow(tmp_path_factory.mktemp("mlflow")) as server:
        yield server


@pytest.fixture(scope="module")
def written(mlflow_server: MlflowServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The conversation in MLflow, audited and written by the sink: the experiment id, the
    conversation id, the report and every assessment of its traces."""
    name, experiment_id = mlflow_server.experiment("levels")
    path = tmp_path_factory.mktemp("levels") / "conversation.otlp.jsonl"
    conversation = write_conversation(path, experiment_id)
    send_to_mlflow(mlflow_server.base, experiment_id, [path])
    report = audit_source(f"mlflow://{mlflow_server.hostport}/{name}")
    items = [i for s in report.sessions for i in verdict_items(s, completed_at=0.0)]
    sink = MlflowSink(mlflow_server.base)
    try:
        assert sink.deliver(items) == [i.key for i in items]
    finally:
        sink.close()
    traces = search(mlflow_server.base, experiment_id)
    found = [a for a in assessments(mlflow_server.base, traces) if a["source_id"] == "aem"]
    return experiment_id, conversation, report, found
