"""Configuration fails at load, naming the key: a misspelt setting must not be ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from aem.config import ConfigError, apply_override, load_config
from tests.conftest import SAMPLES, run_audit

BAD = [
    (
        '[metrics."correctness.truthfulness"]\nrequire_suport = false\n',
        'metrics."correctness.truthfulness".require_suport: unknown setting '
        "(did you mean 'require_support'?)",
    ),
    (
        '[metrics.tool_execution]\nrecovered_error_outcome = "banana"\n',
        "metrics.tool_execution.recovered_error_outcome: Input should be 'pass' or 'fail'",
    ),
    (
        "[metrics.tool_executoin]\n",
        "metrics.tool_executoin: unknown metric 'tool_executoin' (did you mean 'tool_execution'?)",
    ),
    ("[metrics.truthfulness]\nrequire_support = false\n", 'moved to metrics."correctness'),
    ("[metrics.tool_set]\ncount_failed_calls = true\n", "moved to matching.count_failed_calls"),
    ('[metrics]\ndisabled = ["tool_choise"]\n', "metrics.disabled: unknown metric 'tool_choise'"),
    ("[compare]\nnumber_abs_toll = 1\n", "compare.number_abs_toll: unknown setting"),
    ('[[taxonomy]]\ncategory = "x"\nmetrc = "y"\n', "taxonomy[0].metrc: unknown setting"),
    ("[matchng]\npass_threshold = 1\n", "matchng: unknown setting (did you mean 'matching'?)"),
]


@pytest.mark.parametrize(("toml", "message"), BAD)
def test_load_config_names_the_bad_key(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert message in str(caught.value)


@pytest.mark.parametrize(("toml", "message"), BAD[:3])
def test_audit_exits_2_and_names_the_key(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    code, report, stderr = run_audit(str(SAMPLES), "--config", str(path))
    assert code == 2 and report == {}
    assert message.split(":")[0] in " ".join(stderr.split())


def test_metric_tables_reach_their_metric(tmp_path: Path) -> None:
    path = tmp_path / "aem.toml"
    path.write_text(
        '[metrics."correctness.truthfulness"]\nrequire_support = false\n'
        '[metrics.tool_execution]\nrecovered_error_outcome = "fail"\n'
        "[matching]\ncount_failed_calls = true\n[serve]\nanything = 1\n"
    )
    config = load_config(path)
    assert config.metrics.tables["tool_execution"] == {"recovered_error_outcome": "fail"}
    assert config.matching.count_failed_calls is True


def test_overrides_accept_quoted_dotted_keys() -> None:
    data: dict[str, object] = {}
    apply_override(data, 'metrics."correctness.completeness".key_point_threshold = 0.9')
    apply_override(data, "matching.pass_threshold=0.5")
    assert data == {
        "metrics": {"correctness.completeness": {"key_point_threshold": 0.9}},
        "matching": {"pass_threshold": 0.5},
    }
    with pytest.raises(ConfigError, match=r"not key\.path=value"):
        apply_override(data, "matching.pass_threshold")
    with pytest.raises(ConfigError, match="unknown setting"):
        load_config(overrides=['metrics."correctness.completeness".threshold=0.9'])
