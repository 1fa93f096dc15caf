"""What is remembered while one session is evaluated: one object, typed slots, one life.

Why one object: evaluating a session asks the same questions many times — a text's
values (each turn's text is evidence for later turns), the turn graph's ancestry, each
turn's value index, the tool-set match — and each answer was kept its own way (cached
properties on the metric context, two weak maps keyed by the graph, a context-variable
memo). One :class:`SessionCache` per evaluation holds them all and is dropped with it,
so nothing outlives the session and nothing is kept twice.

Each owner declares the :class:`Slot` it keeps (``Slot[Ancestry]("ancestry")``): the
type checker sees what a slot holds, and two owners cannot collide on a name. Queries
that are handed no context (value extraction deep inside the comparator) reach the
session's cache through :func:`active_cache`, set by :func:`session_cache` for the
evaluation's duration. It imports nothing of AEM, so every layer may use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class Slot(Generic[T]):
    """The typed name of one value a session cache keeps (compared by identity)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Slot({self.name!r})"


class SessionCache:
    """One session evaluation's remembered answers, each in its :class:`Slot`.

    ``owner`` is the session the cache serves once one claimed it (:meth:`claim`): a
    cache opened for one evaluation never answers another session's questions.
    """

    __slots__ = ("_values", "owner")

    def __init__(self) -> None:
        self._values: dict[Slot[Any], Any] = {}
        self.owner: object | None = None

    def get(self, slot: Slot[T], make: Callable[[], T]) -> T:
        """The slot's value, made by ``make`` the first time it is asked for."""
        try:
            value: T = self._values[slot]
        except KeyError:
            value = self._values[slot] = make()
        return value

    def put(self, slot: Slot[T], value: T) -> T:
        """Keep ``value`` in ``slot`` (replacing what it held), and return it."""
        self._values[slot] = value
        return value

    def table(self, slot: Slot[dict[K, V]]) -> dict[K, V]:
        """The slot's dictionary (made empty on first use): answers kept per key."""
        found: dict[K, V] | None = self._values.get(slot)
        if found is None:
            found = self._values[slot] = {}
        return found

    def claim(self, owner: object) -> bool:
        """Serve ``owner`` (a session); False if the cache already serves another one."""
        if self.owner is None:
            self.owner = owner
        return self.owner is owner


_ACTIVE: ContextVar[SessionCache | None] = ContextVar("aem_session_cache", default=None)


# The cache of the session being evaluated, if a :func:`session_cache` block runs, else
# None. The context variable's own getter: value extraction asks on every call, and a
# Python function around it would be one more call per extraction.
active_cache: Callable[[], SessionCache | None] = _ACTIVE.get


@contextmanager
def session_cache() -> Iterator[SessionCache]:
    """Within the block (also as a decorator), :func:`active_cache` is one cache.

    A nested block shares the outer block's cache: it lives as long as the outermost
    block, one session's evaluation, so it holds little the session does not hold.
    """
    found = _ACTIVE.get()
    if found is not None:
        yield found
        return
    cache = SessionCache()
    token = _ACTIVE.set(cache)
    try:
        yield cache
    finally:
        _ACTIVE.reset(token)
