"""Objects waiting on disk at the end of a run (pipeline/spill.py) and the diagnoses kept that way
(pipeline/diagnose/spooled_diagnoses.py): what is read back is what was added, in its order,
whatever the chunks, runs read side by side, and the diagnoses read whole are the parts merged
by job and attempt (the order one diagnosis over every job gives)."""

from __future__ import annotations

import heapq
import random

from gangscope.parsers.records import DiagnosisRecord, to_dict
from gangscope.pipeline.diagnose.spooled_diagnoses import SpooledDiagnoses
from gangscope.pipeline.spill import SpilledRuns


def test_runs_come_back_as_added_read_side_by_side_across_chunks():
    runs = SpilledRuns(chunk=3)
    added = [[(i, j, 1.0 if j % 2 else 1) for j in range(n)] for i, n in enumerate([0, 1, 3, 7, 10])]
    for items in added:
        runs.add(iter(items))
    assert len(runs) == 5 and runs.items() == 21
    assert [list(runs.run(i)) for i in range(5)] == added
    ints = [type(x[2]) for x in runs.run(4)]
    assert ints[:2] == [int, float]  # an int stays an int
    # interleaved readers each find their place again
    readers = [runs.run(i) for i in range(5)]
    got = [[] for _ in range(5)]
    live = list(range(5))
    rng = random.Random(3)
    while live:
        i = rng.choice(live)
        try:
            got[i].append(next(readers[i]))
        except StopIteration:
            live.remove(i)
    assert got == added
    runs.add([("late",)])  # added after reading: read again, all still there
    assert list(runs.run(5)) == [("late",)] and list(runs.run(3)) == added[3]
    runs.close()


def _diagnosis(job: str, attempt: int) -> DiagnosisRecord:
    return DiagnosisRecord(id=f"{job}-{attempt}", job=job, attempt=attempt, outcome="failed", summary=f"{job} {attempt}")


def test_spooled_diagnoses_read_whole_are_the_parts_merged_by_job_and_attempt():
    rng = random.Random(17)
    parts = [[] for _ in range(6)]
    for j in range(300):
        for a in range(1, rng.randint(1, 3) + 1):
            parts[rng.randrange(5)].append(_diagnosis(f"ns/job{j:03d}", a))  # part 5 stays empty
    for part in parts:
        part.sort(key=lambda d: (d.job, d.attempt))
    spooled = SpooledDiagnoses(parts)
    want = list(heapq.merge(*parts, key=lambda d: (d.job, d.attempt)))
    assert len(spooled) == len(want) > 300
    assert [to_dict(d) for d in spooled] == [to_dict(d) for d in want]
    assert [to_dict(d) for d in spooled] == [to_dict(d) for d in spooled]  # read as often as asked
    assert [[to_dict(d) for d in p] for p in spooled.parts()] == [[to_dict(d) for d in p] for p in parts]
    assert to_dict(spooled[0]) == to_dict(want[0]) and len(spooled[:5]) == 5
    spooled.close()


def test_no_diagnoses_make_no_file_and_read_as_none():
    spooled = SpooledDiagnoses()
    assert len(spooled) == 0 and not spooled and list(spooled) == [] and list(spooled.parts()) == []
    assert spooled._runs._file is None
