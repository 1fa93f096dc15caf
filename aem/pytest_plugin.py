"""A pytest plug-in that gates an agent on its traces: one failing test per root cause.

Why in pytest: teams that already gate releases on ``pytest`` get AEM's verdicts as
ordinary test results (``-k``, ``--junitxml``, CI annotations) without a second tool.

    pytest --aem-traces=traces/ --aem-cases=cases.jsonl [--aem-config=aem.toml]

adds, to whatever else is collected, one test per root cause (failing, named
``aem::<session>::<turn> <metric>``, its message the metric's explanation) and one
passing test per session without one. The ``aem_report`` fixture gives a test the
``AuditReport`` itself, for assertions of its own. Registered under ``pytest11`` so it
loads with ``aem`` installed; nothing is read unless ``--aem-traces`` is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from aem.foundation.model import AuditReport, RootCause, SessionReport

_REPORT_KEY = pytest.StashKey["AuditReport"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("aem", "AEM: gate an agent on its OpenTelemetry traces")
    group.addoption(
        "--aem-traces",
        action="append",
        default=[],
        metavar="PATH",
        help="trace file or directory to audit; one test per root cause (repeatable)",
    )
    group.addoption("--aem-cases", metavar="FILE", help="cases file (JSONL or YAML)")
    group.addoption("--aem-config", metavar="FILE", help="AEM configuration (TOML)")


def _audit(config: pytest.Config) -> AuditReport:
    """The audit of ``--aem-traces``, run once per pytest session."""
    if _REPORT_KEY in config.stash:
        return config.stash[_REPORT_KEY]
    from aem import api
    from aem import config as loader

    cases_path = config.getoption("aem_cases")
    config_path = config.getoption("aem_config")
    report = api.audit_paths(
        config.getoption("aem_traces"),
        cases=api.load_cases(cases_path) if cases_path else None,
        config=loader.load_config(Path(config_path)) if config_path else None,
    )
    config.stash[_REPORT_KEY] = report
    return report


class RootCauseFailure(Exception):
    """A root cause found in the traces (the test's failure)."""


class AemItem(pytest.Item):
    """One session's verdict (no root cause) or one root cause of it."""

    def __init__(
        self, *, verdict: SessionReport, cause: RootCause | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.aem_session = verdict
        self.aem_cause = cause

    def runtest(self) -> None:
        if self.aem_cause is not None:
            raise RootCauseFailure(_explain(self.aem_session, self.aem_cause))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RootCauseFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "aem", None, self.name


def _explain(session: SessionReport, cause: RootCause) -> str:
    """Why the turn is a root cause: each failed metric's explanation."""
    turn = next(t for t in session.turns if t.turn_id == cause.turn_id)
    lines = [
        f"root cause in session {session.session_id!r}: turn {cause.turn_id} "
        f"({cause.kind.value} {cause.name!r})"
        + (f", category {cause.category!r}" if cause.category else "")
    ]
    for metric in turn.metrics:
        if metric.name in cause.metrics:
            lines.append(f"  {metric.name}: {metric.explanation}")
    if cause.span_ids:
        lines.append(f"  spans: {', '.join(cause.span_ids)}")
    return "\n".join(lines)


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("aem_traces"):
        return
    report = _audit(config)
    for verdict in report.sessions:
        if not verdict.root_causes:
            items.append(
                AemItem.from_parent(
                    session,
                    name=f"aem::{verdict.session_id}",
                    nodeid=f"aem::{verdict.session_id}",
                    verdict=verdict,
                )
            )
        for cause in verdict.root_causes:
            name = f"aem::{verdict.session_id}::{cause.turn_id} {cause.metrics[0]}"
            items.append(
                AemItem.from_parent(session, name=name, nodeid=name, verdict=verdict, cause=cause)
            )


@pytest.fixture(scope="session")
def aem_report(pytestconfig: pytest.Config) -> AuditReport:
    """The ``AuditReport`` of ``--aem-traces`` (skips the test when none was given)."""
    if not pytestconfig.getoption("aem_traces"):
        pytest.skip("no --aem-traces given")
    return _audit(pytestconfig)
