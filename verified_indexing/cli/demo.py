"""``verified-indexing demo``: what the tool does, in checks.

Every line it prints is a check and its result. Five parts:

1. XLA's indexing-analysis document (when it is found beside the checkout, or
   given with ``--spec``): each per-op example's HLO is read from the document,
   analysed, and our map is proven equal (isl) to the map the document states;
   the matches are counted and a mismatch is shown with its counterexample.
   Which map of the document belongs to which question (direction, operand) is
   our own table below; the document's text is read at run time, never copied.
   Then the maps the prose states after an HLO block (the broadcast of the
   introduction, the two fusions, the reshape chain), and the simplifier's four
   examples: the stated result proven equal to the map as written, and compared
   with what our simplifier gives.
2. A real JAX dump (``softmax.post.hlo``, printed by JAX 0.10.2 on CPU): every
   fusion analysed and its maps proven; every map's results re-checked in bounds
   of the parameter's shape by enumerating the domain.
3. A simplification with its proof: reshape, exp, reshape of a real JAX module
   (before XLA's optimisations) composes to a long map that simplifies to the
   identity, proven equal by the engines and re-checked point by point.
4. A refuted rewrite rule with its counterexample, re-checked with Python's own
   floor division.
5. An illegal Linalg fusion with its witness, re-checked by enumerating what the
   producer writes.

The inputs of parts 2-5 ship with the package (``verified_indexing/demo_data``:
copies of files of ``examples/``), so ``verified-indexing demo`` works from a
wheel. Exit code 0 when every check gives the expected result, 2 when --timeout ran out first, 1 otherwise.
"""

from __future__ import annotations

import argparse
import math
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from verified_indexing.cli._common import add_timeout

if TYPE_CHECKING:
    from verified_indexing.engines import Verdict
    from verified_indexing.hlo.ir import Computation
    from verified_indexing.indexing_map import IndexingMap

EXAMPLES = """examples:
  verified-indexing demo
  verified-indexing demo --spec ../shared/spec/xla-indexing-analysis.md
"""

SPEC_NAME = "xla-indexing-analysis.md"

# The real JAX dump of part 2 and the module of part 3 (see examples/jax_hlo/README.md), the Linalg
# module of part 4 (hand-written, examples/mlir/skew_illegal.mlir).
DUMP = "softmax.post.hlo"
ROUND_TRIP = "reshape_roundtrip.pre.hlo"
FUSION = "skew_illegal.mlir"

# Part 4: a rule that looks right (it is right for positive divisors) and is not.
RULE = "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)"
RULE_WHERE = "c0 > 0, c1 != 0"


def _lhs(x: int, c0: int, c1: int) -> int:
    return (x // c0) // c1  # Python's // rounds toward negative infinity, as floordiv does


def _rhs(x: int, c0: int, c1: int) -> int:
    return x // (c0 * c1)


class SpecCheck(NamedTuple):
    """One map block of the document: the ``ordinal``-th map block of the section titled ``section``
    states the map of ``direction`` (``o2i``: output ``tensor`` to operand ``position``; ``i2o``:
    operand ``tensor`` to output ``position``; ``o2i-scalar``/``i2o-scalar``: the maps between the
    root's shape and a rank-0 tensor) for every position listed."""

    section: str
    ordinal: int
    direction: str
    tensor: int
    positions: tuple[int, ...]


def _checks() -> list[SpecCheck]:
    out = []
    table: list[tuple[str, list[tuple[str, int, tuple[int, ...]]]]] = [
        ("Elementwise", [("o2i", 0, (0,)), ("i2o", 0, (0,))]),
        ("Broadcast", [("o2i", 0, (0,)), ("i2o", 0, (0,))]),
        ("Iota", [("o2i-scalar", 0, (0,)), ("i2o-scalar", 0, (0,))]),
        ("DynamicSlice", [("o2i", 0, (0,)), ("o2i", 0, (1, 2, 3))]),
        ("DynamicUpdateSlice", [("o2i", 0, (0,)), ("o2i", 0, (1,)), ("o2i", 0, (2, 3))]),
        ("Gather", [("o2i", 0, (0,)), ("o2i", 0, (1,))]),
        ("Transpose", [("o2i", 0, (0,)), ("i2o", 0, (0,))]),
        ("Reverse", [("o2i", 0, (0,)), ("i2o", 0, (0,))]),
        ("(Variadic)Reduce", [("o2i", 0, (0,)), ("o2i", 0, (2,)), ("i2o", 0, (0,)), ("i2o", 2, (0,))]),
        ("Slice", [("o2i", 0, (0,)), ("i2o", 0, (0,))]),
        ("Collapse shape", [("o2i", 0, (0,)), ("i2o", 0, (0,))]),
        ("Expand shape", [("o2i", 0, (0,)), ("i2o", 0, (0,))]),
        ("Example 1: Linearization-delinearization.", [("o2i", 0, (0,)), ("i2o", 0, (0,))]),
        ("Example 2: Expanded and collapsed subshapes", [("o2i", 0, (0,)), ("i2o", 0, (0,))]),
        ("Concatenate", [("o2i", 0, (0,)), ("o2i", 0, (1,)), ("o2i", 0, (2,)),
                         ("i2o", 0, (0,)), ("i2o", 1, (0,)), ("i2o", 2, (0,))]),
        ("Dot", [("o2i", 0, (0,)), ("o2i", 0, (1,)), ("i2o", 0, (0,)), ("i2o", 1, (0,))]),
        ("Pad", [("o2i", 0, (0,)), ("o2i", 0, (1,))]),
        ("ReduceWindow", [("o2i", 0, (0,)), ("o2i", 0, (1,))]),
    ]
    for section, rows in table:
        for k, (direction, index, positions) in enumerate(rows):
            out.append(SpecCheck(section, k, direction, index, positions))
    return out


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "demo",
        help="what the tool does, in checks (on bundled inputs, and XLA's document when beside the checkout)",
        description=(
            "Every line is a check and its result: XLA's indexing-analysis document's per-op examples against "
            "our analysis (count of matches; the document is read from ../shared/spec/ beside the checkout, or "
            "--spec), a real JAX dump analysed and proven, a simplification with its proof, a refuted rewrite "
            "rule with its counterexample, an illegal fusion with its witness. Exit 0 when every check gives "
            "the expected result, 2 when --timeout ran out first, 1 otherwise."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--spec", metavar="FILE", help=f"XLA's indexing-analysis document ({SPEC_NAME})")
    add_timeout(p, math.inf)
    p.set_defaults(run=run)


def _timing() -> bool:
    from verified_indexing._timing import show_timing

    return show_timing()


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    print("verified-indexing demo: each line is a check and its result")
    ok = spec_examples(args.spec)
    for part in (jax_dump, simplification, refuted_rule, illegal_fusion):
        ok = part() and ok
    from verified_indexing.engines.deadline import budget_exhausted

    if not ok and budget_exhausted():  # a check that ran out of time is unknown, not failed
        print("== unknown: the time budget (--timeout) ran out before every check finished"
              + (f" ({time.perf_counter() - start:.1f} s)" if _timing() else ""))
        return 2
    print(f"== {'all checks gave the expected result' if ok else 'SOME CHECKS FAILED'}"
          + (f" ({time.perf_counter() - start:.1f} s)" if _timing() else ""))
    return 0 if ok else 1


def _data(name: str) -> str:
    from importlib import resources

    return (resources.files("verified_indexing") / "demo_data" / name).read_text(encoding="utf-8")


def default_spec_paths() -> list[Path]:
    """Where the document is looked for: ``../shared/spec/`` from the working directory, and beside
    the checkout this package runs from (if it runs from one)."""
    paths = [Path("..") / "shared" / "spec" / SPEC_NAME]
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        paths.append(checkout.parent / "shared" / "spec" / SPEC_NAME)
    return paths


# -- 1. the document ---------------------------------------------------------------------------


class _Section(NamedTuple):
    title: str
    line: int  # 1-based line of the heading
    hlo: list[tuple[int, str]]  # (line, text) of each ```c block
    maps: list[tuple[int, str]]  # (line, text) of each map block


def _sections(text: str) -> list[_Section]:
    from verified_indexing.markdown_maps import extract_map_blocks

    lines = text.splitlines()
    sections: list[_Section] = []
    fence: list[str] | None = None
    fence_tag, fence_line = "", 0
    for n, line in enumerate(lines, start=1):
        if fence is not None:
            if line.startswith("```"):
                if fence_tag == "c" and sections:
                    sections[-1].hlo.append((fence_line, "\n".join(fence)))
                fence = None
            else:
                fence.append(line)
            continue
        if line.startswith("```"):
            fence, fence_tag, fence_line = [], line[3:].strip(), n + 1
        elif line.startswith("#"):
            title = line.lstrip("#").strip()
            if title.startswith("[") and "]" in title:
                title = title[1 : title.index("]")]
            sections.append(_Section(title, n, [], []))
    for block in extract_map_blocks(text):
        owner = [s for s in sections if s.line < block.line]
        if owner:
            owner[-1].maps.append((block.line, block.text))
    return sections


def _our_maps(comp: Computation, check: SpecCheck) -> list[tuple[int, IndexingMap, tuple[int, ...]]]:
    """(position, our map, the target's shape) for every position of ``check``."""
    from verified_indexing.hlo.ops import from_scalar_map, input_to_output, output_to_input, to_scalar_map

    root = comp.root
    out_dims = root.shape.dims
    if check.direction == "o2i-scalar":
        return [(0, to_scalar_map(out_dims), ())]
    if check.direction == "i2o-scalar":
        return [(0, from_scalar_map(out_dims), out_dims)]
    if check.direction == "o2i":
        maps = output_to_input(root, comp, check.tensor)
        return [(p, maps[p], comp.operand(root, p).shape.dims) for p in check.positions]
    maps = input_to_output(root, comp, check.tensor)
    shapes = root.shape.tuple_shapes or (root.shape,)
    return [(p, maps[p], shapes[p].dims) for p in check.positions]


def _where(m: IndexingMap, values: Sequence[int]) -> str:
    kinds: tuple[tuple[Literal["d", "s", "rt"], int], ...] = (
        ("d", m.num_dims), ("s", m.num_range_vars), ("rt", m.num_rt_vars))
    names = [m.var_name(kind, k) for kind, n in kinds for k in range(n)]
    return ", ".join(f"{n} = {v}" for n, v in zip(names, values))


def spec_examples(spec: str | None) -> bool:
    """Part 1; True unless a stated map could not be checked (a mismatch is a result, not a failure:
    it is shown with the evidence)."""
    from verified_indexing.engines import prove_equal
    from verified_indexing.errors import VerifiedIndexingError
    from verified_indexing.hlo.parser import parse_hlo_snippet
    from verified_indexing.syntax import parse_indexing_map

    candidates = [Path(spec)] if spec else default_spec_paths()
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        print(f"== 1. XLA's indexing-analysis document: not found ({', '.join(map(str, candidates))}); skipped")
        return True
    print(f"== 1. XLA's indexing-analysis document ({path}): its examples against our analysis")
    sections = _sections(path.read_text(encoding="utf-8"))
    by_title = {s.title: s for s in sections}
    checked = matched = 0
    problems: list[str] = []
    per_section: dict[str, list[int]] = {}
    used: set[tuple[str, int]] = set()
    for check in _checks():
        sec = by_title.get(check.section)
        where = f"section {check.section!r}, map {check.ordinal + 1}"
        if sec is None or check.ordinal >= len(sec.maps) or not sec.hlo:
            problems.append(f"  [not found] {where}: the document's layout differs from the one our table expects")
            continue
        line, text = sec.maps[check.ordinal]
        hlo_line, hlo = [h for h in sec.hlo if h[0] < line][-1] if any(h[0] < line for h in sec.hlo) else sec.hlo[0]
        used.add((sec.title, check.ordinal))
        try:
            stated = parse_indexing_map(text, f"{path} (line {line})")
            ours = _our_maps(parse_hlo_snippet(hlo, f"{path} (line {hlo_line})"), check)
        except (VerifiedIndexingError, IndexError) as exc:
            problems.append(f"  [error] {where} (line {line}): {exc}")
            continue
        for position, m, shape in ours:
            checked += 1
            v = prove_equal(m, stated)
            tally = per_section.setdefault(check.section, [0, 0])
            tally[1] += 1
            if v.proved:
                matched += 1
                tally[0] += 1
                continue
            problems.append(_mismatch(check, position, line, m, stated, shape, v))
    for title, (good, total) in per_section.items():
        print(f"  [{'ok' if good == total else 'DIFFERS'}] {title}: {good} of {total} stated maps proved equal to ours")
    for p in problems:
        print(p)
    others: dict[str, int] = {}
    for sec in sections:
        for k in range(len(sec.maps)):
            if (sec.title, k) not in used:
                others[sec.title] = others.get(sec.title, 0) + 1
    rest = ", ".join(f"{title} {n}" for title, n in others.items())
    print(f"  result: {matched} of {checked} stated maps of the per-op examples match our analysis (proved equal); "
          f"map blocks with no HLO to check against: {rest or 'none'}")
    text = path.read_text(encoding="utf-8")
    ok = not any(p.startswith("  [error]") or p.startswith("  [not found]") for p in problems)
    ok = _prose_fusions(text) and ok
    return _prose_simplifier(text) and ok


_SPAN_RE = re.compile(r"`([^`]*)`")
_FENCE_C_RE = re.compile(r"^```c\n(.*?)^```\n(.*?)(?=^```|^#|\Z)", re.DOTALL | re.MULTILINE)


def _normalize(text: str) -> str:
    """The document's prose notation in our syntax: ``floorDiv`` is ``floordiv`` (``100d0`` we read)."""
    return " ".join(text.replace("floorDiv", "floordiv").split())


def _prose_fusions(text: str) -> bool:
    """The fusion and reshape-chain examples: an HLO block, then the maps of parameter 0 in the prose after it.
    Our maps (composed, simplified) must be exactly the stated ones (each proved equal to one of ours)."""
    from verified_indexing.engines import prove_equal
    from verified_indexing.errors import VerifiedIndexingError
    from verified_indexing.hlo import analyze_module
    from verified_indexing.hlo.report import load_hlo
    from verified_indexing.indexing_map import IndexingMap
    from verified_indexing.syntax import parse_affine_map

    checked = matched = 0
    ok = True
    for m in _FENCE_C_RE.finditer(text):
        hlo, prose = m.group(1), m.group(2)
        stated_texts = [t for t in _SPAN_RE.findall(" ".join(prose.split())) if t.startswith("(") and "->" in t]
        if not stated_texts or "parameter(0)" not in hlo:
            continue
        line = text.count("\n", 0, m.start(1)) + 1
        try:
            module = load_hlo(hlo if "{" in hlo.split("\n", 1)[0] else "f {\n" + hlo + "\n}", f"line {line}")
            comp = next(iter(module.computations))
            result = analyze_module(module, computation=comp)[0]
            ours = [a.map for t in result.targets if t.index == 0 for a in t.maps]
            stated = [parse_affine_map(_normalize(t)) for t in stated_texts]
        except (VerifiedIndexingError, StopIteration, IndexError) as exc:
            print(f"  [error] the HLO example at line {line}: {exc}")
            ok = False
            continue
        found = 0
        for st in stated:
            as_map = [IndexingMap(o.dims, list(st.results)) for o in ours if st.num_dims == o.num_dims]
            found += any(prove_equal(o, s).proved for o in ours for s in as_map)
        checked += len(stated)
        matched += found
        good = found == len(stated) == len(ours)
        plural = "s" if len(ours) != 1 else ""
        print(f"  [{'ok' if good else 'DIFFERS'}] HLO example at line {line}: parameter 0 read through "
              f"{len(ours)} map{plural}, {found} of {len(stated)} stated maps proved equal to ours (on our domain)")
    print(f"  result: {matched} of {checked} maps stated in the prose after an HLO example (broadcast, fusions, "
          "reshape chain) match ours")
    return ok


def _prose_simplifier(text: str) -> bool:
    """The simplifier's four examples (a numbered list: the map, its domain, ``becomes``, the result): the stated
    result proved equal to the map, and compared with what our simplifier gives."""
    from verified_indexing.engines import prove_equal
    from verified_indexing.errors import VerifiedIndexingError
    from verified_indexing.simplify import simplify_with_report
    from verified_indexing.syntax import parse_indexing_map

    start = text.find("## Indexing Map Simplifier")
    item_re = re.compile(r"^\d+\.\s+(.*?)(?=^\d+\.|^\s*$)", re.DOTALL | re.MULTILINE)
    items = item_re.findall(text[start:]) if start >= 0 else []
    examples = [_SPAN_RE.findall(" ".join(i.split())) for i in items if "becomes" in i]
    ok = True
    proved = same = 0
    for n, spans in enumerate(examples, start=1):
        if len(spans) != 3:
            print(f"  [error] simplifier example {n}: expected a map, a domain and a result, found {spans}")
            ok = False
            continue
        original, domain, result = (_normalize(x) for x in spans)
        dims = re.match(r"\((.*?)\)", original)
        names = [d.strip() for d in dims.group(1).split(",")] if dims else []
        boxes = re.findall(r"\[(-?\d+),\s*(-?\d+)\]", domain)
        if len(boxes) == 1:
            boxes = boxes * len(names)
        dom = ", ".join(f"{d} in [{lo}, {hi}]" for d, (lo, hi) in zip(names, boxes))
        try:
            before = parse_indexing_map(f"{original}, domain: {dom}")
            stated = parse_indexing_map(f"{result}, domain: {dom}")
        except VerifiedIndexingError as exc:
            print(f"  [error] simplifier example {n}: {exc}")
            ok = False
            continue
        v = prove_equal(before, stated)
        ours = simplify_with_report(before).map
        identical = ours.results == stated.results
        proved += v.proved
        same += identical
        if v.proved:
            print(f"  [proved] simplifier example {n}: the stated result equals the map ({v.engine}); ours "
                  + ("is the same" if identical else f"is {ours.format(one_line=True).split(', domain')[0]}"))
            continue
        ce = v.counterexample
        at = ", ".join(f"{k} = {x}" for k, x in ce.values) if ce is not None else v.reason
        line = f"  [{v.status}] simplifier example {n} as written: {at}"
        if ce is not None:
            line += f": the map gives {ce.source}, the stated result {ce.target}"
        print(line)
        # The one reading question: MLIR's precedence (unary minus binds tightest) against the minus
        # applied to the quotient.
        alt = re.sub(r"-\((.*)\) floordiv (\d+)", r"-((\1) floordiv \2)", original)
        if alt != original:
            try:
                alt_map = parse_indexing_map(f"{alt}, domain: {dom}")
            except VerifiedIndexingError as exc:
                print(f"  [error] simplifier example {n} read as {alt}: {exc}")
                ok = False
                continue
            w = prove_equal(alt_map, stated)
            alt_same = simplify_with_report(alt_map).map.results == stated.results
            print(f"  [{w.status}] simplifier example {n} read as {alt}: equal to the stated result ({w.engine}); "
                  f"ours {'is the same' if alt_same else 'differs'}")
    print(f"  result: {proved} of {len(examples)} simplifier examples proved as written; our simplifier gives the "
          f"stated result in {same} of {len(examples)}")
    return ok


def _mismatch(check: SpecCheck, position: int, line: int, ours: IndexingMap, stated: IndexingMap,
              shape: tuple[int, ...], v: Verdict) -> str:
    what = f"{check.section} {check.direction} {check.tensor}->{position} (line {line})"
    ce = v.counterexample
    if not v.refuted or ce is None:
        return f"  [error] {what}: not decided: {v.status} {v.reason}"
    values = [x for _, x in ce.values]
    n = stated.num_dims + stated.num_range_vars + stated.num_rt_vars
    if len(values) != n or ours.num_range_vars != stated.num_range_vars:
        return f"  [DIFFERS] {what}: {ce.note}"
    nd, ns = stated.num_dims, stated.num_range_vars
    point = (values[:nd], values[nd : nd + ns], values[nd + ns :])
    theirs, mine = stated.evaluate(*point), ours.evaluate(*point)
    line_out = (f"  [DIFFERS] {what}: at {_where(stated, values)} the document gives {theirs}, we give {mine} "
                f"(refuted by {v.engine})")
    return line_out + _out_of_bounds(stated, shape)


def _out_of_bounds(m: IndexingMap, shape: tuple[int, ...]) -> str:
    """A note when a result of ``m`` leaves ``shape`` somewhere on its domain (ranges by isl)."""
    from verified_indexing.engines import exact_range

    if m.num_results != len(shape):
        return ""
    for k, (expr, size) in enumerate(zip(m.results, shape)):
        r = exact_range(expr, m)
        if r is not None and (r.lo < 0 or r.hi >= size):
            return (f"; the document's result {k} ranges over [{r.lo}, {r.hi}], outside the target's dimension "
                    f"of size {size}: the document's map is wrong")
    return ""


# -- 2. a real JAX dump --------------------------------------------------------------------------


def _points(m: IndexingMap) -> Iterator[tuple[int, ...]]:
    for d, s, r in m.domain_points(limit=2_000_000):
        yield m.evaluate(d, s, r)


def jax_dump() -> bool:
    from verified_indexing.hlo import analyze_module
    from verified_indexing.hlo.report import load_hlo

    print(f"== 2. a real JAX dump ({DUMP}: jax.jit(softmax).lower(x).compile().as_text(), JAX 0.10.2, CPU)")
    module = load_hlo(_data(DUMP), DUMP)
    start = time.perf_counter()
    results = analyze_module(module)
    seconds = time.perf_counter() - start
    ok = True
    total = proved = 0
    for r in results:
        parts = []
        for t in r.targets:
            for a in t.maps:
                total += 1
                good = a.verdict is not None and a.verdict.proved
                proved += good
                dims = t.shape.dims
                inside = all(len(p) == len(dims) and all(0 <= x < n for x, n in zip(p, dims)) for p in _points(a.map))
                ok = ok and good and inside
                results_text = str(a.map).splitlines()[0].rstrip(",")
                parts.append(f"{t.name} {results_text}" + ("" if inside else " OUT OF BOUNDS"))
        unsupported = [u.opcode for u in r.unsupported]
        ok = ok and not unsupported
        print(f"  [{'proved' if ok else 'FAILED'}] fusion {r.fusion}: " + "; ".join(parts)
              + (f"; unsupported: {', '.join(unsupported)}" if unsupported else ""))
    print(f"  result: {len(results)} fusions, {proved} of {total} maps proved (isl); every result in bounds of its "
          f"parameter's shape on every domain point (enumerated)" + (f"; {seconds * 1000:.0f} ms" if _timing() else ""))
    return ok and proved == total


# -- 3. a simplification -------------------------------------------------------------------------


def simplification() -> bool:
    from verified_indexing.hlo import analyze_module
    from verified_indexing.hlo.report import load_hlo
    from verified_indexing.simplify import simplify_with_report

    print(f"== 3. a simplification with its proof ({ROUND_TRIP}: reshape, exp, reshape, "
          "real JAX module before XLA's passes)")
    module = load_hlo(_data(ROUND_TRIP), ROUND_TRIP)
    comp = module.entry.name
    composed = analyze_module(module, computation=comp, simplify=False)[0].targets[0].maps[0].map
    report = simplify_with_report(composed)
    v = report.verdict
    print(f"  composed map:   {composed.format(one_line=True)}")
    print(f"  simplified to:  {report.map.format(one_line=True)}")
    good = v is not None and v.proved
    print(f"  [{'proved' if good else 'NOT PROVED'}] simplified == composed"
          + (f" ({v.engine}" + (f", {v.seconds * 1000:.1f} ms)" if _timing() else ")") if v is not None else ""))
    same = all(
        composed.evaluate(d, s, r) == report.map.evaluate(d, s, r) for d, s, r in composed.domain_points()
    )
    n = sum(1 for _ in composed.domain_points())
    print(f"  [{'equal' if same else 'DIFFERENT'}] plain evaluator: both maps give the same index at all {n} points")
    return good and same


# -- 4. a refuted rule ---------------------------------------------------------------------------


def refuted_rule() -> bool:
    from verified_indexing.proofs.user_rule import check_user_rule

    print(f"== 4. a refuted rewrite rule: {RULE}  if {RULE_WHERE}")
    v = check_user_rule(RULE, RULE_WHERE)
    ce = v.counterexample
    if not v.refuted or ce is None:
        print(f"  [UNEXPECTED] {v.status}: {v.reason}")
        return False
    values = dict(ce.values)
    x, c0, c1 = values["x"], values["c0"], values["c1"]
    print(f"  [refuted] by {v.engine}: counterexample x = {x}, c0 = {c0}, c1 = {c1}")
    lhs, rhs = _lhs(x, c0, c1), _rhs(x, c0, c1)
    print(f"  [{'confirmed' if lhs != rhs else 'NOT CONFIRMED'}] Python floor division: ({x} // {c0}) // {c1} = {lhs}"
          f", but {x} // ({c0} * {c1}) = {rhs}")
    fixed = check_user_rule(RULE, "c0 > 0, c1 > 0")
    print(f"  [{fixed.status}] the same rule if c0 > 0, c1 > 0 ({fixed.engine})")
    return lhs != rhs and fixed.proved


# -- 5. an illegal fusion ------------------------------------------------------------------------


def illegal_fusion() -> bool:
    from verified_indexing.legality import fusion_candidates, parse_linalg
    from verified_indexing.legality.linalg import check_fusion

    print(f"== 5. an illegal fusion with its witness ({FUSION}: hand-written linalg.generic pair)")
    ops = parse_linalg(_data(FUSION), FUSION)
    producer, consumer, operand = fusion_candidates(ops)[0]
    rep = check_fusion(producer, consumer, operand_index=operand)
    print(f"  MLIR's elementwise-fusion check: {'fusable' if rep.mlir.fusable else 'rejected'}"
          f"{'' if rep.mlir.fusable else ': ' + (rep.mlir.rejected_by or '')}")
    refuted = [o for o in rep.obligations if o.verdict.refuted]
    print(f"  [{rep.status}] ours: {rep.reason}")
    if rep.status != "illegal" or not refuted or rep.write_map is None:
        return False
    witness = refuted[0].witness or {}
    iteration, element = witness.get("consumer_iteration"), witness.get("element")
    if iteration is None or element is None or rep.read_map is None:
        print(f"  [NO WITNESS] {refuted[0].name}")
        return False
    reads = rep.read_map.evaluate(iteration)
    written = set(_points(rep.write_map))
    confirmed = reads == tuple(element) and tuple(element) not in written
    print(f"  [{'confirmed' if confirmed else 'NOT CONFIRMED'}] plain evaluator: consumer iteration "
          f"{tuple(iteration)} reads {reads}; the producer writes {len(written)} elements (enumerated), "
          f"{tuple(element)} is not one of them")
    return confirmed

