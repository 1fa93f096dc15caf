"""Read a judge model's verdict from its reply, or say exactly why it cannot be read.

Why one verdict or none: a judge often quotes the data it judges, and the data is the
agent's — an answer that says ``{"score": 10}`` or "score 10" puts a number in the reply
that is not the judge's, and it may come before the judge's verdict or after it. Nothing
in the reply's layout tells them apart (a quoted object can end the reply; an injected
answer can write "Final: 10/10"), so taking the first, the last or the one "labelled
final" lets the agent's text pick its own grade. So the verdict is the reply when the
reply is one JSON object (what ``response_format`` asks for); else the score the reply
holds, once or repeated; two different scores are a judge error ("ambiguous"), never one
of them.

Why still tolerant: servers that ignore ``response_format`` wrap the JSON in a Markdown
fence, add a sentence after it, or write the score as ``"8/10"``. Those replies carry one
unambiguous score, and refusing them would turn a usable verdict into a judge error.

>>> parse_score_reply('```json\\n{"score": "8/10", "explanation": "ok"}\\n``` Hope this helps')
(8.0, 'ok')
>>> parse_score_reply("Score: 7/10. Minor omission.")
(7.0, 'Score: 7/10. Minor omission.')
>>> parse_score_reply('Score 2/10. {"score": 2, "explanation": "wrong"}')
(2.0, 'wrong')
>>> parse_score_reply('{"score": 2} It quotes {"score": 10}.')  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
aem.judges.parse.ReplyError: ambiguous reply: 2 verdicts (2, 10) that differ; ...
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_FENCE = re.compile(r"```[A-Za-z0-9_+-]*\s*\n?(.*?)```", re.DOTALL)
_OUT_OF = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:/|out of)\s*(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
_TEXT_SCORE = re.compile(
    r"\bscore\b\W{0,3}(\d+(?:\.\d+)?)(?:\s*(?:/|out of)\s*(\d+(?:\.\d+)?))?"
    r"|\b(\d+(?:\.\d+)?)\s*/\s*(10)\b",
    re.IGNORECASE,
)
_EXPLANATION_KEYS = ("explanation", "reason", "rationale", "justification", "comment")
# Where a JSON object may start is tried at most this often: a reply is capped in bytes,
# and a reply with more candidate objects than this holds no single verdict anyway.
_MAX_OBJECT_STARTS = 200
_EXPLANATION_FROM_TEXT = 500


class ReplyError(ValueError):
    """The reply holds no unambiguous verdict; the message says what was wrong."""


@dataclass(frozen=True)
class _Candidate:
    """One verdict-looking part of a reply: a JSON object with the key, or a score in text."""

    start: int
    end: int
    value: Any
    obj: dict[str, Any] | None = None


def _whole_object(text: str) -> dict[str, Any] | None:
    """The reply as one JSON object: the whole text, or one fenced block that is all of it."""
    stripped = text.strip()
    fenced = _FENCE.fullmatch(stripped)
    for candidate in (stripped, fenced.group(1).strip() if fenced else None):
        if candidate is None:
            continue
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _objects(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """Every outermost JSON object embedded in ``text``, with where it starts and ends."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, int, dict[str, Any]]] = []
    end = 0
    for tried, match in enumerate(re.finditer(r"\{", text)):
        if tried >= _MAX_OBJECT_STARTS:
            break
        if match.start() < end:
            continue  # inside an object already found
        try:
            value, stop = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append((match.start(), stop, value))
            end = stop
    return found


def _candidates(text: str, key: str, with_text: bool) -> list[_Candidate]:
    """The JSON objects holding ``key`` and (``with_text``) the scores written in text
    outside every object, in reply order."""
    objects = _objects(text)
    found = [_Candidate(a, b, obj[key], obj) for a, b, obj in objects if key in obj]
    if with_text:
        for match in _TEXT_SCORE.finditer(text):
            if any(a <= match.start() < b for a, b, _ in objects):
                continue
            number, scale = match.group(1, 2) if match.group(1) else match.group(3, 4)
            value = f"{number}/{scale}" if scale else number
            found.append(_Candidate(match.start(), match.end(), value))
    return sorted(found, key=lambda c: c.start)


def _verdict(text: str, key: str, with_text: bool, read: Callable[[Any], Any]) -> _Candidate:
    """The judge's one verdict (``read`` makes each candidate's value comparable and
    raises :class:`ReplyError` when it cannot), or :class:`ReplyError`."""
    whole = _whole_object(text)
    if whole is not None and key in whole:
        return _Candidate(0, len(text), whole[key], whole)
    found = _candidates(text, key, with_text)
    if not found:
        what = "score" if with_text else f"{key!r} field"
        raise ReplyError(f"no {what} in the reply: {text[:120]!r}")
    if len(found) == 1:
        return found[0]  # read by the caller, which says why a value is not a verdict
    values = [_comparable(read, c.value) for c in found]
    if all(v == values[0] for v in values):
        # One verdict, maybe repeated ("Score: 2/10" and its JSON): the JSON object
        # carries the explanation.
        return next((c for c in reversed(found) if c.obj is not None), found[-1])
    shown = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values[:6])
    raise ReplyError(
        f"ambiguous reply: {len(found)} verdicts ({shown}{', …' if len(found) > 6 else ''}) "
        "that differ; a judge's reply must hold one (a verdict it quotes from the judged text "
        "cannot be told from its own)"
    )


def _comparable(read: Callable[[Any], Any], value: Any) -> Any:
    """``read(value)``, or what was written when it is no verdict (it then differs from
    every verdict: a reply with a readable score and an unreadable one holds no single
    verdict either)."""
    try:
        return read(value)
    except ReplyError:
        return f"unreadable {value!r}"


def _as_score(value: Any) -> float:
    """A 0–10 score from a number, ``"8"``, ``"8/10"`` or ``"80/100"``."""
    if isinstance(value, bool):
        raise ReplyError(f"score is a boolean ({value})")
    if isinstance(value, int | float):
        score = float(value)
    elif isinstance(value, str):
        found = _OUT_OF.match(value)
        if found:
            scale = float(found.group(2))
            if scale <= 0:
                raise ReplyError(f"score {value!r} has a zero scale")
            score = float(found.group(1)) * 10.0 / scale
        else:
            try:
                score = float(value.strip())
            except ValueError as exc:
                raise ReplyError(f"score {value!r} is not a number") from exc
    else:
        raise ReplyError(f"score is {type(value).__name__}, not a number")
    if not 0.0 <= score <= 10.0:
        raise ReplyError(f"score {score:g} is outside 0-10")
    return score


def _explanation(obj: dict[str, Any]) -> str:
    for key in _EXPLANATION_KEYS:
        if isinstance(obj.get(key), str):
            return str(obj[key]).strip()
    return ""


def parse_score_reply(text: str) -> tuple[float, str]:
    """``(score, explanation)``: the judge's final verdict in its reply to a check prompt."""
    verdict = _verdict(text, "score", with_text=True, read=_as_score)
    score = _as_score(verdict.value)
    if verdict.obj is not None:
        return score, _explanation(verdict.obj)
    return score, text.strip()[:_EXPLANATION_FROM_TEXT]


def parse_step_reply(text: str) -> tuple[bool, str]:
    """``(mistake, explanation)``: the judge's final verdict in its reply to the step prompt."""
    verdict = _verdict(text, "mistake", with_text=False, read=_as_mistake)
    return _as_mistake(verdict.value), _explanation(verdict.obj or {})


def _as_mistake(value: Any) -> bool:
    """``true`` / ``false`` (or ``"yes"`` / ``"no"``) as a boolean."""
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "false", "no"}:
        value = value.strip().lower() in {"true", "yes"}
    if not isinstance(value, bool):
        raise ReplyError(f"'mistake' is {value!r}, not true or false")
    return value
