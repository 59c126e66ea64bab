"""``to_json_text`` / ``to_json_data`` of the library's result sequences (``analyze()``, ``fuse()``, ``audit()``)
equal the command line's JSON bytes (they raised 'no command prints a Fusions as JSON')."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from verified_indexing import analyze, audit, fuse, to_json_data, to_json_text
from verified_indexing.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIFIED_INDEXING_CACHE", str(tmp_path / "proofs.sqlite"))
    monkeypatch.chdir(ROOT)


def _cli(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main([*argv, "--json", "--no-timing"])
    return out.getvalue()


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
