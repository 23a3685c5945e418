"""Every benchmark still imports: a renamed function must not leave a bench that fails only when
someone runs it (bench/first_token.py did, twice)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("module", sorted(p.stem for p in BENCH.glob("*.py") if p.stem != "__init__"))
def test_the_benchmark_imports(module):
    importlib.import_module(f"bench.{module}")
