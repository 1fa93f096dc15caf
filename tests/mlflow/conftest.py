"""A real MLflow tracking server for the MLflow source, sink and guide tests.

One server per test run (started by :func:`tests.mlflow.kit.running_mlflow`, which the
pull-speed bench shares), its store in a temporary directory; each test works in an
experiment of its own. Skipped, with the reason, only when MLflow is not installed or
does not start.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.mlflow.kit import MlflowServer, running_mlflow


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    with running_mlflow(tmp_path_factory.mktemp("mlflow")) as server:
        yield server
