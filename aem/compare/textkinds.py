"""Which parts of a message state facts, and which are code, diffs, logs, URLs, versions.

Why: an agent's message is not all claims. ``@@ -462,6 +462,7 @@`` is a diff position,
``num_clients = 4`` inside a code block defines a variable, ``orchestrator.py:216:
UserWarning: … gpt-4o-2024-08-06`` is a library printing into the agent's text, and
``https://…/aw=KW01od0_11662965`` is an address. Checking such values against evidence
flags harmless text as invented. Each kind is recognised here, once, and
:func:`non_factual_regions` returns where they are; :func:`aem.compare.extract.extract_claims`
keeps only the values outside them.

Line kinds (a whole line or block): fenced code, unified diffs, stack traces, log and
warning lines, unfenced code lines. Inline kinds (part of a line): inline code, URLs,
file paths, version strings, model names, escape sequences.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

TextKind = Literal[
    "code_block",
    "diff",
    "traceback",
    "log",
    "code",
    "inline_code",
    "url",
    "path",
    "version",
    "model",
    "escape",
]

# --- line kinds -------------------------------------------------------------------------
_FENCE = re.compile(r"^\s*(```|~~~)")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
_DIFF_FILE = re.compile(
    r"^(?:diff --git |index [0-9a-f]+\.\.[0-9a-f]+|--- (?:a/|/dev/null)|\+\+\+ (?:b/|/dev/null))"
)
_DIFF_BODY = re.compile(r"^(?:[ +\-\\]|$)")
_TRACEBACK_START = re.compile(r"^\s*Traceback \(most recent call last\):")
_TRACE_FRAME = re.compile(
    r'^\s*(?:File "[^"]+", line \d+|at [\w$.<>]+\([\w$.]*(?::\d+)?\)|at .+:\d+:\d+\)?$)'
)
_EXCEPTION_LINE = re.compile(r"^\s*[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b:?")
_LEVELS = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)"
_LOG_LINE = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?[.,\d]*Z?\]?\s*"
    rf"(?:[-|]\s*)?\[?{_LEVELS}\b"
    rf"|\[{_LEVELS}\]|{_LEVELS}:[\w.]*:|{_LEVELS}\s+[-|]\s)"
)
# ``path/to/module.py:216: UserWarning: message`` (what ``warnings`` prints); the line
# after it, indented, is the source line that warned.
_WARNING_LINE = re.compile(
    r"^\s*(?:\S+\.\w+:\d+:\s*)?[A-Z]\w*Warning:\s|^\s*\S+\.py:\d+:\s*[A-Z]\w*(?:Error|Warning)\b"
)
_CODE_STATEMENT = re.compile(
    r"""^\s*(?:
        (?:import|from\s+[\w.]+\s+import)\s+[\w.*(]
      | (?:async\s+)?def\s+\w+\s*\(
      | class\s+\w+\s*[(:]
      | (?:return|yield|raise|await|assert|del|pass|break|continue)\b(?!\s+(?:to|the|a|an)\b)
      | (?:for|while|if|elif|with|except)\b[^:]*:\s*(?:\#.*)?$
      | (?:else|try|finally):\s*$
      | (?:const|let|var|function)\s+\w+
      | (?:print|console\.log|printf|echo)\s*\(
      | (?:SELECT|INSERT\s+INTO|UPDATE|DELETE\s+FROM|CREATE\s+TABLE)\s.+(?:FROM|VALUES|SET|WHERE|\()
      | \$\s+\w | (?:pip|npm|git|curl|wget|cd|ls|cat)\s+-?\w.*$
      | [\])}],?;?\s*$
    )""",
    re.VERBOSE,
)
# ``num_clients = 4``, ``data['x'] = df.sum()``: an assignment, not "The total = 150".
_ASSIGNMENT = re.compile(
    r"""^\s*(?:
        [A-Za-z_]\w*(?:[._]\w+|\[[^\]]*\])+\s*(?:[-+*/%]|//)?=(?!=)
      | [A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*(?:[-+*/%]|//)?=(?!=)
        \s*(?:[\[({"'f]|\w+\s*\(|\w+\.\w)
      | [a-z_]\w*\s*(?:[-+*/%]|//)=(?!=)
    )""",
    re.VERBOSE,
)
_LINE_CALL = re.compile(r"^\s*[A-Za-z_][\w.]*\(.*\)\s*;?\s*$")

_CODE_TURN_LINES = 3

# --- inline kinds -----------------------------------------------------------------------
_FILE_EXTENSIONS = (
    r"py|ipynb|js|ts|tsx|java|go|rs|rb|cpp|c|h|sh|json|jsonl|ya?ml|toml"
    r"|csv|tsv|xlsx?|txt|md|html?|pdf|png|jpe?g|gif|log|zip|gz"
)
_MODEL_NAMES = (
    "gpt", "claude", "llama", "mistral", "mixtral", "gemini", "gemma", "qwen", "phi",
    "deepseek", "davinci", "text-embedding", "command-r", "whisper", "dall-e", "all-minilm",
    "all-mpnet", "bert", "roberta", "t5", "o1", "o3", "o4",
)  # fmt: skip
_MODEL_ALTERNATION = "|".join(_MODEL_NAMES)
_INLINE = re.compile(
    rf"""(?P<url>(?:https?|ftp|file)://[^\s<>"'`)\]]+|\bwww\.[^\s<>"'`)\]]+|(?:%[0-9A-Fa-f]{{2}}\w*)+
          | (?<=\])\(\#[^\s()]*\))
      | (?P<path>(?<![\w/])(?:~|\.{{1,2}})?(?:/[\w.\-@+]+){{2,}}/?
          | \b[A-Za-z]:\\[\w\\.\-]+
          | \b[\w\-]+(?:/[\w\-.]+)+\.[A-Za-z]\w{{0,4}}\b
          | \b[\w\-]+\.(?:{_FILE_EXTENSIONS})\b)
      | (?P<version>\b[A-Za-z][\w\-]*/\d+(?:\.\d+)*\b
          | (?<![\w.])[vV]\d+(?:\.\d+)+\b
          | (?i:\b(?:version|ver\.?|python|node(?:\.js)?|release)\s+)\d+(?:\.\d+)+(?:[\-+.]\w+)*
          | (?<![\w.])(?!\d{{1,2}}\.\d{{1,2}}\.\d{{4}}\b|\d{{4}}\.\d{{1,2}}\.\d{{1,2}}\b)
            \d+\.\d+\.\d+(?:[\-+.]\w+)*)
      | (?P<model>(?i:\b(?:{_MODEL_ALTERNATION})(?:[\-.:]\w+)+|\bgpt\d\w*))
      | (?P<escape>\\u[0-9A-Fa-f]{{4}}\w*|\\x[0-9A-Fa-f]{{2}})
    """,
    re.VERBOSE,
)
# What every match of _INLINE contains, looked for more cheaply than _INLINE's scan (a
# dozen branches tried at every position): a URL, path, escape or in-page link target
# ("[1](#cite_note-1)") one of these strings;
# a version or a file name a match of these; a model name its name, which in an ASCII
# text (where ignoring case is lower-casing) ``in`` finds.
_INLINE_MARKS = ("/", "\\", "%", "www.", "](#")
_MAY_BE_VERSION_OR_FILE = re.compile(
    rf"\d\.\d+\.\d|[vV]\d+\.\d|\s\d+\.\d|\.(?:{_FILE_EXTENSIONS})\b"
)
_MODEL = re.compile(rf"(?i:\b(?:{_MODEL_ALTERNATION})(?:[\-.:]\w+)+|\bgpt\d\w*)")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
# Inside backticks a lone value ("`$150`", "`2024-05-01`") is still a claim; an
# expression, call or identifier (``data['x']``, ``df.sum()``, ``num_rows``) is code.
_CODE_CHARS = re.compile(r"[()\[\]{}=<>;\"'\\]|[A-Za-z]_|_[A-Za-z]|[A-Za-z]\.[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Region:
    """Characters ``start:end`` of a text are of ``kind`` and state no facts."""

    kind: TextKind
    start: int
    end: int


def non_factual_regions(text: str) -> list[Region]:
    """Where ``text`` holds code, diffs, traces, logs, URLs, paths, versions or model names.

    >>> [(r.kind, r.start, r.end) for r in non_factual_regions("see https://x.io/a1 now")]
    [('url', 4, 19)]
    """
    regions = list(_line_regions(text))
    for m in _INLINE_CODE.finditer(text):
        if _CODE_CHARS.search(m.group(0)[1:-1]):
            regions.append(Region("inline_code", m.start(), m.end()))
    for m in _INLINE.finditer(text) if _may_be_inline(text) else ():
        kind = m.lastgroup
        if kind is not None and m.end() > m.start():
            regions.append(Region(kind, m.start(), m.end()))  # type: ignore[arg-type]
    regions.sort(key=lambda r: (r.start, -r.end))
    return regions


def _may_be_inline(text: str) -> bool:
    """False only when _INLINE matches nowhere in ``text`` (see _INLINE_MARKS)."""
    if any(mark in text for mark in _INLINE_MARKS) or _MAY_BE_VERSION_OR_FILE.search(text):
        return True
    if text.isascii():
        lowered = text.lower()
        return any(name in lowered for name in _MODEL_NAMES)
    return _MODEL.search(text) is not None


def _line_regions(text: str) -> Iterator[Region]:
    """Whole-line kinds, walking the lines once with the state a block needs."""
    offset = 0
    block: TextKind | None = None
    for line in text.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        kind, block = _line_kind(line.rstrip("\r\n"), block)
        if kind is not None:
            yield Region(kind, start, offset)


def _line_kind(line: str, block: TextKind | None) -> tuple[TextKind | None, TextKind | None]:
    """This line's kind and the block it leaves open (fence, diff hunk, traceback, code)."""
    if block == "code_block":
        return "code_block", (None if _FENCE.match(line) else "code_block")
    if _FENCE.match(line):
        return "code_block", "code_block"
    if _HUNK.match(line) or _DIFF_FILE.match(line):
        return "diff", "diff"
    if block == "diff" and _DIFF_BODY.match(line) and line.strip():
        return "diff", "diff"
    if _TRACEBACK_START.match(line):
        return "traceback", "traceback"
    if block == "traceback":
        if _EXCEPTION_LINE.match(line):
            return "traceback", None
        return "traceback", ("traceback" if line.strip() else None)
    if _TRACE_FRAME.match(line):
        return "traceback", None
    if _WARNING_LINE.match(line) or _LOG_LINE.match(line):
        return "log", "log"
    if block == "log" and line[:1].isspace() and line.strip():
        return "log", None  # the source line ``warnings`` prints under the warning
    if _is_code_line(line):
        return "code", ("code" if line.rstrip().endswith(":") else None)
    if block == "code" and line[:1].isspace() and line.strip():
        return "code", "code"  # the indented body of ``def …:`` / ``for …:``
    return None, None


def _is_code_line(line: str) -> bool:
    return bool(_CODE_STATEMENT.match(line) or _ASSIGNMENT.match(line) or _LINE_CALL.match(line))


def is_code_text(text: str) -> bool:
    """Most non-blank lines of ``text`` (and at least three) are unfenced code: a
    code-writing turn, where even ``total = 150`` defines rather than states.

    >>> is_code_text("import pandas as pd\\ndf = pd.read_csv('a.csv')\\nprint(len(df))")
    True
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    code = sum(1 for r in _line_regions(text) if r.kind == "code")
    return code >= _CODE_TURN_LINES and code * 2 > len(lines)
