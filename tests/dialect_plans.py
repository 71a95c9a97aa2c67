"""The plans of the step lines of the dialect fixtures, for tests that hold a plan's fast readers to
`apply_plan` (test_shape_cache_commas, test_step_fast_path)."""

from __future__ import annotations

import re
from pathlib import Path

from gangscope.parsers.dialects import CompiledPlan, Dialect, ShapeCache, strip_ansi

DIALECT_LOGS = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "dialects").glob("*/pods/*/*/0.log"))
_CRI_HEAD = re.compile(r"^\S+ \S+ [FP] (?:\[[^\]]*\]:)*")


def fixture_segments() -> list[str]:
    """Each progress segment of the dialect fixtures' lines (CRI header and bracket prefixes off,
    colours off, split at carriage returns), blank ones left out."""
    out = []
    for path in DIALECT_LOGS:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                text = _CRI_HEAD.sub("", raw.rstrip("\n"))
                out.extend(seg for seg in strip_ansi(text).split("\r") if seg.strip())
    return out


def fixture_plans() -> list[tuple[Dialect, CompiledPlan]]:
    """(dialect, plan) of every step line of the dialect fixtures, each plan once."""
    cache = ShapeCache()
    found = {}
    for seg in fixture_segments():
        reading = cache.read(seg)
        if reading is not None and reading.plan is not None:
            found[(reading.dialect.name, id(reading.plan))] = (reading.dialect, reading.plan)
    return list(found.values())
