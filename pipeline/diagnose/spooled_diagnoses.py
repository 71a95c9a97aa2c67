"""The diagnoses of a run, waiting on disk a part of the jobs at a time until they are written.

The back half diagnoses the jobs one part at a time (JobDigest.parts); each part's diagnoses,
sorted by job and attempt, are one run of pipeline/spill.SpilledRuns. Read whole, the runs are
merged by job and attempt (the order one diagnosis over every job gives); `parts()` gives them
again part by part, for the report, which takes the digest's records part by part too. Held in
a list, 100k tiny pod files' 12,500 diagnoses were ~14 MB to the end of the run, ~1.1 KB a job.
"""

from __future__ import annotations

import heapq
from typing import Iterable, Iterator

from gangscope.parsers.records import Record
from gangscope.pipeline.spill import SpilledRuns


MERGED_CHUNK = 16  # diagnoses pickled together


def _by_job_and_attempt(d: Record) -> tuple:
    return (d.job, d.attempt)


class SpooledDiagnoses:
    """`add_part(diagnoses)` for each part, in the order of the parts; then read as often as asked."""

    def __init__(self, parts: Iterable[Iterable[Record]] = ()):
        # read whole, every part is read side by side, a chunk of each in memory: small chunks (with
        # 256, the 64 parts of files-100000 held all its 12,500 diagnoses again, +33 MB)
        self._runs = SpilledRuns(prefix="gangscope-diagnoses-", chunk=MERGED_CHUNK)
        for part in parts:
            self.add_part(part)

    def add_part(self, diagnoses: Iterable[Record]) -> None:
        self._runs.add(diagnoses)

    def parts(self) -> Iterator[list[Record]]:
        """Each part's diagnoses, one part at a time."""
        for n in range(len(self._runs)):
            yield list(self._runs.run(n))

    def __iter__(self) -> Iterator[Record]:
        """Every diagnosis by job and attempt, one chunk of each part in memory at a time."""
        return heapq.merge(*(self._runs.run(n) for n in range(len(self._runs))), key=_by_job_and_attempt)

    def __getitem__(self, index):
        """The diagnosis at `index` (or a slice) of them read whole: reads them all (small runs, tests)."""
        return list(self)[index]

    def __len__(self) -> int:
        return self._runs.items()

    def __repr__(self) -> str:
        return f"SpooledDiagnoses({len(self)} in {len(self._runs)} parts)"

    def close(self) -> None:
        self._runs.close()
