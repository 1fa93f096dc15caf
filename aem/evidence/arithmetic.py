"""Arithmetic a turn writes out, read and checked: ``12.5 + 15.0 + 14.2 = 41.7``.

Why a module of its own: when an answer shows its working, the result is not a value
"nothing supports" — it is derived in the open, and a reviewer can redo the sum. So a
result that equals the expression written before its ``=`` (or ``≈``) is supported by
that expression, and one that does not is a contradiction the turn makes with itself.
The operands are stated values of their own, each checked against the records.

Only plain notation and the LaTeX models use for it are read: ``+ - × · * / ÷ ^``,
parentheses, ``\\frac{a}{b}``, ``\\sqrt{a}``, ``\\times``, ``\\cdot``, ``\\div``. A chain
``\\frac{a + b}{5} = \\frac{c}{5} = d`` checks each link: ``c`` is read as ``a + b``
(the same wrapper on both sides), ``d`` as ``c / 5``. Anything else — words, variables,
functions — is not arithmetic here, and the value is left to the other rules.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from aem.compare.extract import extract_values

_OPERATORS: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_MAX_EXPONENT = 12
_MAX_TEXT = 400
# Where a written result starts: an equals or approximately-equals sign, perhaps with a
# currency sign or an opening LaTeX wrapper between it and the value.
_RESULT_SIGN = re.compile(r"(?P<sign>=|≈|\\approx)\s*(?P<open>(?:\\sqrt\{|\\frac\{|\{|\()*)$")
_SIGNS = re.compile(r"=|≈|\\approx")
_SPACING = re.compile(r"\\[,;!: ]|\\(?:left|right)\b|\\[()\[\]]|\\\$|[$€£¥]")
_LATEX_OPERATORS = (
    (re.compile(r"\\times\b|\\cdot\b|[×·]"), "*"),
    (re.compile(r"\\div\b|÷"), "/"),
    (re.compile(r"−"), "-"),
    (re.compile(r"(?<=[\d)])\s*x\s*(?=[\d(])"), "*"),
)
_FRACTION = re.compile(r"\\frac\{([^{}]*)\}\{([^{}]*)\}")
_ROOT = re.compile(r"\\sqrt\{([^{}]*)\}")
_GROUPED = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# A currency's code or sign, or a comma between digits: text an amount may be written in.
_CURRENCY_HINT = re.compile(r"[A-Z]{3}|[$€£¥₽]|\d,\d|руб")
# A count and its noun as an operand: "3 nights × $105", "3 Tage × 45 €", "2 x 3 ночи".
_COUNTED_OPERAND = re.compile(
    r"(?P<count>(?<![\d.,])\d{1,3})\s+[^\W\d_]{2,20}(?=\s*(?:[×*·÷/]|\\times|\\cdot|x\s))"
)
_EXPRESSION_TAIL = re.compile(r"[\d.\s+\-*/()^]+$")


@dataclass(frozen=True, slots=True)
class WrittenResult:
    """The expression a value is written as the result of, and whether it holds."""

    expression: str
    holds: bool


def evaluate(node: ast.AST) -> float | None:
    """The value of a numeric expression of ``+ - * /`` and small powers, or None."""
    if isinstance(node, ast.Expression):
        return evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = evaluate(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if not isinstance(node, ast.BinOp):
        return None
    left, right = evaluate(node.left), evaluate(node.right)
    if left is None or right is None:
        return None
    if isinstance(node.op, ast.Pow):
        if abs(right) > _MAX_EXPONENT or (left < 0 and not right.is_integer()):
            return None
        return float(left**right)
    if type(node.op) not in _OPERATORS or (isinstance(node.op, ast.Div) and right == 0):
        return None
    return _OPERATORS[type(node.op)](left, right)


def value_of(expression: str) -> float | None:
    """The value of an expression :func:`written_result` showed (plain notation)."""
    try:
        return evaluate(ast.parse(expression.replace("^", "**"), mode="eval"))
    except SyntaxError:
        return None


def shown_number(value: float | None) -> str:
    """A worked-out number as a reviewer reads it: never in float notation (``4.12e+08``)."""
    if value is None or not math.isfinite(value):
        return "another value"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


def written_result(text: str, start: int, number: float, tolerance: float) -> WrittenResult | None:
    """For the value ``number`` at ``text[start:]``: the arithmetic written before its
    ``=`` on the same line and whether it gives the value (within ``tolerance``, or to
    the value's rounding after ``≈``); None when no arithmetic is written there."""
    line_start = text.rfind("\n", 0, start) + 1
    before = _amounts_as_numbers(text[max(line_start, start - _MAX_TEXT) : start]).rstrip("\\ \t")
    sign = _RESULT_SIGN.search(before)
    if sign is None:
        return None
    left = _SIGNS.split(before[: sign.start()])[-1]
    if sign["open"]:
        left = _inside(left, sign["open"])
        if left is None:
            return None
    expression, value = _read(left)
    if expression is None or value is None:
        return None
    allowed = tolerance
    if sign["sign"] != "=":
        allowed = max(tolerance, _rounding(text, start))
    return WrittenResult(expression, math.isclose(value, number, abs_tol=allowed))


def _amounts_as_numbers(text: str) -> str:
    """Amounts of money as the plain numbers they are: "EUR 25.00 + 25,00 €" is
    "25.0 + 25.0", read by the value reader in any position and locale (a currency on
    its operands does not make a sum no sum); a count's noun before an operator goes
    ("3 Tage × 45,00 €" is "3 × 45.0")."""
    text = _COUNTED_OPERAND.sub(r"\g<count>", text)
    if not _CURRENCY_HINT.search(text):
        return text
    out, last = [], 0
    for value in extract_values(text):
        if value.kind == "number" and value.unit is not None and value.unit.isupper():
            out += [text[last : value.start], repr(value.number)]
            last = value.end
    return "".join(out) + text[last:]


def _inside(left: str, opened: str) -> str | None:
    """``a + b`` of ``\\frac{a + b}{5}`` when the result opens the same way
    (``= \\frac{c}{5}``): the part of the left side the value stands for."""
    stripped = _SPACING.sub(" ", left).strip()
    if not stripped.startswith(opened):
        return None
    depth, body = 0, stripped[len(opened) :]
    for i, char in enumerate(body):
        if char in "{(":
            depth += 1
        elif char in "})":
            if depth == 0:
                return body[:i]
            depth -= 1
    return None


def _read(left: str) -> tuple[str | None, float | None]:
    """The arithmetic at the end of ``left`` (in plain notation) and its value."""
    plain = _SPACING.sub(" ", left)
    for pattern, replacement in _LATEX_OPERATORS:
        plain = pattern.sub(replacement, plain)
    for _ in range(8):  # innermost first; a few levels of nesting at most
        unfolded = _ROOT.sub(r"((\1)**0.5)", _FRACTION.sub(r"((\1)/(\2))", plain))
        if unfolded == plain:
            break
        plain = unfolded
    plain = _GROUPED.sub("", plain.replace("{", "(").replace("}", ")"))
    tail = _EXPRESSION_TAIL.search(plain)
    if tail is None or not any(op in tail.group(0).lstrip(" -(") for op in "+-*/^"):
        return None, None
    candidate = tail.group(0).replace("^", "**")
    while candidate:
        try:
            tree = ast.parse(candidate.strip(), mode="eval")
        except SyntaxError:
            candidate = candidate[1:]  # an unmatched ")" or a dangling sign in front
            continue
        value = evaluate(tree)
        has_operator = any(isinstance(n, ast.BinOp) for n in ast.walk(tree))
        return (_shown(candidate), value) if has_operator else (None, None)
    return None, None


def _shown(expression: str) -> str:
    """The expression as a reviewer reads it: ``71.6/5``, not ``((71.6)/(5))``."""
    shown = " ".join(expression.replace("**", "^").split())
    while True:
        bare = re.sub(r"\((-?[\d.]+)\)", r"\1", shown)
        bare = re.sub(r"^\(([^()]*)\)$", r"\1", bare)
        if bare == shown:
            return shown
        shown = bare


def _rounding(text: str, start: int) -> float:
    """Half a unit of the last digit the value at ``text[start:]`` is written to."""
    found = re.match(r"[$€£¥]?\d[\d,]*(?:\.(\d+))?", text[start:])
    decimals = len(found.group(1) or "") if found else 0
    return 0.5 * 10.0**-decimals
