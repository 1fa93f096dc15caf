"""Read or write by a tool's name, in every spelling, and by what a person or the tool says.

Names are generated — verbs × objects × spellings (snake_case, camelCase, PascalCase,
kebab-case, namespaced ``fs.ls`` / ``files/list`` / ``tools:get``, MCP ``mcp__server__tool``,
a chat-template channel suffix) — never one benchmark's list of tools.
"""

from __future__ import annotations

import itertools
import random

import pytest

from aem.matching.effects import (
    DeclaredEffects,
    Effect,
    ToolEffects,
    effect_by_annotations,
    effect_by_name,
)

READS = ["get", "list", "search", "find", "fetch", "read", "lookup", "query", "show", "describe"]
READS += ["count", "calculate", "check", "view", "retrieve", "inspect", "validate", "estimate"]
WRITES = ["create", "update", "delete", "cancel", "book", "send", "transfer", "pay", "write"]
WRITES += ["remove", "insert", "submit", "refund", "modify", "reserve", "upload", "publish"]
NOT_VERBS = ["frobnicate", "run", "execute", "process", "handle", "do", "zap", "cd", "python"]
OBJECTS = [[], ["user"], ["order", "history"], ["flight", "status"], ["file"], ["all", "items"]]


def _spellings(words: list[str]) -> list[str]:
    """One name in every spelling a trace may carry."""
    snake = "_".join(words)
    camel = words[0] + "".join(w.capitalize() for w in words[1:])
    pascal = "".join(w.capitalize() for w in words)
    kebab = "-".join(words)
    return [
        snake,
        camel,
        pascal,
        kebab,
        f"fs.{snake}",
        f"files/{camel}",
        f"tools:{kebab}",
        f"mcp__my_server__{snake}",
        f"functions.{snake}<|channel|>commentary",
        f"default_api:{pascal}",
    ]


def _names(verbs: list[str]) -> list[tuple[str, str]]:
    return [
        (verb, name)
        for verb, obj in itertools.product(verbs, OBJECTS)
        for name in _spellings([verb, *obj])
    ]


@pytest.mark.parametrize(
    ("verbs", "effect"),
    [(READS, Effect.READ), (WRITES, Effect.WRITE), (NOT_VERBS, Effect.UNKNOWN)],
    ids=["reads", "writes", "unknown"],
)
def test_the_verb_decides_in_every_spelling(verbs: list[str], effect: Effect) -> None:
    wrong = [(name, effect_by_name(name)) for _, name in _names(verbs)]
    wrong = [(name, found) for name, found in wrong if found.effect is not effect]
    assert wrong == []


def test_the_reason_names_the_verb_read() -> None:
    for verb, name in random.Random(7).sample(_names(READS), 40):
        assert effect_by_name(name).why == f"read verb '{verb}'", name


def test_a_verb_after_its_object_counts_and_the_namespace_is_not_the_verb() -> None:
    assert effect_by_name("stock_info_get").effect is Effect.READ
    assert effect_by_name("order.cancel").effect is Effect.WRITE
    assert effect_by_name("reservation_cancel").effect is Effect.WRITE
    assert effect_by_name("delete.tools.list_items").why == "read verb 'list'"
    assert effect_by_name("github.issues.create").effect is Effect.WRITE
    assert effect_by_name("list/frobnicate").why == "read verb 'list'"  # last segment says nothing


@pytest.mark.parametrize(
    "name",
    ["get_or_create_user", "findAndDelete", "search-then-book", "read_and_remove_file"],
)
def test_a_write_joined_to_a_read_writes(name: str) -> None:
    assert effect_by_name(name).effect is Effect.WRITE


@pytest.mark.parametrize(
    ("name", "effect"),
    [
        ("check_in", Effect.WRITE),
        ("checkIn", Effect.WRITE),
        ("check_out_cart", Effect.WRITE),
        ("sign_up_user", Effect.WRITE),
        ("look_up_customer", Effect.READ),
        ("get_out", Effect.UNKNOWN),  # a read verb with a particle is no known verb
        ("show_off", Effect.UNKNOWN),
        ("get_and_frob", Effect.UNKNOWN),  # joined with something that is not a read
        ("try_book_flight", Effect.WRITE),  # a modifier is not the verb
        ("batch_get_users", Effect.READ),
    ],
)
def test_two_word_verbs_and_modifiers(name: str, effect: Effect) -> None:
    assert effect_by_name(name).effect is effect


def test_shell_commands_that_read_and_that_write() -> None:
    for name in ("ls", "pwd", "du", "cat", "grep", "wc", "tail", "find", "stat"):
        assert effect_by_name(name).effect is Effect.READ, name
    for name in ("mkdir", "rm", "mv", "cp", "touch", "rmdir", "chmod"):
        assert effect_by_name(name).effect is Effect.WRITE, name
    for name in ("cd", "echo", "sort", "bash", ""):
        assert effect_by_name(name).effect is Effect.UNKNOWN, name


def test_annotations_read_as_mcp_defines_them() -> None:
    assert effect_by_annotations({"readOnlyHint": True}).effect is Effect.READ  # type: ignore[union-attr]
    assert effect_by_annotations({"readOnlyHint": False}).effect is Effect.WRITE  # type: ignore[union-attr]
    both = effect_by_annotations({"annotations": {"readOnlyHint": True, "destructiveHint": True}})
    assert both is not None and both.effect is Effect.WRITE
    assert effect_by_annotations({"destructiveHint": False}) is None  # says nothing of reads
    assert effect_by_annotations({"readOnlyHint": "yes"}) is None  # not a boolean: no word
    assert effect_by_annotations(None) is None


def test_a_person_first_then_the_definition_then_the_name() -> None:
    effects = ToolEffects(
        [
            DeclaredEffects("the case's", read_only=["run_query"], state_changing=["get_token"]),
            DeclaredEffects("[matching]", read_only=["get_token", "cd"], state_changing=["ls"]),
        ],
        {"Fetch-Page": {"readOnlyHint": False}, "zap": {"readOnlyHint": True}},
    )
    assert effects.of("run_query").why == "the case's read_only_tools"
    assert effects.of("get_token").why == "the case's state_changing_tools"
    assert effects.of("tools/cd").why == "[matching] read_only_tools"  # any spelling
    assert effects.of("ls").effect is Effect.WRITE
    assert effects.of("Fetch-Page").why == "readOnlyHint: false in its definition"
    assert effects.of("zap").effect is Effect.READ
    assert effects.of("delete_all").why == "write verb 'delete'"


def test_a_tool_in_both_lists_of_one_source_changes_state() -> None:
    effects = ToolEffects([DeclaredEffects("the case's", read_only=["x"], state_changing=["x"])])
    assert effects.of("x").effect is Effect.WRITE
