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
    assert campaign.main(["--checks", "6", "--seed", "7", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "24 checks" in text and "wrong: 0" in text
    lines = (out / "progress.jsonl").read_text().splitlines()
    assert len(lines) == 24 and {json.loads(x)["area"] for x in lines} == {"equal", "simplify", "rule", "cli"}
    # resuming with more checks runs only the new ones
    assert campaign.main(["--checks", "8", "--seed", "7", "--out", str(out), "--resume"]) == 0
    assert len((out / "progress.jsonl").read_text().splitlines()) == 32


def test_the_oracle_is_independent_and_exact() -> None:
    campaign = _campaign()
    m = {"dims": ["d0"], "syms": ["s0"], "bounds": {"d0": (-3, 3), "s0": (0, 1)},
         "results": ["((d0 ceildiv 2) + (d0 mod -3) + s0)"], "constraints": []}
    rel = campaign.relation(m)
    want = {((d,), (-((-d) // 2) + d % -3 + s,)) for d in range(-3, 4) for s in (0, 1)}
    assert rel == want
