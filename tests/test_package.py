"""The package as a user gets it: the version, ``verified_indexing.proofs`` (no top-level ``proofs``),
``python -m verified_indexing``, ``verified_indexing.testing``, the demo, the z3 floor, and a wheel built,
installed in a fresh venv and used there (the demo, ``--help``, ``mypy --strict`` on a user file)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import verified_indexing
from verified_indexing import IndexingMap, parse_indexing_map
from verified_indexing.cli import main
from verified_indexing.testing import affine_exprs, assert_maps_equal, indexing_maps, ref_eval, ref_exprs
from verified_indexing.testing.strategies import build

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SPEC = ROOT.parent / "shared" / "spec" / "xla-indexing-analysis.md"


def _env_without_checkout() -> dict[str, str]:
    """The environment for a process that must see only what is installed (no PYTHONPATH checkout)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["NO_COLOR"] = "1"
    return env


# -- version ---------------------------------------------------------------------------------------


def test_version_is_written_once_in_pyproject() -> None:
    assert verified_indexing.__version__ == PYPROJECT["project"]["version"]
    assert 'version' not in PYPROJECT["project"].get("dynamic", [])
    source = (ROOT / "verified_indexing" / "__init__.py").read_text(encoding="utf-8")
    assert not re.search(r"__version__\s*=\s*['\"]", source), "the version literal is back in __init__.py"


def test_version_falls_back_to_metadata_then_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    from verified_indexing import _version

    monkeypatch.setattr(_version, "_from_checkout", lambda: None)
    monkeypatch.setattr(metadata, "version", lambda name: "9.8.7")
    assert _version.package_version() == "9.8.7"

    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert _version.package_version() == "0+unknown"


def test_cli_version() -> None:
    """The package's version, then z3's and islpy's (and jax's, TVM's, IREE's when installed), each equal to
    what pip records for the distribution; none of the heavy modules is imported to get them."""
    from importlib import metadata

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--version"])
    assert code == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == f"verified-indexing {PYPROJECT['project']['version']}"
    listed = dict(line.split() for line in lines[1:])
    assert listed["z3"] == metadata.version("z3-solver") and listed["islpy"] == metadata.version("islpy")
    for label, dist in (("jax", "jax"), ("tvm", "apache-tvm"), ("iree", "iree-base-compiler")):
        try:
            assert listed[label] == metadata.version(dist), label
        except metadata.PackageNotFoundError:
            assert label not in listed
    code = "import sys\nfrom verified_indexing.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n" \
           "    pass\nprint(sorted(m for m in ('jax', 'tvm', 'iree', 'z3', 'islpy') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "[]", proc.stdout + proc.stderr


# -- layout and metadata -----------------------------------------------------------------------------


def test_proofs_live_at_the_top_and_import_as_verified_indexing_proofs() -> None:
    import verified_indexing.proofs as proofs
    import verified_indexing.proofs.theorems as theorems

    assert Path(theorems.__file__).resolve() == (ROOT / "proofs" / "theorems.py").resolve()
    assert callable(proofs.prove_all)
    assert "proofs" not in sys.modules or sys.modules["proofs"].__file__ != proofs.__file__
    assert PYPROJECT["tool"]["setuptools"]["package-dir"]["verified_indexing.proofs"] == "proofs"
    setup_py = (ROOT / "setup.py").read_text(encoding="utf-8")  # the package list: no top-level proofs
    assert 'include=["verified_indexing*"]' in setup_py and '"verified_indexing.proofs"' in setup_py


def test_no_source_imports_the_top_level_proofs_name() -> None:
    pattern = re.compile(r"^\s*(from proofs\b|import proofs\b)|-m\", \"proofs\"|python -m proofs\b", re.MULTILINE)
    offenders = []
    for folder in ("verified_indexing", "proofs", "tests", "benchmarks", "fuzz", "docs"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".md") and path.is_file() and path.name != "test_package.py":
                if pattern.search(path.read_text(encoding="utf-8")):
                    offenders.append(str(path.relative_to(ROOT)))
    for name in ("README.md", "Makefile"):
        if pattern.search((ROOT / name).read_text(encoding="utf-8")):
            offenders.append(name)
    assert offenders == []


def test_z3_floor_is_5() -> None:
    """known-bugs fails on z3 4.x (tests/floor_check.py runs the proofs at the floor)."""
    deps = PYPROJECT["project"]["dependencies"]
    z3 = [d for d in deps if d.replace(" ", "").startswith("z3-solver")]
    assert [d.replace(" ", "") for d in z3] == ["z3-solver>=5"]
    hypothesis_free = [d for d in deps if d.split("[")[0].split(">")[0].split("=")[0].strip() in ("hypothesis", "pytest")]
    assert hypothesis_free == [], "hypothesis/pytest belong to the test extra"
    assert any(d.startswith("hypothesis") for d in PYPROJECT["project"]["optional-dependencies"]["test"])


def test_python_dash_m_verified_indexing_and_proofs() -> None:
    proc = subprocess.run([sys.executable, "-m", "verified_indexing", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "prove-rules" in proc.stdout, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "verified_indexing.proofs"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^(\d+) rules: \1 proved, 0 unknown", proc.stdout, re.MULTILINE), proc.stdout[-400:]
    assert re.search(r"^(\d+) domain rules: \1 proved$", proc.stdout, re.MULTILINE), proc.stdout[-400:]


# -- verified_indexing.testing -----------------------------------------------------------------------


def test_assert_maps_equal_passes_only_on_a_proof() -> None:
    v = assert_maps_equal("(d0) -> ((d0 floordiv 4) * 4 + d0 mod 4), domain: d0 in [0, 37]",
                          "(d0) -> (d0), domain: d0 in [0, 37]")
    assert v.proved


def test_assert_maps_equal_shows_a_checked_counterexample() -> None:
    a = parse_indexing_map("(d0, d1) -> (d0 * 4 + d1), domain: d0 in [0, 3], d1 in [0, 3]")
    b = parse_indexing_map("(d0, d1) -> (d0 * 4 + d1 mod 3), domain: d0 in [0, 3], d1 in [0, 3]")
    with pytest.raises(AssertionError) as exc:
        assert_maps_equal(a, b, msg="tile map")
    text = str(exc.value)
    assert text.startswith("the maps differ (refuted by ")
    assert "tile map" in text and "(d0, d1) -> (d0 * 4 + d1 mod 3)" in text
    # the only differing points have d1 = 3; the message gives the values and both results
    values = dict(re.findall(r"^\s+(d[01]) = (-?\d+)$", text, re.MULTILINE))
    d0, d1 = int(values["d0"]), int(values["d1"])
    assert d1 == 3
    assert f"first gives ({d0 * 4 + 3},), second gives ({d0 * 4},)" in text
    assert "plain evaluator: confirmed" in text


def test_assert_maps_equal_domain_and_relation_counterexamples() -> None:
    with pytest.raises(AssertionError, match="confirmed: the point is in the second domain only"):
        assert_maps_equal("(d0) -> (d0), domain: d0 in [0, 9]", "(d0) -> (d0), domain: d0 in [0, 10]")
    with pytest.raises(AssertionError, match="confirmed by enumeration: only the second map relates"):
        assert_maps_equal("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 2]",
                          "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 3]")


def test_assert_maps_equal_fails_on_unknown_with_the_reason() -> None:
    # z3 alone does not decide equality of relations with range variables: unknown, never a pass
    a = "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 2]"
    b = "(d0)[s1] -> (d0 + s1 - 1), domain: d0 in [0, 3], s1 in [1, 3]"
    assert_maps_equal(a, b)  # isl proves them equal
    with pytest.raises(AssertionError) as exc:
        assert_maps_equal(a, b, engine="z3")
    assert str(exc.value).startswith("could not prove the maps equal (unknown, engine z3): ")
    assert "range variables" in str(exc.value)
    with pytest.raises(AssertionError, match=r"\(error, engine none\).*different numbers of dimension"):
        assert_maps_equal("(d0) -> (d0), domain: d0 in [0, 3]", "(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 1]")


@given(ref_exprs(n_dims=2, max_leaves=6), st.integers(-6, 6), st.integers(-6, 6))
def test_public_expression_strategy_agrees_with_its_reference(tree: tuple[object, ...], x: int, y: int) -> None:
    assert build(tree).evaluate([x, y]) == ref_eval(tree, (x, y))


@given(affine_exprs(n_dims=1, minmax=False))
def test_public_strategies_draw_package_objects(e: object) -> None:
    from verified_indexing import AffineExpr

    assert isinstance(e, AffineExpr)


@given(indexing_maps(max_dims=2, max_syms=1, max_rts=0, max_results=2, max_constraints=1))
def test_a_drawn_map_equals_its_own_round_trip(m: IndexingMap) -> None:
    """Independent oracle: the printed and re-parsed map is proved equal by the engines (or both are
    undefined/empty texts the engines report as such)."""
    if m.state != "ok" or m.is_known_empty:
        return
    assert_maps_equal(m, parse_indexing_map(m.format(one_line=True)))


def test_testing_lazy_table_matches_its_type_checking_imports() -> None:
    import inspect

    import verified_indexing.testing as testing
    from verified_indexing._lazy import table_from_imports

    source = inspect.getsource(testing)
    assert testing._LAZY == table_from_imports(source[source.index("if TYPE_CHECKING:") :])
    assert set(testing.__all__) == set(testing._LAZY)


def test_importing_testing_does_not_import_hypothesis() -> None:
    code = ("import sys\nimport verified_indexing.testing as t\nt.assert_maps_equal\n"
            "print('hypothesis' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stdout + proc.stderr


# -- the demo --------------------------------------------------------------------------------------


def _demo(*argv: str) -> tuple[int, list[str]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["demo", *argv])
    return code, out.getvalue().splitlines()


def _check_demo_lines(lines: list[str]) -> None:
    assert len(lines) <= 80, len(lines)
    for line in lines:  # every line a part header, a check with its bracketed result, or a result line
        assert (line.startswith(("== ", "verified-indexing demo:", "  [", "  result:", "  composed map:",
                                 "  simplified to:", "  MLIR's elementwise-fusion check:"))), line
    text = "\n".join(lines)
    assert "== 2. a real JAX dump (softmax.post.hlo" in text
    assert re.search(r"result: 6 fusions, 11 of 11 maps proved", text)
    assert "simplified to:  (d0, d1, d2) -> (d0, d1, d2), domain:" in text and "[proved] simplified == composed" in text
    assert "[equal] plain evaluator: both maps give the same index at all 1000 points" in text
    assert "[refuted] by z3: counterexample" in text and "[confirmed] Python floor division" in text
    assert "[illegal] ours: consumer iteration (0, 1) reads element (0, 1)" in text
    assert "[confirmed] plain evaluator: consumer iteration (0, 1) reads (0, 1)" in text
    assert lines[-1].startswith("== all checks gave the expected result")


def test_demo_without_the_spec_says_so_in_one_line_and_goes_on(tmp_path: Path) -> None:
    code, lines = _demo("--spec", str(tmp_path / "absent.md"))
    assert code == 0
    assert [line for line in lines if "indexing-analysis document" in line] == [
        f"== 1. XLA's indexing-analysis document: not found ({tmp_path / 'absent.md'}); skipped"
    ]
    _check_demo_lines(lines)


def test_demo_with_the_spec() -> None:
    if not SPEC.exists():
        pytest.skip(f"the spec is not beside the checkout ({SPEC})")
    code, lines = _demo("--spec", str(SPEC))
    assert code == 0
    _check_demo_lines(lines)
    text = "\n".join(lines)
    assert sum(1 for line in lines if line.startswith("  [ok] ") and "HLO example" not in line) == 17  # all but Dot
    assert "result: 47 of 48 stated maps of the per-op examples match our analysis" in text
    assert "result: 5 of 5 maps stated in the prose after an HLO example" in text
    # example 4 is false as written with MLIR's precedence (unary minus binds tightest): -109 floordiv 11 + 9
    assert "[refuted] simplifier example 4 as written: d0 = 0, d1 = 0: the map gives (-1,), the stated result (0,)" in text
    assert re.search(r"\[proved\] simplifier example 4 read as .*: equal to the stated result \(isl\); ours is the same",
                     text)
    assert "result: 3 of 4 simplifier examples proved as written; our simplifier gives the stated result in 3 of 4" in text


def test_demo_data_are_copies_of_the_examples() -> None:
    data = ROOT / "verified_indexing" / "demo_data"
    sources = {"softmax.post.hlo": "examples/jax_hlo", "reshape_roundtrip.pre.hlo": "examples/jax_hlo",
               "skew_illegal.mlir": "examples/mlir"}
    assert sorted(p.name for p in data.iterdir()) == sorted(sources)
    for name, folder in sources.items():
        assert (data / name).read_bytes() == (ROOT / folder / name).read_bytes(), name


def _without_metadata(hlo: str) -> str:
    """HLO text without source locations (metadata, the stack-frame tables): they name the script's lines."""
    body = hlo[hlo.index("\n%") :] if "\n%" in hlo else hlo
    return re.sub(r", metadata=\{[^}]*\}", "", body)


def test_the_demo_dumps_are_what_jax_prints() -> None:
    """The demo calls softmax.post.hlo and reshape_roundtrip.pre.hlo real JAX output: JAX 0.10.2 prints them
    again (up to source locations)."""
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'verified-indexing[bench]')")
    if jax.__version__ != "0.10.2":
        pytest.skip(f"the dumps were printed by JAX 0.10.2; this is {jax.__version__}")
    import jax.numpy as jnp

    def softmax(x: object) -> object:
        return jax.nn.softmax(x, axis=-1)

    def reshape_roundtrip(x: object) -> object:
        return jnp.exp(x.reshape(50, 20)).reshape(10, 10, 10)  # type: ignore[attr-defined]

    data = ROOT / "verified_indexing" / "demo_data"
    post = jax.jit(softmax).lower(jnp.zeros((8, 128), jnp.float32)).compile().as_text()
    assert _without_metadata(post) == _without_metadata((data / "softmax.post.hlo").read_text(encoding="utf-8"))
    pre = jax.jit(reshape_roundtrip).lower(jnp.zeros((10, 10, 10), jnp.float32)).as_text(dialect="hlo")
    assert pre.strip() == (data / "reshape_roundtrip.pre.hlo").read_text(encoding="utf-8").strip()


# -- the z3 floor and the wheel (slow: subprocesses, pip) ----------------------------------------------


def _pip_unavailable(output: str) -> bool:
    return bool(re.search(r"(?i)(network|connection|resolve|temporary failure|no matching distribution|"
                          r"could not find a version|proxy|timed out)", output))


@pytest.mark.slow
def test_rule_proofs_and_known_bugs_at_the_z3_floor() -> None:
    """``make floor-check``: a cached venv under build/ with z3-solver 5.0.0.0 (about 25 s once cached)."""
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "floor_check.py")], capture_output=True, text=True,
                          timeout=900)
    if proc.returncode == 3 and _pip_unavailable(proc.stderr):
        pytest.skip(f"pip cannot fetch z3-solver==5.0.0.0: {proc.stderr.strip()[-300:]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "floor-check: z3 5.0.0 " in proc.stdout
    assert re.search(r"rule proofs: exit 0: (\d+) rules: \1 proved", proc.stdout), proc.stdout
    assert re.search(r"; (\d+) domain rules: \1 proved", proc.stdout), proc.stdout
    assert re.search(r"known bugs: exit 0: (\d+) known bugs: \1 refuted", proc.stdout)


USER_FILE = '''\
from verified_indexing import IndexingMap, parse_indexing_map
from verified_indexing.testing import assert_maps_equal

m: IndexingMap = parse_indexing_map("(d0) -> (d0 floordiv 2), domain: d0 in [0, 7]")
point: tuple[int, ...] = m.evaluate([3])
assert_maps_equal(m, m)
'''
USER_ERROR = 'name: str = m.num_dims\n'


@pytest.mark.slow
def test_wheel_in_a_fresh_venv(tmp_path: Path) -> None:
    """Build the wheel (offline: this interpreter's setuptools), install it alone in a fresh venv that
    borrows this interpreter's other packages (z3, islpy, mypy) through a .pth placed after its own
    site-packages, and use it there as a user would (about 40 s)."""
    import setuptools

    wheels = tmp_path / "wheels"
    isolation = ["--no-build-isolation"] if int(setuptools.__version__.split(".")[0]) >= 77 else []
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", *isolation, "-w", str(wheels), str(ROOT)],
        capture_output=True, text=True, env=_env_without_checkout(), timeout=600,
    )
    if proc.returncode != 0 and not isolation and _pip_unavailable(proc.stdout + proc.stderr):
        pytest.skip(f"no setuptools>=77 here and pip cannot fetch it: {proc.stderr.strip()[-300:]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = wheels.glob("verified_indexing-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"verified_indexing", f"verified_indexing-{PYPROJECT['project']['version']}.dist-info"}, tops
    for needed in ("verified_indexing/py.typed", "verified_indexing/proofs/theorems.py",
                   "verified_indexing/proofs/__main__.py", "verified_indexing/testing/assertions.py",
                   "verified_indexing/demo_data/softmax.post.hlo"):
        assert needed in names, needed
    license_file = [n for n in names if n.endswith("dist-info/licenses/LICENSE")]
    assert license_file, names
    assert b"Apache License" in zipfile.ZipFile(wheel).read(license_file[0])
    metadata = zipfile.ZipFile(wheel).read(f"verified_indexing-{PYPROJECT['project']['version']}.dist-info/METADATA")
    assert b"License-Expression: Apache-2.0" in metadata and b"Requires-Dist: z3-solver>=5" in metadata

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    import sysconfig

    Path(site, "zz_parent_site.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    env = _env_without_checkout()
    proc = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--quiet", str(wheel)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    work = tmp_path / "user"
    work.mkdir()

    where = subprocess.run([str(py), "-c", "import verified_indexing, sys; print(verified_indexing.__file__); "
                            "print(verified_indexing.__version__); print('proofs' in sys.modules)"],
                           capture_output=True, text=True, env=env, cwd=work)
    lines = where.stdout.splitlines()
    assert where.returncode == 0 and lines[0].startswith(site), where.stdout + where.stderr
    assert lines[1] == PYPROJECT["project"]["version"]
    no_top = subprocess.run([str(py), "-c", "import proofs"], capture_output=True, text=True, env=env, cwd=work)
    assert no_top.returncode != 0 and "No module named 'proofs'" in no_top.stderr

    demo = subprocess.run([str(venv / "bin" / "verified-indexing"), "demo"], capture_output=True, text=True,
                          env=env, cwd=work, timeout=300)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    _check_demo_lines(demo.stdout.splitlines())
    assert "indexing-analysis document: not found" in demo.stdout  # no spec beside a user's directory

    helped = subprocess.run([str(py), "-m", "verified_indexing", "--help"], capture_output=True, text=True,
                            env=env, cwd=work)
    assert helped.returncode == 0 and "verified-indexing" in helped.stdout

    (work / "good.py").write_text(USER_FILE, encoding="utf-8")
    (work / "bad.py").write_text(USER_FILE + USER_ERROR, encoding="utf-8")
    mypy = [str(py), "-m", "mypy", "--strict", "--no-incremental"]
    good = subprocess.run([*mypy, "good.py"], capture_output=True, text=True, env=env, cwd=work, timeout=600)
    assert good.returncode == 0 and good.stdout.startswith("Success"), good.stdout + good.stderr
    bad = subprocess.run([*mypy, "bad.py"], capture_output=True, text=True, env=env, cwd=work, timeout=600)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert re.search(r"bad\.py:7: error: Incompatible types in assignment \(expression has type \"int\", "
                     r"variable has type \"str\"\)", bad.stdout), bad.stdout
    assert "py.typed" not in bad.stdout and "missing library stubs" not in bad.stdout


# -- the sdist, a wheel built from it, an editable install (slow: builds and fresh venvs) -----------------


def _fresh_venv(where: Path) -> tuple[Path, str]:
    """A venv without pip's downloads: its own site-packages first, then this interpreter's (z3, islpy, pip)
    through a .pth, so that only what is installed into it is the package under test."""
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    py = where / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "zz_parent_site.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return py, site


def _use_installed(venv: Path, work: Path, expect_under: str) -> None:
    """The commands that need verified_indexing.proofs, run from the installed package as a user would."""
    env = _env_without_checkout()
    py = venv / "bin" / "python"
    where = subprocess.run([str(py), "-c", "import verified_indexing.proofs as p; print(p.__file__)"],
                           capture_output=True, text=True, env=env, cwd=work)
    assert where.returncode == 0 and where.stdout.startswith(expect_under), where.stdout + where.stderr
    exe = str(venv / "bin" / "verified-indexing")
    rule = subprocess.run([exe, "check-rule", "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)",
                           "--where", "c0 > 0, c1 > 0"], capture_output=True, text=True, env=env, cwd=work,
                          timeout=120)
    assert rule.returncode == 0 and "Proved" in rule.stdout, rule.stdout + rule.stderr
    wrong = subprocess.run([exe, "check-rule", "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)",
                            "--where", "c0 != 0, c1 != 0"], capture_output=True, text=True, env=env, cwd=work,
                           timeout=120)
    assert wrong.returncode == 1 and "Refuted" in wrong.stdout, wrong.stdout + wrong.stderr
    bugs = subprocess.run([exe, "known-bugs"], capture_output=True, text=True, env=env, cwd=work, timeout=300)
    assert bugs.returncode == 0, bugs.stdout + bugs.stderr
    assert re.search(r"(\d+) known bugs: \1 refuted with a confirmed counterexample", bugs.stdout), bugs.stdout
    demo = subprocess.run([exe, "demo"], capture_output=True, text=True, env=env, cwd=work, timeout=300)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    _check_demo_lines(demo.stdout.splitlines())


@pytest.mark.slow
def test_sdist_then_a_wheel_built_from_it_in_a_fresh_venv(tmp_path: Path) -> None:
    """The release path (what ``python -m build`` does): the sdist, then a wheel built from the unpacked
    sdist (not from the checkout), installed alone in a fresh venv: check-rule, known-bugs and the demo run
    (they import verified_indexing.proofs, which a checkout has only as a symlink). About 30 s, offline."""
    import tarfile

    import setuptools

    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} < 77 (pyproject's build requirement)")
    import shutil

    # a copy of the checkout without build products: setuptools reads a previous SOURCES.txt back into the
    # sdist's file list, so a stale *.egg-info in the checkout would hide what the configuration gives
    source = tmp_path / "checkout"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis", ".*_cache", "fuzz-out"))
    assert (source / "verified_indexing" / "proofs").is_symlink()
    dist = tmp_path / "dist"
    dist.mkdir()
    build = ("import sys\nfrom setuptools import build_meta\nprint(build_meta.build_sdist(sys.argv[1]))")
    proc = subprocess.run([sys.executable, "-c", build, str(dist)], capture_output=True, text=True, cwd=source,
                          env=_env_without_checkout(), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    version = PYPROJECT["project"]["version"]
    sdist = dist / proc.stdout.splitlines()[-1].strip()
    assert sdist.name == f"verified_indexing-{version}.tar.gz"
    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if "/" in m.name}
    for needed in ("proofs/__init__.py", "proofs/theorems.py", "proofs/known_bugs.py", "setup.py", "CHANGELOG.md",
                   "README.md", "LICENSE", "MANIFEST.in", "docs/cli.md", "tests/test_package.py", "tests/conftest.py",
                   "tests/lit/simplify.map", "examples/jax_hlo/softmax.post.hlo",
                   "verified_indexing/demo_data/softmax.post.hlo"):
        assert needed in members, needed
        assert not members[needed].issym(), needed
    assert not any(m.issym() for m in members.values())
    # every file of the checkout's package (not through the proofs symlink) and of proofs/ is in the sdist
    proofs_link = source / "verified_indexing" / "proofs"
    for path in [*(source / "verified_indexing").rglob("*.py"), *(source / "proofs").glob("*.py")]:
        if proofs_link not in path.parents:
            assert path.relative_to(source).as_posix() in members, path

    wheels = tmp_path / "wheels"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "-w", str(wheels), str(sdist)], capture_output=True, text=True,
                          env=_env_without_checkout(), cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = wheels.glob("verified_indexing-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"verified_indexing", f"verified_indexing-{version}.dist-info"}
    checkout_wheel_files = {p.relative_to(ROOT / "proofs").as_posix() for p in (ROOT / "proofs").glob("*.py")}
    assert {n.removeprefix("verified_indexing/proofs/") for n in names
            if n.startswith("verified_indexing/proofs/")} == checkout_wheel_files
    metadata = zipfile.ZipFile(wheel).read(f"verified_indexing-{version}.dist-info/METADATA").decode()
    assert "Classifier: Typing :: Typed" in metadata and "Requires-Dist: z3-solver>=5" in metadata

    venv = tmp_path / "venv"
    py, site = _fresh_venv(venv)
    proc = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
                          capture_output=True, text=True, env=_env_without_checkout())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    work = tmp_path / "user"
    work.mkdir()
    _use_installed(venv, work, expect_under=site)


@pytest.mark.slow
def test_editable_install_in_a_fresh_venv(tmp_path: Path) -> None:
    """``pip install -e``: the package and its proofs are imported from the checkout (about 25 s)."""
    import setuptools

    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} < 77 (pyproject's build requirement)")
    venv = tmp_path / "venv"
    py, _ = _fresh_venv(venv)
    proc = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "-e", str(ROOT)], capture_output=True, text=True, env=_env_without_checkout(),
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    work = tmp_path / "user"
    work.mkdir()
    _use_installed(venv, work, expect_under=str(ROOT))
