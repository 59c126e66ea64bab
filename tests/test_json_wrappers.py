"""``to_json_text`` / ``to_json_data`` of the library's result sequences (``analyze()``, ``fuse()``, ``audit()``)
equal the command line's JSON bytes (they raised 'no command prints a Fusions as JSON')."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_json_parity import _cli, _private_cache  # noqa: F401  (_private_cache: the autouse fixture, here too)

from verified_indexing import analyze, audit, fuse, to_json_data, to_json_text

ROOT = Path(__file__).resolve().parent.parent


def test_the_sequences_serialize_as_their_command_prints_them() -> None:
    skew = ROOT / "examples" / "mlir" / "skew_legal.mlir"
    hlo = ROOT / "examples" / "jax_hlo" / "transpose_021.post.hlo"
    audit_dir = ROOT / "tests" / "hlo_corpus" / "audit"
    cases: list[tuple[Any, tuple[str, ...]]] = [
        (fuse(skew), ("fuse", str(skew))),
        (analyze(hlo), ("analyze", str(hlo))),
        (audit(audit_dir / "module.hlo", audit_dir / "claims.txt"),
         ("audit", str(audit_dir / "module.hlo"), str(audit_dir / "claims.txt"))),
    ]
    for result, argv in cases:
        cli = _cli(*argv)
        assert to_json_text(result, no_timing=True) == cli == result.to_json_text(no_timing=True)
        data = json.loads(cli)
        del data["schema"], data["command"]
        assert to_json_data(result, no_timing=True) == data
