"""Runs of Python objects waiting on disk, each read back lazily, a chunk at a time.

What the end of a run makes for every job (its diagnoses, its report section) would otherwise
be held for all jobs at once. Here each run (one part of the jobs) is pickled to one temporary
file in chunks as it is added, with the offset of each chunk in memory (8 bytes a chunk); a run
is read back one chunk at a time, so several runs can be read side by side (`heapq.merge` of
them holds one chunk of each). Pickled, an object comes back as it was kept (an int in a float
field stays an int). Used by the back half (diagnose/spooled_diagnoses.py), whose room the report
may not import; hence a leaf beside pipeline/isolation.py, importing nothing of the project, that
every room may import (tests/test_layout.py).
"""

from __future__ import annotations

import pickle
import tempfile
from array import array
from typing import Any, Iterable, Iterator

CHUNK = 256  # objects pickled together


class SpilledRuns:
    """`add(items)` for each run, then `run(i)` as often as asked; the file is made at the first add."""

    def __init__(self, prefix: str = "gangscope-runs-", chunk: int = CHUNK):
        self._prefix = prefix
        self._chunk = chunk
        self._file = None
        self._runs: list[array] = []  # each run's chunk offsets
        self._lengths: list[int] = []

    def add(self, items: Iterable[Any]) -> int:
        """Append one run (an empty one too); its index."""
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix=self._prefix)
        f = self._file
        f.seek(0, 2)
        offsets, chunk, n = array("Q"), [], 0
        for item in items:
            chunk.append(item)
            n += 1
            if len(chunk) >= self._chunk:
                offsets.append(f.tell())
                pickle.dump(chunk, f, protocol=pickle.HIGHEST_PROTOCOL)
                chunk = []
        if chunk:
            offsets.append(f.tell())
            pickle.dump(chunk, f, protocol=pickle.HIGHEST_PROTOCOL)
        self._runs.append(offsets)
        self._lengths.append(n)
        return len(self._runs) - 1

    def __len__(self) -> int:
        """How many runs."""
        return len(self._runs)

    def items(self) -> int:
        """How many objects in all runs."""
        return sum(self._lengths)

    def run(self, index: int) -> Iterator[Any]:
        """The objects of run `index`, in the order they were added."""
        offsets = self._runs[index]
        if offsets:
            self._file.flush()  # type: ignore[union-attr]
        for offset in offsets:
            f = self._file
            f.seek(offset)  # type: ignore[union-attr]
            yield from pickle.load(f)  # type: ignore[arg-type]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._runs, self._lengths = [], []
