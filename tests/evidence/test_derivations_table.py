"""The table of derivations (``aem.evidence.derivations``): one entry per rule, each
reachable through :func:`derive`, and the ``disabled`` switch an ablation bench uses."""

from __future__ import annotations

import json

import pytest

from aem.evidence.derivations import (
    DERIVATIONS,
    Derivation,
    ValueClaim,
    claim_in,
    derive,
    disabled,
)
from aem.evidence.support import judge_value

FLIGHTS = json.dumps({"flights": [{"id": "HAT1", "price": 105}, {"id": "HAT2", "price": 190}]})
WALLET = ("t1 wallet result", '{"voucher": {"amount": 90}}')
PRICE = ("t2 price result", '{"total": 240}')
CERTIFICATE = ("t1 user result", '{"certificate": {"amount": 500}}')
POLICY = ("t1 policy result", '{"compensation_per_passenger": "$50"}')

# One claim per derivation that it, and no entry before it, explains.
EXAMPLES: dict[str, ValueClaim] = {
    "list_count": claim_in("I found 2 flights.", "2", ("t1 search result", FLIGHTS)),
    "per_unit_product": claim_in(
        "For 2 passengers you get 4 free bags.", "4", "You may check 2 free bags per passenger."
    ),
    "written_arithmetic": claim_in(r"Mean: \frac{12.5 + 15.0}{2} = 13.75", "13.75"),
    "split_share": claim_in("Payment:\n- Voucher: €90\n- Card: €150", "€150", WALLET, PRICE),
    "listed_total": claim_in("Fares: $177, $146 and $180. The total is $503.", "$503"),
    "labelled_total": claim_in(
        "HAT1:\n- Economy: $51\n- Business: $300\nHAT2:\n- Economy: $55\n- Business: $320\n"
        "The total in economy is $106.",
        "$106",
    ),
    "column_total": claim_in("Your trip costs $295 in total.", "$295", ("t1 result", FLIGHTS)),
    "difference": claim_in("The booking is $329, so $171 remains of the $500.", "$171"),
    "balance": claim_in("The total is $299. You will have $201 remaining.", "$201", CERTIFICATE),
    "scaled": claim_in("For 3 passengers the total compensation is $150.", "$150", POLICY),
}


def _derived(claim: ValueClaim) -> str | None:
    return derive(claim.value, claim.text, claim.own, claim.seen, claim.settings)


def _status(claim: ValueClaim) -> str:
    verdict = judge_value(claim.value, claim.seen, claim.settings, text=claim.text, own=claim.own)
    return verdict.status


def test_names_are_unique_and_each_says_where_it_was_found() -> None:
    names = list(DERIVATIONS.names)
    assert len(names) == len(set(names))
    sets = {
        "tau-bench",
        "whowhen",
        "ragtruth",
        "perturbation",
        "instrumented",
        "domains",
        "unknown",
    }
    for derivation in DERIVATIONS.rules:
        assert derivation.found_on and set(derivation.found_on) <= sets, derivation.name
        assert derivation.apply.__doc__ and ">>>" in derivation.apply.__doc__


@pytest.mark.parametrize("derivation", DERIVATIONS.rules, ids=lambda d: d.name)
def test_every_derivation_is_reachable(derivation: Derivation) -> None:
    """Each entry explains its example through derive() — no entry before it does — and
    switched off, the value is no longer supported."""
    name = derivation.name
    claim = EXAMPLES[name]
    how = derivation.apply(claim)
    assert isinstance(how, str) and how.startswith(f"{claim.value.raw} = ")
    assert _derived(claim) == how
    assert _status(claim) == "derived"
    with disabled([name]):
        assert _derived(claim) is None
        assert _status(claim) == "unverified"


def test_the_examples_cover_the_table() -> None:
    assert set(EXAMPLES) == set(DERIVATIONS.names)


def test_disabled_restores_the_table_after_the_block_however_it_ends() -> None:
    claim = EXAMPLES["column_total"]
    with disabled(["column_total"]):
        with disabled(["balance"]):
            assert _derived(claim) is None
        assert _derived(claim) is None  # the outer block still holds it off
    assert _derived(claim) is not None
    with pytest.raises(RuntimeError), disabled(["column_total"]):
        raise RuntimeError("a bench run that fails")
    assert _derived(claim) is not None


def test_an_unknown_name_raises_listing_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="column_total") as raised:
        disabled(["column_totals"])
    assert "column_totals" in str(raised.value)
    assert all(name in str(raised.value) for name in DERIVATIONS.names)


def test_written_arithmetic_that_does_not_hold_derives_nothing() -> None:
    """A claim the answer works out wrongly is not rescued by another rule: $305 is the
    total of the column, but the answer wrote $105 + $190 = $305. With both
    written-arithmetic rule off, the column total explains it."""
    rows = json.dumps({"flights": [{"id": "HAT1", "price": 105}, {"id": "HAT2", "price": 200}]})
    claim = claim_in("The total is $105 + $190 = $305.", "$305", ("t1 result", rows))
    assert _derived(claim) is None
    with disabled(["written_arithmetic"]):
        assert "105 + 200" in (_derived(claim) or "")


def test_written_arithmetic_is_one_rule_for_notes_many_operands_and_refutation() -> None:
    """Two operands with a note each, many operands, and a wrong result: one rule reads
    all three, and a refutation names what the arithmetic gives."""
    noted = claim_in("Both legs: $105 (outbound) + $190 (return) = $295.", "$295")
    assert _derived(noted) == "$295 = $105 + $190 from its own text (written out)"
    many = claim_in("Three legs: 105 + 190 + 3 = 298.", "298")
    assert _derived(many) == "298 = 105 + 190 + 3 (written out)"
    wrong = claim_in("Three legs: 105 + 190 + 3 = 305.", "305")
    assert _status(wrong) == "contradicted"
    with disabled(["written_arithmetic"]):
        assert _status(wrong) == "unverified"
