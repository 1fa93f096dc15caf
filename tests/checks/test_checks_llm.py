"""LLM checks through the public API: the seed's worked example with a scripted judge on
a real local HTTP server, judge errors, thresholds copied at creation, judge.step."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace

from aem.checks.judge_step import JudgeStep, JudgeStepSettings
from aem.config import AemConfig
from aem.datatests import api
from aem.evaluate import Evaluator
from aem.foundation.model import Label, Outcome
from aem.judges.base import JudgeRequest, JudgeVerdict
from aem.store import Store
from aem.testing import make_session, make_tool_call, make_turn
from tests.judge_server import Reply, judge_server, scripted_judge_config, user_text

SCORES = [10, 9, 9, 8, 8, 7, 7, 6, 4, 2]


def agent(question: str) -> str:
    """A minimal instrumented agent: one GenAI chat span with the answer."""
    answer = f"Answer to {question}"
    with trace.get_tracer("tests.agent").start_as_current_span("chat m") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute(
            "gen_ai.input.messages",
            json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}]),
        )
        span.set_attribute(
            "gen_ai.output.messages",
            json.dumps(
                [
                    {
                        "role": "assistant",
                        "parts": [{"type": "text", "content": answer}],
                        "finish_reason": "stop",
                    }
                ]
            ),
        )
    return answer


def scripted(body: dict[str, Any], n: int) -> Reply:
    """Scores case-N with SCORES[N]; case-10 always fails with a 500."""
    number = int(re.search(r"question case-(\d+)", user_text(body)).group(1))  # type: ignore[union-attr]
    if number >= len(SCORES):
        return Reply(status=500, raw='{"error": "provider down"}')
    return Reply(content=json.dumps({"score": SCORES[number], "explanation": "scripted"}))


def write_cases(path: Path, count: int) -> Path:
    lines = [
        json.dumps(
            {
                "session_id": f"case-{i}",
                "type": "happy",
                "question": f"question case-{i}",
                "reference_answer": "the reference",
            }
        )
        for i in range(count)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def create_scripted(store: Store, config: AemConfig, name: str, cases: Path) -> None:
    """A task-completion test judged by the scripted server, answered by ``agent``."""
    api.create_test(
        store,
        config,
        name,
        cases,
        ["check.task_completion"],
        judges={"*": "scripted"},
        source={"agent": "tests.checks.test_checks_llm:agent"},
    )


def test_seed_worked_example_70_and_30_percent_and_a_judge_error(tmp_path: Path) -> None:
    store = api.open_store(tmp_path / "aem.sqlite")
    cases = write_cases(tmp_path / "cases.jsonl", 11)
    with judge_server(scripted) as srv:
        config = scripted_judge_config(srv.url)
        create_scripted(store, config, "at7", cases)
        api.set_threshold(store, "check.task_completion", 9)
        create_scripted(store, config, "at9", cases)
        at7, at9 = api.run_test(store, config, "at7"), api.run_test(store, config, "at9")
    for run, rate in ((at7, 0.7), (at9, 0.3)):
        (summary,) = run.summaries
        assert summary.pass_rate == pytest.approx(rate)
        assert summary.mean_score == pytest.approx(7.0)  # 70 / 10: the error is not a 0
        assert summary.errors == 1 and not run.fully_evaluated
    error = next(e for e in at7.evaluations if e.outcome is Outcome.ERROR)
    assert error.case_id == "case-10" and "HTTP 500" in error.explanation
    # the project threshold changed after `at7` was created: its copy did not
    assert api.load_test(store, "at7").checks[0].threshold == 7.0
    assert {e.threshold for e in api.load_run(store, at7.run_id).evaluations} == {7.0}


def test_ten_scored_cases_without_the_error_give_the_same_figures(tmp_path: Path) -> None:
    store = api.open_store(tmp_path / "aem.sqlite")
    with judge_server(scripted) as srv:
        config = scripted_judge_config(srv.url)
        create_scripted(store, config, "t", write_cases(tmp_path / "c.jsonl", 10))
        run = api.run_test(store, config, "t")
    assert run.overall.pass_rate == pytest.approx(0.7) and run.fully_evaluated


def test_an_audit_without_a_judge_skips_llm_checks_with_the_reason() -> None:
    from aem.checks.relevance import RelevanceCheck
    from aem.testing import make_case, run_metric

    session = make_session(make_turn("answer", text="300 rubles"))
    asked = RelevanceCheck().for_audit(True, ())  # as [metrics."check.relevance"] asks for it
    (found,) = run_metric(asked, session, make_case(question="How much?"))
    assert found.outcome is Outcome.SKIP and "no judge configured" in found.explanation


class StepJudge:
    """Calls the turns listed in ``mistakes`` a mistake; counts its calls."""

    name = "scripted-steps"

    def __init__(self, mistakes: set[str]) -> None:
        self.mistakes = mistakes
        self.calls: list[str] = []

    def judge(self, request: JudgeRequest) -> JudgeVerdict:
        step = re.match(r"Step (t\d+)\.", request.step or "").group(1)  # type: ignore[union-attr]
        self.calls.append(step)
        return JudgeVerdict(self.name, "scored", f"{step} judged", mistake=step in self.mistakes)


def test_judge_step_makes_the_earliest_mistake_the_root_cause_within_the_cap() -> None:
    session = make_session(
        make_turn("reasoning", text="plan"),
        make_tool_call("lookup", {"q": 1}, result="x"),
        make_turn("reasoning", text="so it must be 2025"),
        make_tool_call("fetch", {"year": 2025}, result="y"),
        make_turn("reasoning", text="total is 5"),
        make_turn("answer", text="5"),
    )
    judge = StepJudge({"t3", "t5"})
    metric = JudgeStep(JudgeStepSettings(max_calls_per_session=5), judge=judge)
    report = Evaluator(AemConfig(), {}, [metric]).evaluate(session)
    labels = {t.turn_id: (t.label, t.inherited_from) for t in report.turns}
    assert labels["t3"] == (Label.ROOT_CAUSE, [])
    assert labels["t5"] == (Label.PRIOR_ACTION_FAILED, ["t3"])
    assert [r.turn_id for r in report.root_causes] == ["t3"]
    assert judge.calls == ["t1", "t2", "t3", "t4", "t5"]
    (last,) = report.turns[5].metrics
    assert last.outcome is Outcome.SKIP and "5 per session" in last.explanation


def test_judge_step_run_cap_and_off_without_a_judge() -> None:
    session = make_session(make_turn("reasoning", text="a"), make_turn("answer", text="b"))
    judge = StepJudge(set())
    metric = JudgeStep(JudgeStepSettings(max_calls_per_run=3), judge=judge)
    evaluator = Evaluator(AemConfig(), {}, [metric])
    evaluator.evaluate(session)
    second = evaluator.evaluate(session)
    assert len(judge.calls) == 3
    assert "3 per run" in second.turns[1].metrics[0].explanation
    assert Evaluator(AemConfig(), {}, [JudgeStep()]).evaluate(session).turns[0].metrics == []
