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

from array import array
from typing import Sequence

from gangscope.parsers.id_set import fingerprint, fingerprints
from gangscope.parsers.records import Record
from gangscope.pipeline.spill import KeyedWords

_BUFFER = 1 << 18  # ids held before a spill (4 MB: a fingerprint and a kind code each)


class RecordCounts:
    """`add(record_id, kind)` for every record written; `counts()` once at the end."""

    def __init__(self, buffer: int = _BUFFER):
        self._ids = KeyedWords(2, buffer, "gangscope-counts-")  # fingerprint, kind code
        self._codes: dict[str, int] = {}
        self._kinds: list[str] = []

    def add(self, record_id: str, kind: str) -> None:
        code = self._codes.get(kind)
        if code is None:
            code = self._codes[kind] = len(self._kinds)
            self._kinds.append(kind)
        self._ids.add(fingerprint(record_id), code)

    def add_records(self, records: Sequence[Record]) -> None:
        """`add(record.id, record.kind)` of each record, in their order, in one call: a batch's
        fingerprints are taken together and its words handed to the spill at once."""
        codes = self._codes
        words: list[int] = []
        append = words.append
        for record, fp in zip(records, fingerprints([record.id for record in records])):
            kind = record.kind
            code = codes.get(kind)
            if code is None:
                code = codes[kind] = len(self._kinds)
                self._kinds.append(kind)
            append(fp)
            append(code)
        self._ids.extend(words)

    def counts(self) -> dict[str, int]:
        """Documents by kind; the spill files are removed."""
        totals = [0] * len(self._kinds)
        for part in self._ids.partitions():
            _count(part, totals)
        return {kind: totals[code] for code, kind in enumerate(self._kinds) if totals[code]}


def _count(pairs: array, totals: list[int]) -> None:
    seen: set[int] = set()
    for i in range(0, len(pairs), 2):
        fp = pairs[i]
        if fp not in seen:
            seen.add(fp)
            totals[pairs[i + 1]] += 1
