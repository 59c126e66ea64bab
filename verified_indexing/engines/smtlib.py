"""SMT-LIB 2 export of z3 queries.

Every z3 query of :mod:`verified_indexing.engines.z3_queries` can be written as
a standalone ``.smt2`` file: leading ``;`` comments name the question, the maps,
the variables and what ``sat`` means (the claim is false), followed by the exact
assertions z3 checks (quotient/remainder definitions included) and
``(check-sat)``. Any SMT-LIB solver with integer arithmetic can re-check it:
``unsat`` means the claim is proved.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import z3

from verified_indexing.engines.z3_queries import Z3Query

__all__ = ["to_smt2", "write_smt2", "check_smt2"]


def to_smt2(query: Z3Query) -> str:
    """The query as SMT-LIB 2 text with explanatory comments."""
    s = z3.Solver(ctx=query.enc.ctx)
    s.add(*query.assertions())
    lines = ["; verified_indexing query (z3 " + z3.get_version_string() + ")"]
    for c in query.comments:
        lines += ["; " + part for part in c.splitlines()]
    if query.sat_refutes:
        lines.append("; unsat = proved; sat = refuted (the model is a counterexample)")
    else:
        lines.append("; unsat = proved; sat proves nothing (this is a sufficient condition only)")
    body = str(s.to_smt2())
    return "\n".join(lines) + "\n(set-logic ALL)\n" + body


def write_smt2(query: Z3Query, directory: str | Path, stem: str | None = None) -> Path:
    """Write the query to ``directory/<stem>.smt2`` (stem: a hash of the text) and return the path."""
    text = to_smt2(query)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name = stem or "query-" + hashlib.sha256(text.encode()).hexdigest()[:16]
    path = d / f"{name}.smt2"
    path.write_text(text, encoding="utf-8")
    return path


def check_smt2(text: str, timeout: float = 10.0) -> str:
    """Re-read SMT-LIB text with z3's parser in a new context: ``sat``/``unsat``/``unknown``."""
    ctx = z3.Context()
    s = z3.Solver(ctx=ctx)
    s.set("timeout", max(1, int(timeout * 1000)))
    s.add(z3.parse_smt2_string(text, ctx=ctx))
    return str(s.check())
