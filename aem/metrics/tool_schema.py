"""Tool schemas as traces declare them, made usable by ``jsonschema`` — or said unusable.

Why: declared schemas are often not JSON Schema. OpenAPI marks optional values with
``nullable: true``; Gorilla/BFCL-style definitions use Python type names (``dict``,
``float``, ``tuple``, ``any``). Fed to ``jsonschema`` as they are, a null is rejected
that the tool accepts, and an unknown type name raises on every call. The common
spellings are mapped here; a schema that still cannot be used is reported once per
tool by ``argument_validity`` and its schema check is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import jsonschema

JSON_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
# Python / BFCL / OpenAPI-ish spellings → JSON Schema; ``None`` means "any type".
TYPE_NAMES: dict[str, str | None] = {
    "dict": "object",
    "map": "object",
    "float": "number",
    "double": "number",
    "int": "integer",
    "long": "integer",
    "str": "string",
    "text": "string",
    "bool": "boolean",
    "list": "array",
    "tuple": "array",
    "set": "array",
    "none": "null",
    "nonetype": "null",
    "any": None,
}
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "if", "then", "else")


class UnusableSchema(ValueError):
    """The declared schema cannot be used even after mapping; the message says why."""


def _type_name(name: Any, where: str) -> str | None:
    """One type name in JSON Schema spelling (``None`` for "any"), or unusable."""
    if not isinstance(name, str):
        raise UnusableSchema(f"type {name!r} at {where} is not a type name")
    lowered = name.strip().lower()
    if lowered in JSON_TYPES:
        return lowered
    if lowered in TYPE_NAMES:
        return TYPE_NAMES[lowered]
    raise UnusableSchema(f"unknown type {name!r} at {where}")


def _types(value: Any, where: str) -> Any:
    """The ``type`` keyword mapped; ``None`` when any type is allowed."""
    names = value if isinstance(value, list) else [value]
    mapped = [_type_name(name, where) for name in names]
    if any(name is None for name in mapped):
        return None
    unique = list(dict.fromkeys(mapped))
    return unique[0] if len(unique) == 1 else unique


def _nullable(node: dict[str, Any]) -> None:
    """OpenAPI ``nullable: true``: null is one more allowed value."""
    if node.pop("nullable", False) is not True:
        return
    kind = node.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        node["type"] = kinds if "null" in kinds else [*kinds, "null"]
    if isinstance(node.get("enum"), list) and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]


def normalise(schema: Any, where: str = "(root)") -> Any:
    """A copy of ``schema`` in JSON Schema spelling (see the module docstring).

    >>> normalise({"type": "dict", "properties": {"x": {"type": "float", "nullable": True}}})
    {'type': 'object', 'properties': {'x': {'type': ['number', 'null']}}}
    """
    if not isinstance(schema, Mapping):
        return schema
    node = dict(schema)
    if "type" in node:
        kind = _types(node["type"], where)
        if kind is None:
            del node["type"]
        else:
            node["type"] = kind
    _nullable(node)
    for key in _SUBSCHEMA_MAPS:
        if isinstance(node.get(key), Mapping):
            node[key] = {
                name: normalise(sub, f"{where}/{key}/{name}") for name, sub in node[key].items()
            }
    for key in _SUBSCHEMA_LISTS:
        if isinstance(node.get(key), list):
            node[key] = [normalise(sub, f"{where}/{key}/{i}") for i, sub in enumerate(node[key])]
    for key in _SUBSCHEMA_ONE:
        if isinstance(node.get(key), Mapping):
            node[key] = normalise(node[key], f"{where}/{key}")
        elif key == "items" and isinstance(node.get(key), list):  # tuple form
            node[key] = [normalise(sub, f"{where}/items/{i}") for i, sub in enumerate(node[key])]
    return node


def usable_validator(schema: Any) -> jsonschema.protocols.Validator:
    """A validator for the declared schema, or :class:`UnusableSchema` saying why not.

    Why cached: an agent declares the same tools in every session, and checking a schema
    against its metaschema costs more than the rest of a short session's tool metrics
    (a quarter of evaluating the sample sessions). A validator is immutable, so sessions
    declaring the same schema share one; the key is the schema's canonical JSON."""
    if not isinstance(schema, Mapping):
        raise UnusableSchema(f"not a JSON object: {schema!r}"[:200])
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not JSON (a decoded trace always is): no cache
        return _checked_validator(schema)
    return _cached_validator(key)


@lru_cache(maxsize=1024)
def _cached_validator(schema_json: str) -> jsonschema.protocols.Validator:
    return _checked_validator(json.loads(schema_json))


def _checked_validator(schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
    mapped = normalise(schema)
    cls = jsonschema.validators.validator_for(mapped)
    try:
        cls.check_schema(mapped)
    except jsonschema.SchemaError as exc:
        where = "/".join(map(str, exc.path)) or "(root)"
        raise UnusableSchema(f"{exc.message} (at {where})") from exc
    return cls(mapped)
