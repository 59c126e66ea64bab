"""A short seeded slice of the differential campaign (``make fuzz`` runs the long one)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _campaign() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_campaign", ROOT / "fuzz" / "campaign.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_seeded_slice_finds_nothing_wrong_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    campaign = _campaign()
    out = tmp_path / "fz"
    quick = ["--areas", "equal,simplify,rule,cli"]
    assert campaign.main([*quick, "--checks", "6", "--seed", "7", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "24 checks" in text and "wrong: 0" in text
    lines = (out / "progress.jsonl").read_text().splitlines()
    assert len(lines) == 24 and {json.loads(x)["area"] for x in lines} == {"equal", "simplify", "rule", "cli"}
    # resuming with more checks runs only the new ones
    assert campaign.main([*quick, "--checks", "8", "--seed", "7", "--out", str(out), "--resume"]) == 0
    assert len((out / "progress.jsonl").read_text().splitlines()) == 32


def test_the_oracle_is_independent_and_exact() -> None:
    campaign = _campaign()
    m = {"dims": ["d0"], "syms": ["s0"], "bounds": {"d0": (-3, 3), "s0": (0, 1)},
         "results": ["((d0 ceildiv 2) + (d0 mod -3) + s0)"], "constraints": []}
    rel = campaign.relation(m)
    want = {((d,), (-((-d) // 2) + d % -3 + s,)) for d in range(-3, 4) for s in (0, 1)}
    assert rel == want


def test_property_areas_count_examples_and_report_a_planted_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    campaign = _campaign()
    out = tmp_path / "fz"
    assert campaign.main(["--areas", "hlo,legality", "--checks", "16", "--seed", "1", "--out", str(out)]) == 0
    rows = [json.loads(x) for x in (out / "progress.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["outcome"] == "ok" and r["checks"] >= 2 for r in rows)
    assert f"{sum(r['checks'] for r in rows)} checks" in capsys.readouterr().out
    # A property that fails on some example: the job is a finding, with the test's name.
    (tmp_path / "planted_props.py").write_text(
        "from hypothesis import given, strategies as st\n"
        "@given(st.integers(0, 1000))\n"
        "def test_planted(n: int) -> None:\n"
        "    assert n < 500\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(campaign.PROPERTY_AREAS, "hlo", ("planted_props",))
    assert campaign.main(["--areas", "hlo", "--checks", "24", "--seed", "1", "--out", str(out)]) == 1
    found = [json.loads(x) for x in (out / "findings.jsonl").read_text().splitlines()]
    assert found and all(f["test"] == "planted_props::test_planted" and f["outcome"] == "wrong" for f in found)


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (extra 'distributed')")
def test_ray_backend_gives_the_process_pools_results(tmp_path: Path) -> None:
    # As `make fuzz` runs it: the script is __main__, the workers spawned processes or Ray tasks.
    import subprocess
    import sys

    args = ["--areas", "equal,simplify,rule,cli", "--checks", "3", "--seed", "5", "--jobs", "2"]
    for backend in ("process", "ray"):
        done = subprocess.run(
            [sys.executable, str(ROOT / "fuzz" / "campaign.py"), *args, "--backend", backend,
             "--out", str(tmp_path / backend)], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "12 checks" in done.stdout and "wrong: 0" in done.stdout

    def outcomes(d: Path) -> list[tuple[str, int, str]]:
        rows = [json.loads(x) for x in (d / "progress.jsonl").read_text().splitlines()]
        return sorted((r["area"], r["index"], r["outcome"]) for r in rows)

    assert outcomes(tmp_path / "ray") == outcomes(tmp_path / "process") and len(outcomes(tmp_path / "ray")) == 12
