"""Legality per case, static vs symbolic sizes (one table; not a timed test).

Linalg: every producer-consumer candidate of every example in examples/mlir/, once as written and once with
every static size replaced by `?` (symbolic sizes: the obligations are asked for every size at once). CINN /
TVM: every inline candidate of examples/cinn/*.txt and examples/tvm/*.py (compute_inline), and every
epilogue / reverse-inline example where those primitives exist. Prints median and max time per case and the
verdicts, per group.
"""

from __future__ import annotations

import glob
import os
import re
import statistics
import sys
import time
from collections.abc import Callable

ROOT = os.path.join(os.path.dirname(__file__), "..")


def symbolic(text: str) -> str:
    """Every static size of every tensor type made dynamic (`tensor<4x8xf32>` -> `tensor<?x?xf32>`)."""

    def dyn(m: re.Match[str]) -> str:
        dims = m.group(1).split("x")
        return "tensor<" + "x".join("?" if d.isdigit() else d for d in dims[:-1]) + ("x" if len(dims) > 1 else "") + dims[-1] + ">"

    return re.sub(r"tensor<([^<>]*)>", dyn, text)


ALL_TIMES: list[float] = []


def time_cases(label: str, cases: list[tuple[str, Callable[[], str]]]) -> None:
    times, verdicts = [], {}
    for _name, fn in cases:
        t = time.perf_counter()
        try:
            v = fn()
        except Exception as exc:  # bad or unsupported input: counted, not timed as a verdict
            v = f"rejected ({type(exc).__name__})"
        times.append(time.perf_counter() - t)
        verdicts[v] = verdicts.get(v, 0) + 1
    if not times:
        print(f"{label:34} no cases")
        return
    ALL_TIMES.extend(times)
    tally = ", ".join(f"{k} {n}" for k, n in sorted(verdicts.items()))
    print(f"{label:34} {len(times):4} cases  median {statistics.median(times) * 1000:8.1f} ms  "
          f"max {max(times) * 1000:8.1f} ms   {tally}")


def linalg_cases(transform: Callable[[str], str]) -> list[tuple[str, Callable[[], str]]]:
    from verified_indexing.legality import check_fusion, fusion_candidates, parse_linalg_module

    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples/mlir/*.mlir"))):
        text = transform(open(path, encoding="utf-8").read())
        try:
            ops = list(parse_linalg_module(text, path).ops)
        except Exception:
            continue
        for p, c, k in fusion_candidates(ops):
            out.append((f"{os.path.basename(path)}:{p.name}->{c.name}",
                        lambda p=p, c=c, k=k: _verdict(check_fusion(p, c, operand_index=k))))
    return out


def _verdict(rep: object) -> str:
    status = str(getattr(rep, "status", "?"))
    cond = getattr(rep, "condition", None)
    if status == "legal" and cond and cond != "every size":
        return "legal when ..."
    return status


def _programs(symbolic_sizes: bool) -> list[tuple[str, object]]:
    """(file, program) of every CINN and TVMScript example, split by whether it has size parameters."""
    from verified_indexing.legality import parse_program
    from verified_indexing.legality.cinn_ir import program_sizes
    from verified_indexing.legality.tvmscript import is_tvmscript, parse_tvmscript

    out = []
    paths = sorted(glob.glob(os.path.join(ROOT, "examples/cinn/*.txt")))
    paths += sorted(glob.glob(os.path.join(ROOT, "examples/tvm/*.py")))
    for path in paths:
        text = open(path, encoding="utf-8").read()
        try:
            prog = parse_tvmscript(text, path) if is_tvmscript(text) else parse_program(text, path)
        except Exception:
            continue
        if bool(program_sizes(prog)) == symbolic_sizes:
            out.append((os.path.basename(path), prog))
    return out


def inline_cases(symbolic_sizes: bool) -> list[tuple[str, Callable[[], str]]]:
    from verified_indexing.legality import compute_inline, inline_candidates

    out = []
    for name, prog in _programs(symbolic_sizes):
        for block in inline_candidates(prog):  # type: ignore[arg-type]
            out.append((f"{name}:{block}", lambda prog=prog, block=block: compute_inline(prog, block).status))
    return out


def epilogue_and_reverse_cases() -> tuple[list[tuple[str, Callable[[], str]]], list[tuple[str, Callable[[], str]]]]:
    """fuse-epilogue on every example with a reduction followed by a block D; reverse-inline of block D."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.reverse_inline import reverse_compute_inline

    epi, rev = [], []
    from verified_indexing.legality.cinn_ir import walk_blocks

    for name, prog in _programs(False) + _programs(True):
        blocks = {c.block.name for c in walk_blocks(prog)}  # type: ignore[arg-type]
        if "D" not in blocks:
            continue
        if any(b.endswith("__reduce_init") for b in blocks) and "wrong" not in name:
            epi.append((name, lambda prog=prog: fuse_reduction_epilogue(prog, "D").status))  # type: ignore[arg-type]
        elif "reverse" in name:
            rev.append((name, lambda prog=prog: reverse_compute_inline(prog, "D").status))  # type: ignore[arg-type]
    return epi, rev


def main() -> int:
    print(f"{'group':34} {'':4}")
    time_cases("linalg, static sizes", linalg_cases(lambda t: t))
    time_cases("linalg, symbolic sizes (all ?)", linalg_cases(symbolic))
    time_cases("CINN/TVM inline, static sizes", inline_cases(False))
    time_cases("CINN/TVM inline, symbolic sizes", inline_cases(True))
    epi, rev = epilogue_and_reverse_cases()
    time_cases("reduction epilogue fusion", epi)
    time_cases("reverse compute inline", rev)
    print(f"{'all':34} {len(ALL_TIMES):4} cases  median {statistics.median(ALL_TIMES) * 1000:8.1f} ms  "
          f"max {max(ALL_TIMES) * 1000:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
