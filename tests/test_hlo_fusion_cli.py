"""`verified-indexing analyze`: options, exit codes, bad input, and the demo entry point."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
from pathlib import Path

import pytest

from verified_indexing.cli import main
from verified_indexing.hlo.report import demo_hlo
from verified_indexing.syntax import parse_indexing_map

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "jax_hlo"


def _cli(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = None
    if stdin is not None:
        import sys

        old, sys.stdin = sys.stdin, io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        if old is not None:
            import sys

            sys.stdin = old
    return code, out.getvalue(), err.getvalue()


def _blocks(out: str) -> list[str]:
    """The map texts printed (each starts with '(' after the indentation)."""
    maps, current = [], []
    for line in out.splitlines():
        text = line.strip()
        if text.startswith("(") and "->" in text:
            current = [text]
        elif current and (" in [" in text or text == "domain:"):
            current.append(text)
        elif current:
            maps.append("\n".join(current))
            current = []
    return maps


BROADCAST = "p0 = f32[20] parameter(0)\nbc0 = f32[10, 20, 30] broadcast(p0), dimensions={1}\n"


def test_snippet_from_stdin_both_directions(tmp_path: Path) -> None:
    code, out, _ = _cli("analyze", "-", stdin=BROADCAST)
    assert code == 0
    (text,) = _blocks(out)
    assert parse_indexing_map(text) == parse_indexing_map(
        "(d0, d1, d2) -> (d1), domain: d0 in [0, 9], d1 in [0, 19], d2 in [0, 29]"
    )
    code, out, _ = _cli("analyze", "-", "--direction", "input-to-output", stdin=BROADCAST)
    assert code == 0
    (text,) = _blocks(out)
    assert parse_indexing_map(text) == parse_indexing_map(
        "(d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 19], s0 in [0, 9], s1 in [0, 29]"
    )


def test_instruction_and_operand_options() -> None:
    path = str(EXAMPLES / "gather.post.hlo")
    code, out, _ = _cli("analyze", path, "--computation", "fused_computation", "--instruction", "gather.3")
    assert code == 0
    assert "computation fused_computation/gather.3: output to input" in out
    assert "rt0 = bitcast.5[d0, 0]" in out
    code, out, _ = _cli(
        "analyze", path, "--computation", "fused_computation", "--instruction", "gather.3", "--operand", "1"
    )
    assert code == 0 and "parameter 1: bitcast.5" in out and "parameter 0:" not in out
    code, out, _ = _cli("analyze", path, "--computation", "fused_computation", "--json")
    data = json.loads(out)
    (result,) = data["results"]
    origins = result["targets"][0]["maps"][0]["rt_origins"]
    # The origin is traced back through the bitcast s32[8] -> s32[8,1] (it was
    # bitcast.5[d0, 0] before origins were traced): element d0 of select_n.6.
    assert origins == [
        {"operand_index": 1, "operand_name": "select_n.6", "via": ["bitcast.5"], "map": origins[0]["map"]}
    ]
    assert origins[0]["map"].startswith("(d0, d1){rt0} -> (d0),")


def test_whole_entry_through_fusions() -> None:
    code, out, _ = _cli("analyze", str(EXAMPLES / "softmax.post.hlo"), "--computation", "main.3")
    assert code == 0
    maps = {parse_indexing_map(t) for t in _blocks(out)}
    assert parse_indexing_map(
        "(d0, d1)[s0, s1] -> (d0, s0 + s1 * 32), domain: d0 in [0, 7], d1 in [0, 127], s0 in [0, 31], s1 in [0, 3]"
    ) in maps


def test_unsupported_op_gives_exit_2_and_names_it() -> None:
    text = 'p0 = f32[8] parameter(0)\ns = f32[8] custom-call(p0), custom_call_target="k"\nROOT n = f32[8] negate(s)\n'
    code, out, _ = _cli("analyze", "-", "--computation", "ENTRY", stdin=text)  # composed: the negate hides p0
    assert code == 2
    assert "unsupported: s (custom-call)" in out
    assert out.strip().splitlines()[-1].startswith("summary: 0 fusions, 1 computations, 0 maps")
    assert "1 unsupported ops: s (custom-call)" in out
    # The default, one op deep: the negate's map is there, the custom-call's is not (exit 2 all the same).
    code, out, _ = _cli("analyze", "-", stdin=text)
    assert code == 2
    assert "unsupported: s (custom-call)" in out and "computation snippet/n: output to input" in out
    assert out.strip().splitlines()[-1].startswith("summary: 0 fusions, 2 computations, 1 maps")


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (["analyze", "-"], "p0 = f32[8 parameter(0)\n", "<stdin>:1:"),
        (["analyze", "-", "--computation", "nope"], BROADCAST, "no computation 'nope'"),
        (["analyze", "-", "--instruction", "nope"], BROADCAST, "no instruction 'nope'"),
        (["analyze", "-", "--direction", "input-to-output", "--operand", "3"], BROADCAST, "no parameter 3"),
        (["analyze", "-", "--operand", "-1"], BROADCAST, "--operand"),
        (["analyze", "-", "--direction", "sideways"], BROADCAST, "invalid choice"),
    ],
)
def test_bad_input_is_exit_3_without_traceback(argv: list[str], stdin: str, message: str) -> None:
    code, out, err = _cli(*argv, stdin=stdin)
    assert code == 3
    assert message in err
    assert "Traceback" not in err + out


def test_demo_hlo_on_bundled_examples(capsys: pytest.CaptureFixture[str]) -> None:
    paths = sorted(EXAMPLES.glob("*.post.hlo"))
    assert demo_hlo(paths) == 0
    out = capsys.readouterr().out
    assert out.count("== ") == len(paths)
    assert out.strip().splitlines()[-1].startswith(f"total: {len(paths)} modules, ")
    assert "0 unsupported ops" in out.strip().splitlines()[-1]


def test_input_to_output_through_nested_fusions() -> None:
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.parser import parse_module

    module = parse_module((EXAMPLES / "softmax.post.hlo").read_text())
    (result,) = analyze_module(module, computation="main.3", direction="input-to-output")
    assert not result.unsupported
    assert all(v.proved for v in result.verdicts())
    # x[i, j] is read by out[i, j] (the numerator) and by every out[i, *] (max and sum of row i).
    for i, j in [(0, 0), (3, 5), (7, 127)]:
        reads = set()
        for a in result.targets[0].maps:
            m = a.map
            for s in itertools.product(*(range(v.bounds.lo, v.bounds.hi + 1) for v in m.range_vars)):
                if m.contains((i, j), s):
                    reads.add(m.evaluate((i, j), s))
        assert reads == {(i, k) for k in range(128)}


def test_instruction_errors_name_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.hlo"
    f.write_text("HloModule m\nENTRY e {\n  p0 = f32[4,3] parameter(0)\n  ROOT r = f32[4,3] reverse(p0), dimensions={0,0}\n}\n")
    code = main(["analyze", str(f)])
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith(f"{f}:4:8: error: r (reverse): dimensions={{0,0}} must be distinct"), err
