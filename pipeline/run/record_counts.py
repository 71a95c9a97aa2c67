"""summary.json's `records`: how many documents of each kind a run wrote, in memory that does not
grow with the run.

A record id written again (a rank's epoch record updated as it goes, a step redrawn by its
progress bar) is one document, counted once, under the kind it was first written as. Ids are
taken by their 60-bit fingerprint (`parsers.id_set.fingerprint`, the same test `IdSet` makes).
The fingerprints wait in a buffer; a full buffer is spilled to files on disk, partitioned by
fingerprint, so that at the end each partition is counted alone, in the order its ids came:
memory is the buffer and one partition, not every id of the run (10M lines kept 2.5M step ids,
~100 MB, in an IdSet).
"""

from __future__ import annotations

import os
import tempfile
from array import array

from gangscope.parsers.id_set import fingerprint

_PARTITIONS = 64
_BUFFER = 1 << 18  # ids held before a spill (4 MB: a fingerprint and a kind code each)


class RecordCounts:
    """`add(record_id, kind)` for every record written; `counts()` once at the end."""

    def __init__(self, buffer: int = _BUFFER):
        self._buffer = buffer
        self._pending = array("Q")  # fingerprint, kind code, fingerprint, kind code...
        self._codes: dict[str, int] = {}
        self._kinds: list[str] = []
        self._dir: tempfile.TemporaryDirectory | None = None

    def add(self, record_id: str, kind: str) -> None:
        code = self._codes.get(kind)
        if code is None:
            code = self._codes[kind] = len(self._kinds)
            self._kinds.append(kind)
        pending = self._pending
        pending.append(fingerprint(record_id))
        pending.append(code)
        if len(pending) >= 2 * self._buffer:
            self._spill()

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="gangscope-counts-")
        parts = [array("Q") for _ in range(_PARTITIONS)]
        pending = self._pending
        for i in range(0, len(pending), 2):
            part = parts[pending[i] % _PARTITIONS]
            part.append(pending[i])
            part.append(pending[i + 1])
        for n, part in enumerate(parts):
            if part:
                with open(os.path.join(self._dir.name, str(n)), "ab") as f:
                    part.tofile(f)
        self._pending = array("Q")

    def counts(self) -> dict[str, int]:
        """Documents by kind; the spill files are removed."""
        totals = [0] * len(self._kinds)
        if self._dir is None:
            _count(self._pending, totals)
        else:
            self._spill()
            try:
                for n in range(_PARTITIONS):
                    path = os.path.join(self._dir.name, str(n))
                    if os.path.exists(path):
                        part = array("Q")
                        with open(path, "rb") as f:
                            part.frombytes(f.read())
                        _count(part, totals)
            finally:
                self._dir.cleanup()
                self._dir = None
        self._pending = array("Q")
        return {kind: totals[code] for code, kind in enumerate(self._kinds) if totals[code]}


def _count(pairs: array, totals: list[int]) -> None:
    seen: set[int] = set()
    for i in range(0, len(pairs), 2):
        fp = pairs[i]
        if fp not in seen:
            seen.add(fp)
            totals[pairs[i + 1]] += 1
