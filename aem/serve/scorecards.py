"""Live scorecard totals in ``aem serve``: recomputed as each step span arrives.

Why beside the session pipeline and not inside it: a session is evaluated once, when it
is complete; a total must move while the run is still going (``pending`` naming the
missing steps, ``blocked`` the moment a blocker fires even if another step still runs).
So the assembler hands every batch to :meth:`ScorecardTracker.observe`, and one thread
here keeps each conversation's step results in the store and recomputes its total.

A total that completes or is blocked becomes a version (``aem.scorecards.versions``) and
goes out like any verdict: two outbox rows, a ``gen_ai.evaluation.result`` event and an
evaluation span, both on the run's root span. The rows are written to the spool's outbox
table and the version is marked emitted afterwards; a crash in between re-enqueues the
version at the next start, and the outbox keys make that a no-op if it already went.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from aem.foundation.model import SpanRecord
from aem.scorecards.contract import TOTAL_EVALUATION_NAME
from aem.scorecards.extract import is_step_span, step_result
from aem.scorecards.scorecard import Scorecard, load_scorecard
from aem.scorecards.totals import compute_total
from aem.scorecards.versions import ScorecardStore, StoredTotal
from aem.serve import outbox
from aem.serve.outbox import Outbox
from aem.serve.pipeline import Pipeline
from aem.serve.settings import ServeSettings
from aem.sinks.records import TURN_KEY_SUFFIX, OutboxItem, item_key
from aem.store import Store
from collectors.assembler import session_key_of

log = logging.getLogger("aem.serve.scorecards")

QUEUE_SPANS = 10_000


def conversation_of(span: SpanRecord) -> str:
    """The conversation a step span belongs to: AEM's session key, else its trace id."""
    key = session_key_of(span)
    return key[2] if key is not None else span.trace_id


def _label(v: StoredTotal) -> str:
    if v.state == "blocked":
        return "blocked"
    return "pass" if v.passed else "fail"


def _explanation(v: StoredTotal) -> str:
    verdict = "passed" if v.passed else "not passed"
    text = (
        f"{v.total:g} / {v.max:g} step points = {v.percent:.1f} / 100; "
        f"pass threshold {v.threshold:g}: {verdict}"
    )
    if v.blockers:
        text += f"; blocked by {', '.join(v.blockers)}"
    return text


def total_items(v: StoredTotal, root: tuple[str, str]) -> list[OutboxItem]:
    """The event and the evaluation span of one version, keyed per version."""
    trace_id, span_id = root
    turn_id = f"scorecard/{v.pipeline}/v{v.version}"
    common = {
        "session_id": v.conversation,
        "session_key": "",
        "session_key_fallback": v.conversation == trace_id,
        "cut": False,
        "completed_at": v.computed_at,
        "turn_id": turn_id,
        "turn_name": f"scorecard {v.pipeline}",
        "turn_kind": "scorecard",
        "trace_id": trace_id,
        "span_id": span_id,
        "attributes": {
            "aem.scorecard.pipeline": v.pipeline,
            "aem.scorecard.state": v.state,
            "aem.scorecard.total": v.total,
            "aem.scorecard.max": v.max,
            "aem.scorecard.percent": v.percent,
            "aem.scorecard.passed": bool(v.passed),
            "aem.scorecard.version": v.version,
            "aem.scorecard.config_hash": v.config_hash,
            "aem.scorecard.blockers": list(v.blockers),
        },
    }
    label = _label(v)
    event = {
        **common,
        "name": TOTAL_EVALUATION_NAME,
        "outcome": label,
        "score": v.total,
        "threshold": v.threshold,
        "explanation": _explanation(v),
    }
    span = {
        **common,
        "label": label,
        "inherited_from": [],
        "root_cause_span_ids": [],
        "failed_metrics": [] if v.passed else [TOTAL_EVALUATION_NAME],
    }
    return [
        OutboxItem(item_key(v.conversation, turn_id, TOTAL_EVALUATION_NAME), "metric", event),
        OutboxItem(item_key(v.conversation, turn_id, TURN_KEY_SUFFIX), "turn", span),
    ]


class ScorecardTracker:
    """One thread: step spans in, totals stored, finished totals handed to the outbox."""

    def __init__(
        self,
        scorecard: Scorecard,
        *,
        store_path: Path,
        spool_path: Path,
        sinks: Sequence[str],
        notify: Callable[[], None],
    ) -> None:
        self.scorecard = scorecard
        self._store = ScorecardStore(Store(store_path))
        self._spool_path = spool_path
        self._sinks = list(sinks)
        self._notify = notify
        self._queue: queue.Queue[SpanRecord | None] = queue.Queue(QUEUE_SPANS)
        self._thread = threading.Thread(target=self._run, name="scorecards", daemon=True)

    def observe(self, spans: Sequence[SpanRecord]) -> None:
        """Called by the assembler with every batch; keeps only this pipeline's step spans."""
        for span in spans:
            if is_step_span(span, self.scorecard.pipeline):
                self._queue.put(span)  # blocks when full: the assembler slows down

    def start(self) -> None:
        for version, root in self._store.unemitted():
            if root is not None:
                self._emit(version, root)
        self._thread.start()

    def stop(self, timeout: float) -> None:
        """Finish the spans already observed, then stop."""
        self._queue.put(None)
        self._thread.join(timeout)
        self._store.store.close()

    def _run(self) -> None:
        while (span := self._queue.get()) is not None:
            try:
                self._process(span)
            except Exception:
                # The span is still in the spool and the session will be evaluated; the log
                # names the conversation so the total can be recomputed (aem scorecard).
                log.exception("scorecard update failed", extra={"span_id": span.span_id})

    def _process(self, span: SpanRecord) -> None:
        pipeline, conversation = self.scorecard.pipeline, conversation_of(span)
        result = step_result(span)
        results = self._store.results(pipeline, conversation)
        held = results.get(result.step)
        if held is not None and held.end_unix_nano > result.end_unix_nano:
            return  # an older result arriving late does not replace a newer one
        results[result.step] = result
        total = compute_total(self.scorecard, conversation, results)
        root = (span.trace_id, span.parent_span_id or span.span_id)
        version = self._store.record(total, results, root)
        log.info(
            "scorecard total",
            extra={
                "conversation": conversation,
                "state": total.state,
                "waiting_on": total.blocking_steps,
                "version": version.version if version else None,
            },
        )
        if version is not None:
            self._emit(version, self._store.root(pipeline, conversation) or root)

    def _emit(self, version: StoredTotal, root: tuple[str, str]) -> None:
        conn = outbox.connect(self._spool_path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            outbox.enqueue(conn, total_items(version, root), self._sinks, time.time())
            conn.execute("COMMIT")
        finally:
            conn.close()
        self._store.mark_emitted(version)
        self._notify()


def scorecard_tracker(
    settings: ServeSettings, pipeline: Pipeline, sinks: Outbox
) -> ScorecardTracker | None:
    """The tracker ``[serve] scorecard`` asks for, fed by ``pipeline`` (None when not set)."""
    if settings.scorecard is None:
        return None
    tracker = ScorecardTracker(
        load_scorecard(settings.scorecard),
        store_path=settings.store_path,
        spool_path=settings.spool_path,
        sinks=sinks.sink_names,
        notify=sinks.notify,
    )
    pipeline.on_spans = tracker.observe
    return tracker
