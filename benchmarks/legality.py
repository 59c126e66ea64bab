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


def inline_cases() -> list[tuple[str, Callable[[], str]]]:
    from verified_indexing.legality import compute_inline, inline_candidates, parse_program

    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples/cinn/*.txt"))):
        try:
            prog = parse_program(open(path, encoding="utf-8").read(), path)
        except Exception:
            continue
        for block in inline_candidates(prog):
            out.append((f"{os.path.basename(path)}:{block}",
                        lambda prog=prog, block=block: compute_inline(prog, block).status))
    return out


def main() -> int:
    print(f"{'group':34} {'':4}")
    time_cases("linalg, static sizes", linalg_cases(lambda t: t))
    time_cases("linalg, symbolic sizes (all ?)", linalg_cases(symbolic))
    time_cases("CINN compute_inline", inline_cases())
    print(f"{'all':34} {len(ALL_TIMES):4} cases  median {statistics.median(ALL_TIMES) * 1000:8.1f} ms  "
          f"max {max(ALL_TIMES) * 1000:8.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
