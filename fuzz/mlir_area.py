"""The ``mlir`` area of the campaign: a bug hunt against MLIR's own ``linalg-fuse-elementwise-ops``.

Each job draws ``BATCH`` random functions (seeded by ``(seed, "mlir", index)``),
one module, each holding a producer-consumer pair of ``linalg.generic`` ops on
static square tensors -- permutation, broadcast and projected maps, a result map
that is not a permutation (projected, or a repeated loop), a producer with a
reduction loop, multi-result producers, ``linalg.index`` in the payload,
producers and consumers reading their ``outs``, the producer's result fused into
the consumer's ``outs``, a second use of the producer, a third op making a chain
-- runs MLIR's real pass on the module through ``iree-opt`` and validates its
output with :func:`verified_indexing.mlir_driver.validate_mlir` (the project's
proof of each fused op against the pair or chain it replaced; the numpy Linalg
interpreter on both modules as the refutation oracle, re-run on the replaced ops
alone).

Per pair the tally counts: fused by the pass, proved, refuted, unknown, and the
pairs the pass refused that the project proves legal. Every pass output the
project refutes is written to the findings (``finding: true``) with its function,
the seed and the witness. An internal disagreement (a fused op proved whose
interpreter run differs) is ``wrong``. Without IREE every job is ``skip``.
"""

from __future__ import annotations

import random
from typing import Any

BATCH = 20
"""Functions (pairs) per job: one iree-opt run serves them all."""

_BIN = ["arith.addf", "arith.mulf", "arith.subf", "arith.maximumf"]


def _t(s: int, rank: int) -> str:
    return "tensor<" + "x".join([str(s)] * rank) + "xf32>"


def _map(n: int, res: list[str]) -> str:
    return f"affine_map<({', '.join(f'd{i}' for i in range(n))}) -> ({', '.join(res)})>"


class _Fn:
    def __init__(self, name: str) -> None:
        self.name = name
        self.args: list[tuple[str, str]] = []
        self.body: list[str] = []
        self.tmp = 0

    def arg(self, t: str) -> str:
        n = f"%a{len(self.args)}"
        self.args.append((n, t))
        return n

    def fresh(self, p: str = "v") -> str:
        self.tmp += 1
        return f"%{p}{self.tmp}"

    def empty(self, t: str) -> str:
        n = self.fresh("e")
        self.body.append(f"  {n} = tensor.empty() : {t}")
        return n

    def generic(self, results: list[str], ins: list[tuple[str, str, str]], outs: list[tuple[str, str, str]],
                n: int, iters: list[str], payload: list[str]) -> None:
        """``payload`` uses %b0.. for the block arguments (ins then outs)."""
        maps = ", ".join(m for _, _, m in [*ins, *outs])
        lhs = results[0] if len(outs) == 1 else f"{results[0]}:{len(outs)}"
        rtypes = ", ".join(t for _, t, _ in outs)
        it = ", ".join(f'"{x}"' for x in iters)
        ins_txt = (f"ins({', '.join(v for v, _, _ in ins)} : {', '.join(t for _, t, _ in ins)}) " if ins else "")
        self.body.append(f"  {lhs} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{it}]}} "
                         f"{ins_txt}outs({', '.join(v for v, _, _ in outs)} : "
                         f"{', '.join(t for _, t, _ in outs)}) {{")
        bargs = ", ".join(f"%b{i}: f32" for i in range(len(ins) + len(outs)))
        self.body.append(f"  ^bb0({bargs}):")
        self.body += [f"    {ln}" for ln in payload]
        self.body.append(f"  }} -> {rtypes if len(outs) == 1 else '(' + rtypes + ')'}")
        del n

    def text(self, rets: list[tuple[str, str]]) -> str:
        sig = ", ".join(f"{n}: {t}" for n, t in self.args)
        rt = ", ".join(t for _, t in rets)
        head = f"func.func @{self.name}({sig}) -> ({rt}) {{"
        ret = f"  return {', '.join(v for v, _ in rets)} : {rt}"
        return "\n".join([head, *self.body, ret, "}"])


def _value(r: random.Random, f: _Fn, a: str, b: str | None, lines: list[str]) -> str:
    v = f.fresh()
    if b is not None:
        lines.append(f"{v} = {r.choice(_BIN)} {a}, {b} : f32")
    else:
        c = f.fresh("c")
        lines.append(f"{c} = arith.constant {r.choice(['2.0', '-1.0', '3.0'])} : f32")
        lines.append(f"{v} = {r.choice(_BIN)} {a}, {c} : f32")
    return v


def random_function(r: random.Random, name: str, extra_rng: random.Random | None = None) -> tuple[str, dict[str, Any]]:
    """A random function with a producer-consumer pair (module docstring) and what was drawn.
    ``extra_rng`` draws the ops added for the pass's folds (an identity copy of the consumer's result,
    written or after folding ``x * 1.0``, returned with or without the value it copies), from its
    own stream so
    that ``r`` draws the same pair as before they were added."""
    f = _Fn(name)
    s = r.choice([2, 3, 4])
    npl = r.randint(1, 3)
    feats: dict[str, Any] = {"size": s, "producer_loops": npl}
    iters = ["parallel"] * npl
    reduction = npl >= 2 and r.random() < 0.12
    if reduction:
        iters[-1] = "reduction"
    # producer result map
    kind = "perm"
    if reduction:
        kind = "reduction"
        res0 = [f"d{i}" for i in range(npl - 1)]
    else:
        kind = r.choices(["perm", "projected", "repeat"], [0.7, 0.15, 0.15])[0] if npl >= 2 else "perm"
        dims = [f"d{i}" for i in range(npl)]
        if kind == "perm":
            res0 = r.sample(dims, npl)
        elif kind == "projected":
            res0 = sorted(r.sample(dims, npl - 1))
        else:
            res0 = [dims[0], *dims[: npl - 1]]
    feats["producer_result_map"] = kind
    # producer inputs: the first covers every loop (a permutation), a second may broadcast
    ins = []
    a0 = f.arg(_t(s, npl))
    ins.append((a0, _t(s, npl), _map(npl, r.sample([f"d{i}" for i in range(npl)], npl))))
    if r.random() < 0.4:
        rank = r.randint(1, npl)
        res = sorted(r.sample([f"d{i}" for i in range(npl)], rank))
        if rank == 2 and r.random() < 0.2:
            res = [res[0], res[0]]
            feats["repeated_input"] = True
        ins.append((f.arg(_t(s, rank)), _t(s, rank), _map(npl, res)))
    reads_out = reduction or r.random() < 0.2
    multi = r.random() < 0.2
    feats.update(reads_out=reads_out, multi_result=multi)
    r0t = _t(s, len(res0))
    init0 = f.arg(r0t) if reads_out else f.empty(r0t)
    outs = [(init0, r0t, _map(npl, res0))]
    if multi:
        outs.append((f.empty(_t(s, npl)), _t(s, npl), _map(npl, [f"d{i}" for i in range(npl)])))
    pay: list[str] = []
    v = _value(r, f, "%b0", "%b1" if len(ins) > 1 else None, pay)
    if r.random() < 0.2:
        feats["index"] = True
        i, ii, fi = f.fresh("i"), f.fresh("i"), f.fresh("i")
        pay += [f"{i} = linalg.index {r.randrange(npl)} : index", f"{ii} = arith.index_cast {i} : index to i64",
                f"{fi} = arith.sitofp {ii} : i64 to f32"]
        v2 = f.fresh()
        pay.append(f"{v2} = arith.addf {v}, {fi} : f32")
        v = v2
    if reads_out:
        v2 = f.fresh()
        pay.append(f"{v2} = arith.addf {v}, %b{len(ins)} : f32")
        v = v2
    yields = [v]
    if multi:
        w = f.fresh()
        pay.append(f"{w} = arith.mulf %b0, %b0 : f32")
        yields.append(w)
    pay.append(f"linalg.yield {', '.join(yields)} : {', '.join('f32' for _ in yields)}")
    p = f.fresh("p")
    presults = [p] if not multi else [f"{p}#0", f"{p}#1"]
    f.generic([p], ins, outs, npl, iters, pay)
    # consumer: reads one producer result
    which = 1 if multi and r.random() < 0.4 else 0
    rank = len(res0) if which == 0 else npl
    rt = _t(s, rank)
    rv = presults[which]
    ncl = rank + (1 if r.random() < 0.3 else 0)
    cdims = [f"d{i}" for i in range(ncl)]
    read = r.sample(cdims, rank)
    cred = ncl > rank and r.random() < 0.5  # the extra loop is a reduction
    citers = ["parallel"] * ncl
    out_dims = cdims
    if cred:
        extra = next(d for d in cdims if d not in read)
        citers[int(extra[1:])] = "reduction"
        out_dims = [d for d in cdims if d != extra]
    feats.update(consumer_loops=ncl, consumer_reduction=cred)
    cins = []
    into_outs = not cred and ncl == rank and r.random() < 0.08
    feats["into_outs"] = into_outs
    cout_t = _t(s, len(out_dims))
    if into_outs:
        cins.append((f.arg(_t(s, ncl)), _t(s, ncl), _map(ncl, cdims)))
        couts = [(rv, rt, _map(ncl, read))]
    else:
        cins.append((rv, rt, _map(ncl, read)))
        if ncl > rank or r.random() < 0.3:
            cins.append((f.arg(_t(s, ncl)), _t(s, ncl), _map(ncl, cdims)))
        cinit = f.arg(cout_t) if cred or r.random() < 0.15 else f.empty(cout_t)
        couts = [(cinit, cout_t, _map(ncl, out_dims))]
    cpay: list[str] = []
    v = _value(r, f, "%b0", "%b1" if len(cins) > 1 else None, cpay)
    if cred or into_outs or r.random() < 0.1:
        v2 = f.fresh()
        cpay.append(f"{v2} = arith.addf {v}, %b{len(cins)} : f32")
        v = v2
    cpay.append(f"linalg.yield {v} : f32")
    c = f.fresh("q")
    f.generic([c], cins, couts, ncl, citers, cpay)
    rets = [(c, couts[0][1])]
    if r.random() < 0.15:
        feats["second_use"] = True
        rets.append((rv, rt))
    if r.random() < 0.2:  # a chain: a third op on the consumer's result
        feats["chain"] = True
        ct = couts[0][1]
        crank = len(out_dims)
        d = f.fresh("z")
        f.generic([d], [(c, ct, _map(crank, [f"d{i}" for i in range(crank)]))],
                  [(f.empty(ct), ct, _map(crank, [f"d{i}" for i in range(crank)]))], crank, ["parallel"] * crank,
                  ["%n = arith.negf %b0 : f32", "linalg.yield %n : f32"])
        rets[0] = (d, ct)
    if extra_rng is not None:
        _extra_ops(extra_rng, f, rets, rv, rt, feats)
    return f.text(rets), feats


def _extra_ops(x: random.Random, f: _Fn, rets: list[tuple[str, str]], rv: str, rt: str, feats: dict[str, Any]) -> None:
    """The ops :func:`random_function` adds from its ``extra_rng`` stream."""
    if x.random() < 0.15:  # an identity copy of the last op's result (EraseIdentityLinalgOp), maybe by folding
        v, t = rets[0]
        rank = t.count("x")
        idm = _map(rank, [f"d{i}" for i in range(rank)])
        folded = x.random() < 0.5
        feats["identity_copy"] = "folded" if folded else "written"
        pay = (["%k = arith.constant 1.0 : f32", "%m = arith.mulf %b0, %k : f32", "linalg.yield %m : f32"] if folded
               else ["linalg.yield %b0 : f32"])
        c = f.fresh("id")
        f.generic([c], [(v, t, idm)], [(f.empty(t), t, idm)], rank, ["parallel"] * rank, pay)
        if x.random() < 0.4:
            feats["identity_copy_of_returned"] = True
            rets.append((v, t))
        rets[0] = (c, t)


def check_mlir(r: random.Random) -> dict[str, Any]:
    """One job: ``BATCH`` random pairs through MLIR's pass, validated (module docstring)."""
    from verified_indexing.errors import VerifiedIndexingError
    from verified_indexing.legality.linalg_interpreter import Disagreement
    from verified_indexing.mlir_driver import find_iree_opt, validate_mlir

    if find_iree_opt() is None:
        return {"outcome": "skip", "why": "IREE (iree-opt) is not installed", "checks": 0}
    # the ops added for the pass's folds come from a stream of their own, seeded by r's state (r draws as before)
    extra = random.Random(str(r.getstate()[1][:8]))
    fns = [random_function(r, f"f{i}", extra) for i in range(BATCH)]
    text = "\n\n".join(t for t, _ in fns) + "\n"
    try:
        res = validate_mlir(text, "<fuzz>", seeds=2, timeout=10.0)
    except Disagreement as exc:
        return {"outcome": "wrong", "why": f"Disagreement: {exc}", "input": text, "checks": BATCH}
    except VerifiedIndexingError as exc:
        return {"outcome": "skip", "why": f"not run: {str(exc)[:500]}", "input": text, "checks": 0}
    from verified_indexing.legality.linalg_ir import parse_linalg_module

    fn_of = {op.name: op.function for op in parse_linalg_module(res.before).ops}
    tally = {"pairs": res.pairs, "fused": 0, "proved": 0, "refuted": 0, "unknown": 0,
             "refused_but_legal": len(res.refusals),
             "decision_agrees": sum(1 for d in res.decisions if d.predicted == d.fused),
             "decision_unknown": sum(1 for d in res.decisions if d.predicted is None),
             "decision_differs": sum(1 for d in res.decisions if d.predicted is not None and d.predicted != d.fused)}
    findings = []
    unknown_reasons: dict[str, int] = {}
    for fc in res.fused:
        if fc.replaced:
            tally["fused"] += len(fc.replaced)
        key = fc.status if fc.status in ("proved", "refuted") else "unknown"
        tally[key] += 1
        fname = fn_of.get(fc.op, "")
        if fc.status == "refuted":
            src = next((t for t, _ in fns if t.startswith(f"func.func {fname}(")), text)
            findings.append({"function": fname, "op": fc.op, "replaced": list(fc.replaced), "reason": fc.reason,
                             "witness": fc.witness, "input": src})
        elif fc.status != "proved":
            short = fc.reason.split(":")[0][:90]
            unknown_reasons[short] = unknown_reasons.get(short, 0) + 1
    refusals: dict[str, int] = {}
    for rf in res.refusals:
        refusals[rf.why_refused.split(";")[0][:90]] = refusals.get(rf.why_refused.split(";")[0][:90], 0) + 1
    differs = [{"producer": d.producer, "consumer": d.consumer, "predicted": d.predicted, "fused": d.fused,
                "why": d.why, "function": fn_of.get(d.consumer, "")} for d in res.decisions
               if d.predicted is not None and d.predicted != d.fused]
    out: dict[str, Any] = {"outcome": "ok", "decision_differs": differs[:5],
                           "checks": BATCH, "tally": tally, "unknown_reasons": unknown_reasons,
                           "refusal_reasons": refusals}
    if findings:
        out.update(finding=True, findings=findings)
    return out
