"""The judge prompts: versioned text files in the package, rendered into chat messages.

Why files with a version in their name: a run records the prompt version its scores came
from, so two runs are comparable only when it matches, and a prompt edit is a new file.
Why a nonce in the delimiters: the agent's answer goes in as data between
``<<<BEGIN nonce name>>>`` and ``<<<END nonce>>>``; the nonce is fresh per request, so no
answer can close the block early and smuggle text out of it into the instructions.
Why the data's own ``<<<`` are broken up: a model does not check nonces, so an answer
holding a line ``<<<END 0000>>>`` would look to it like the end of the data, and what
follows like instructions. Inside a block no ``<<<`` remains, so only AEM's delimiters
open or close one.

Why a schema: the verdict is asked for as one JSON object (:func:`verdict_schema`, sent
as ``response_format``), so the judge's score is a field of its own and never a number it
quotes from the data.
"""

from __future__ import annotations

import secrets
from functools import cache
from importlib.resources import files
from typing import Any

from aem.judges.base import JudgeRequest

PROMPT_VERSION = "v1"
# Step-shaped requests (a yes/no ``mistake`` verdict) whose metric has a prompt of its own.
# A check's prompt is not looked up here: the check sends it (``JudgeRequest.instructions``).
_STEP_PROMPTS = {"groundedness": "groundedness", "refusal": "refusal"}


@cache
def prompt_text(name: str, version: str = PROMPT_VERSION) -> str:
    """The text of ``prompts/<name>.<version>.txt`` (AEM's own prompts; a plug-in check
    brings its prompt as text)."""
    return (files("aem.judges") / "prompts" / f"{name}.{version}.txt").read_text(encoding="utf-8")


DELIMITER_OPEN = "<<<"
DEFUSED_OPEN = "<< <"


def data_block(nonce: str, name: str, text: str) -> str:
    """``text`` between delimiters the judge is told never to take instructions from; a
    ``<<<`` in it is written ``<< <``, so it can neither open nor close a block."""
    text = text.replace(DELIMITER_OPEN, DEFUSED_OPEN)
    return f"<<<BEGIN {nonce} {name}>>>\n{text}\n<<<END {nonce}>>>"


_EXPLANATION = {"type": "string"}
SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 0, "maximum": 10},
        "explanation": _EXPLANATION,
    },
    "required": ["score", "explanation"],
    "additionalProperties": False,
}
STEP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"mistake": {"type": "boolean"}, "explanation": _EXPLANATION},
    "required": ["mistake", "explanation"],
    "additionalProperties": False,
}


def verdict_schema(request: JudgeRequest) -> dict[str, Any]:
    """The OpenAI ``response_format`` asking for ``request``'s verdict as one JSON object:
    a 0–10 ``score``, or for a step a ``mistake`` flag, with an ``explanation``."""
    step = request.step is not None
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "step_verdict" if step else "score_verdict",
            "strict": True,
            "schema": STEP_SCHEMA if step else SCORE_SCHEMA,
        },
    }


def _user_message(request: JudgeRequest, nonce: str) -> str:
    blocks = [data_block(nonce, "question", request.question or "(no question given)")]
    if request.reference_answer:
        blocks.append(data_block(nonce, "reference_answer", request.reference_answer))
    if request.judge_instruction:
        blocks.append(data_block(nonce, "judge_instruction", request.judge_instruction))
    blocks.extend(data_block(nonce, name, text) for name, text in request.extra)
    blocks.append(data_block(nonce, "agent_answer", request.answer))
    return "\n\n".join(blocks) + "\n\nScore the agent_answer. Reply with the JSON object only."


def render_messages(request: JudgeRequest, nonce: str | None = None) -> list[dict[str, str]]:
    """Chat messages for ``request``: the check's instructions (rubric and prompt) in the
    system message, data in the user message. Step requests (``request.step``) get the
    step prompt, or their metric's own."""
    nonce = nonce or secrets.token_hex(6)
    if request.step is not None:
        prompt = _STEP_PROMPTS.get(request.check, "step")
        system = prompt_text(prompt).replace("{nonce}", nonce)
        user = data_block(nonce, "step", request.step) + "\n\nReply with the JSON object only."
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]
    if request.instructions is None:
        raise ValueError(f"no judge prompt for {request.check!r}")
    system = request.instructions.replace("{nonce}", nonce)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": _user_message(request, nonce)},
    ]
