"""The JSON Schema is generated from the types (issue 28 item 3): the shipped file is the generator's output,
every command with --json has a type, and both the schema and the types reject wrong objects (hand-made
mutations of real outputs) while accepting the real ones (the CLI's outputs in tests/test_cli_io.py are
checked against both, see its ``assert_valid``)."""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
from typing import Any

import jsonschema
import msgspec
import pytest

from verified_indexing.cli import build_parser, main
from verified_indexing.schema import types
from verified_indexing.schema.generate import SCHEMA_FILE, schema, schema_text

VALIDATOR = jsonschema.Draft202012Validator(schema())
MAP = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"


def _cli(*argv: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main([*argv, "--json"])
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def test_the_shipped_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "verified-indexing-1.json differs from the types: run python -m verified_indexing.schema --write")
    jsonschema.Draft202012Validator.check_schema(schema())


def test_every_command_with_json_has_a_type() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    with_json = {name for name, p in sub.choices.items() if "--json" in p._option_string_actions}
    assert with_json == set(types.COMMANDS) == set(schema()["$defs"]["command"])


def _valid(obj: dict[str, Any]) -> tuple[bool, bool]:
    """(the schema accepts obj, the types accept obj)."""
    try:
        types.check(obj)
        typed = True
    except (msgspec.ValidationError, KeyError):
        typed = False
    return not list(VALIDATOR.iter_errors(obj)), typed


@pytest.mark.parametrize("argv", [("simplify", "-e", MAP), ("analyze", "examples/jax_hlo/softmax.post.hlo"),
                                  ("check-rule", "x floordiv c0 -> x truncdiv c0", "--where", "c0 > 0")],
                         ids=lambda a: a[0])
def test_a_real_output_is_accepted_and_each_mutation_rejected_by_both(argv: tuple[str, ...]) -> None:
    good = _cli(*argv, "--no-timing")
    assert _valid(good) == (True, True)
    timed = _cli(*argv)  # with the run-dependent fields
    assert _valid(timed) == (True, True)
    mutations: list[dict[str, Any]] = []
    for key in [k for k in good if k not in ("schema", "command")]:
        mutations.append({k: v for k, v in good.items() if k != key})  # a required field missing
        if good[key] is None:  # null: a field of any type (or null)
            continue
        wrong = copy.deepcopy(good)
        wrong[key] = 12345678 if not isinstance(good[key], int) or isinstance(good[key], bool) else "text"
        mutations.append(wrong)  # a field of the wrong type
    for bad in mutations:
        if all(k in bad for k in good) and all(isinstance(bad[k], type(good[k])) for k in good):
            continue
        assert _valid(bad) == (False, False), bad


def test_nested_mutations_are_rejected_by_both() -> None:
    good = _cli("simplify", "-e", MAP, "--no-timing")
    bad = copy.deepcopy(good)
    bad["map"]["dims"][0]["lo"] = "0"  # a string for an integer
    assert _valid(bad) == (False, False)
    bad = copy.deepcopy(good)
    bad["verdict"]["status"] = "maybe"
    assert _valid(bad) == (False, False)
    err = {"schema": "verified-indexing/1", "command": "show", "error": {"kind": "oops", "message": "m",
                                                                         "position": None}}
    assert _valid(err) == (False, False)
    rec = {"schema": "verified-indexing/1", "command": "simplify", "line": 0, "exit_code": 0, "result": good}
    assert _valid(rec) == (False, False)  # lines count from 1
    rec["line"] = 1
    assert _valid(rec) == (True, True)
    rec["result"] = {**good, "verified": "yes"}
    assert _valid(rec) == (False, False)
