"""Read an answer that must be only JSON: raw, or one fenced Markdown code block.

The rule (firm): the whole answer is either a JSON document, or exactly one code block
— opened by a line of three backticks with ``json``, no, or any other language tag, and
closed by three backticks — holding one. Any text before or after fails even when the
JSON itself is valid, and so do two blocks: the consumer of such an answer would have to
guess which part is the data.

>>> read_json_only('```yaml\\n{"a": 1}\\n```')
({'a': 1}, None)
>>> read_json_only('Here it is: {"a": 1}')[1]
"text before the JSON: 'Here it is:'"
"""

from __future__ import annotations

import json
import re
from typing import Any

_BLOCK = re.compile(r"```([A-Za-z0-9_+.#-]*)[ \t]*\n?(.*?)\n?[ \t]*```", re.DOTALL)


def _short(text: str, limit: int = 60) -> str:
    text = text.strip()
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _parse(text: str, where: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"{where}not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    except RecursionError:
        return None, f"{where}not valid JSON: nested too deeply"


def _fenced(text: str) -> tuple[Any, str | None]:
    blocks = list(_BLOCK.finditer(text))
    if len(blocks) > 1:
        return None, f"{len(blocks)} code blocks: the answer must be one block or raw JSON"
    if not blocks:
        return None, "an unclosed code block"
    block = blocks[0]
    if text[: block.start()].strip():
        return None, f"text before the code block: {_short(text[: block.start()])}"
    if text[block.end() :].strip():
        return None, f"text after the code block: {_short(text[block.end() :])}"
    return _parse(block.group(2), "the code block is ")


def _surrounded(text: str) -> str | None:
    """Name the text around a JSON value inside ``text``, if one is there."""
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"[\[{]", text)):
        try:
            _, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            continue
        if text[:start].strip():
            return f"text before the JSON: {_short(text[:start])}"
        if text[end:].strip():
            return f"text after the JSON: {_short(text[end:])}"
    return None


def read_json_only(answer: str) -> tuple[Any, str | None]:
    """``(value, None)`` when the answer is only JSON, else ``(None, why not)``."""
    text = answer.strip()
    if not text:
        return None, "the answer is empty"
    if "```" in text:
        return _fenced(text)
    value, problem = _parse(text, "")
    if problem is None:
        return value, None
    return None, _surrounded(text) or problem
