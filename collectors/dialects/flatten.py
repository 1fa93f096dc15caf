"""Rebuild the lists that OpenInference and legacy Traceloop flatten into attributes.

``llm.input_messages.0.message.role = "user"`` → ``[{"message": {"role": "user"}}]``.
"""

from __future__ import annotations

from typing import Any


def unflatten(attributes: dict[str, Any], prefix: str) -> list[Any]:
    """The list stored under ``prefix`` (which ends with a dot), in index order.

    >>> unflatten({"m.1.role": "tool", "m.0.role": "user", "m.0.tool_calls.0.id": "c"}, "m.")
    [{'role': 'user', 'tool_calls': [{'id': 'c'}]}, {'role': 'tool'}]
    """
    root: dict[str, Any] = {}
    found = False
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        found = True
        node = root
        parts = key[len(prefix) :].split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    if not found:
        return []
    listed = _listify(root)
    return listed if isinstance(listed, list) else [listed]


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(k.isdigit() for k in node):
        return [_listify(node[k]) for k in sorted(node, key=int)]
    return {k: _listify(v) for k, v in node.items()}
