"""Read a judge model's reply tolerantly, or say exactly why it cannot be read.

Why tolerant: servers that ignore ``response_format`` (and models that ignore the prompt)
wrap the JSON in a Markdown fence, add a sentence after it, or write the score as
``"8/10"``. Those replies still carry an unambiguous score; refusing them would turn a
usable verdict into a judge error. A reply without an unambiguous score is an error,
never a guessed number.

>>> parse_score_reply('```json\\n{"score": "8/10", "explanation": "ok"}\\n``` Hope this helps')
(8.0, 'ok')
>>> parse_score_reply("Score: 7/10. Minor omission.")
(7.0, 'Score: 7/10. Minor omission.')
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[A-Za-z0-9_+-]*\s*\n?(.*?)```", re.DOTALL)
_OUT_OF = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:/|out of)\s*(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
_TEXT_SCORE = re.compile(
    r"\bscore\b\W{0,3}(\d+(?:\.\d+)?)(?:\s*(?:/|out of)\s*(\d+(?:\.\d+)?))?"
    r"|\b(\d+(?:\.\d+)?)\s*/\s*(10)\b",
    re.IGNORECASE,
)
_EXPLANATION_KEYS = ("explanation", "reason", "rationale", "justification", "comment")


class ReplyError(ValueError):
    """The reply holds no unambiguous verdict; the message says what was wrong."""


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text``: the whole text, a fenced block, or embedded."""
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


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
    """``(score, explanation)`` from a judge's reply to a check prompt."""
    obj = first_json_object(text)
    if obj is not None and "score" in obj:
        return _as_score(obj["score"]), _explanation(obj)
    found = _TEXT_SCORE.search(text)
    if found is None:
        raise ReplyError(f"no score in the reply: {text[:120]!r}")
    number, scale = (found.group(1), found.group(2)) if found.group(1) else found.group(3, 4)
    score = _as_score(f"{number}/{scale}" if scale else number)
    return score, text.strip()[:500]


def parse_step_reply(text: str) -> tuple[bool, str]:
    """``(mistake, explanation)`` from a judge's reply to the step prompt."""
    obj = first_json_object(text)
    if obj is None or "mistake" not in obj:
        raise ReplyError(f"no 'mistake' field in the reply: {text[:120]!r}")
    value = obj["mistake"]
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "false", "no"}:
        value = value.strip().lower() in {"true", "yes"}
    if not isinstance(value, bool):
        raise ReplyError(f"'mistake' is {value!r}, not true or false")
    return value, _explanation(obj)
