"""The numpy interpreter of ``linalg.generic`` the Linalg tests use as their
oracle: it lives in the package now (the second check of every legal fusion,
:mod:`verified_indexing.legality.linalg_interpreter`); this module keeps the
tests' import path."""

from verified_indexing.legality.linalg_interpreter import eval_payload, loop_sizes, run_generic, run_ops

__all__ = ["eval_payload", "loop_sizes", "run_generic", "run_ops"]
