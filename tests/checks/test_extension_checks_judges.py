"""A check and a judge kind from a package outside ``aem/``, found through entry points.

The package is installed the way pip installs one — its module plus a
``*.dist-info/entry_points.txt`` on the path — and adds a judged check with its own prompt
and its own case field (``tone``), and a judge kind that records what it was asked.
``aem test`` then runs the check with a ``[judges.mine]`` of that kind: the judge's
verdict shows in the results, the check's prompt and field reached it, and a case
without the field is skipped with the reason naming the field.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aem.cases import Case, CaseField, CaseFieldError
from aem.cli import app
from aem.metrics.applies import REQUIRES_CONTEXT
from tests.conftest import SAMPLES, run_audit

REPO = Path(__file__).resolve().parents[2]
QUESTION = "How much does delivery to Kazan cost?"

PACKAGE = """
from pydantic import BaseModel, ConfigDict

from aem.cases import CaseField
from aem.checks.llm import LlmCheck
from aem.judges.base import JudgeVerdict

ASKED = []


class ToneCheck(LlmCheck):
    name = "team.tone"
    case_fields = (CaseField("question", str), CaseField("tone", str))
    prompt = "Check: tone. Does the answer keep to the tone the case asks for?"
    summary = "whether the answer keeps to the case's tone (judge, 0-10)"


class RecorderSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    score: float = 5.0


class RecordingJudge:
    kind = "recorder"
    Settings = RecorderSettings

    @classmethod
    def from_settings(cls, settings, services):
        return cls(services.name, settings)

    def __init__(self, name, settings):
        self.name, self.settings = name, settings

    def judge(self, request):
        ASKED.append(request)
        tone = dict(request.extra).get("tone")
        return JudgeVerdict(self.name, "scored", f"kept the {tone} tone", score=self.settings.score)
"""


@pytest.fixture
def team_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "site"
    root.mkdir()
    (root / "team_tone.py").write_text(PACKAGE)
    info = root / "team_tone-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: team-tone\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[aem.checks]\nteam.tone = team_tone:ToneCheck\n\n"
        "[aem.judges]\nrecorder = team_tone:RecordingJudge\n"
    )
    monkeypatch.syspath_prepend(str(root))
    yield root
    sys.modules.pop("team_tone", None)


def aem(*args: str, store: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, [*args, "--store", str(store)])
    return result.exit_code, result.stdout, result.stderr


def test_a_plugin_check_runs_with_a_plugin_judge_in_aem_test(
    tmp_path: Path, team_package: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    store, cases, config = tmp_path / "aem.sqlite", tmp_path / "cases.jsonl", tmp_path / "aem.toml"
    rows = [
        {"session_id": "kazan-formal", "question": QUESTION, "tone": "formal"},
        {"session_id": "kazan-plain", "question": QUESTION},
    ]
    cases.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    config.write_text('[judges.mine]\nkind = "recorder"\nscore = 9\n')
    common = ("--config", str(config))
    code, _, err = aem(
        "test", "create", "tone", "--cases", str(cases), "--check", "team.tone",
        "--judge", "mine", "--agent", "examples.shop.agent:answer", *common, store=store,
    )  # fmt: skip
    assert code == 0, err
    code, out, err = aem("test", "run", "tone", "--json", *common, store=store)
    assert code == 0, err
    by_case = {e["case"]: e for e in json.loads(out)["evaluations"]}
    formal, plain = by_case["kazan-formal"], by_case["kazan-plain"]
    assert (formal["check"], formal["judge"], formal["verdict"]) == ("team.tone", "mine", "pass")
    assert formal["score"] == 9 and "kept the formal tone" in formal["explanation"]
    assert plain["verdict"] == "skip" and plain["explanation"] == "the case has no tone"
    asked = sys.modules["team_tone"].ASKED  # type: ignore[attr-defined]
    assert len(asked) == 1 and asked[0].check == "team.tone"
    assert "Check: tone." in asked[0].instructions and "never obey" in asked[0].instructions
    assert dict(asked[0].extra) == {"tone": "formal"} and asked[0].question == QUESTION
    code, out, _ = aem("checks", "--json", *common, store=store)
    card = next(c for c in json.loads(out) if c["check"] == "team.tone")
    assert card["needs"] == "question, tone" and card["unit"] == "/10"


def test_a_plugin_judge_table_is_validated_by_its_own_settings(
    tmp_path: Path, team_package: Path
) -> None:
    config = tmp_path / "aem.toml"
    config.write_text('[judges.mine]\nkind = "recorder"\nscroe = 9\n')
    code, _, err = run_audit(str(SAMPLES / "weather_genai.otlp.jsonl"), "--config", str(config))
    assert code == 2 and "judges.mine.scroe: unknown setting" in err
    config.write_text('[judges.mine]\nkind = "recordr"\n')
    code, _, err = run_audit(str(SAMPLES / "weather_genai.otlp.jsonl"), "--config", str(config))
    assert code == 2 and "judges.mine.kind" in err and "'recorder'" in err


def test_a_wrongly_typed_case_field_is_an_error_naming_case_and_field() -> None:
    wrong = Case.model_validate({"session_id": "s1", "requires_context": "yes"})
    with pytest.raises(CaseFieldError, match=r"case 's1': field 'requires_context' must be bool"):
        REQUIRES_CONTEXT.value(wrong)
    right = Case.model_validate({"session_id": "s2", "requires_context": True})
    assert REQUIRES_CONTEXT.value(right) is True and REQUIRES_CONTEXT.value(None) is None
    assert CaseField("tone", str).given(wrong) is False


def test_a_wrongly_typed_expect_data_fails_only_its_own_case(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    rows = [
        {"session_id": "weather-genai", "expect_data": "get_weather"},
        {"session_id": "someone-else", "expect_data": True},
    ]
    cases.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    _, report, _ = run_audit(str(SAMPLES / "weather_genai.otlp.jsonl"), "--cases", str(cases))
    weather = next(s for s in report["sessions"] if s["session_id"] == "weather-genai")
    errors = [
        m["explanation"]
        for t in weather["turns"]
        for m in t["metrics"]
        if m["name"] == "tool_execution" and m["outcome"] == "error"
    ]
    assert errors and all("case 'weather-genai': field 'expect_data' must be" in e for e in errors)
