"""Sessions whose right verdict is known by construction: what the agent was asked to
change, what it looked up on the way, and what it changed that nobody asked for.

Eight vocabularies of tools (files, airline, retail, banking, calendar, code hosting,
trading, messaging), each tool known here to read or to write, spelled in one of seven
ways per session (``get_balance``, ``getBalance``, ``GetBalance``, ``get-balance``,
``bank.get_balance``, ``bank/getBalance``, ``mcp__bank__get_balance``). A few tools read
or write under verbs no vocabulary of AEM holds (``ping_host``, ``place_order``): the
truth is what the tool does, not what AEM can tell, so those sessions measure its misses
too. Categories and their truth:

===================== ======= =======================================================
category              valid   what the agent did
===================== ======= =======================================================
clean                 yes     exactly the case's calls, look-ups in any order
extra_read            yes     the case's calls and 1–3 look-ups the case does not list
extra_read_odd_verb   yes     … one look-up under a verb AEM does not know; half of
                              these sessions declare it ``readOnlyHint: true``
optional_skipped      yes     skipped a look-up the case lists as optional
extra_write           no      the case's calls, look-ups, and one write nobody asked for
extra_write_odd_verb  no      … that write under a verb AEM does not know
missing_write         no      one of the case's writes never made
===================== ======= =======================================================
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# domain -> (reads, writes, reads under odd verbs, writes under odd verbs); each tool
# as its words (verb first) and its one argument's name.
Tool = tuple[tuple[str, ...], str]
DOMAINS: dict[str, tuple[list[Tool], list[Tool], list[Tool], list[Tool]]] = {
    "fs": (
        [(("ls",), "path"), (("pwd",), "shell"), (("du",), "path"), (("cat",), "file")],
        [(("mkdir",), "path"), (("rm",), "path"), (("mv",), "source"), (("touch",), "file")],
        [(("sniff", "dir"), "path")],
        [(("shred",), "file")],
    ),
    "air": (
        [(("get", "user", "profile"), "user"), (("search", "flights"), "origin")],
        [(("book", "seat"), "flight"), (("cancel", "booking"), "booking")],
        [(("ping", "gate", "status"), "gate")],
        [(("rebind", "ticket"), "ticket")],
    ),
    "shop": (
        [(("get", "order", "status"), "order"), (("list", "products"), "category")],
        [(("refund", "order"), "order"), (("update", "address"), "user")],
        [(("whois", "seller"), "seller")],
        [(("place", "order"), "cart")],
    ),
    "bank": (
        [(("get", "balance"), "account"), (("list", "transactions"), "account")],
        [(("transfer", "funds"), "account"), (("pay", "bill"), "bill")],
        [(("tally", "spending"), "account")],
        [(("open", "account"), "user")],
    ),
    "cal": (
        [(("list", "events"), "day"), (("view", "event"), "event")],
        [(("create", "event"), "title"), (("delete", "event"), "event")],
        [(("print", "agenda"), "day")],
        [(("bump", "meeting"), "event")],
    ),
    "code": (
        [(("search", "code"), "query"), (("describe", "repo"), "repo")],
        [(("create", "issue"), "title"), (("merge", "pull", "request"), "number")],
        [(("blame", "file"), "file")],
        [(("squash", "commits"), "branch")],
    ),
    "trade": (
        [(("fetch", "quote"), "symbol"), (("lookup", "symbol"), "company")],
        [(("sell", "stock"), "symbol"), (("buy", "stock"), "symbol")],
        [(("gauge", "volatility"), "symbol")],
        [(("short", "stock"), "symbol")],
    ),
    "chat": (
        [(("read", "messages"), "channel"), (("count", "unread"), "channel")],
        [(("send", "message"), "channel"), (("delete", "message"), "message")],
        [(("skim", "thread"), "thread")],
        [(("nudge", "user"), "user")],
    ),
}
STYLES = ("snake", "camel", "pascal", "kebab", "dotted", "slashed", "mcp")
CATEGORIES = (
    "clean",
    "extra_read",
    "extra_read_odd_verb",
    "optional_skipped",
    "extra_write",
    "extra_write_odd_verb",
    "missing_write",
)
VALID = {"clean", "extra_read", "extra_read_odd_verb", "optional_skipped"}


def spell(words: tuple[str, ...], style: str, domain: str) -> str:
    """A tool's words spelled one way."""
    snake = "_".join(words)
    camel = words[0] + "".join(w.capitalize() for w in words[1:])
    return {
        "snake": snake,
        "camel": camel,
        "pascal": "".join(w.capitalize() for w in words),
        "kebab": "-".join(words),
        "dotted": f"{domain}.{snake}",
        "slashed": f"{domain}/{camel}",
        "mcp": f"mcp__{domain}__{snake}",
    }[style]


@dataclass
class Call:
    name: str
    arguments: dict[str, Any]
    writes: bool


@dataclass
class Generated:
    """One session's calls in order, its case, and its truth."""

    category: str
    calls: list[Call]
    expected: list[dict[str, Any]]
    valid: bool
    culprit: int | None = None  # the index in ``calls`` of the call that broke it
    annotations: dict[str, Any] = field(default_factory=dict)


def _call(tool: Tool, style: str, domain: str, rng: random.Random, writes: bool) -> Call:
    words, argument = tool
    value = f"{argument[:3].upper()}-{rng.randrange(1000, 9999)}"
    return Call(spell(words, style, domain), {argument: value}, writes)


def _as_expected(call: Call, optional: bool = False) -> dict[str, Any]:
    found: dict[str, Any] = {"name": call.name, "arguments": dict(call.arguments)}
    return {**found, "optional": True} if optional else found


def generate(per_category: int = 40, seed: int = 44) -> Iterator[Generated]:
    """``per_category`` sessions of every category, reproducible from ``seed``."""
    rng = random.Random(seed)
    for category in CATEGORIES:
        for _ in range(per_category):
            yield _session(category, rng)


def _session(category: str, rng: random.Random) -> Generated:
    domain = rng.choice(sorted(DOMAINS))
    style = rng.choice(STYLES)
    reads, writes, odd_reads, odd_writes = DOMAINS[domain]
    read_calls = [_call(t, style, domain, rng, False) for t in reads]
    write_calls = [_call(t, style, domain, rng, True) for t in writes]
    first_read, other_reads = read_calls[0], read_calls[1:]
    expected_calls = [first_read, *write_calls]
    expected = [_as_expected(c, optional=category == "optional_skipped" and c is first_read)
                for c in expected_calls]  # fmt: skip
    calls = list(expected_calls)
    if category == "optional_skipped":
        calls.remove(first_read)
    generated = Generated(category, calls, expected, category in VALID)
    if category in ("extra_read", "extra_write", "extra_read_odd_verb", "extra_write_odd_verb"):
        for extra in rng.sample(other_reads, k=rng.randint(1, len(other_reads))):
            calls.insert(rng.randrange(len(calls) + 1), _renamed(extra, rng))
    if category == "extra_read_odd_verb":
        odd = _call(rng.choice(odd_reads), style, domain, rng, False)
        calls.insert(rng.randrange(len(calls) + 1), odd)
        if rng.random() < 0.5:
            generated.annotations[odd.name] = {"readOnlyHint": True}
    if category in ("extra_write", "extra_write_odd_verb"):
        pool = writes if category == "extra_write" else odd_writes
        unasked = _call(rng.choice(pool), style, domain, rng, True)
        unasked.arguments = {k: v + "-X" for k, v in unasked.arguments.items()}
        at = rng.randrange(1, len(calls) + 1)
        calls.insert(at, unasked)
        generated.culprit = at
    if category == "missing_write":
        calls.remove(rng.choice(write_calls))
    return generated


def _renamed(call: Call, rng: random.Random) -> Call:
    """The same look-up asked about another object (a look-up the case did not list)."""
    return Call(call.name, {k: re.sub(r"\d+$", str(rng.randrange(1000, 9999)), v)
                            for k, v in call.arguments.items()}, False)  # fmt: skip
