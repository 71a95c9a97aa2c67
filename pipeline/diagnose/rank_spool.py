"""Each rank's newest record (its last step, its epoch progress), kept to the end of the run in
memory that does not grow with the ranks, and read back a part of the jobs at a time.

The digest keeps one record per key (a rank's last step, an epoch record's id): the newest
record, at the place of the key's first write, as a dict would keep it. Here a dict holds up to
`buffer` keys; a full dict is spilled to files on disk, partitioned by the CRC-32 of the record's
job (`job_key`), each entry with the sequence numbers of its first and last write, pickled (a
record comes back exactly as it was kept: an int in a float field stays an int). `entries(n)`
reads partition `n` back: each key once, its newest record, in the order of first writes, and
every rank of a job is in its job's partition, so the back half and the report can take the
jobs one partition at a time. A spool that never fills its dict has one partition, in memory.
100k tiny pod files kept 100k last steps and 100k epoch records (~100 MB) to the end of the run.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import zlib
from typing import Any, Hashable, Iterator

from gangscope.pipeline.spill import private_directory

PARTITIONS = 64
_BUFFER = 1 << 12  # keys held before a spill (~3 MB of step records)


def partition_of(job: str, partitions: int = PARTITIONS) -> int:
    """The partition of a job's records (every spool of a digest uses the same)."""
    return zlib.crc32(job.encode("utf-8", "surrogatepass")) % partitions


class RankSpool:
    """`put(key, job, record, tag)` for every write; `entries(n)` for each partition at the end."""

    def __init__(self, buffer: int = _BUFFER):
        self._buffer = buffer
        self._held: dict[Hashable, list] = {}  # key -> [first write, last write, job, record, tag]
        self._writes = 0
        self._dir: tempfile.TemporaryDirectory | None = None

    @property
    def spilled(self) -> bool:
        return self._dir is not None

    def get(self, key: Hashable) -> Any:
        """The key's record while it is held in memory (None once spilled, or never written)."""
        entry = self._held.get(key)
        return None if entry is None else entry[3]

    def put(self, key: Hashable, job: str, record: Any, tag: Any = None) -> None:
        seq = self._writes
        self._writes = seq + 1
        entry = self._held.get(key)
        if entry is None:
            self._held[key] = [seq, seq, job, record, tag]
            if len(self._held) >= self._buffer:
                self._spill()
        else:
            entry[1] = seq
            entry[3] = record
            entry[4] = tag

    def spill(self) -> None:
        """Everything held to disk (made partitioned, even if the dict never filled)."""
        self._spill()

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = private_directory("gangscope-ranks-")
        parts: list[list[tuple]] = [[] for _ in range(PARTITIONS)]
        for key, (first, last, job, record, tag) in self._held.items():
            parts[partition_of(job)].append((key, first, last, record, tag))
        for n, part in enumerate(parts):
            if part:
                with open(self._path(n), "ab") as f:
                    pickle.dump(part, f, protocol=pickle.HIGHEST_PROTOCOL)
        self._held = {}

    def _path(self, n: int) -> str:
        return os.path.join(self._dir.name, str(n))  # type: ignore[union-attr]

    def entries(self, n: int) -> list[tuple[Any, Any]]:
        """(record, tag) of each key of partition `n` (all keys when never spilled: one partition),
        the newest record of each, keys in the order of their first write. Read as often as asked."""
        return [(record, tag) for _key, record, tag in self._reduced(n)]

    def partitions(self) -> int:
        return PARTITIONS if self._dir is not None else 1

    def items(self) -> Iterator[tuple[Hashable, Any]]:
        """(key, record) of every key, partition by partition (for tests and small runs)."""
        for n in range(self.partitions()):
            for key, record, _tag in self._reduced(n):
                yield key, record

    def _reduced(self, n: int) -> list[tuple[Hashable, Any, Any]]:
        if self._dir is None:
            return [(key, e[3], e[4]) for key, e in self._held.items()] if n == 0 else []
        if self._held:
            self._spill()
        path = self._path(n)
        if not os.path.exists(path):
            return []
        newest: dict[Hashable, list] = {}
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            while f.tell() < size:
                for key, first, last, record, tag in pickle.load(f):
                    seen = newest.get(key)
                    if seen is None:
                        newest[key] = [first, last, key, record, tag]
                    elif last > seen[1]:
                        newest[key] = [min(first, seen[0]), last, key, record, tag]
                    elif first < seen[0]:
                        seen[0] = first
        return [(key, record, tag) for _f, _l, key, record, tag in sorted(newest.values(), key=lambda e: e[0])]

    def values(self) -> Iterator[Any]:
        for _key, record in self.items():
            yield record

    def __len__(self) -> int:
        return len(self._held) if self._dir is None else sum(1 for _ in self.items())

    def close(self) -> None:
        """Remove the spill files (also done when the spool is collected)."""
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
        self._held = {}
