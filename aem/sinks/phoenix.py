"""Phoenix sink: verdicts as span annotations through Phoenix's REST API.

Why a separate sink: Phoenix ignores OTLP logs (405 on ``/v1/logs``) and drops span links,
so neither the evaluation event nor the evaluation span shows up as an annotation there
(checked against a live Phoenix). ``POST /v1/span_annotations?sync=true`` upserts on
``(name, span_id, identifier)``, which makes a retried batch (or a re-run) replace AEM's own
annotations and leave everyone else's. When several turns share their span (a model call
whose text and tool calls are all turns), each turn's annotations get the identifier
``<identifier>:<turn id>``, so no turn's verdict overwrites another's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from pydantic import Field, SecretStr

from aem.sinks.base import DeliveryError, SinkSettings
from aem.sinks.http import BoundedHttp
from aem.sinks.records import OutboxItem, label_explanation


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
        result = {"label": p["label"], "explanation": explanation}
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


# The annotations' identifier (their upsert key), with settings or without.
IDENTIFIER = "aem"
# On a span that several turns share, each turn's annotations are ``aem:<turn id>``.
TURN_IDENTIFIER_SEPARATOR = ":"


class PhoenixSettings(SinkSettings):
    url: str = Field(description="Phoenix base URL for span annotations")
    api_key: SecretStr | None = None
    identifier: str = Field(IDENTIFIER, description="annotation identifier (upsert key)")
    timeout_seconds: float = Field(
        10.0, gt=0, description="one delivery's whole deadline (connect to last byte read)"
    )


class PhoenixSink:
    name = "phoenix"
    Settings = PhoenixSettings

    @classmethod
    def from_settings(cls, settings: PhoenixSettings, services: object = None) -> PhoenixSink:
        key = settings.api_key.get_secret_value() if settings.api_key else None
        return cls(
            settings.url,
            identifier=settings.identifier,
            api_key=key,
            timeout=settings.timeout_seconds,
        )

    def __init__(
        self,
        base_url: str,
        *,
        identifier: str = IDENTIFIER,
        api_key: str | None = None,
        timeout: float = 10.0,
        name: str = "phoenix",
    ) -> None:
        self.name = name
        self._identifier = identifier
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # A deadline for the whole request and a cap on the answer (aem.sinks.http): a
        # Phoenix that drips or answers endlessly cannot hold delivery or memory.
        self._client = BoundedHttp(
            base_url, deadline_seconds=timeout, headers=headers, what="phoenix"
        )

    def deliver(self, items: Sequence[OutboxItem]) -> list[str]:
        body = {"data": [annotation(i, self._identifier) for i in items]}
        response = self._client.post(
            "/v1/span_annotations?sync=true", orjson.dumps(body), "application/json"
        )
        if response.status != 200:
            raise DeliveryError(f"phoenix answered {response.status}: {response.text()}")
        return [i.key for i in items]

    def close(self) -> None:
        self._client.close()
