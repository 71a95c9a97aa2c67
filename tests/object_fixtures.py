"""The job-object fixtures (fixtures/objects: pods and `kubectl get -o json` objects) replayed once."""

from __future__ import annotations

from pathlib import Path

from gangscope.pipeline.run import replay

OBJECTS = Path(__file__).resolve().parent.parent / "fixtures" / "objects"


def diagnoses_by_attempt() -> dict:
    """(job, attempt) -> diagnosis of a replay of fixtures/objects' pods with its objects as events;
    the replay must catch no failure."""
    result = replay.run(replay.ReplayOptions(paths=[str(OBJECTS / "pods")], events=[str(OBJECTS / "objects.json")]),
                        lambda batch: None)
    assert result.failures.summary() == []
    return {(d.job, d.attempt): d for d in result.diagnoses}
