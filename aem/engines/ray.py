"""``aem audit --engine ray``: audit an archive of OTLP files with Ray Data.

Why this shape — an archive is audited as a whole, on as many machines as Ray has:

1. **Read**: one Ray Data task per file decodes it with the same reader as the
   single-process path (:func:`collectors.readers.read_batches`, so every bad record
   becomes the same issue). Each record's spans leave the task grouped by trace, packed
   (:mod:`aem.engines.compact`), with their position in the input and the trace's best
   session key found in that record (:func:`collectors.assembler.session_key_of`).
2. **Settle each trace's session**: a trace may be split over records and files, and its
   session key may sit on any of its spans, so spans are grouped by trace id and every
   part of a trace gets the key the assembler would give it (best rank, then first seen).
3. **Evaluate**: parts are grouped by session id (sessions span traces and files) and
   evaluated in actors that each hold one :class:`~aem.evaluate.Evaluator` — the
   embedding model loads once per actor, when a session first compares text. Inside a
   group the spans are replayed, in input order, through the session assembler
   (:func:`collectors.reading.assemble_all`): trace order, span order and the span
   limit are exactly those of the single-process path.
4. **Rank**: the per-session reports come back to the driver and are ranked by
   :func:`aem.evaluate.build_report`, the single-process code; with ``output`` they are
   also written as Parquet (one row per session, the report as JSON).

What differs from the streaming path, on purpose: an archive has no "later", so a session
whose spans are far apart in the input is evaluated as one session (the streaming path
closes it after ``assembly.idle_spans`` and counts the rest as late spans), and
``peak_open_sessions`` is the number of sessions, which the shuffle holds at once.
Scorecards (``on_closed``) and stdin are not supported here.
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from aem.cases import Case
from aem.engines import EngineError, available_cores
from aem.engines.compact import span_from_tuple, span_to_tuple
from aem.engines.seam import SessionOutcome, evaluate_closed
from aem.evaluate import Evaluator, build_report
from aem.foundation.model import AuditReport, InputIssue, SessionReport, SpanRecord
from aem.settings import AemConfig
from collectors.assembler import session_key_of
from collectors.readers import DEFAULT_MAX_RECORD_BYTES, find_trace_files, read_batches
from collectors.reading import assemble_all

# A trace part without a session key sorts after every keyed one.
_NO_KEY = 1 << 30
# Session groups per evaluation actor: enough blocks that no actor idles at the end.
_BLOCKS_PER_ACTOR = 4


def audit(
    paths: Iterable[str],
    *,
    cases: Mapping[str, Case] | None = None,
    config: AemConfig | None = None,
    workers: int | None = None,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    output: str | Path | None = None,
    address: str | None = None,
    show_progress: bool = False,
) -> AuditReport:
    """Audit every trace file under ``paths`` on Ray; the report ``audit_paths`` gives.

    Connects to ``address`` (else ``RAY_ADDRESS``, which ``ray job submit`` sets); with
    neither, starts a local Ray of ``workers`` CPUs (default: every core) for this call.
    A Ray already initialised by the caller is used as it is. ``workers`` is also the
    number of evaluation actors (default: the CPUs Ray has). Paths must be readable at
    the same names on every node (a shared file system). With ``output``, per-session
    reports are also written there as Parquet.
    """
    import ray

    started = _connect(ray, address, workers)
    try:
        import ray.data

        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = show_progress
        if not show_progress:  # one line per stage and dataset is noise under --no-progress
            logging.getLogger("ray.data").setLevel(logging.WARNING)
        cores = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
        actors = workers or max(1, int(cores))
        return _audit(list(paths), cases, config or AemConfig(), actors, max_record_bytes, output)
    finally:
        if started:
            ray.shutdown()


def _connect(ray: Any, address: str | None, workers: int | None) -> bool:
    """Join the given or configured cluster, else start a local one; True if started."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address)
        return False
    ray.init(
        address="local",
        num_cpus=workers or available_cores(),
        include_dashboard=False,
        # Workers' output would land on this process's stdout, which --json owns.
        log_to_driver=False,
    )
    return True


def _audit(
    paths: list[str],
    cases: Mapping[str, Case] | None,
    config: AemConfig,
    actors: int,
    max_record_bytes: int,
    output: str | Path | None,
) -> AuditReport:
    """The four steps of the module docstring, on the Ray this process is connected to."""
    import ray.data
    from ray.data.expressions import col

    if "-" in paths:
        raise EngineError("the Ray engine reads files, not stdin (-)")
    files, issues = find_trace_files(paths)
    if not files:
        return build_report([], issues)
    listing = [{"file": number, "path": path} for number, path in enumerate(files)]
    decoded = (
        ray.data.from_items(listing, override_num_blocks=len(files))
        .flat_map(partial(_decode_file, max_record_bytes=max_record_bytes))
        .materialize()
    )
    partitions = actors * _BLOCKS_PER_ACTOR
    # Shuffles first, evaluation after, each materialised: actors holding every CPU
    # while a shuffle still needs one would wait for each other forever.
    sessions = (
        decoded.filter(expr=col("trace_id") != "")
        .groupby("trace_id", num_partitions=partitions)
        .map_groups(_settle_trace, batch_format="numpy")
        .groupby("session_id", num_partitions=partitions)
        .map_groups(_gather_session, batch_format="numpy")
        .materialize()
    )
    evaluated = sessions.map_batches(
        SessionEvaluator,
        batch_size=1,
        batch_format="numpy",
        fn_constructor_kwargs={"job": pickle.dumps((_actor_config(config), dict(cases or {})))},
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=1,
    ).materialize()
    if output is not None:
        evaluated.select_columns(["session_id", "root_causes", "cut", "report"]).write_parquet(
            str(output)
        )
    report = _ranked(decoded, evaluated, issues)
    report.unsupported = config.verdicts.unsupported
    return report


def _actor_config(config: AemConfig) -> AemConfig:
    """One torch thread per actor (an actor holds one CPU) unless configured otherwise."""
    if config.compare.embedding_threads is not None:
        return config
    compare = config.compare.model_copy(update={"embedding_threads": 1})
    return config.model_copy(update={"compare": compare})


def _ranked(decoded: Any, evaluated: Any, walk_issues: list[InputIssue]) -> AuditReport:
    """The reports ranked by the single-process code, input issues in input order."""
    issues = list(walk_issues)
    notes: list[tuple[int, int, bytes]] = []
    spans = 0
    columns = ["file", "batch", "count", "issues"]
    for batch in decoded.select_columns(columns).iter_batches(batch_format="numpy"):
        spans += int(batch["count"].sum())
        notes.extend(
            (int(f), int(b), data)
            for f, b, data in zip(batch["file"], batch["batch"], batch["issues"], strict=True)
            if data
        )
    for _, _, data in sorted(notes, key=lambda note: note[:2]):
        issues.extend(pickle.loads(data))
    reports: list[SessionReport] = []
    errors: list[tuple[str, InputIssue]] = []
    sessions = 0
    for row in evaluated.select_columns(["session_id", "outcome"]).iter_rows():
        sessions += 1
        outcome = pickle.loads(row["outcome"])
        if isinstance(outcome, SessionReport):
            reports.append(outcome)
        else:
            errors.append((row["session_id"], outcome))
    issues.extend(issue for _, issue in sorted(errors, key=lambda e: e[0]))
    report = build_report(reports, issues, spans_read=spans)
    report.peak_open_sessions = sessions
    return report


def _decode_file(row: dict[str, Any], *, max_record_bytes: int) -> Iterator[dict[str, Any]]:
    """Step 1, one file: a row per (record, trace) with the spans packed, and a row per
    record with issues (trace id ``""``)."""
    file = int(row["file"])
    for batch_number, batch in enumerate(
        read_batches(str(row["path"]), max_record_bytes=max_record_bytes)
    ):
        if batch.issues:
            yield _row(file, batch_number, issues=pickle.dumps(batch.issues))
        by_trace: dict[str, list[tuple[int, SpanRecord]]] = {}
        for index, span in enumerate(batch.spans):
            by_trace.setdefault(span.trace_id, []).append((index, span))
        for trace_id, spans in by_trace.items():
            yield _trace_part(file, batch_number, trace_id, spans)


def _row(file: int, batch: int, **values: Any) -> dict[str, Any]:
    """One decoded row; every row has every column (Ray Data blocks share one schema)."""
    row: dict[str, Any] = {
        "file": file,
        "batch": batch,
        "trace_id": "",
        "key_rank": _NO_KEY,
        "key_at": 0,
        "key_value": "",
        "count": 0,
        "spans": b"",
        "issues": b"",
    }
    row.update(values)
    return row


def _trace_part(
    file: int, batch: int, trace_id: str, spans: list[tuple[int, SpanRecord]]
) -> dict[str, Any]:
    """The spans of one trace in one record, and the best session key among them."""
    best: tuple[int, int, str] = (_NO_KEY, 0, "")
    for index, span in spans:
        key = session_key_of(span)
        if key is not None and key[0] < best[0]:
            best = (key[0], index, key[2])
    packed = pickle.dumps(
        [(file, batch, index, span_to_tuple(span)) for index, span in spans],
        protocol=pickle.HIGHEST_PROTOCOL,
    )
    return _row(
        file,
        batch,
        trace_id=trace_id,
        key_rank=best[0],
        key_at=best[1],
        key_value=best[2],
        count=len(spans),
        spans=packed,
    )


def _settle_trace(group: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Step 2, one trace: its parts, each told the trace's session id — the value of its
    best-ranked key, the first one seen on a tie, else the trace id (as the assembler)."""
    count = len(group["trace_id"])
    order = [
        (
            int(group["key_rank"][i]),
            int(group["file"][i]),
            int(group["batch"][i]),
            int(group["key_at"][i]),
        )
        for i in range(count)
    ]
    best = min(range(count), key=order.__getitem__)
    keyed = order[best][0] != _NO_KEY
    session_id = str(group["key_value"][best]) if keyed else str(group["trace_id"][0])
    return {"session_id": _column([session_id] * count), "spans": group["spans"]}


def _gather_session(group: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Step 3a, one session: every span of its trace parts, in input order, one row."""
    rows = sorted(
        (row for packed in group["spans"] for row in pickle.loads(packed)),
        key=lambda row: row[:3],
    )
    packed = pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)
    return {"session_id": group["session_id"][:1], "spans": _column([packed])}


class SessionEvaluator:
    """Step 3b, in a Ray actor: evaluates sessions with one long-lived Evaluator."""

    def __init__(self, job: bytes) -> None:
        config, cases = pickle.loads(job)
        self.evaluator = Evaluator(config, cases)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        outcomes: list[SessionOutcome] = []
        span_limit = self.evaluator.config.assembly.span_limit
        for packed in batch["spans"]:
            # Replayed in input order: traces, spans and the span limit as the assembler
            # of the single-process path has them (one session: one closed session).
            spans = (span_from_tuple(row[3]) for row in pickle.loads(packed))
            closed = assemble_all(spans, span_limit)
            outcomes.extend(evaluate_closed(self.evaluator, session) for session in closed)
        reports = [o if isinstance(o, SessionReport) else None for o in outcomes]
        return {
            "session_id": _column([o.session_id or "" for o in outcomes]),
            "root_causes": np.array([len(r.root_causes) if r else 0 for r in reports]),
            "cut": np.array([bool(r and r.cut) for r in reports]),
            "report": _column([r.model_dump_json() if r else "" for r in reports]),
            "outcome": _column(
                [pickle.dumps(o, protocol=pickle.HIGHEST_PROTOCOL) for o in outcomes]
            ),
        }


def _column(values: list[Any]) -> np.ndarray:
    """An object column (strings, bytes) as Ray Data's numpy batches carry them."""
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column
