"""MLflow sink: verdicts as MLflow assessments (feedback) on the turn's span of its trace.

Why assessments: they are what MLflow's own scorers and reviewers write, so AEM's verdicts
sit next to a human's in the trace view and in ``mlflow.search_traces``.

Why one name, one meaning, per level: MLflow's traces table shows one column per
assessment name and, when a trace holds several assessments of one name, shows one of
them. Per-turn verdicts written under the metric's plain name read ``pass`` in that
column on a trace whose other turn failed it. So each level has names of its own:

- per turn, on the turn's first span: ``<turn>.<metric>`` (value = the outcome, rationale
  = the explanation, the score in its metadata) and ``<turn>.aem.label`` (the turn's label,
  the root causes named) — ``t6.correctness.truthfulness``, unique in the trace;
- per trace, with no span id, from the session item: ``aem.label`` (the worst label of the
  trace's turns: root_cause > prior_action_failed > suspect > ok) and one per metric under
  its plain name (the worst outcome: fail > unverified > error > pass > skip), the
  rationale naming the deciding turn;
- per session: ``aem.session`` (the session's label) on its first trace, with MLflow's
  session id in ``mlflow.trace.session``, which is how MLflow files an assessment under a
  session; written only when MLflow groups that trace in a session.

Why a numeric ``aem.score`` per trace beside ``aem.label``: MLflow's traces table sorts
and its charts aggregate numeric feedback, not words. ``aem.score`` is the trace label's
score (:func:`aem.sinks.rollup.label_score`: 1 ``ok``, 0.5 ``suspect``, 0 ``root_cause``
or ``prior_action_failed``), so a trace holding the session's suspect or root cause never
reads 1; the label and the session's labels carry it in their metadata as well.

Why idempotent by lookup: MLflow assessments have no client key to upsert on. Before
writing a trace's verdicts the sink reads the trace's assessments and updates AEM's own
(same source, same name, same span) in place; anything another source wrote is never
touched, nor what an evaluation run of AEM's scorer logged (tagged with that run), and a
duplicate left by an interrupted earlier run is removed. Re-running an audit therefore
replaces AEM's verdicts and leaves everyone else's; what an earlier AEM wrote under a name
it no longer writes there (a turn's verdict under a plain name, the trace-level
``aem.trace``) is removed when its trace is written again.

Why not the REST client the MLflow *source* uses (:mod:`collectors.backends.mlflow_rest`):
that one is bounded for reading pages of spans (bytes per page, a deadline per request),
with the source's settings in its URL; a sink is configured in ``[sinks.mlflow]`` and
bounded like every other sink. Before either was bounded, an MLflow (or a proxy before
it) that answered 200 with an endless body took ``aem serve`` to 3 GB in ten seconds, and
one that dripped held ``aem audit --sink mlflow`` for minutes. Every request here goes
through the sinks' bounded request (:mod:`aem.sinks.http`): one deadline,
``timeout_seconds``, for all of it, and the answer read up to the sinks' cap, no further.
A request refused that way is not retried inside the delivery; the delivery stops there
and its caller (the outbox, or ``aem audit``'s bounded retries) tries the rest again
later.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from pydantic import Field, SecretStr

from aem.foundation.http import RetryPolicy
from aem.sinks.base import DeliveryError, SinkSettings
from aem.sinks.http import BoundedHttp, Response
from aem.sinks.records import ALL_ITEM_KINDS, OutboxItem, label_explanation
from aem.sinks.rollup import label_score
from collectors.backends.mlflow_rest import auth_headers, http_base_url

SOURCE_ID = "aem"
TRACES_PATH = "/api/3.0/mlflow/traces"
TRACE_ID_PREFIX = "tr-"  # MLflow's id for a trace of an experiment: "tr-" + the OTel trace id
LABEL_NAME = "aem.label"
SCORE_NAME = "aem.score"  # per trace, numeric: the trace label's score
SESSION_NAME = "aem.session"
# What AEM wrote per trace before the trace-level verdict took the plain name: removed.
LEGACY_TRACE_NAME = "aem.trace"
# What mlflow.genai.evaluate tags its feedback with: the sink leaves those to their run.
EVALUATION_RUN_KEY = "mlflow.assessment.sourceRunId"
# The trace metadata MLflow groups sessions by; on an assessment, the session it is about.
SESSION_METADATA_KEY = "mlflow.trace.session"
# Answers worth asking again: the server is busy or restarting, not refusing the request.
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
RETRY_PAUSE_SECONDS = 0.5
# What the sink reads is a trace's info with every assessment on it (AEM's own from earlier
# runs among them, about 1-2 KB each), so the cap is wider than the sinks' 1 MiB for an
# acknowledgement: some ten thousand assessments on one trace. Past it, nothing more is read.
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
# Traces remembered as failed (tried last); past this many the memory starts again.
MAX_FAILED_TRACES = 10_000


def mlflow_trace_id(otel_trace_id: str) -> str:
    """MLflow's trace id for an OTel one (hex), as MLflow derives it on ingest."""
    return (
        otel_trace_id
        if otel_trace_id.startswith(TRACE_ID_PREFIX)
        else TRACE_ID_PREFIX + otel_trace_id
    )


def turn_name(turn_id: str, name: str) -> str:
    """A per-turn assessment's name: unique in its trace, so no trace column shows one
    turn's value for all (``turn_name("t6", "aem.label") == "t6.aem.label"``)."""
    return f"{turn_id}.{name}"


def feedback(item: OutboxItem, source_id: str = SOURCE_ID) -> dict[str, Any]:
    """The MLflow assessment (feedback) for one metric item or one turn-label item."""
    p = item.payload
    metadata = {
        "aem.session_id": p["session_id"],
        "aem.turn_id": p["turn_id"],
        "aem.span_id": p["span_id"],  # mlflow.genai.evaluate moves feedback to the root span
        "aem.idempotency_key": item.key,
    }
    if item.kind == "metric":
        name, value, rationale = p["name"], p["outcome"], p.get("explanation") or ""
        metadata["aem.metric"] = name
        for field in ("score", "threshold"):
            if p.get(field) is not None:
                metadata[f"aem.{field}"] = str(p[field])
    else:
        name, value = LABEL_NAME, p["label"]
        metadata["aem.score"] = str(label_score(p["label"]))
        roots = ", ".join(p.get("root_cause_span_ids") or [])
        rationale = label_explanation(p)
        if roots:
            rationale += f"; root cause span(s): {roots}"
            metadata["aem.root_cause_span_ids"] = roots
    return {
        "assessment_name": turn_name(p["turn_id"], name),
        "trace_id": mlflow_trace_id(p["trace_id"]),
        "span_id": p["span_id"],
        "source": {"source_type": "CODE", "source_id": source_id},
        "feedback": {"value": value},
        "rationale": rationale,
        "metadata": metadata,
    }


def _trace_level(
    trace_id: str,
    name: str,
    value: str | float,
    rationale: str,
    metadata: dict[str, str],
    source: str,
) -> dict[str, Any]:
    return {
        "assessment_name": name,
        "trace_id": mlflow_trace_id(trace_id),
        "source": {"source_type": "CODE", "source_id": source},
        "feedback": {"value": value},
        "rationale": rationale,
        "metadata": metadata,
    }


def trace_feedbacks(item: OutboxItem, source_id: str = SOURCE_ID) -> list[dict[str, Any]]:
    """A session item's assessments with no span id: per trace, ``aem.label`` (the trace's
    worst label; the rationale names the session's root cause when another trace holds it),
    ``aem.score`` (that label's score) and one per metric (its worst outcome); on the
    session's first trace, ``aem.session`` (its ``mlflow.trace.session`` is filled in by
    the sink from the trace's metadata)."""
    p = item.payload
    root = p.get("root_cause") or {}
    metadata = {
        "aem.session_id": p["session_id"],
        "aem.session_label": p["label"],
        "aem.revision": str(p.get("revision", 0)),
        "aem.idempotency_key": item.key,
    }
    if root:
        metadata |= {
            "aem.root_cause_turn_id": root["turn_id"],
            "aem.root_cause_metrics": ", ".join(root["metrics"]),
            "aem.root_cause_trace_id": root["trace_id"],
            "aem.root_cause_span_id": root["span_id"],
        }
    bodies = []
    for trace in p["traces"]:
        tid, label, why = trace["trace_id"], trace["label"], trace["explanation"]
        score = label_score(label)
        scored = {**metadata, "aem.score": str(score)}
        bodies.append(_trace_level(tid, LABEL_NAME, label, why, scored, source_id))
        bodies.append(_trace_level(tid, SCORE_NAME, score, f"{label}: {why}", scored, source_id))
        for m in trace.get("metrics") or []:
            why = f"turn {m['turn_id']} ({m['outcome']}, worst of {m['turns']} turns): "
            about = {**metadata, "aem.turn_id": m["turn_id"], "aem.turns": str(m["turns"])}
            rationale = why + (m["explanation"] or "")
            bodies.append(_trace_level(tid, m["name"], m["outcome"], rationale, about, source_id))
    if p["traces"]:
        first = p["traces"][0]["trace_id"]
        session = {**metadata, "aem.score": str(label_score(p["label"])), SESSION_METADATA_KEY: ""}
        bodies.append(
            _trace_level(first, SESSION_NAME, p["label"], p["explanation"], session, source_id)
        )
    return bodies


def assessments(item: OutboxItem, source_id: str = SOURCE_ID) -> list[dict[str, Any]]:
    """Every assessment one item becomes: one on a span, or a session's with no span id."""
    if item.kind == "session":
        return trace_feedbacks(item, source_id)
    return [feedback(item, source_id)]


def _legacy(
    ours: Mapping[tuple[str, str], list[str]], entries: Sequence[tuple[str, dict[str, Any]]]
) -> list[str]:
    """AEM's own assessments left under a name it no longer writes at that level: a turn's
    verdict under a plain name (``aem.label`` or a metric written in this delivery) on a
    span, or the trace-level ``aem.trace`` of earlier versions."""
    plain = {LABEL_NAME} | {
        body["metadata"]["aem.metric"] for _, body in entries if "aem.metric" in body["metadata"]
    }
    return [
        stale
        for (name, span_id), ids in ours.items()
        if (span_id and name in plain) or (not span_id and name == LEGACY_TRACE_NAME)
        for stale in ids
    ]


class MlflowSettings(SinkSettings):
    url: str = Field(
        description="MLflow tracking server: http(s)://HOST:PORT or mlflow://HOST:PORT"
    )
    token: SecretStr | None = Field(None, description="bearer token (else $MLFLOW_TRACKING_TOKEN)")
    source_id: str = Field(SOURCE_ID, description="assessment source id AEM writes and replaces")
    timeout_seconds: float = Field(
        10.0, gt=0, description="one request's whole deadline (connect to last byte read)"
    )
    max_response_bytes: int = Field(
        DEFAULT_MAX_RESPONSE_BYTES,
        ge=1024,
        description="an answer (a trace with its assessments) is read up to this size",
    )


class MlflowJson:
    """JSON requests to one MLflow server, each bounded by :class:`BoundedHttp`.

    A 429 or 5xx, or a server that cannot be reached, is asked again (``attempts`` in
    all, with a short doubling pause; :mod:`aem.foundation.http`'s policy): those say the server is
    busy or restarting. An answer that overstays the deadline or the size cap is not:
    the server did answer, and asking it again would only spend the deadline again
    inside one delivery.
    """

    def __init__(
        self,
        base: str,
        headers: Mapping[str, str],
        *,
        timeout: float,
        attempts: int,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.base = base.rstrip("/")
        self.attempts = max(1, attempts)
        retry = RetryPolicy(
            attempts=self.attempts,
            backoff_seconds=RETRY_PAUSE_SECONDS,
            retry_statuses=RETRY_STATUS,
        )
        self._http = BoundedHttp(
            self.base,
            deadline_seconds=timeout,
            headers=headers,
            max_response_bytes=max_response_bytes,
            what="mlflow",
            retry=retry,
        )

    def call(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        missing_ok: bool = False,
    ) -> dict[str, Any]:
        """The JSON object answered; ``{}`` for a 404 when ``missing_ok``; otherwise
        :class:`DeliveryError` naming the server and the page."""
        data = orjson.dumps(body) if body is not None else b""
        content_type = "application/json" if body is not None else None
        response = self._http.request(method, path, data, content_type)
        if response.status == 404 and missing_ok:
            return {}
        return _json_object(response, f"{method} {self.base}{path}")

    def close(self) -> None:
        """Refuse new requests and cut the ones in flight (shutdown must not wait)."""
        self._http.close()


def _json_object(response: Response, page: str) -> dict[str, Any]:
    """The answer of a 200 as a JSON object, or :class:`DeliveryError` saying what it was."""
    if response.status != 200:
        raise DeliveryError(f"mlflow {page} answered {response.status}: {response.text(300)}")
    try:
        answer = orjson.loads(response.body)
    except orjson.JSONDecodeError as exc:
        raise DeliveryError(
            f"mlflow {page} answered a malformed page (not JSON: {exc}): {response.text()!r}"
        ) from exc
    if not isinstance(answer, dict):
        raise DeliveryError(f"mlflow {page} answered a malformed page: {type(answer).__name__}")
    return answer


class MlflowSink:
    name = "mlflow"
    Settings = MlflowSettings
    item_kinds = ALL_ITEM_KINDS

    @classmethod
    def from_settings(cls, settings: MlflowSettings, services: object = None) -> MlflowSink:
        token = settings.token.get_secret_value() if settings.token else None
        return cls(
            settings.url,
            token=token,
            source_id=settings.source_id,
            timeout=settings.timeout_seconds,
            max_response_bytes=settings.max_response_bytes,
        )

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        source_id: str = SOURCE_ID,
        environ: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        attempts: int = 3,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        name: str = "mlflow",
    ) -> None:
        self.name = name
        self.source_id = source_id
        self._failed_traces: set[str] = set()  # their last delivery failed: tried last
        headers = auth_headers(os.environ if environ is None else environ, token)
        self._rest = MlflowJson(
            http_base_url(url),
            headers,
            timeout=timeout,
            attempts=attempts,
            max_response_bytes=max_response_bytes,
        )

    def deliver(self, items: Sequence[OutboxItem]) -> list[str]:
        """Write every item; the keys of those written (a trace at a time).

        When the server fails part-way (or answers too slowly or too much), what was
        written is returned so the outbox retries only the rest; when nothing could be
        written the error is raised, naming the page. A failed request costs up to a
        deadline, so the delivery stops at the first one instead of spending one per trace;
        the traces that failed go last next time, so one trace the server always refuses
        (a dripping answer, a trace it does not have) holds back no other. A session item
        counts as written once every one of its traces has its assessment.
        """
        by_trace: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        needed: Counter[str] = Counter()
        for item in items:
            for body in assessments(item, self.source_id):
                by_trace.setdefault(body["trace_id"], []).append((item.key, body))
                needed[item.key] += 1
        order = sorted(by_trace, key=lambda trace_id: trace_id in self._failed_traces)
        written: Counter[str] = Counter()
        for trace_id in order:
            try:
                written.update(self._write_trace(trace_id, by_trace[trace_id]))
            except DeliveryError:
                if len(self._failed_traces) >= MAX_FAILED_TRACES:
                    self._failed_traces.clear()
                self._failed_traces.add(trace_id)
                if not written:
                    raise
                break
            self._failed_traces.discard(trace_id)
        return [key for key in needed if written[key] == needed[key]]

    def _write_trace(self, trace_id: str, entries: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """Update AEM's own assessments of one trace in place, create the missing ones,
        and remove AEM's own under names it no longer writes there."""
        ours, session_id = self._own_assessments(trace_id)
        base = f"{TRACES_PATH}/{trace_id}/assessments"
        written = []
        for key, body in entries:
            if body["assessment_name"] == SESSION_NAME:
                if not session_id:  # MLflow groups this trace in no session: nothing to file
                    written.append(key)
                    continue
                body = {**body, "metadata": {**body["metadata"], SESSION_METADATA_KEY: session_id}}
            found = ours.pop((body["assessment_name"], body.get("span_id") or ""), [])
            if found:
                mask = "feedback,rationale,metadata"
                update = {"assessment": body, "update_mask": mask}
                self._rest.call("PATCH", f"{base}/{found[0]}", body=update)
                for stale in found[1:]:
                    self._rest.call("DELETE", f"{base}/{stale}", missing_ok=True)
            else:
                self._rest.call("POST", base, body={"assessment": body})
            written.append(key)
        for stale in _legacy(ours, entries):
            self._rest.call("DELETE", f"{base}/{stale}", missing_ok=True)
        return written

    def _own_assessments(self, trace_id: str) -> tuple[dict[tuple[str, str], list[str]], str]:
        """``(name, span_id) → assessment ids`` that this sink's source wrote on the trace,
        and the trace's MLflow session id (``""`` when MLflow files it in none)."""
        answer = self._rest.call("GET", f"{TRACES_PATH}/{trace_id}", missing_ok=True)
        info = (answer.get("trace") or {}).get("trace_info")
        if not info:
            raise DeliveryError(
                f"mlflow GET {self._rest.base}{TRACES_PATH}/{trace_id}: no such trace"
            )
        ours: dict[tuple[str, str], list[str]] = {}
        for assessment in info.get("assessments") or []:
            source = assessment.get("source") or {}
            if (assessment.get("metadata") or {}).get(EVALUATION_RUN_KEY):
                continue  # an evaluation run's record (the scorer's): that run's, not ours
            if source.get("source_type") == "CODE" and source.get("source_id") == self.source_id:
                name = assessment.get("assessment_name", "")
                key = (name, assessment.get("span_id") or "")
                ours.setdefault(key, []).append(assessment["assessment_id"])
        session = (info.get("trace_metadata") or {}).get(SESSION_METADATA_KEY) or ""
        return ours, str(session)

    def close(self) -> None:
        self._rest.close()
