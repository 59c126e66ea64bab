"""Issue 26, items 5, 6, 7 and 9: ``-o FILE`` never destroys an input and never leaves half an output,
``--batch`` answers every line it can decode, and ``--split-input-file`` puts an empty chunk's error at
the chunk's line."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_io import run  # the CLI in-process: (exit code, stdout, stderr)

ROOT = Path(__file__).resolve().parent.parent
M = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"
M2 = "(d0) -> (d0 mod 4), domain: d0 in [0, 3]"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIFIED_INDEXING_CACHE", str(tmp_path / "proofs.sqlite"))
    monkeypatch.chdir(ROOT)


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


# -- item 5: -o naming an input -------------------------------------------------------------------

# (command, the input file to copy (or its text), other arguments)
COMMANDS: list[tuple[str, str, list[str]]] = [
    ("simplify", M, []),
    ("show", M, []),
    ("invert", M2, []),
    ("analyze", "examples/jax_hlo/softmax.post.hlo", []),
    ("utilization", "examples/jax_hlo/slice_strided.post.hlo", []),
    ("tile", "examples/jax_hlo/transpose_021.post.hlo", ["--offsets", "0,0,0", "--sizes", "1,8,4"]),
    ("coalescing", "examples/jax_hlo/transpose_021.post.hlo", []),
    ("fuse", "examples/mlir/transpose.mlir", []),
    ("inline", "examples/cinn/compute_inline.txt", []),
    ("fuse-epilogue", "examples/cinn/matmul_bias.txt", ["--block", "D"]),
    ("reverse-inline", "examples/cinn/reverse_inline.txt", ["--block", "D"]),
]


def _input(tmp_path: Path, source: str) -> Path:
    f = tmp_path / "input.txt"
    if (ROOT / source).is_file():
        shutil.copyfile(ROOT / source, f)
    else:
        f.write_text(source + "\n")
    return f


@pytest.mark.parametrize("how", ["same path", "symlink", "hard link"])
@pytest.mark.parametrize(("command", "source", "extra"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_o_naming_an_input_is_refused_and_the_input_kept(
    tmp_path: Path, command: str, source: str, extra: list[str], how: str
) -> None:
    f = _input(tmp_path, source)
    before = f.read_bytes()
    target = tmp_path / "alias"
    if how == "same path":
        target = f
    elif how == "symlink":
        target.symlink_to(f)
    else:
        os.link(f, target)
    code, out, err = run(command, str(f), *extra, "-o", str(target))
    assert code == 3 and out == "", err
    assert "the output would replace it" in err and "Traceback" not in err
    assert f.read_bytes() == before  # oracle: the bytes written before the command
    assert leftovers(tmp_path) == []


def test_o_naming_the_second_input_or_the_batch_file_is_refused(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(M + "\n")
    b.write_text(M + "\n")
    code, _, err = run("prove-equal", str(a), str(b), "-o", str(b))
    assert code == 3 and "the output would replace it" in err and b.read_text() == M + "\n"
    batch = tmp_path / "q.jsonl"
    batch.write_text(json.dumps({"map": M}) + "\n")
    code, _, err = run("simplify", "--batch", str(batch), "--jobs", "1", "-o", str(batch))
    assert code == 3 and json.loads(batch.read_text()) == {"map": M}


@pytest.mark.parametrize(("command", "source", "extra"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_o_writes_exactly_what_standard_output_gets(tmp_path: Path, command: str, source: str,
                                                     extra: list[str]) -> None:
    f = _input(tmp_path, source)
    code, expected, _ = run(command, str(f), *extra, "--json", "--no-timing")
    target = tmp_path / "out.json"
    target.write_text("old content that is longer than nothing\n" * 100)
    target.chmod(0o640)
    code2, out, _ = run(command, str(f), *extra, "--json", "--no-timing", "-o", str(target))
    assert (code2, out) == (code, "")
    assert target.read_text() == expected  # oracle: the same command printing on standard output
    assert target.stat().st_mode & 0o777 == 0o640  # the target's permissions are kept
    assert leftovers(tmp_path) == []


def test_o_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    code, expected, _ = run("simplify", "-e", M)
    assert run("simplify", "-e", M, "-o", str(link))[0] == code == 0
    assert link.is_symlink() and real.read_text() == expected


def test_o_a_new_file_gets_the_default_permissions(tmp_path: Path) -> None:
    target = tmp_path / "new.txt"
    mask = os.umask(0o022)
    try:
        assert run("show", "-e", M, "-o", str(target))[0] == 0
    finally:
        os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o644


# -- item 6: -o to a full device, a failing write --------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("argv", [["show", "-e", M], ["simplify", "-e", M, "--json"],
                                  ["analyze", "examples/jax_hlo/softmax.post.hlo", "--json", "--no-verify"]])
def test_o_to_a_full_device_is_exit_4_with_a_message(argv: list[str]) -> None:
    code, out, err = run(*argv, "-o", "/dev/full")
    assert code == 4 and out == ""
    assert err.strip().splitlines()[-1] == "-o /dev/full: cannot write: No space left on device"
    assert "Traceback" not in err


def _file_size_limit(limit: int) -> None:  # runs in the child before exec
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_failed_write_leaves_the_target_as_it_was(tmp_path: Path) -> None:
    """A write that fails part way (a file-size limit: EFBIG, as a full disk gives ENOSPC): exit 4, the old
    target untouched, no temporary file left."""
    target = tmp_path / "out.json"
    target.write_text("the previous result\n")
    env = dict(os.environ, VERIFIED_INDEXING_CACHE=str(tmp_path / "c.sqlite"), VERIFIED_INDEXING_NO_CACHE="1")
    argv = [sys.executable, "-m", "verified_indexing", "analyze", "examples/jax_hlo/softmax.post.hlo", "--json",
            "--no-verify", "-o", str(target)]
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: _file_size_limit(4096))
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(f"-o {target}: cannot write: File too large")
    assert "Traceback" not in proc.stderr
    assert target.read_text() == "the previous result\n"
    assert leftovers(tmp_path) == []
    # the oracle that the output is larger than the limit (else the test proves nothing)
    code, out, _ = run("analyze", "examples/jax_hlo/softmax.post.hlo", "--json", "--no-verify")
    assert code == 0 and len(out.encode()) > 4096


# -- item 7: --batch with bytes that are not UTF-8 ------------------------------------------------


def _records(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_batch_a_line_that_is_not_utf8_is_its_own_error(tmp_path: Path, via: str) -> None:
    good = [json.dumps({"map": M}).encode(), json.dumps({"map": M2}).encode()]
    bad = b'{"map": "(d0) -> (d0 \xff mod 4)"}'
    data = b"\n".join([good[0], bad, b"\xfe\xfe", good[1]]) + b"\n"
    batch = tmp_path / "q.jsonl"
    batch.write_bytes(data)
    if via == "file":
        code, out, _ = run("simplify", "--batch", str(batch), "--jobs", "1", "--no-timing")
    else:
        env = dict(os.environ, VERIFIED_INDEXING_CACHE=str(tmp_path / "c.sqlite"))
        proc = subprocess.run([sys.executable, "-m", "verified_indexing", "simplify", "--batch", "-", "--jobs", "1",
                               "--no-timing"], input=data, capture_output=True, cwd=ROOT, env=env, timeout=120)
        code, out = proc.returncode, proc.stdout.decode()
    recs = _records(out)
    assert [r["line"] for r in recs] == [1, 2, 3, 4]
    assert [r["exit_code"] for r in recs] == [0, 3, 3, 0] and code == 3
    source = str(batch) if via == "file" else "<stdin>"
    err2, err3 = recs[1]["error"], recs[2]["error"]
    assert isinstance(err2, dict) and isinstance(err3, dict)
    assert err2["message"] == f"{source}:2:22: not UTF-8: byte 0xff cannot be decoded"
    assert err2["position"]["line"] == 2 and err2["position"]["column"] == 22
    assert err3["position"]["line"] == 3 and err3["position"]["column"] == 1
    # oracle: the good lines answered by a batch that holds only them
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(b"\n".join(good) + b"\n")
    _, out2, _ = run("simplify", "--batch", str(clean), "--jobs", "1", "--no-timing")
    alone = _records(out2)
    assert recs[0]["result"] == alone[0]["result"] and recs[3]["result"] == alone[1]["result"]


# -- item 9: --split-input-file, an empty chunk ---------------------------------------------------


@pytest.mark.parametrize("json_mode", [False, True])
def test_split_an_empty_chunk_points_at_its_line(tmp_path: Path, json_mode: bool) -> None:
    lines = [M, "// -----", "", "   ", "// -----", M2, "// -----"]
    f = tmp_path / "chunks.txt"
    f.write_text("\n".join(lines) + "\n")
    # oracle: the line after each separator, counted here
    seps = [i + 1 for i, t in enumerate(lines) if t == "// -----"]
    empty_lines = [seps[0] + 1, seps[2] + 1]
    code, out, err = run("simplify", str(f), "--split-input-file", *(["--json"] if json_mode else []))
    assert code == 3
    if json_mode:
        recs = _records(out)
        assert [r["exit_code"] for r in recs] == [0, 3, 0, 3]
        positions = [r["error"]["position"] for r in recs if "error" in r]  # type: ignore[index]
        assert [p["line"] for p in positions] == empty_lines
        assert all(p["column"] == 1 and p["source"] == str(f) for p in positions)
    else:
        found = [line for line in err.splitlines() if "empty chunk" in line]
        assert found == [f"{f}:{n}:1: error: empty chunk: nothing between '// -----' lines" for n in empty_lines]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("argv", [["show", "-e", M], ["analyze", "examples/jax_hlo/softmax.post.hlo", "--json",
                                                      "--no-verify"]])
def test_standard_output_on_a_full_device_is_exit_4_with_a_message(argv: list[str], tmp_path: Path) -> None:
    """Item 6's 'as for standard output': with --json the error report itself failed to print, a
    traceback and exit 1 (refuted); now exit 4 and one line on stderr."""
    env = dict(os.environ, VERIFIED_INDEXING_CACHE=str(tmp_path / "c.sqlite"))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "verified_indexing", *argv], cwd=ROOT, env=env, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 4 and "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "standard output: cannot write: No space left on device"


def test_a_reader_that_goes_away_is_not_an_error(tmp_path: Path) -> None:
    """A closed pipe (| head -1): the command's own exit code, nothing on stderr."""
    env = dict(os.environ, VERIFIED_INDEXING_CACHE=str(tmp_path / "c.sqlite"))
    proc = subprocess.Popen([sys.executable, "-m", "verified_indexing", "analyze", "examples/jax_hlo/softmax.post.hlo",
                             "--json", "--no-verify"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # the reader goes away before the output is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err and "Exception ignored" not in err
