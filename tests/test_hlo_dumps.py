"""Dump directories that name things (issue 25 item 5): ``analyze DIR`` on real ``--xla_dump_to`` directories
written by jax (one jax process compiles three small programs, dumped as text and as ``HloModuleProto``)
names each module's file and ``HloModule`` name in the text, JSON and DOT output; ``--module PATTERN``
filters them (a glob on the file or module name; no match is exit 3 naming what there is); ``*.hlo.pb``
files are read through jaxlib, and give the same maps as the text XLA dumped beside them.

The oracles: the dump's files themselves (their names, the ``HloModule`` line of each), and the text dump of
the same module for the proto.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_cli_io import run as _cli  # the CLI in-process: (exit code, stdout, stderr)

pytest.importorskip("jax")  # the `test` extra installs it

PROGRAMS = textwrap.dedent(
    """
    import jax, jax.numpy as jnp
    f32 = jnp.float32
    def scale_shift(x):
        return jnp.tanh(x) * 2 + 1
    def matvec_sum(a, b):
        return (a @ b).sum(axis=0)
    def softmax(x):
        e = jnp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    S = jax.ShapeDtypeStruct
    jax.jit(scale_shift).lower(S((8, 16), f32)).compile()
    jax.jit(matvec_sum).lower(S((4, 8), f32), S((8, 3), f32)).compile()
    jax.jit(softmax).lower(S((4, 32), f32)).compile()
    """
)
NAMES = ("jit_scale_shift", "jit_matvec_sum", "jit_softmax")


def make_dumps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a text dump directory, a directory of the same modules as .hlo.pb only), written once a test session
    (one jax process, a few seconds): tests/test_json_parity.py reads the same directories."""
    root = tmp_path_factory.getbasetemp() / "jax_dumps"
    text, proto = root / "text", root / "proto"
    if (root / "done").exists():
        return text, proto
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={text} --xla_dump_hlo_as_text --xla_dump_hlo_as_proto",
           "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, "-c", PROGRAMS], env=env, check=True, capture_output=True, timeout=120)
    proto.mkdir()
    for p in text.glob("*.hlo.pb"):
        shutil.copy(p, proto / p.name)
    (root / "done").write_text("")
    return text, proto


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a text dump directory, a directory of the same modules as .hlo.pb only)."""
    return make_dumps(tmp_path_factory)


def _after_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.name.endswith("after_optimizations.txt"))


def _header_name(path: Path) -> str:
    m = re.match(r"\s*HloModule\s+([^\s,]+)", path.read_text())
    assert m is not None
    return m.group(1)


def test_text_output_names_each_module_and_its_file(dumps: tuple[Path, Path]) -> None:
    text_dir, _ = dumps
    files = _after_files(text_dir)
    assert {_header_name(p) for p in files} == set(NAMES)
    code, out, err = _cli("analyze", str(text_dir), "--no-verify")
    assert code == 0, err
    for p in files:
        assert f"module {_header_name(p)} ({p})" in out
    # Each module's analyses come after its own line: the fusions of a file are under its name.
    blocks = re.split(r"^module ", out, flags=re.MULTILINE)[1:]
    assert len(blocks) == len(files)


def test_json_names_each_result_s_module_and_file(dumps: tuple[Path, Path]) -> None:
    text_dir, _ = dumps
    code, out, err = _cli("analyze", str(text_dir), "--json", "--no-verify", "--no-timing")
    assert code == 0, err
    from verified_indexing.schema import types

    types.check(json.loads(out))  # the schema's types (module, file: strings)
    results = json.loads(out)["results"]
    assert results
    seen = set()
    for r in results:
        path = Path(r["file"])
        assert path.parent == text_dir and path.name.endswith("after_optimizations.txt")
        assert r["module"] == _header_name(path)  # the oracle: the file's own HloModule line
        # The computation named is one of that file's.
        assert re.search(rf"(^|\s)%?{re.escape(r['computation'])}\s*[({{]", path.read_text(), re.MULTILINE)
        seen.add(r["module"])
    assert seen == set(NAMES)


def test_dot_names_each_module_and_file(dumps: tuple[Path, Path]) -> None:
    text_dir, _ = dumps
    code, out, err = _cli("analyze", str(text_dir), "--dot", "-", "--no-verify")
    assert code == 0, err
    graphs = re.findall(r'^digraph "([^"]+)" \{\n  comment="module ([^"]+) from ([^"]+)";', out, re.MULTILINE)
    assert len(graphs) == len(_after_files(text_dir))
    for name, again, file in graphs:
        assert name == again == _header_name(Path(file))
        assert f"file: {file}" in out


def test_module_filter(dumps: tuple[Path, Path]) -> None:
    text_dir, _ = dumps
    code, out, err = _cli("analyze", str(text_dir), "--module", "jit_softmax", "--json", "--no-verify")
    assert code == 0, err
    assert {r["module"] for r in json.loads(out)["results"]} == {"jit_softmax"}
    # A glob on the file name.
    code, out, _ = _cli("analyze", str(text_dir), "--module", "*matvec*", "--no-verify")
    assert code == 0 and "module jit_matvec_sum (" in out and "jit_softmax" not in out
    # Before-optimization files are tried when no after-optimization file matches.
    code, out, _ = _cli("analyze", str(text_dir), "--module", "*scale_shift.before_optimizations*", "--no-verify")
    assert code == 0 and "before_optimizations.txt)" in out and "after_optimizations" not in out
    # No match: exit 3, the pattern, the closest name and what there is.
    code, out, err = _cli("analyze", str(text_dir), "--module", "jit_sofmax")
    assert code == 3 and out == ""
    assert "no module matches 'jit_sofmax'" in err and "did you mean 'jit_softmax'" in err
    assert all(n in err for n in NAMES)


def test_module_filter_in_a_split_file(tmp_path: Path, dumps: tuple[Path, Path]) -> None:
    text_dir, _ = dumps
    files = _after_files(text_dir)
    both = tmp_path / "both.hlo"
    both.write_text("\n// -----\n".join(p.read_text() for p in files))
    code, out, err = _cli("analyze", str(both), "--module", "jit_scale*", "--no-verify")
    assert code == 0 and f"module jit_scale_shift ({both})" in out and "jit_softmax" not in out, err
    code, _, err = _cli("analyze", str(both), "--module", "nothing")
    assert code == 3 and "no module matches 'nothing'" in err and "jit_softmax" in err


def test_proto_dump_directory_gives_the_text_dump_s_maps(dumps: tuple[Path, Path]) -> None:
    text_dir, proto_dir = dumps
    code, out_text, err = _cli("analyze", str(text_dir), "--json", "--no-timing")
    assert code == 0, err
    code, out_proto, err = _cli("analyze", str(proto_dir), "--json", "--no-timing")
    assert code == 0, err
    assert ".hlo.pb" in err  # the note says what was read

    def maps(out: str) -> list[tuple[str, str, list[str]]]:
        return sorted((r["module"], r["computation"], [a["map"] for t in r["targets"] for a in t["maps"]])
                      for r in json.loads(out)["results"])

    assert maps(out_proto) == maps(out_text) and maps(out_text)
    assert all(r["file"].endswith(".hlo.pb") for r in json.loads(out_proto)["results"])
    # A .hlo.pb given as the file.
    one = sorted(proto_dir.glob("*softmax*after_optimizations.hlo.pb"))[0]
    code, out, err = _cli("analyze", str(one))
    assert code == 0 and "fusion" in out, err


def test_a_file_that_is_not_a_proto(tmp_path: Path) -> None:
    bad = tmp_path / "x.hlo.pb"
    bad.write_bytes(b"\x08\x96\x01garbage\xff")
    code, _, err = _cli("analyze", str(bad))
    assert code == 3 and f"{bad}: not a serialized HloModuleProto" in err and "Traceback" not in err


def test_without_jaxlib_the_message_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "x.hlo.pb"
    bad.write_bytes(b"\x0a\x00")
    monkeypatch.setitem(sys.modules, "jaxlib._hlo", None)  # import fails as without jaxlib
    code, _, err = _cli("analyze", str(bad))
    assert code == 3 and "needs jaxlib" in err and "verified-indexing[jax]" in err


def test_names_are_the_same_on_the_process_pool(dumps: tuple[Path, Path]) -> None:
    # The pool's workers read and analyze the files: the names come with the modules they send back.
    text_dir, _ = dumps
    one = _cli("analyze", str(text_dir), "--jobs", "1", "--json", "--no-timing", "--no-verify")
    two = _cli("analyze", str(text_dir), "--jobs", "2", "--json", "--no-timing", "--no-verify")
    assert one[0] == two[0] == 0 and one[1] == two[1] and '"file"' in one[1]


def test_a_directory_of_protos_not_named_by_xla(tmp_path: Path, dumps: tuple[Path, Path]) -> None:
    _, proto_dir = dumps
    one = sorted(proto_dir.glob("*softmax*after_optimizations.hlo.pb"))[0]
    shutil.copy(one, tmp_path / "softmax.hlo.pb")
    code, out, err = _cli("analyze", str(tmp_path))
    assert code == 0 and f"module jit_softmax ({tmp_path / 'softmax.hlo.pb'})" in out, err
