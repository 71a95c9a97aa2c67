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

from gangscope.parsers.id_set import fingerprint
from gangscope.pipeline.spill import KeyedWords

_BUFFER = 1 << 16  # copies held before a spill (1.5 MB: three 64-bit words each)
_PRIMARY = 1  # flag bit of a copy's third word; the rest is its file number, shifted


class RepeatedEvents:
    """`note(record_id, file, primary)` for each copy read, in order (its position: how many came
    before it); `settle()` once at the end."""

    def __init__(self, buffer: int = _BUFFER):
        self._copies = KeyedWords(3, buffer, "gangscope-event-ids-")  # fingerprint, position, file << 1 | primary
        self.noted = 0

    def note(self, record_id: str, file: int, primary: bool) -> int:
        """Note one copy; its position."""
        position = self.noted
        self.noted = position + 1
        self._copies.add(fingerprint(record_id), position, file << 1 | (_PRIMARY if primary else 0))
        return position

    def settle(self) -> tuple[bytearray, int]:
        """(bitmap of the positions to drop, bit `p % 8` of byte `p // 8`; how many duplicates).
        The spill files are removed."""
        dropped = bytearray((self.noted + 7) // 8)
        duplicates = 0
        for part in self._copies.partitions():
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
        return dropped, duplicates


def is_dropped(dropped: bytearray, position: int) -> bool:
    """Whether `settle` dropped the copy at `position`."""
    return bool(dropped[position >> 3] & (1 << (position & 7)))
