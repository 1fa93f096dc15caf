"""What a metric may read, and the shared queries it may ask, each answered once.

Why typed queries instead of a shared dict: two metrics that need the tool-set match
must get the same match, computed once, with a type checker watching; a string-keyed
dict hid both the sharing and the type. Every answer is kept in the session's
:class:`~aem.foundation.sessioncache.SessionCache` — the one the evaluation opened (where value
extraction keeps its values too), else the context's own.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING, Any

from aem import evidence
from aem.cases import Case
from aem.evidence import Seen, SessionMatch, recovered_by, reported_decline
from aem.foundation.model import Session, Turn
from aem.foundation.sessioncache import SessionCache, Slot, active_cache
from aem.graph import Ancestry, TurnGraph
from aem.metrics.services import EvaluationServices

if TYPE_CHECKING:
    from aem.compare import SemanticComparator

_TOOL_TURNS: Slot[list[Turn]] = Slot("tool turns")
_ANSWERS: Slot[list[Turn]] = Slot("answers to the user")
_FINAL_TURN: Slot[Turn | None] = Slot("final turn")
_TASK_TEXTS: Slot[list[str]] = Slot("task texts")
_TOOL_SET_MATCH: Slot[SessionMatch | None] = Slot("tool-set match")
_SEEN: Slot[dict[str, Seen]] = Slot("seen by turn")
_RECOVERY: Slot[dict[str, Turn | None]] = Slot("recovery by turn")


@dataclass
class MetricContext:
    """The session, its case, its turn graph, the services metrics share, and cached
    queries about the session. ``cache`` is the session's cache: the evaluation's open
    one by default (:func:`aem.foundation.sessioncache.session_cache`), else one of the context's
    own.

    Why the context carries the graph (as pydantic_evals' ``EvaluatorContext`` carries
    its span tree) and the session does not: the graph is built above the model, from
    the turns, by whoever evaluates (:func:`aem.graph.session_graph`)."""

    session: Session
    case: Case | None
    services: EvaluationServices
    graph: TurnGraph
    cache: InitVar[SessionCache | None] = None
    _cache: SessionCache = field(init=False, repr=False)

    def __post_init__(self, cache: SessionCache | None) -> None:
        found = cache if cache is not None else active_cache()
        self._cache = found if found is not None and found.claim(self.session) else SessionCache()

    @property
    def comparator(self) -> SemanticComparator:
        """The semantic comparator (shared across sessions when the evaluator gives one)."""
        return self.services.comparator()

    @property
    def facts(self) -> dict[str, Any]:
        """The case's reference facts (empty without a case)."""
        return self.case.facts if self.case else {}

    @property
    def tool_turns(self) -> list[Turn]:
        """Tool-call turns carrying a call, in session order."""
        return self._cache.get(_TOOL_TURNS, lambda: evidence.tool_turns(self.session))

    @property
    def answers(self) -> list[Turn]:
        """Answers to the user (top-level context), in order."""
        return self._cache.get(_ANSWERS, lambda: evidence.answers_to_user(self.session))

    @property
    def final_turn(self) -> Turn | None:
        """The last answer to the user, else the last top-level turn."""
        return self._cache.get(_FINAL_TURN, lambda: evidence.final_turn(self.session))

    @property
    def task_texts(self) -> list[str]:
        """The task every turn saw: first user messages, root request, system instructions."""
        return self._cache.get(_TASK_TEXTS, lambda: evidence.task_texts(self.session))

    @property
    def tool_set_match(self) -> SessionMatch | None:
        """The case's expected calls matched against the session's (None without them)."""
        return self._cache.get(
            _TOOL_SET_MATCH,
            lambda: evidence.match_session(
                self.session, self.case, self.comparator, self.services.matching
            ),
        )

    @property
    def ancestry(self) -> Ancestry:
        """The turn graph's ancestry ("is A an ancestor of B?"; :attr:`graph` answers
        the rest)."""
        return self.graph.ancestry

    def recovery(self, turn: Turn) -> Turn | None:
        """The later call that recovered ``turn``'s failed call, if any (the one rule,
        :func:`aem.evidence.recovery.recovered_by`), answered once per failed call."""
        known = self._cache.table(_RECOVERY)
        if turn.turn_id not in known:
            known[turn.turn_id] = recovered_by(
                turn, self.tool_turns, self.comparator, self.services.matching
            )
        return known[turn.turn_id]

    def reported_decline(self, turn: Turn) -> Turn | None:
        """The answer that told the user the world declined ``turn``'s call, which the
        agent then left alone (:func:`aem.evidence.recovery.reported_decline`)."""
        return reported_decline(turn, self.session.turns, self.comparator, self.services.matching)

    def seen(self, turn: Turn) -> Seen:
        """What ``turn`` could see (inputs, facts, ancestors' results), gathered once."""
        known = self._cache.table(_SEEN)
        found = known.get(turn.turn_id)
        if found is None:
            found = known[turn.turn_id] = evidence.seen_by(
                self.session,
                self.graph,
                turn,
                self.facts,
                self.services.compare,
                self.task_texts,
                self._cache,
            )
        return found
