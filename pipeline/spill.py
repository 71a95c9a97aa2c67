"""Runs of Python objects waiting on disk, each read back lazily, a chunk at a time.

What the end of a run makes for every job (its diagnoses, its report section) would otherwise
be held for all jobs at once. Here each run (one part of the jobs) is pickled to one temporary
file in chunks as it is added, with the offset of each chunk in memory (8 bytes a chunk); a run
is read back one chunk at a time, so several runs can be read side by side (`heapq.merge` of
them holds one chunk of each). Pickled, an object comes back as it was kept (an int in a float
field stays an int). Used by the back half (diagnose/spooled_diagnoses.py), whose room the report
may not import; hence a leaf beside pipeline/isolation.py, importing nothing of the project, that
every room may import (tests/test_layout.py).

Keyed words (`KeyedWords`) are the other shape: fixed-width records of 64-bit words whose first
word is a key (an id's fingerprint), spilled to files partitioned by key, so that all the records
of one key can be taken together at the end with one partition in memory (repeated event records,
the documents of each kind a run wrote).

Partitioned objects (`PartitionedRuns`) are the third: any picklable objects, each added to a
partition of the caller's choosing (a job's), held up to a count in all and then appended to the
partition's file, read back a partition at a time in the order they were added (each job's step
series, diagnose/digest.py).
"""

from __future__ import annotations

import os
import pickle
import tempfile
from array import array
from typing import Any, Callable, Iterable, Iterator

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


class KeyedWords:
    """`add(key, *words)` for each record (`width` words, the key first), then `partitions()` once:
    each partition's words (one array, records in the order they came), the files removed after."""

    PARTITIONS = 64

    def __init__(self, width: int, buffer: int, prefix: str):
        self._width = width
        self._limit = width * buffer  # words held before a spill
        self._prefix = prefix
        self._pending = array("Q")
        self._dir: tempfile.TemporaryDirectory | None = None

    def add(self, *words: int) -> None:
        pending = self._pending
        pending.extend(words)
        if len(pending) >= self._limit:
            self._spill()

    def extend(self, words: Iterable[int]) -> None:
        """`add` of several records at once, their words one after the other (`width` each); the
        buffer may pass its size by one call's words before it is spilled."""
        pending = self._pending
        pending.extend(words)
        if len(pending) >= self._limit:
            self._spill()

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix=self._prefix)
        width, count = self._width, self.PARTITIONS
        parts = [array("Q") for _ in range(count)]
        pending = self._pending
        for i in range(0, len(pending), width):
            parts[pending[i] % count].extend(pending[i:i + width])
        for n, part in enumerate(parts):
            if part:
                with open(os.path.join(self._dir.name, str(n)), "ab") as f:
                    part.tofile(f)
        self._pending = array("Q")

    def partitions(self) -> Iterator[array]:
        try:
            if self._dir is None:
                yield self._pending
                return
            self._spill()
            for n in range(self.PARTITIONS):
                path = os.path.join(self._dir.name, str(n))
                if os.path.exists(path):
                    part = array("Q")
                    with open(path, "rb") as f:
                        part.frombytes(f.read())
                    yield part
        finally:
            if self._dir is not None:
                self._dir.cleanup()
                self._dir = None
            self._pending = array("Q")


class PartitionedRuns:
    """`add(partition, item)` for each object, then `read(partition)` as often as asked; held in
    memory until `buffer` objects wait, then each partition's are appended to its file, pickled."""

    def __init__(self, partitions: int, buffer: int, prefix: str):
        self._count = partitions
        self._buffer = buffer
        self._prefix = prefix
        self._held: list[list[Any]] = [[] for _ in range(partitions)]
        self._waiting = 0
        self._dir: tempfile.TemporaryDirectory | None = None

    @property
    def spilled(self) -> bool:
        return self._dir is not None

    def add(self, partition: int, item: Any) -> None:
        self._held[partition].append(item)
        self._waiting += 1
        if self._waiting >= self._buffer:
            self._spill()

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix=self._prefix)
        for n, held in enumerate(self._held):
            if held:
                with open(os.path.join(self._dir.name, str(n)), "ab") as f:
                    pickle.dump(held, f, protocol=pickle.HIGHEST_PROTOCOL)
                self._held[n] = []
        self._waiting = 0

    def read(self, partition: int) -> Iterator[Any]:
        """The objects of the partition, in the order they were added."""
        if self._dir is not None:
            path = os.path.join(self._dir.name, str(partition))
            if os.path.exists(path):
                with open(path, "rb") as f:
                    size = os.fstat(f.fileno()).st_size
                    while f.tell() < size:
                        yield from pickle.load(f)
        yield from list(self._held[partition])

    def keep_only(self, keep: Callable[[Any], bool]) -> int:
        """Every partition rewritten with the objects `keep` says, in their order (a chunk at a
        time); how many are left."""
        self._spill()
        left = 0
        for n in range(self._count):
            path = os.path.join(self._dir.name, str(n))  # type: ignore[union-attr]
            if not os.path.exists(path):
                continue
            with open(path, "rb") as f, open(path + ".kept", "wb") as out:
                size = os.fstat(f.fileno()).st_size
                while f.tell() < size:
                    kept = [item for item in pickle.load(f) if keep(item)]
                    if kept:
                        pickle.dump(kept, out, protocol=pickle.HIGHEST_PROTOCOL)
                        left += len(kept)
            os.replace(path + ".kept", path)
        return left

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
        self._held = [[] for _ in range(self._count)]
        self._waiting = 0
