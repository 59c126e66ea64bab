"""Operand utilization: our exact counts next to XLA's own cost analysis (one table; not a timed test).

For every bundled module (examples/jax_hlo/*.post.hlo, examples/hlo/*.hlo) and every fusion operand: the
distinct elements and bytes we count from the proven maps, the accesses (reads with multiplicity), and, for
modules whose entry runs exactly one fusion, XLA's ``bytes accessed{k}`` for the fusion's operand k from
``hlo_module_cost_analysis`` (jaxlib; the column says ``-`` when jax is not installed: ``pip install jax``).
Also the time of the counts next to the time of the analysis itself.
"""

from __future__ import annotations

import glob
import os
import sys
import time

from verified_indexing.hlo.fusion import analyze_module
from verified_indexing.hlo.report import load_hlo
from verified_indexing.hlo.utilization import operand_utilization

ROOT = os.path.join(os.path.dirname(__file__), "..")


def xla_costs(text: str) -> dict[str, float] | None:
    try:
        import jax
        import jaxlib._hlo as hlo
        from jax._src.lib import xla_client
    except Exception:
        return None
    try:
        module = hlo.hlo_module_from_text(text)
        client = jax.devices("cpu")[0].client
        return dict(xla_client._xla.hlo_module_cost_analysis(client, module))
    except Exception as exc:  # a module XLA's parser rejects: say so, keep going
        print(f"  (XLA cost analysis failed: {type(exc).__name__})", file=sys.stderr)
        return None


def main() -> int:
    paths = sorted(glob.glob(os.path.join(ROOT, "examples/jax_hlo/*.post.hlo")))
    paths += sorted(glob.glob(os.path.join(ROOT, "examples/hlo/*.hlo")))
    print(f"{'module':32} {'fusion operand':44} {'read':>7} {'of':>7} {'bytes':>7} {'accesses':>9} {'XLA bytes':>10}")
    t_count = t_analysis = 0.0
    entries_total = exact = 0
    for path in paths:
        text = open(path, encoding="utf-8").read()
        module = load_hlo(text, path)
        t0 = time.perf_counter()
        analyze_module(module)
        t1 = time.perf_counter()
        entries = operand_utilization(module)
        t2 = time.perf_counter()
        t_analysis += t1 - t0
        t_count += t2 - t1
        costs = xla_costs(text) if len(module.fusions()) == 1 else None
        name = os.path.basename(path)
        for e in entries:
            entries_total += 1
            exact += e.exact
            label = f"{e.fusion or e.computation}:{e.operand} {e.name}"[:44]
            if e.status != "ok":
                print(f"{name:32} {label:44} {e.status}: {(e.reason or '')[:60]}")
                continue
            xla = "-" if costs is None else f"{costs.get(f'bytes accessed{e.operand}{{}}', float('nan')):.0f}"
            mark = "" if e.exact else " (bound)"
            print(f"{name:32} {label:44} {e.elements_read:>7} {e.operand_elements:>7} {e.bytes_read!s:>7} "
                  f"{e.accesses!s:>9} {xla:>10}{mark}")
    print(f"\n{entries_total} operands, {exact} exact; utilization (analysis included) {t_count:.2f} s, analysis alone "
          f"{t_analysis:.2f} s: ratio {t_count / max(t_analysis, 1e-9):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
