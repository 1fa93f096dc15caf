"""Verdicts as OTLP: every ``gen_ai.evaluation.result`` event and evaluation span says who
produced it and how to read it, in the conventions' names where they define one and
under ``aem.`` where they only propose one; the events validate against the conventions'
YAML model shipped with the tests; evaluation spans never carry ERROR and have a
service of their own.

The sink is driven the way a user drives it (``aem audit --sink otlp``) into a real OTLP
gRPC server on loopback.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from aem.cli import app
from aem.foundation.provenance import aem_version, metric_provenance
from tests.serve.downstream import Downstream

MODEL = Path(__file__).parents[1] / "fixtures" / "semconv" / "gen-ai-evaluation.yaml"
SAMPLES = Path("sample_traces")


@pytest.fixture(scope="module")
def delivered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The bundled samples audited once into a real OTLP server, spans and events."""
    downstream = Downstream().start()
    try:
        folder = tmp_path_factory.mktemp("otlp")
        config = folder / "aem.toml"
        config.write_text(
            f'[sinks.otlp]\nendpoint = "http://127.0.0.1:{downstream.port}"\n'
            'service_name = "aem-evals"\n'
            'resource = {"openinference.project.name" = "aem-evals"}\n'
        )
        cases = str(SAMPLES / "cases.jsonl")
        args = ["audit", str(SAMPLES), "--cases", cases, "--config", str(config)]
        result = CliRunner().invoke(app, [*args, "--sink", "otlp", "--no-progress"])
        assert result.exit_code in (0, 1), result.output
        received = downstream.received
        yield {"events": list(received.events), "spans": list(received.spans)}
    finally:
        downstream.stop()


def _model() -> dict[str, Any]:
    return yaml.safe_load(MODEL.read_text())


def test_every_event_validates_against_the_conventions_model(delivered: dict[str, Any]) -> None:
    model = _model()
    registry = {a["id"]: a for a in model["attributes"]}
    (event,) = [e for e in model["events"] if e["name"] == "gen_ai.evaluation.result"]
    types = {"string": str, "double": float, "string[]": list, "double[]": list}
    assert delivered["events"], "no event reached the server"
    for record in delivered["events"]:
        attrs = record["attributes"]
        assert record["event_name"] == event["name"]
        for ref in event["attributes"]:
            if ref.get("requirement_level") == "required":
                assert ref["ref"] in attrs, f"{ref['ref']} missing"
        for key, value in attrs.items():
            if key.startswith("gen_ai."):
                assert key in registry, f"{key} is not a conventions attribute"
                assert isinstance(value, types[registry[key]["type"]]), key
            else:
                assert key.startswith(("aem.", "error.")), f"{key}: not ours, not theirs"
        if "gen_ai.evaluation.score.value" in attrs:  # conditionally required: a score read
            assert "aem.evaluation.score.range" in attrs


def test_every_event_names_its_evaluator_its_version_type_and_case(
    delivered: dict[str, Any],
) -> None:
    types_by_metric: dict[str, set[str]] = {}
    for record in delivered["events"]:
        attrs = record["attributes"]
        assert attrs["aem.evaluation.evaluator.version"] == aem_version()
        assert attrs["aem.evaluation.evaluator.id"] == f"aem/{attrs['gen_ai.evaluation.name']}"
        assert attrs["aem.test.case.id"] == attrs["aem.session.id"]  # every sample has a case
        name = attrs["gen_ai.evaluation.name"]
        types_by_metric.setdefault(name, set()).add(attrs["aem.evaluation.evaluator.type"])
    assert types_by_metric["tool_execution"] == {"rule"}
    assert types_by_metric["correctness.completeness"] == {"embedding"}


def test_evaluation_spans_are_never_error_and_have_a_service_of_their_own(
    delivered: dict[str, Any],
) -> None:
    spans = delivered["spans"]
    labels = {s["attributes"]["aem.label"] for s in spans}
    assert "root_cause" in labels, "the samples must hold a root cause to prove the point"
    assert {s["status_code"] for s in spans} == {0}  # UNSET: a verdict is data
    assert {s["resource"]["service.name"] for s in spans} == {"aem-evals"}
    assert {s["resource"]["openinference.project.name"] for s in spans} == {"aem-evals"}
    assert {e["resource"]["service.name"] for e in delivered["events"]} == {"aem-evals"}
    assert {s["attributes"]["aem.evaluation.evaluator.id"] for s in spans} == {"aem/label"}


def test_a_metric_whose_settings_name_a_judge_reports_the_judge_and_its_model() -> None:
    from aem.checks.llm import LlmCheckSettings
    from aem.checks.relevance import RelevanceCheck
    from aem.judges.settings import OpenAIJudgeSettings

    judged = RelevanceCheck(LlmCheckSettings(judge="gpt"))
    judges = {"gpt": OpenAIJudgeSettings(model="gpt-4.1", base_url="http://127.0.0.1:1/v1")}
    found = metric_provenance(judged, judges)
    assert found["aem.evaluation.evaluator.type"] == "judge"
    assert found["gen_ai.request.model"] == "gpt-4.1"
    assert found["aem.evaluation.score.range"] == [0.0, 10.0]
    embedded = metric_provenance(RelevanceCheck(LlmCheckSettings(judge="embedded")), judges)
    assert embedded["aem.evaluation.evaluator.type"] == "embedding"
    assert "gen_ai.request.model" not in embedded
