"""Tool names as the agent meant them: one spelling for the same tool.

Why: the same tool reaches traces under several spellings — a chat-template channel
suffix (``cd<|channel|>commentary``), a namespace (``functions.cd``, ``tools/cd``,
``default_api:cd``), or a different separator or case (``get-weather``, ``GetWeather``,
``get_weather``). Deciding whether a failed call was retried, or attempted at all, must
not depend on the spelling.
"""

from __future__ import annotations

import re

_CHANNEL = re.compile(r"<\|[^|>]*\|>.*$", re.DOTALL)
_NAMESPACE = re.compile(r"^(?:[A-Za-z0-9_-]+[.:/])+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\s_\-.]+")


def tool_key(name: str) -> str:
    """The tool's name without channel suffix, namespace, case or separators.

    >>> tool_key("cd<|channel|>commentary"), tool_key("functions.cd"), tool_key("cd")
    ('cd', 'cd', 'cd')
    >>> tool_key("GetWeather"), tool_key("get-weather"), tool_key("tools/get_weather")
    ('get_weather', 'get_weather', 'get_weather')
    >>> tool_key("SendHTTPRequest"), tool_key("send_http_request")
    ('send_http_request', 'send_http_request')
    """
    text = _CHANNEL.sub("", name).strip()
    text = _NAMESPACE.sub("", text) or text
    text = _CAMEL.sub("_", text)
    return _SEPARATORS.sub("_", text).strip("_").casefold()
