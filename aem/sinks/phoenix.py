"""Phoenix sink: verdicts as span annotations through Phoenix's REST API.

Why a separate sink: Phoenix ignores OTLP logs (405 on ``/v1/logs``) and drops span links,
so neither the evaluation event nor the evaluation span shows up as an annotation there
(checked against a live Phoenix). ``POST /v1/span_annotations?sync=true`` upserts on
``(name, span_id, identifier)``, which makes a retried batch (or a re-run) replace AEM's own
annotations and leave everyone else's. When several turns share their span (a model call
whose text and tool calls are all turns), each turn's annotations get the identifier
``<identifier>:<turn id>``, so no turn's verdict overwrites another's.

Why trace and session annotations too: Phoenix's trace list and sessions tab show those,
not span annotations; a user scanning them saw nothing until they opened each trace. Each
session item becomes an ``aem.trace`` annotation on every trace of the session (that
trace's label, the session's root cause named) and, where Phoenix has the session, an
``aem.session`` one. Both upsert on ``(name, trace or session, identifier)`` like the span
annotations. Phoenix makes a session of the traces that carry ``session.id`` (and of
``gen_ai.conversation.id``, which it copies there); a session AEM keyed on another
attribute, or on its trace id, has no Phoenix session and gets trace annotations only.
A Phoenix without ``/v1/session_annotations`` (older servers) answers 404 "Not Found";
the sink then writes trace annotations only and says so once.

Why a score beside each label: Phoenix's lists show an annotation's label and score in
their columns, and its charts plot scores only. A turn's ``aem.label``, a trace's
``aem.trace`` and a session's ``aem.session`` carry the label's score
(:func:`aem.sinks.rollup.label_score`: 1 ``ok``, 0.5 ``suspect``, 0 ``root_cause`` or
``prior_action_failed``), so a trace holding a suspect or a root cause never charts as 1.

Why the session annotation is keyed by project: Phoenix keeps one session per session id
across its projects (the first project to send it owns it; later traces of another
project join it). Two audits of two projects sharing a session id wrote the same
``(aem.session, session, aem)`` and the second overwrote the first. With ``project`` set
(``aem audit --from phoenix://…/PROJECT --sink phoenix`` sets it from the URL when the
``[sinks.phoenix]`` table does not), the session annotation's identifier is
``aem@PROJECT`` and its explanation starts with ``[PROJECT]``, so each project keeps
its own; without it the identifier stays ``aem``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import orjson
from pydantic import Field, SecretStr

from aem.sinks.base import DeliveryError, SinkSettings
from aem.sinks.http import BoundedHttp
from aem.sinks.records import ALL_ITEM_KINDS, OutboxItem, label_explanation
from aem.sinks.rollup import label_score

log = logging.getLogger("aem.sinks.phoenix")

# The attributes Phoenix builds its sessions from: OpenInference's session id, and the
# GenAI conversation id it copies into ``session.id`` at ingestion.
PHOENIX_SESSION_KEYS = frozenset({"session.id", "gen_ai.conversation.id"})
TRACE_ANNOTATION = "aem.trace"
SESSION_ANNOTATION = "aem.session"


def annotation(item: OutboxItem, identifier: str) -> dict[str, Any]:
    """One Phoenix span annotation for a metric item or a turn-label item."""
    p = item.payload
    if item.kind == "metric":
        name = p["name"]
        result: dict[str, Any] = {"label": p["outcome"], "explanation": p.get("explanation", "")}
        if p.get("score") is not None:
            result["score"] = float(p["score"])
    else:
        name = "aem.label"
        roots = ", ".join(p.get("root_cause_span_ids") or [])
        explanation = label_explanation(p)
        if p["label"] == "prior_action_failed":
            explanation += f"; inherited from span(s) {roots}"
        result = {"label": p["label"], "score": label_score(p["label"]), "explanation": explanation}
    if p.get("span_turns", 1) > 1:  # several turns on one span: one annotation per turn
        identifier = f"{identifier}{TURN_IDENTIFIER_SEPARATOR}{p['turn_id']}"
    return {
        "span_id": p["span_id"],
        "name": name,
        "annotator_kind": "CODE",
        "result": result,
        "metadata": {
            "session_id": p["session_id"],
            "turn_id": p["turn_id"],
            "trace_id": p["trace_id"],
            "aem.idempotency_key": item.key,
        },
        "identifier": identifier,
    }


def _session_metadata(item: OutboxItem, project: str | None = None) -> dict[str, Any]:
    """What a trace or session annotation carries beside its label: where the root cause
    is (turn, metric, trace, span), the session's own label, its revision, the key, and
    the project the verdict is about when the sink knows it."""
    p = item.payload
    root = p.get("root_cause") or {}
    return ({"project": project} if project else {}) | {
        "session_id": p["session_id"],
        "session_label": p["label"],
        "revision": p.get("revision", 0),
        "root_cause_turn_id": root.get("turn_id"),
        "root_cause_turn_name": root.get("turn_name"),
        "root_cause_metrics": root.get("metrics") or [],
        "root_cause_trace_id": root.get("trace_id"),
        "root_cause_span_id": root.get("span_id"),
        "aem.idempotency_key": item.key,
    }


def trace_annotations(
    item: OutboxItem, identifier: str, project: str | None = None
) -> list[dict[str, Any]]:
    """One ``aem.trace`` annotation per trace of a session item: the trace's own label,
    its score and explanation (which names the session's root cause when another trace
    holds it)."""
    return [
        {
            "trace_id": trace["trace_id"],
            "name": TRACE_ANNOTATION,
            "annotator_kind": "CODE",
            "result": {
                "label": trace["label"],
                "score": label_score(trace["label"]),
                "explanation": trace["explanation"],
            },
            "metadata": _session_metadata(item, project),
            "identifier": identifier,
        }
        for trace in item.payload["traces"]
    ]


def session_annotation(
    item: OutboxItem, identifier: str, project: str | None = None
) -> dict[str, Any]:
    """The ``aem.session`` annotation of a session item; with ``project``, keyed by it
    (``aem@PROJECT``) and its explanation naming it, so a session id another project
    shares keeps that project's annotation beside this one."""
    p = item.payload
    explanation = f"[{project}] {p['explanation']}" if project else p["explanation"]
    keyed = f"{identifier}{PROJECT_IDENTIFIER_SEPARATOR}{project}" if project else identifier
    return {
        "session_id": p["session_id"],
        "name": SESSION_ANNOTATION,
        "annotator_kind": "CODE",
        "result": {
            "label": p["label"],
            "score": label_score(p["label"]),
            "explanation": explanation,
        },
        "metadata": _session_metadata(item, project),
        "identifier": keyed,
    }


# The annotations' identifier (their upsert key), with settings or without.
IDENTIFIER = "aem"
# On a span that several turns share, each turn's annotations are ``aem:<turn id>``.
TURN_IDENTIFIER_SEPARATOR = ":"
# A session annotation of a known project is ``aem@<project>``.
PROJECT_IDENTIFIER_SEPARATOR = "@"


class PhoenixSettings(SinkSettings):
    url: str = Field(description="Phoenix base URL for span annotations")
    api_key: SecretStr | None = None
    identifier: str = Field(IDENTIFIER, description="annotation identifier (upsert key)")
    project: str | None = Field(
        None,
        min_length=1,
        description="the Phoenix project the verdicts are about: keys the session "
        "annotations (a session id two projects share keeps one per project); "
        "aem audit --from phoenix://HOST/PROJECT sets it when unset",
    )
    timeout_seconds: float = Field(
        10.0, gt=0, description="one delivery's whole deadline (connect to last byte read)"
    )


class PhoenixSink:
    name = "phoenix"
    Settings = PhoenixSettings
    item_kinds = ALL_ITEM_KINDS

    @classmethod
    def from_settings(cls, settings: PhoenixSettings, services: object = None) -> PhoenixSink:
        key = settings.api_key.get_secret_value() if settings.api_key else None
        return cls(
            settings.url,
            identifier=settings.identifier,
            api_key=key,
            timeout=settings.timeout_seconds,
            project=settings.project,
        )

    def __init__(
        self,
        base_url: str,
        *,
        identifier: str = IDENTIFIER,
        api_key: str | None = None,
        timeout: float = 10.0,
        name: str = "phoenix",
        project: str | None = None,
    ) -> None:
        self.name = name
        self._identifier = identifier
        self.project = project
        self._has_session_annotations = True  # until the server says it has no such route
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # A deadline for the whole request and a cap on the answer (aem.sinks.http): a
        # Phoenix that drips or answers endlessly cannot hold delivery or memory.
        self._client = BoundedHttp(
            base_url, deadline_seconds=timeout, headers=headers, what="phoenix"
        )

    def deliver(self, items: Sequence[OutboxItem]) -> list[str]:
        """Span annotations first, then the sessions' trace and session annotations; when
        the second part fails after the first went, only the first's keys are returned."""
        on_spans = [i for i in items if i.kind != "session"]
        sessions = [i for i in items if i.kind == "session"]
        delivered: list[str] = []
        if on_spans:
            notes = [annotation(i, self._identifier) for i in on_spans]
            self._post("/v1/span_annotations", notes)
            delivered += [i.key for i in on_spans]
        if sessions:
            try:
                self._deliver_sessions(sessions)
            except DeliveryError:
                if not delivered:
                    raise
                return delivered
            delivered += [i.key for i in sessions]
        return delivered

    def _deliver_sessions(self, items: Sequence[OutboxItem]) -> None:
        traces = [
            note for i in items for note in trace_annotations(i, self._identifier, self.project)
        ]
        if traces:
            self._post("/v1/trace_annotations", traces)
        known = [i for i in items if i.payload.get("session_key") in PHOENIX_SESSION_KEYS]
        if known and self._has_session_annotations:
            notes = [session_annotation(i, self._identifier, self.project) for i in known]
            self._has_session_annotations = self._post(
                "/v1/session_annotations", notes, route_may_be_missing=True
            )

    def _post(
        self, path: str, data: list[dict[str, Any]], *, route_may_be_missing: bool = False
    ) -> bool:
        """POST ``data`` synchronously; False when the route does not exist and that is
        allowed (an older Phoenix), :class:`DeliveryError` on any other refusal."""
        body = orjson.dumps({"data": data})
        response = self._client.post(f"{path}?sync=true", body, "application/json")
        if response.status == 200:
            return True
        text = response.text()
        if route_may_be_missing and response.status in (404, 405) and _no_route(text):
            log.warning(
                "phoenix has no %s: session verdicts go on its traces only",
                path,
                extra={"status": response.status},
            )
            return False
        raise DeliveryError(f"phoenix {path} answered {response.status}: {text}")

    def close(self) -> None:
        self._client.close()


def phoenix_project(url: str) -> str | None:
    """The project a ``phoenix://HOST:PORT/PROJECT`` (or ``phoenix+https://…``) source URL
    reads, as the source reads it (no path: ``default``); None for any other URL.

    >>> phoenix_project("phoenix://127.0.0.1:6006/agents"), phoenix_project("mlflow://h/1")
    ('agents', None)
    """
    parts = urlsplit(url)
    if parts.scheme.partition("+")[0] != "phoenix":
        return None
    return parts.path.strip("/") or "default"


def _no_route(text: str) -> bool:
    """Whether a 404/405 says the route is unknown (Starlette's bare ``Not Found`` /
    ``Method Not Allowed``) rather than that a session it names is missing."""
    try:
        detail = orjson.loads(text).get("detail")
    except (orjson.JSONDecodeError, AttributeError):
        return False
    return detail in ("Not Found", "Method Not Allowed")
