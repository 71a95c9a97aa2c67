"""A set of record ids in 8 bytes each, for deduplicating streams of millions of records.

A Python set of id strings costs about 130 bytes an id (the string and its slot): a million
events held 130 MB for their ids alone. Record ids are hex digests (`records.stable_id`), so
their first 60 bits are a fingerprint already; an id that is not hex is hashed (blake2b, the
same in every process). The fingerprints live in an open-addressing table of 64-bit slots
(an `array`), half full at most: 16 bytes an id. Two different ids share a fingerprint with
probability n**2 / 2**61 (1e-7 for a million ids): then the second is taken as a repeat.

Pure, no I/O.
"""

from __future__ import annotations

import hashlib
from array import array
from typing import Iterable

_BITS = 60
_MASK = (1 << _BITS) - 1
_FLAG = 1 << 62  # a mark stored with the fingerprint (see `mark`)


def fingerprint(record_id: str) -> int:
    """The id's 60-bit fingerprint, never 0 (0 is an empty slot)."""
    try:
        fp = int(record_id[:15], 16) if len(record_id) >= 15 else -1
    except ValueError:
        fp = -1
    if fp < 0:
        fp = int.from_bytes(hashlib.blake2b(record_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
    return (fp & _MASK) or 1


def fingerprints(record_ids: Iterable[str]) -> list[int]:
    """`fingerprint` of each id, in one call (a batch of records counted at once): a hex id's is
    read here, any other is `fingerprint`'s (the same test, the same answer)."""
    out: list[int] = []
    append = out.append
    for record_id in record_ids:
        try:
            fp = int(record_id[:15], 16) if len(record_id) >= 15 else -1
        except ValueError:
            fp = -1
        append(((fp & _MASK) or 1) if fp >= 0 else fingerprint(record_id))
    return out


class IdSet:
    """Record ids seen, each with one bit of its own (`mark`): `add`, `in`, `len`."""

    __slots__ = ("_slots", "_size", "_mask")

    def __init__(self, capacity: int = 1 << 12):
        n = 1 << max(4, (capacity * 2 - 1).bit_length())
        self._slots = array("Q", bytes(8 * n))
        self._mask = n - 1
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def _find(self, fp: int) -> int:
        """The slot holding `fp`, or the empty slot where it would go."""
        slots, mask = self._slots, self._mask
        i = (fp * 0x9E3779B97F4A7C15 >> 20) & mask  # the low bits of a hex id are spread, but not always
        while True:
            held = slots[i]
            if held == 0 or (held & _MASK) == fp:
                return i
            i = (i + 1) & mask

    def __contains__(self, record_id: str) -> bool:
        return self._slots[self._find(fingerprint(record_id))] != 0

    def add(self, record_id: str) -> bool:
        """Add the id; True if it was new."""
        fp = fingerprint(record_id)
        i = self._find(fp)
        if self._slots[i]:
            return False
        self._slots[i] = fp
        self._size += 1
        if 2 * self._size > len(self._slots):
            self._grow()
        return True

    def marked(self, record_id: str) -> bool:
        """Whether the id is here with its mark set."""
        return bool(self._slots[self._find(fingerprint(record_id))] & _FLAG)

    def mark(self, record_id: str) -> None:
        """Set the id's mark (adding the id if it is not here)."""
        fp = fingerprint(record_id)
        i = self._find(fp)
        if not self._slots[i]:
            self._size += 1
        self._slots[i] = fp | _FLAG
        if 2 * self._size > len(self._slots):
            self._grow()

    def _grow(self) -> None:
        old = self._slots
        self._slots = array("Q", bytes(16 * len(old)))
        self._mask = len(self._slots) - 1
        for held in old:
            if held:
                self._slots[self._find(held & _MASK)] = held
