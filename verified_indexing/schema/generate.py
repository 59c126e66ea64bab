"""The JSON Schema of the command line's JSON output, generated from :mod:`verified_indexing.schema.types`.

``python -m verified_indexing.schema`` prints it; ``python -m verified_indexing.schema --write`` rewrites the
shipped ``verified-indexing-1.json`` (tests/test_json_schema.py checks the shipped file is this output).
The types give every result, error and record; the dispatch on ``"command"`` (which result type a command
prints) is the table ``types.COMMANDS``, written here as JSON Schema ``if``/``then`` (``msgspec`` writes the
types, not a dispatch on a field shared with the error objects).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["schema", "schema_text", "SCHEMA_FILE"]

SCHEMA_FILE = Path(__file__).with_name("verified-indexing-1.json")
"""The shipped schema (package data)."""

_HEADER: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "urn:verified-indexing:schema:1",
    "title": "verified-indexing JSON output, schema verified-indexing/1",
    "description": "Every object printed by 'verified-indexing COMMAND --json' (a result or an error), and every "
    "line of --batch and --split-input-file output (a record). Absent values are null; the fields 'seconds', "
    "'seconds_*' and 'cached' are left out under --no-timing. Generated from verified_indexing/schema/types.py.",
}


def _is(command: str, *required: str) -> dict[str, Any]:
    return {"properties": {"command": {"const": command}}, "required": ["command", *required]}


def _tidy(value: Any) -> Any:
    """Descriptions on one line (a docstring's line breaks and indentation dropped)."""
    if isinstance(value, dict):
        return {k: " ".join(v.split()) if k == "description" and isinstance(v, str) else _tidy(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_tidy(v) for v in value]
    return value


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every object ``verified-indexing COMMAND --json`` prints."""
    import msgspec

    from verified_indexing.cli._common import SCHEMA_ID
    from verified_indexing.schema import types

    commands = sorted(types.COMMANDS)
    roots = [types.ErrorObject, types.Record, *(types.COMMANDS[c] for c in commands)]
    refs, defs = msgspec.json.schema_components(roots, ref_template="#/$defs/{name}")
    error_ref, record_ref, *command_refs = refs
    defs = _tidy(dict(sorted(defs.items())))
    defs["command"] = {c: {**ref, "description": f"The JSON of 'verified-indexing {c} --json' (without the schema "
                           "and command keys)."} for c, ref in zip(commands, command_refs)}
    record = defs[record_ref["$ref"].rsplit("/", 1)[1]]
    record["oneOf"] = [{"required": ["result"]}, {"required": ["error"]}]
    record["allOf"] = [{"if": _is(c, "result"), "then": {"properties": {"result": {"$ref": f"#/$defs/command/{c}"}}}}
                       for c in commands]
    defs["ErrorObject"]["properties"]["schema"] = defs["Record"]["properties"]["schema"] = {"const": SCHEMA_ID}
    return {
        **_HEADER,
        "type": "object",
        "required": ["schema", "command"],
        "properties": {
            "schema": {"const": SCHEMA_ID},
            "command": {"type": ["string", "null"],
                        "description": "the subcommand (null only for an error before a command was read)"},
        },
        "allOf": [
            {"if": {"required": ["exit_code"]}, "then": record_ref},
            {"if": {"required": ["error"], "not": {"required": ["exit_code"]}}, "then": error_ref},
            {"if": {"not": {"anyOf": [{"required": ["error"]}, {"required": ["exit_code"]}]}},
             "then": {"allOf": [{"if": _is(c), "then": {"$ref": f"#/$defs/command/{c}"}} for c in commands]}},
        ],
        "$defs": defs,
    }


def schema_text() -> str:
    """The schema as the shipped file holds it (indent 1, a final newline)."""
    return json.dumps(schema(), indent=1) + "\n"
