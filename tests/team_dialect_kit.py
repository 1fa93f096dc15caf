"""A team's own dialect, as plug-in source: one copy for the tests that load it from a
file on the path (tests/collectors/test_dialect_registry.py) and from an installed package's entry
points (tests/metrics/test_extensions.py), so both prove the same dialect loads."""

TEAM_DIALECT = """
from aem.foundation.model import SpanRecord
from collectors.dialects.base import ToolRun, tool_run
from collectors.dialects.protocol import BaseDialect, SessionKey

class TeamDialect(BaseDialect):
    name = "team"
    band = "framework"
    session_keys = (SessionKey("team.conversation", 5),)

    def claims(self, span: SpanRecord) -> bool:
        return span.attributes.get("team.step") == "tool"

    def observe(self, span: SpanRecord) -> ToolRun:
        return tool_run(span, name=span.attributes["team.tool"], call_id=None,
                        arguments={}, arguments_raw=None, result_key="team.result")
"""
