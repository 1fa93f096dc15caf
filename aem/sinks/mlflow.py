"""MLflow sink: verdicts as MLflow assessments (feedback) on the turn's span of its trace.

Why assessments: they are what MLflow's own scorers and reviewers write, so AEM's verdicts
sit next to a human's in the trace view and in ``mlflow.search_traces``. One feedback per
metric result (name = the metric's name, value = its outcome, rationale = its explanation)
and one ``aem.label`` per turn (value = the turn's label, the root causes named), each
attached to the trace and to the first span of the turn, with source
``CODE`` / ``aem``.

Why idempotent by lookup: MLflow assessments have no client key to upsert on. Before
writing a trace's verdicts the sink reads the trace's assessments and updates AEM's own
(same source, same name, same span) in place; anything another source wrote is never
touched, and a duplicate left by an interrupted earlier run is removed. Re-running an
audit therefore replaces AEM's verdicts and leaves everyone else's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field, SecretStr

from aem.sinks.base import DeliveryError, SinkSettings
from aem.sinks.records import OutboxItem, label_explanation
from collectors.backends.base import BackendError
from collectors.backends.mlflow_rest import MlflowRest, auth_headers, http_base_url

SOURCE_ID = "aem"
TRACES_PATH = "/api/3.0/mlflow/traces"
TRACE_ID_PREFIX = "tr-"  # MLflow's id for a trace of an experiment: "tr-" + the OTel trace id
LABEL_NAME = "aem.label"


def mlflow_trace_id(otel_trace_id: str) -> str:
    """MLflow's trace id for an OTel one (hex), as MLflow derives it on ingest."""
    return (
        otel_trace_id
        if otel_trace_id.startswith(TRACE_ID_PREFIX)
        else TRACE_ID_PREFIX + otel_trace_id
    )


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
        for field in ("score", "threshold"):
            if p.get(field) is not None:
                metadata[f"aem.{field}"] = str(p[field])
    else:
        name, value = LABEL_NAME, p["label"]
        roots = ", ".join(p.get("root_cause_span_ids") or [])
        rationale = label_explanation(p)
        if roots:
            rationale += f"; root cause span(s): {roots}"
            metadata["aem.root_cause_span_ids"] = roots
    return {
        "assessment_name": name,
        "trace_id": mlflow_trace_id(p["trace_id"]),
        "span_id": p["span_id"],
        "source": {"source_type": "CODE", "source_id": source_id},
        "feedback": {"value": value},
        "rationale": rationale,
        "metadata": metadata,
    }


class MlflowSettings(SinkSettings):
    url: str = Field(
        description="MLflow tracking server: http(s)://HOST:PORT or mlflow://HOST:PORT"
    )
    token: SecretStr | None = Field(None, description="bearer token (else $MLFLOW_TRACKING_TOKEN)")
    source_id: str = Field(SOURCE_ID, description="assessment source id AEM writes and replaces")


class MlflowSink:
    name = "mlflow"
    Settings = MlflowSettings

    @classmethod
    def from_settings(cls, settings: MlflowSettings) -> MlflowSink:
        token = settings.token.get_secret_value() if settings.token else None
        return cls(settings.url, token=token, source_id=settings.source_id)

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        source_id: str = SOURCE_ID,
        environ: Mapping[str, str] | None = None,
        timeout: float = 10.0,
        attempts: int = 3,
        name: str = "mlflow",
    ) -> None:
        self.name = name
        self.source_id = source_id
        headers = auth_headers(os.environ if environ is None else environ, token)
        self._rest = MlflowRest(http_base_url(url), headers, timeout=timeout, attempts=attempts)

    def deliver(self, items: Sequence[OutboxItem]) -> list[str]:
        """Write every item; the keys of those written (a trace at a time).

        When the server fails part-way, what was written is returned so the outbox retries
        only the rest; when nothing could be written the error is raised, naming the page.
        """
        by_trace: dict[str, list[OutboxItem]] = {}
        for item in items:
            by_trace.setdefault(mlflow_trace_id(item.payload["trace_id"]), []).append(item)
        delivered: list[str] = []
        for trace_id, group in by_trace.items():
            try:
                delivered.extend(self._write_trace(trace_id, group))
            except BackendError as exc:
                if not delivered:
                    raise DeliveryError(str(exc)) from exc
                break
        return delivered

    def _write_trace(self, trace_id: str, items: list[OutboxItem]) -> list[str]:
        """Update AEM's own assessments of one trace in place, create the missing ones."""
        ours = self._own_assessments(trace_id)
        written = []
        for item in items:
            body = feedback(item, self.source_id)
            found = ours.pop((body["assessment_name"], body["span_id"]), [])
            base = f"{TRACES_PATH}/{trace_id}/assessments"
            if found:
                mask = "feedback,rationale,metadata"
                update = {"assessment": body, "update_mask": mask}
                self._rest.call("PATCH", f"{base}/{found[0]}", body=update)
                for stale in found[1:]:
                    self._rest.call("DELETE", f"{base}/{stale}", missing_ok=True)
            else:
                self._rest.call("POST", base, body={"assessment": body})
            written.append(item.key)
        return written

    def _own_assessments(self, trace_id: str) -> dict[tuple[str, str], list[str]]:
        """``(name, span_id) → assessment ids`` that this sink's source wrote on the trace."""
        answer = self._rest.call("GET", f"{TRACES_PATH}/{trace_id}", missing_ok=True)
        info = (answer.get("trace") or {}).get("trace_info")
        if not info:
            raise BackendError(
                f"mlflow GET {self._rest.base}{TRACES_PATH}/{trace_id}: no such trace"
            )
        ours: dict[tuple[str, str], list[str]] = {}
        for assessment in info.get("assessments") or []:
            source = assessment.get("source") or {}
            if source.get("source_type") == "CODE" and source.get("source_id") == self.source_id:
                key = (assessment.get("assessment_name", ""), assessment.get("span_id", ""))
                ours.setdefault(key, []).append(assessment["assessment_id"])
        return ours

    def close(self) -> None:
        self._rest.close()
