"""Generated domains audited end to end: every wrong value proven where it was made,
no correct session failed, with and without the natural cases file.

The sessions are recorded with the real OpenTelemetry SDK (bench.domains.generate) in
four languages; the truth is known by construction, so the test reads no session.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.domains.catalog import DOMAINS
from bench.domains.flows import FLOWS
from bench.domains.generate import CORRECT, WRONG, generate
from bench.domains.run import audit, score

# Three domains of different currencies, roles and tools; the bench runs all twelve.
SOME = tuple(d for d in DOMAINS if d.name in ("scheduling", "logistics", "telecom"))


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    folder = tmp_path_factory.mktemp("domains")
    return folder, generate(folder, 1, SOME)


@pytest.mark.slow
@pytest.mark.parametrize("with_cases", [False, True])
def test_wrong_values_are_proven_and_correct_sessions_pass(
    generated: tuple[Path, list], with_cases: bool
) -> None:
    folder, truths = generated
    rows = [r for r in score(truths, audit(folder, with_cases)) if r["variant"] not in FLOWS]
    correct = [r for r in rows if not r["wrong"]]
    wrong = [r for r in rows if r["wrong"]]
    assert len(correct) == 3 * 4 * len(CORRECT) and len(wrong) == 3 * 4 * len(WRONG)
    assert [r["session_id"] for r in correct if r["root_cause"]] == []
    # "in 2 days" beside the record's "reminder_in_days": 2 is said by a source: no suspect.
    assert [r["session_id"] for r in correct if r["variant"] == "duration" and r["suspect"]] == []
    # Every root cause found sits where the wrong value was made.
    assert [r["session_id"] for r in wrong if r["root_cause"] and not r["at_place"]] == []
    caught = sum(r["right"] for r in wrong) / len(wrong)
    assert caught >= 0.95, [r["session_id"] for r in wrong if not r["right"]]
    for variant in ("wrong_date", "wrong_time", "wrong_argument", "wrong_relative_day"):
        assert all(r["right"] for r in wrong if r["variant"] == variant), variant


@pytest.mark.slow
def test_what_reached_the_user_is_labelled(generated: tuple[Path, list]) -> None:
    """The flows: each answer above a sub-agent's wrong value inherits it (one and two
    levels), a success claimed after an unrecovered failure fails in every language, an
    honest report of it does not, and only the answer's unsupported value is a suspect."""
    folder, truths = generated
    rows = {r["session_id"]: r for r in score(truths, audit(folder, False))}
    flows = [r for r in rows.values() if r["variant"] in FLOWS]
    assert len(flows) == 3 * 4 * len(FLOWS)
    relays = [r for r in flows if r["inherits"]]
    assert [r["session_id"] for r in relays if r["inherited"] < r["inherits"]] == []
    assert [
        r["session_id"] for r in flows if r["variant"] == "relay_right_1" and r["inherited"]
    ] == []
    claims = [r for r in flows if r["answer_fails"]]
    assert {r["language"] for r in claims} == {"en", "de", "es", "ru"}
    assert [r["session_id"] for r in claims if not r["claim_failed"]] == []
    honest = [r for r in flows if r["variant"] == "honest_failure"]
    assert [r["session_id"] for r in honest if r["claim_failed"]] == []
    told = [r for r in flows if r["answer_suspect"]]
    assert [r["session_id"] for r in told if r["answer_label"] != "suspect"] == []
    doubts = [r for r in flows if r["variant"] == "doubt_in_reasoning"]
    assert [r["session_id"] for r in doubts if r["suspect"]] == []
