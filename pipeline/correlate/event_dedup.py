"""Which event records of a replay are repeats, decided on disk: memory does not grow with the run.

The rule is decode_event_stream's (parsers/events.py) and EventStream's before it: the first copy
of an id read, over all files in order, is the record; every later copy is dropped; a primary
copy (an Event occurrence as delivered) after a primary copy of the same id in the same file is
a `duplicate` (counted as a repeat). Held in memory, the ids cost 16-32 bytes each, twice (one
set per file, one across files): 4M events, ~200 MB. Here each copy is noted as it is read
(`note`: its id's 60-bit fingerprint, `parsers.id_set.fingerprint`, as IdSet takes it, and its
file and kind) in a buffer that is spilled to files on disk, partitioned by fingerprint; `settle`
then reads one partition at a time, in the order the copies came, and gives the positions of the
copies to drop as a bitmap (1 bit a copy read) and the count of duplicates.
"""

from __future__ import annotations

import os
import tempfile
from array import array

from gangscope.parsers.id_set import fingerprint

_PARTITIONS = 64
_BUFFER = 1 << 16  # copies held before a spill (1.5 MB: three 64-bit words each)
_PRIMARY = 1  # flag bit of a copy's third word; the rest is its file number, shifted


class RepeatedEvents:
    """`note(record_id, file, primary)` for each copy read, in order (its position: how many came
    before it); `settle()` once at the end."""

    def __init__(self, buffer: int = _BUFFER):
        self._buffer = buffer
        self._pending = array("Q")  # fingerprint, position, file << 1 | primary; ...
        self._dir: tempfile.TemporaryDirectory | None = None
        self.noted = 0

    def note(self, record_id: str, file: int, primary: bool) -> int:
        """Note one copy; its position."""
        position = self.noted
        self.noted = position + 1
        pending = self._pending
        pending.append(fingerprint(record_id))
        pending.append(position)
        pending.append(file << 1 | (_PRIMARY if primary else 0))
        if len(pending) >= 3 * self._buffer:
            self._spill()
        return position

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="gangscope-event-ids-")
        parts = [array("Q") for _ in range(_PARTITIONS)]
        pending = self._pending
        for i in range(0, len(pending), 3):
            parts[pending[i] % _PARTITIONS].extend(pending[i:i + 3])
        for n, part in enumerate(parts):
            if part:
                with open(os.path.join(self._dir.name, str(n)), "ab") as f:
                    part.tofile(f)
        self._pending = array("Q")

    def _partitions(self):
        if self._dir is None:
            yield self._pending
            return
        self._spill()
        for n in range(_PARTITIONS):
            path = os.path.join(self._dir.name, str(n))
            if os.path.exists(path):
                part = array("Q")
                with open(path, "rb") as f:
                    part.frombytes(f.read())
                yield part

    def settle(self) -> tuple[bytearray, int]:
        """(bitmap of the positions to drop, bit `p % 8` of byte `p // 8`; how many duplicates).
        The spill files are removed."""
        dropped = bytearray((self.noted + 7) // 8)
        duplicates = 0
        try:
            for part in self._partitions():
                file_of: dict[int, int] = {}  # fingerprint -> the file of its last copy read
                primary_in_file: set[int] = set()  # fingerprints with a primary copy in that file
                for i in range(0, len(part), 3):
                    fp, position, word = part[i], part[i + 1], part[i + 2]
                    file, primary = word >> 1, word & _PRIMARY
                    last = file_of.get(fp)
                    if last is None:
                        file_of[fp] = file
                        if primary:
                            primary_in_file.add(fp)
                        continue
                    dropped[position >> 3] |= 1 << (position & 7)
                    if last != file:  # a new file: its own repeats are counted anew
                        file_of[fp] = file
                        primary_in_file.discard(fp)
                    if primary:
                        if fp in primary_in_file:
                            duplicates += 1
                        else:
                            primary_in_file.add(fp)
        finally:
            if self._dir is not None:
                self._dir.cleanup()
                self._dir = None
            self._pending = array("Q")
        return dropped, duplicates


def is_dropped(dropped: bytearray, position: int) -> bool:
    """Whether `settle` dropped the copy at `position`."""
    return bool(dropped[position >> 3] & (1 << (position & 7)))
