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
from collections import Counter
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
        fingerprints are taken together, its kinds coded by one map, and its words (fingerprint
        and code, one after the other) handed to the spill at once."""
        kinds = [record.kind for record in records]
        for kind in dict.fromkeys(kinds):  # a kind new to the run gets its code in order of first sight
            if kind not in self._codes:
                self._codes[kind] = len(self._kinds)
                self._kinds.append(kind)
        words = [0] * (2 * len(kinds))
        words[0::2] = fingerprints([record.id for record in records])
        words[1::2] = map(self._codes.__getitem__, kinds)
        self._ids.extend(words)

    def counts(self) -> dict[str, int]:
        """Documents by kind; the spill files are removed."""
        totals = [0] * len(self._kinds)
        for part in self._ids.partitions():
            _count(part, totals)
        return {kind: totals[code] for code, kind in enumerate(self._kinds) if totals[code]}


def _count(pairs: array, totals: list[int]) -> None:
    """Each fingerprint's first kind code counted once: a dict of the pairs taken backwards keeps,
    for each fingerprint, the code written last, which is its first in the order they came."""
    first = dict(zip(reversed(pairs[0::2]), reversed(pairs[1::2])))
    for code, n in Counter(first.values()).items():
        totals[code] += n
