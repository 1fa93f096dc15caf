"""The leave-one-set-out ablation's arithmetic and verdicts, on made-up figures.

Why: the verdict decides which of AEM's derivations stay. A rule must keep its place only
when removing it hurts a set it was not written for, on that set's check half; these
tests pin that logic without the development data or AEM's derivations module.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bench.agreement import ablate
from bench.agreement.figures import Cell, Figure
from bench.agreement.split import ALL, CHECK, TUNE


def _figure(
    name: str, tune: float, check: float, better: str = "higher", method: str = "AEM"
) -> Figure:
    cells = {TUNE: Cell(tune), CHECK: Cell(check), ALL: Cell((tune + check) / 2)}
    return Figure("x", name, method, cells, better)


def test_headlines_are_aem_s_rows_of_the_named_figures() -> None:
    figures = [
        _figure("session agreement", 0.5, 0.5),
        _figure("session agreement", 0.4, 0.4, method="every session fails"),
        _figure("sessions with suspects only", 0.1, 0.1),
        _figure("sessions with suspects only", 0.1, 0.1, "lower", "AEM, passed runs"),
        _figure("AG agent accuracy", 0.1, 0.1, method="AEM root cause, else first suspect"),
        _figure("AG first suspect agent accuracy", 0.1, 0.1, method="AEM first suspect"),
    ]
    assert ablate.headlines("tau-bench", figures) == [figures[0], figures[3]]
    assert ablate.headlines("whowhen", figures) == [figures[4]]
    assert ablate.headlines("nope", figures) == []


def test_a_gain_is_signed_by_the_figure_s_direction() -> None:
    reference = [_figure("agreement", 0.50, 0.60), _figure("false fail", 0.10, 0.10, "lower")]
    without = [_figure("agreement", 0.55, 0.50), _figure("false fail", 0.20, 0.05, "lower")]
    gains = {c.figure: c.gains for c in ablate.changes(reference, without)}
    assert gains["agreement"][TUNE] == pytest.approx(0.05)  # better without the rule
    assert gains["agreement"][CHECK] == pytest.approx(-0.10)  # worse without it
    assert gains["false fail"][TUNE] == pytest.approx(-0.10)  # more false fails: worse
    assert gains["false fail"][CHECK] == pytest.approx(0.05)
    missing = ablate.changes(reference, [])
    assert missing[0].gains == {TUNE: None, CHECK: None}


def _changes(tune: float, check: float) -> list[ablate.Change]:
    return [ablate.Change("f", {TUNE: tune, CHECK: check})]


def test_a_rule_that_only_moves_its_own_set_is_removed() -> None:
    by_set = {"whowhen": _changes(-0.05, -0.02), "tau-bench": _changes(0.0, 0.0)}
    assert ablate.verdict(by_set, ("whowhen",)) == ablate.ONLY_FOUND
    assert ablate.left_out(by_set, ("whowhen",)) == 0.0


def test_a_rule_needed_on_another_set_s_check_half_keeps_its_place() -> None:
    by_set = {"whowhen": _changes(-0.05, 0.0), "tau-bench": _changes(0.0, -0.0125)}
    assert ablate.verdict(by_set, ("whowhen",)) == ablate.KEEP
    assert ablate.left_out(by_set, ("whowhen",)) == pytest.approx(-0.0125)


def test_worse_only_on_another_set_s_tune_half_does_not_count() -> None:
    by_set = {"whowhen": _changes(0.0, 0.0), "tau-bench": _changes(-0.2, 0.0)}
    assert ablate.verdict(by_set, ("whowhen",)) == ablate.NOWHERE


def test_a_set_is_worse_when_its_headlines_sum_below_zero() -> None:
    mixed = [
        ablate.Change("false pass", {TUNE: 0.0, CHECK: 0.03}),
        ablate.Change("false fail", {TUNE: 0.0, CHECK: -0.01}),
    ]
    assert ablate.verdict({"perturbation": mixed}, ("tau-bench",)).startswith("remove")
    assert ablate.left_out({"perturbation": mixed}, ("tau-bench",)) == pytest.approx(0.02)
    assert ablate.verdict({"perturbation": mixed}, ("whowhen",)).endswith("were not run)")


@dataclass(frozen=True)
class _Rule:
    name: str
    found_on: tuple[str, ...]


def test_run_all_measures_with_each_rule_off(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reference run and one run per rule, each under ``disabled``; the set's
    measure is stubbed to read which rule is off."""
    off: list[str] = []

    def measure(data: Path, workers: int) -> list[Figure]:
        assert workers == 1
        value = 0.4 if "needed" in off else 0.5
        return [_figure("fail-labelled caught", 0.5, value)]

    @contextmanager
    def disabled(names: list[str]) -> Any:
        off.extend(names)
        try:
            yield
        finally:
            del off[: len(names)]

    monkeypatch.setitem(ablate.SETS, "matching", measure)
    rules = [_Rule("needed", ("tau-bench",)), _Rule("idle", ("matching",))]
    switch: Any = disabled
    result = list(ablate.run_all(["matching"], Path("."), rules, switch))
    assert [(a.rule, a.verdict) for a in result] == [
        ("needed", ablate.KEEP),
        ("idle", ablate.NOWHERE),
    ]
    assert result[0].left_out == pytest.approx(-0.1)
    ablate.render(result)
    assert "keeps its place" in capsys.readouterr().out
    assert ablate.as_json(result[0])["changes"]["matching"][0]["gain_when_removed"][CHECK] == (
        pytest.approx(-0.1)
    )


def test_without_data_or_with_an_unknown_set_the_command_exits_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ablate.ENV, raising=False)
    assert ablate.main([]) == 2
    assert ablate.main(["--data", str(tmp_path), "--sets", "nope"]) == 2
    assert "ragtruth" not in ablate.DEFAULT_SETS  # slow: only when asked for


def test_perturbation_rows_count_as_the_set_their_sessions_come_from() -> None:
    """A rule found on tau-bench does not earn its place by helping the perturbation rows
    measured on tau-bench's sessions; on Who&When's it does."""
    tau_row = ablate.Change("tau-bench airline false fail", {TUNE: 0.0, CHECK: -0.03})
    who_row = ablate.Change("Who&When HC false fail", {TUNE: 0.0, CHECK: -0.01})
    assert ablate.sources("perturbation", tau_row) == ("perturbation", "tau-bench")
    assert ablate.sources("tau-bench", tau_row) == ("tau-bench",)
    assert ablate.verdict({"perturbation": [tau_row]}, ("tau-bench",)) == ablate.ONLY_FOUND
    assert ablate.left_out({"perturbation": [tau_row]}, ("tau-bench",)) == 0.0
    both = {"perturbation": [tau_row, who_row]}
    assert ablate.verdict(both, ("tau-bench",)) == ablate.KEEP
    assert ablate.left_out(both, ("tau-bench",)) == pytest.approx(-0.01)
