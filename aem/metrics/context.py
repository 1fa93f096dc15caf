"""What a metric may read, and the shared queries it may ask, each answered once.

Why typed queries instead of a shared dict: two metrics that need the tool-set match
must get the same match, computed once, with a type checker watching; a string-keyed
dict hid both the sharing and the type.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from aem import evidence as queries
from aem.cases import Case
from aem.evidence import Seen, SessionMatch, recovered_by
from aem.model import Session, Turn
from aem.settings import AemConfig

if TYPE_CHECKING:
    from aem.compare import SemanticComparator


@dataclass
class MetricContext:
    """The session, its case, the configuration, and cached queries about the session."""

    session: Session
    case: Case | None
    config: AemConfig
    comparator_factory: Callable[[], SemanticComparator] | None = None
    _seen: dict[str, Seen] = field(default_factory=dict, init=False, repr=False)
    _recovery: dict[str, Turn | None] = field(default_factory=dict, init=False, repr=False)

    @cached_property
    def comparator(self) -> SemanticComparator:
        """The semantic comparator (shared across sessions when the evaluator gives one)."""
        if self.comparator_factory is not None:
            return self.comparator_factory()
        from aem.compare import SemanticComparator

        return SemanticComparator(self.config.compare)

    @cached_property
    def facts(self) -> dict[str, Any]:
        """The case's reference facts (empty without a case)."""
        return self.case.facts if self.case else {}

    @cached_property
    def tool_turns(self) -> list[Turn]:
        """Tool-call turns carrying a call, in session order."""
        return queries.tool_turns(self.session)

    @cached_property
    def answers(self) -> list[Turn]:
        """Answers to the user (top-level context), in order."""
        return queries.answers_to_user(self.session)

    @cached_property
    def final_turn(self) -> Turn | None:
        """The last answer to the user, else the last top-level turn."""
        return queries.final_turn(self.session)

    @cached_property
    def task_texts(self) -> list[str]:
        """The task every turn saw: first user messages, root request, system instructions."""
        return queries.task_texts(self.session)

    @cached_property
    def tool_set_match(self) -> SessionMatch | None:
        """The case's expected calls matched against the session's (None without them)."""
        return queries.match_session(self.session, self.case, self.comparator, self.config.matching)

    def recovery(self, turn: Turn) -> Turn | None:
        """The later call that recovered ``turn``'s failed call, if any (the one rule,
        :func:`aem.evidence.recovery.recovered_by`), answered once per failed call."""
        if turn.turn_id not in self._recovery:
            self._recovery[turn.turn_id] = recovered_by(
                turn, self.tool_turns, self.comparator, self.config.matching
            )
        return self._recovery[turn.turn_id]

    def seen(self, turn: Turn) -> Seen:
        """What ``turn`` could see (inputs, facts, ancestors' results), gathered once."""
        found = self._seen.get(turn.turn_id)
        if found is None:
            found = self._seen[turn.turn_id] = queries.seen_by(
                self.session, turn, self.facts, self.config.compare, self.task_texts
            )
        return found
