"""Semantic comparison: whether two values mean the same, why, and with which threshold.

>>> from aem.compare import compare
>>> compare("1,234.5", "1 234,50").reason
'1,234.5 == 1 234,50 (|Δ|=0 ≤ abs_tol 0.005)'
"""

from aem.compare.core import SemanticComparator, compare, default_comparator
from aem.compare.dates import DateSpan, parse_date
from aem.compare.embedder import TextEmbedder
from aem.compare.extract import StatedValue, extract_values
from aem.compare.numbers import ParsedNumber, parse_number
from aem.compare.result import Comparison
from aem.compare.settings import CompareSettings

__all__ = [
    "CompareSettings",
    "Comparison",
    "DateSpan",
    "ParsedNumber",
    "SemanticComparator",
    "StatedValue",
    "TextEmbedder",
    "compare",
    "default_comparator",
    "extract_values",
    "parse_date",
    "parse_number",
]
