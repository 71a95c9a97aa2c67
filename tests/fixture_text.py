"""Every line of the project's text fixtures, for tests that hold a fast path to the slow one
on real lines (shape cache splits, guard scans, exact hints, the generic dialect's tail)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterator

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BINARY = (".gz", ".png", ".pyc")


def fixture_lines(max_file_bytes: int = 5_000_000) -> Iterator[str]:
    """Each line of each fixture file that is text and at most `max_file_bytes` long, in path order
    (invalid UTF-8 replaced). Read once per test session: a dozen modules walk these ~20 MB,
    some of them several times, and the fixtures do not change while the tests run."""
    yield from _lines(max_file_bytes)


@functools.lru_cache(maxsize=None)
def _lines(max_file_bytes: int) -> tuple[str, ...]:
    out: list[str] = []
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.suffix in BINARY or path.stat().st_size > max_file_bytes:
            continue
        try:
            text = path.read_text("utf-8", errors="replace")
        except OSError:
            continue
        out.extend(text.splitlines())
    return tuple(out)
