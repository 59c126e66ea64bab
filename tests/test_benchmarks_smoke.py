"""CI runs a short version of every benchmark (``make bench`` runs them in full): each script must run to
completion, print its table, and report no failed proof. Timings are printed, never asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Arguments that keep each run short in CI.
SHORT_ARGS = {"simplify.py": ["30"], "startup.py": ["3"], "simplify_vs_tvm.py": ["6"], "hlo.py": ["--llama", "1,2"],
              "throughput.py": ["40"], "audit_kernels.py": ["gather", "dot", "convolution", "iota", "softmax"],
              "validate_mlir_jax.py": ["layer_norm", "attention", "flatten", "max_pool", "mlp"]}


@pytest.mark.parametrize("script", sorted(p.name for p in (ROOT / "benchmarks").glob("*.py")))
def test_benchmark_runs(script: str, tmp_path: Path) -> None:
    # PYTHONPATH: the checkout the test runs from (a worktree too), not whatever the venv installed.
    env = {"VERIFIED_INDEXING_CACHE": str(tmp_path / "cache.sqlite"), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *SHORT_ARGS.get(script, [])],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert len(lines) >= 5, proc.stdout
    lowered = proc.stdout.lower()
    for word in ("refuted", "error", "disagree"):
        assert word not in lowered, f"{script} reports '{word}':\n{proc.stdout}"
