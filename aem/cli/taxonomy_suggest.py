"""A starting failure taxonomy from a run's root causes, and what each rule covers.

Why clustering: a team's categories are its own, but writing the first rules means
reading every explanation. Root causes whose explanations say the same thing in other
words (embedded with the model the comparator ships, cosine distance) are grouped, and
each group becomes one ``[[taxonomy]]`` rule — its metric, turn kind and tool when the
group shares them, and a pattern of the words every explanation in it contains.

Why the rules are checked against the input: a rule is only worth reading if it decides
something. The audit categorises a root cause by its first failed metric and that
metric's explanation (:func:`aem.ranking.categorize`, first matching rule wins), so the
suggestion is built from exactly that, and then applied the same way: a rule that
decides no root cause is left out, and each rule's coverage is the number of root causes
it decides. No rule is a catch-all: one with no condition, or one that matches every root
cause while they are of more than one kind (failed metric and turn kind) — such a group
is split by metric and turn kind instead. The output is the same for the same report
(inputs are sorted, the clustering has no randomness).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aem.foundation.model import AuditReport, Outcome
from aem.foundation.vocabulary import EXPLANATION_STOP_WORDS
from aem.ranking import categorize
from aem.settings import TaxonomyRule

# Whole words of letters and underscores (\b on both sides, as the pattern searches them):
# a fragment such as ``ethan_martin_`` of ``ethan_martin_2396`` would never match.
_WORD = re.compile(r"\b[A-Za-z][A-Za-z_]{3,}\b")
_CONDITIONS = ("metric", "kind", "name", "explanation")

Embed = Callable[[list[str]], Any]


@dataclass(frozen=True)
class Failure:
    """A root cause as a taxonomy rule sees it: its first failed metric, the turn kind
    and name, and that metric's explanation."""

    metric: str
    kind: str
    name: str
    explanation: str


@dataclass
class SuggestedRule:
    """One rule and the root causes of the input it decides (the first rule to match)."""

    rule: dict[str, Any]
    decides: int = 0
    example: str = ""

    @property
    def category(self) -> str:
        return str(self.rule["category"])


@dataclass(frozen=True)
class Suggestion:
    """The rules in file order, and how many root causes the input has."""

    rules: list[SuggestedRule]
    root_causes: int
    left_out: int  # rules an earlier rule left nothing to decide

    @property
    def categorised(self) -> int:
        return sum(rule.decides for rule in self.rules)


def root_cause_failures(report: AuditReport) -> list[Failure]:
    """One failure per root cause of the report, as the audit categorises it."""
    found = []
    for session in report.sessions:
        turns = {turn.turn_id: turn for turn in session.turns}
        for cause in session.root_causes:
            turn = turns.get(cause.turn_id)
            if not cause.metrics or turn is None:
                continue
            explanation = next(
                (
                    m.explanation
                    for m in turn.metrics
                    if m.name == cause.metrics[0] and m.outcome is Outcome.FAIL
                ),
                "",
            )
            found.append(Failure(cause.metrics[0], cause.kind.value, cause.name, explanation))
    return found


def cluster(texts: list[str], vectors: Any, distance: float) -> list[int]:
    """Cluster label per text: average linkage on cosine distance, cut at ``distance``."""
    if len(texts) < 2:
        return [1] * len(texts)
    from scipy.cluster.hierarchy import fcluster, linkage

    tree = linkage(vectors, method="average", metric="cosine")
    return [int(x) for x in fcluster(tree, t=distance, criterion="distance")]


def shared_words(texts: list[str], limit: int = 3) -> list[str]:
    """Words (lower case) every text contains, most specific first: the pattern's words.

    >>> shared_words(["HTTP 429: rate limit exceeded", "rate limit exceeded for get_quote"])
    ['exceeded', 'limit', 'rate']
    >>> shared_words(["no user ethan_martin_2396", "no user ethan_martin_2396"])
    ['user']
    """
    sets = [{w.lower() for w in _WORD.findall(t)} - EXPLANATION_STOP_WORDS for t in texts]
    common = set.intersection(*sets) if sets else set()
    return sorted(common, key=lambda w: (-len(w), w))[:limit]


def rule_for(group: Sequence[Failure]) -> dict[str, Any]:
    """One ``[[taxonomy]]`` rule describing every failure of ``group``."""
    rule: dict[str, Any] = {}
    for field in ("metric", "kind", "name"):
        values = {getattr(f, field) for f in group}
        if len(values) == 1:
            rule[field] = values.pop()
    words = shared_words([f.explanation for f in group])
    shown = sorted(words, key=" ".join(group[0].explanation.split()).lower().find)
    label = " ".join(shown) or rule.get("name") or rule.get("kind") or "various"
    rule = {"category": f"{rule.get('metric', 'mixed')}: {label}", **rule}
    if words:
        rule["explanation"] = "(?is)" + "".join(rf"(?=.*\b{re.escape(w)}\b)" for w in words)
    return rule


def matches(rule: dict[str, Any], failure: Failure) -> bool:
    """Whether ``rule`` alone would categorise ``failure`` (as the audit tests a rule)."""
    only = [TaxonomyRule.model_validate(rule)]
    found = categorize(
        failure.metric, failure.kind, failure.name, only, explanation=failure.explanation
    )
    return found is not None


def is_catch_all(rule: dict[str, Any], failures: Sequence[Failure]) -> bool:
    """A rule with no condition, or one matching every failure of an input whose failures
    are of more than one kind (failed metric and turn kind)."""
    if not any(key in rule for key in _CONDITIONS):
        return True
    kinds = {(f.metric, f.kind) for f in failures}
    return len(kinds) > 1 and all(matches(rule, f) for f in failures)


def rules_for(group: list[Failure], failures: Sequence[Failure]) -> list[dict[str, Any]]:
    """The group's rule, or, when it would be a catch-all, one rule per failed metric and
    turn kind in the group (each then has those two conditions at least)."""
    rule = rule_for(group)
    if not is_catch_all(rule, failures):
        return [rule]
    parts: dict[tuple[str, str], list[Failure]] = {}
    for failure in group:
        parts.setdefault((failure.metric, failure.kind), []).append(failure)
    return [rule_for(parts[key]) for key in sorted(parts, key=lambda k: (-len(parts[k]), k))]


def suggest(report: AuditReport, embed: Embed, distance: float) -> Suggestion:
    """Rules for the report's root causes, largest group first, each deciding at least
    one root cause."""
    failures = root_cause_failures(report)
    weight = Counter(failures)
    distinct = sorted(weight, key=lambda f: (f.metric, f.explanation, f.kind, f.name))
    texts = [f"{f.metric}: {' '.join(f.explanation.split())}" for f in distinct]
    labels = cluster(texts, embed(texts) if texts else None, distance)
    groups: dict[int, list[Failure]] = {}
    for label, item in zip(labels, distinct, strict=True):
        groups.setdefault(label, []).append(item)
    ordered = sorted(
        groups.values(), key=lambda g: (-sum(weight[f] for f in g), g[0].metric, g[0].explanation)
    )
    rules = [SuggestedRule(rule) for group in ordered for rule in rules_for(group, failures)]
    _unique_categories(rules)
    for failure in failures:
        decided = next((r for r in rules if matches(r.rule, failure)), None)
        if decided is not None:
            decided.decides += 1
            decided.example = decided.example or " ".join(failure.explanation.split())
    kept = [rule for rule in rules if rule.decides]
    return Suggestion(kept, len(failures), len(rules) - len(kept))


def _unique_categories(rules: list[SuggestedRule]) -> None:
    """Number repeated category names (``… (2)``): categories are what the rules name."""
    counts = Counter[str]()
    for rule in rules:
        counts[rule.category] += 1
        if counts[rule.category] > 1:
            rule.rule["category"] += f" ({counts[rule.category]})"
