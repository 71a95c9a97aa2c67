"""`gangscope diagnose FILE` in process, for tests that diagnose a text written to a file."""

from __future__ import annotations

from pathlib import Path

from gangscope.pipeline.run import replay


def diagnoses_of(tmp_path: Path, text: str, name: str = "pasted") -> list:
    """The diagnoses of `text` as one plain-text log; isolation must have caught nothing."""
    path = tmp_path / f"{name}.log"
    path.write_text(text)
    result = replay.run(replay.ReplayOptions(paths=[str(path)], fmt="text"), lambda batch: None)
    assert result.failures.summary() == []
    return result.diagnoses


def the_diagnosis(tmp_path: Path, text: str, name: str = "pasted"):
    """The one diagnosis of `text` (one job, one attempt)."""
    [d] = diagnoses_of(tmp_path, text, name)
    return d
