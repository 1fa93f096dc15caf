"""The audit of a span source, as ``aem audit --from URL`` runs it, for the MLflow tests.

Why here: the command line's ``--from`` lands with the backends branch; until then these
tests join the same parts the audit joins — :class:`SessionReading` over the source's
batches (``spans`` then ``drain``, as for files), the in-process engine, ``build_report``.
"""

from __future__ import annotations

import os

from aem.audit import AuditProgress, Outcomes
from aem.engines.seam import InProcessEngine
from aem.evaluate import Evaluator, build_report
from aem.foundation.model import AuditReport, InputIssue
from aem.metrics.registry import resolve
from aem.settings import AemConfig
from collectors.backends import SourceWindow, open_source
from collectors.reading import SessionReading


def audit_source(
    url: str, window: SourceWindow | None = None, config: AemConfig | None = None
) -> AuditReport:
    """Every session of the source at ``url``, evaluated and reported like files."""
    resolved = resolve(config or AemConfig())
    issues: list[InputIssue] = []
    outcomes = Outcomes(issues, AuditProgress())
    engine = InProcessEngine(Evaluator(resolved.config, None, list(resolved.metrics)), outcomes.add)
    reading = SessionReading(resolved.config.assembly, issues)
    for batch in open_source(url, os.environ).batches(window or SourceWindow(), issues):
        for sessions in reading.spans(batch):
            engine.submit(sessions, outcomes.position())
    engine.submit(reading.drain(), outcomes.position())
    report = build_report(outcomes.reports, issues, spans_read=reading.spans_read)
    report.peak_open_sessions = reading.peak_open
    return report
