"""Worker processes hand the parent the records their digest kept exactly as an in-process run
keeps them: the same values of the same Python types (an epoch printed `1` is the int 1 both
ways; through records.pack the workers' copy was the float 1.0), so that what the diagnosis and
the report read cannot depend on --workers."""

from __future__ import annotations

from pathlib import Path

import msgspec

from gangscope.pipeline.run import replay

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _typed(value):
    """A value with the type of every part of it, to compare what `==` takes as equal (1 == 1.0)."""
    if isinstance(value, msgspec.Struct):
        return type(value).__name__, tuple((f, _typed(getattr(value, f))) for f in value.__struct_fields__)
    if isinstance(value, dict):
        return "dict", tuple(sorted((k, _typed(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return type(value).__name__, tuple(_typed(v) for v in value)
    return type(value).__name__, value


def _kept(workers: int) -> list:
    result = replay.run(replay.ReplayOptions(paths=[str(FIXTURES / "runs"), str(FIXTURES / "dialects")],
                                             workers=workers), lambda batch: None)
    return sorted(repr(_typed(r)) for r in result.digest.all_records())


def test_the_digest_from_workers_holds_the_records_an_in_process_run_holds_types_included():
    in_process, from_workers = _kept(1), _kept(2)
    assert len(in_process) > 100 and any("('epoch', ('int'" in r for r in in_process)
    assert from_workers == in_process
