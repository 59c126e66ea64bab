"""The command line: show, demo, exit codes, messages (in-process and as a real process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from verified_indexing import parse_indexing_map
from verified_indexing.cli import main

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT.parent / "shared" / "spec" / "xla-indexing-analysis.md"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_show_normalizes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["show", "-e", "(d0, d1) -> (4 * (d1 mod 2) + d1 * 0 + d0), domain: d1 in [0, 3], d0 in [0, 9]"],
                         capsys)
    assert code == 0 and err == ""
    assert out == "(d0, d1) -> (d0 + (d1 mod 2) * 4),\ndomain:\nd0 in [0, 9],\nd1 in [0, 3]\n"


def test_show_json_and_mlir(capsys: pytest.CaptureFixture[str]) -> None:
    text = "(d0)[s0] -> (d0 floordiv 8, s0), domain: d0 in [0, 31], s0 in [0, 1]"
    code, out, _ = run(["show", "--json", text], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["results"] == ["d0 floordiv 8", "s0"]
    assert data["dims"] == [{"name": "d0", "lo": 0, "hi": 31}]
    assert parse_indexing_map(data["text"]) == parse_indexing_map(text)
    code, out, _ = run(["show", "--mlir", text], capsys)
    assert out.strip() == "affine_map<(d0)[s0] -> (d0 floordiv 8, s0)>"


def test_show_reads_files_and_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "m.txt"
    f.write_text("(d0) -> (d0 mod 4),\ndomain:\nd0 in [0, 15]\n")
    code, out, _ = run(["show", str(f)], capsys)
    assert code == 0 and "d0 mod 4" in out
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("(d0) -> (d0 * 3), domain: d0 in [0, 2]"))
    code, out, _ = run(["show", "-"], capsys)
    assert code == 0 and out.startswith("(d0) -> (d0 * 3),")


def test_bad_input_exit_3_with_position(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["show", "(d0) -> (d0 +* 2), domain: d0 in [0, 3]"], capsys)
    assert code == 3 and out == ""
    assert "1:14: error: expected an expression" in err and "^" in err and "Traceback" not in err


def test_usage_errors_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["show"], capsys)
    assert code == 3 and "usage" in err
    code, _, err = run(["no-such-command"], capsys)
    assert code == 3


def test_demo_on_the_spec(capsys: pytest.CaptureFixture[str]) -> None:
    """The spec's 48 per-op maps against our analysis: 47 proved equal, and the one the document gets wrong
    (dot, rhs input to output: see tests/test_hlo_spec_ops.py) shown with its counterexample."""
    if not SPEC.exists():
        pytest.skip("spec not beside the repository")
    code, out, _ = run(["demo", "--spec", str(SPEC)], capsys)
    assert code == 0
    assert "result: 47 of 48 stated maps of the per-op examples match our analysis" in out
    differs = [line for line in out.splitlines() if line.startswith("  [DIFFERS] Dot i2o 1->0")]
    assert len(differs) == 1 and "outside the target's dimension of size 64" in differs[0]


def test_installed_entry_point_never_prints_a_traceback() -> None:
    exe = Path(sys.executable).with_name("verified-indexing")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "from verified_indexing.cli import main; main()"]
    proc = subprocess.run([*cmd, "show", "(d0) -> (d0 floordiv 0), domain: d0 in [0, 3]"], capture_output=True, text=True)
    assert proc.returncode == 3
    assert "floordiv by zero" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([*cmd, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "show" in proc.stdout


def test_lazy_tables_match_the_type_checking_imports() -> None:
    """The packages load their public names on first use; each table says where a name lives and must
    agree with the imports the type checker reads, and with __all__."""
    import importlib
    import inspect

    from verified_indexing._lazy import table_from_imports

    for name in ("verified_indexing", "verified_indexing.engines"):
        package = importlib.import_module(name)
        source = inspect.getsource(package)
        checked = table_from_imports(source[source.index("if TYPE_CHECKING:") :])
        assert package._LAZY == checked, name
        assert set(package.__all__) == set(package._LAZY), name
        for attr in package.__all__:
            assert getattr(package, attr) is not None



def test_the_command_line_starts_without_the_engines() -> None:
    """Building the parser (all --help needs) loads none of z3, isl and numpy: they load when a command
    runs (issue: start-up cost every command, --help included)."""
    code = (
        "import sys\nfrom verified_indexing.cli import build_parser\nbuild_parser()\n"
        "print(sorted(m for m in ('z3', 'islpy', 'numpy', 'verified_indexing.expr', 'verified_indexing.indexing_map',"
        " 'verified_indexing.syntax', 'verified_indexing.engines.deadline', 'dataclasses', 'inspect')"
        " if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout


def test_the_parser_lists_every_command_module_and_engine() -> None:
    """``COMMAND_MODULES`` (a fixed list, so building the parser walks no package) names every public module
    of ``verified_indexing.cli``, and ``prove-equal``'s engine choices are the engines' own list."""
    import pkgutil

    import verified_indexing.cli as cli
    from verified_indexing.cli import prove
    from verified_indexing.engines.verdict import ENGINES

    public = sorted(m.name for m in pkgutil.iter_modules(cli.__path__) if not m.name.startswith("_"))
    assert list(cli.COMMAND_MODULES) == public
    assert prove.ENGINES == ENGINES


def test_python_dash_m_and_typed_package() -> None:
    proc = subprocess.run([sys.executable, "-m", "verified_indexing", "show", "(d0) -> (d0 * 2), domain: d0 in [0, 3]"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("(d0) -> (d0 * 2),"), proc.stdout + proc.stderr
    bad = subprocess.run([sys.executable, "-m", "verified_indexing", "show", "(d0) -> (d0 floordiv 0)"],
                         capture_output=True, text=True)
    assert bad.returncode == 3 and "Traceback" not in bad.stderr
    import verified_indexing

    assert (Path(verified_indexing.__file__).parent / "py.typed").is_file()  # users' mypy reads our types


def test_python_dash_m_proofs_reads_its_arguments() -> None:
    """``python -m verified_indexing.proofs`` is ``prove-rules``: --help prints the usage without proving, a bad
    option is exit 3 with a message (not ignored)."""
    run = [sys.executable, "-m", "verified_indexing.proofs"]
    helped = subprocess.run([*run, "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and "prove-rules" in helped.stdout and "rules:" not in helped.stdout
    bad = subprocess.run([*run, "--bogus"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 3 and "--bogus" in bad.stderr and "Traceback" not in bad.stderr
