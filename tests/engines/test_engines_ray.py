"""``aem audit --engine ray``: the Ray Data engine's report equals the single-process one.

Why these inputs: the sample traces hold sessions keyed by every dialect, several
traces per session and a trace-id fallback; the tau-bench slice holds long sessions
with cases. Grouping by session key, span order inside a session and the ranking must
all come out as the streaming path has them, byte for byte. One local Ray (2 CPUs, no
dashboard) serves the whole module and is shut down after it: Ray starts in seconds
only when warm, so these tests stay few.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from aem.cases import load_cases
from scripts.golden_reports import INPUTS, REPO
from tests.engines_kit import assert_same, audit_json

if not os.environ.get("CI"):  # CI installs the extra (make setup): there it must run
    pytest.importorskip("ray")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_cli_ray_engine_report_equals_single_process(tmp_path: Path) -> None:
    single = audit_json("sample_traces", "--workers", "1")
    on_ray = audit_json(
        "sample_traces", "--engine", "ray", "--workers", "2", "--sessions-dir", str(tmp_path)
    )
    assert_same(single, on_ray, "Ray report on samples")
    assert list(tmp_path.glob("*.parquet"))


@pytest.mark.timeout(1800)  # two Ray stages and a cold actor pool on a loaded machine
def test_library_ray_engine_on_tau_bench_writes_sessions(tmp_path: Path) -> None:
    from aem.engines import ray as ray_engine

    paths, cases_file = INPUTS["tau_bench"]
    assert cases_file is not None
    with contextlib.chdir(REPO):  # the report names its sources as given, from the repo
        on_ray = ray_engine.audit(
            paths, cases=load_cases(Path(cases_file)), output=tmp_path / "sessions"
        )
    single = audit_json("tau_bench", "--workers", "1")
    assert_same(single, on_ray.model_dump_json(indent=2) + "\n", "Ray report on tau-bench")

    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "sessions")
    assert sorted(table.column("session_id").to_pylist()) == [s.session_id for s in on_ray.sessions]


def test_ray_engine_refuses_stdin() -> None:
    from typer.testing import CliRunner

    from aem.cli import app

    result = CliRunner().invoke(app, ["audit", "-", "--engine", "ray", "--no-progress"], input="")
    assert result.exit_code == 2 and "stdin" in result.stderr
