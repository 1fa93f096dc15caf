"""A table of named evidence rules that a bench can switch off one by one.

Why one shape for every rule: how a stated value is worked out (the derivations) and
what binds it to a source (the bindings) are both lists of small, separately justified
rules. Each must earn its place on sets it was not written for, so each carries the
development sets it was found on (``found_on``) and can be switched off by name in an
ablation bench (``bench.agreement.ablate``): a value only that rule decides is then left
to the rules after it. The tables are plain data; :meth:`RuleTable.active` is the only
place the switch is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Generic, TypeVar

In = TypeVar("In")
Out = TypeVar("Out")


@dataclass(frozen=True, slots=True)
class Rule(Generic[In, Out]):
    """One named rule: ``apply`` answers for one input, or None where it does not apply.
    ``found_on`` names the development sets it was found on (``tau-bench``, ``whowhen``,
    ``perturbation``, ``domains``; ``unknown`` where the history does not say)."""

    name: str
    found_on: tuple[str, ...]
    apply: Callable[[In], Out | None]


@dataclass(eq=False)
class RuleTable(Generic[In, Out]):
    """Rules in the order they are tried, and the names switched off for now."""

    kind: str
    rules: tuple[Rule[In, Out], ...]
    _off: frozenset[str] = field(default=frozenset(), repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(rule.name for rule in self.rules)

    def active(self) -> Iterator[Rule[In, Out]]:
        """The rules not switched off, in order."""
        return (rule for rule in self.rules if rule.name not in self._off)

    def is_active(self, name: str) -> bool:
        """Whether rule ``name`` is on (a rule read outside the table honours the switch)."""
        return name not in self._off

    def first(self, given: In) -> tuple[str, Out] | None:
        """The first active rule's answer for ``given``, with the rule's name."""
        for rule in self.active():
            found = rule.apply(given)
            if found is not None:
                return rule.name, found
        return None

    def disabled(self, names: Iterable[str]) -> AbstractContextManager[None]:
        """Rules ``names`` switched off inside a ``with`` block (besides any already off),
        for an ablation bench. Unknown names raise ValueError at once, listing the valid
        ones.

        >>> table = RuleTable("demo", (Rule("one", ("unknown",), lambda n: n + 1),))
        >>> with table.disabled(["one"]):
        ...     table.first(1) is None
        True
        >>> table.first(1)
        ('one', 2)
        """
        wanted = frozenset(names)
        unknown = sorted(wanted.difference(self.names))
        if unknown:
            raise ValueError(f"unknown {self.kind} {unknown}; valid: {', '.join(self.names)}")
        return self._switching_off(wanted)

    @contextmanager
    def _switching_off(self, names: frozenset[str]) -> Iterator[None]:
        before = self._off
        self._off = before | names
        try:
            yield
        finally:
            self._off = before
