"""`gangscope diagnose FILE` in process, for tests that diagnose a text written to a file, or a run's folder."""

from __future__ import annotations

import json
from pathlib import Path

from gangscope.pipeline.run import replay
from gangscope.pipeline.run.cli import main


def replayed(tmp_path: Path, text: str, name: str = "pasted") -> tuple[list, list]:
    """The diagnoses of `text` as one plain-text log, and what isolation caught."""
    path = tmp_path / f"{name}.log"
    path.write_text(text)
    result = replay.run(replay.ReplayOptions(paths=[str(path)], fmt="text"), lambda batch: None)
    return result.diagnoses, result.failures.summary()


def diagnoses_of(tmp_path: Path, text: str, name: str = "pasted") -> list:
    """The diagnoses of `text` as one plain-text log; isolation must have caught nothing."""
    diagnoses, caught = replayed(tmp_path, text, name)
    assert caught == []
    return diagnoses


def the_diagnosis(tmp_path: Path, text: str, name: str = "pasted"):
    """The one diagnosis of `text` (one job, one attempt)."""
    [d] = diagnoses_of(tmp_path, text, name)
    return d


def cli_diagnoses(path: Path, capsys) -> list[dict]:
    """`gangscope diagnose PATH --json` (a log, or a run's folder) through the CLI's main, its JSON read back from
    pytest's `capsys`."""
    capsys.readouterr()
    main(["diagnose", str(path), "--json"])
    return json.loads(capsys.readouterr().out)


def cli_diagnosis(tmp_path: Path, text: str, capsys) -> dict:
    """The one diagnosis `gangscope diagnose train.log --json` gives of `text`."""
    log = tmp_path / "train.log"
    log.write_text(text)
    (d,) = cli_diagnoses(log, capsys)
    return d
