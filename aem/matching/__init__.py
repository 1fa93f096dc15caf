"""Order-independent tool-set matching: optimal pairing, partial order, and why.

>>> from aem.matching import ActualCall, match_tool_calls
>>> match_tool_calls([{"name": "get", "arguments": {"id": "ORD-0042"}}],
...                  [ActualCall("get", {"id": "ord 42"})]).passed
True
"""

from aem.matching.match import match_tool_calls
from aem.matching.result import (
    ActualCall,
    ArgumentMismatch,
    MatchedPair,
    OrderViolation,
    ToolSetMatch,
)
from aem.matching.settings import MatchSettings

__all__ = [
    "ActualCall",
    "ArgumentMismatch",
    "MatchSettings",
    "MatchedPair",
    "OrderViolation",
    "ToolSetMatch",
    "match_tool_calls",
]
