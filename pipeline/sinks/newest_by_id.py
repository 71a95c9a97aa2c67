"""The newest document of each id, in the order the ids first came, in memory that does not grow
with the run.

The local folder keeps one line per id for the kinds that are updated as a stream goes on (a
rank's epoch progress, a job attempt's diagnosis), as an index would: the last version written,
at the place of the first. Held in a dict, that is one encoded record per rank of the run (100k
tiny pod files: ~55 MB, ~540 bytes a rank). Here a dict holds up to `buffer` ids; a full dict
is spilled to files on disk, partitioned by the id's CRC-32, each entry with the sequence
numbers of its first and last write. At the end each partition is reduced alone (the earliest
first write, the latest document), sorted by first write, and the partitions are merged in
that order: memory is the dict and one partition. A run that never fills the dict writes it
as it is, with no file made.
"""

from __future__ import annotations

import heapq
import os
import struct
import tempfile
import zlib
from typing import IO, Iterator

_PARTITIONS = 64
_BUFFER = 1 << 13  # ids held before a spill (~5 MB of encoded epoch records)
_HEAD = struct.Struct("<QQII")  # first write, last write, id length, document length


class NewestById:
    """`put(record_id, document)` for every write; `documents()` once at the end."""

    def __init__(self, buffer: int = _BUFFER):
        self._buffer = buffer
        self._held: dict[str, list] = {}  # id -> [first write, last write, document]
        self._writes = 0
        self._dir: tempfile.TemporaryDirectory | None = None

    def put(self, record_id: str, document: bytes) -> None:
        seq = self._writes
        self._writes = seq + 1
        entry = self._held.get(record_id)
        if entry is None:
            self._held[record_id] = [seq, seq, document]
            if len(self._held) >= self._buffer:
                self._spill()
        else:
            entry[1] = seq
            entry[2] = document

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="gangscope-newest-")
        parts: list[list[bytes]] = [[] for _ in range(_PARTITIONS)]
        for record_id, (first, last, document) in self._held.items():
            key = record_id.encode()
            parts[zlib.crc32(key) % _PARTITIONS].append(_HEAD.pack(first, last, len(key), len(document)) + key + document)
        for n, part in enumerate(parts):
            if part:
                with open(self._path(n), "ab") as f:
                    f.write(b"".join(part))
        self._held = {}

    def _path(self, name) -> str:
        return os.path.join(self._dir.name, str(name))  # type: ignore[union-attr]

    def documents(self) -> Iterator[bytes]:
        """Each id's newest document, ids in the order of their first write; the spill files are
        removed when the iteration ends."""
        if self._dir is None:
            held, self._held = self._held, {}
            for _first, _last, document in held.values():
                yield document
            return
        try:
            self._spill()
            sorted_parts = [self._reduced(n) for n in range(_PARTITIONS) if os.path.exists(self._path(n))]
            readers = [_entries(open(path, "rb")) for path in sorted_parts]
            for _first, document in heapq.merge(*readers, key=lambda e: e[0]):
                yield document
        finally:
            self._dir.cleanup()
            self._dir = None

    def _reduced(self, n: int) -> str:
        """Partition `n` with one entry per id (its earliest first write, its latest document),
        sorted by first write, written beside it; the path of that file."""
        newest: dict[bytes, tuple[int, int, bytes]] = {}
        with open(self._path(n), "rb") as f:
            data = f.read()
        pos = 0
        while pos < len(data):
            first, last, key_len, doc_len = _HEAD.unpack_from(data, pos)
            pos += _HEAD.size
            key = data[pos:pos + key_len]
            pos += key_len
            document = data[pos:pos + doc_len]
            pos += doc_len
            seen = newest.get(key)
            if seen is None:
                newest[key] = (first, last, document)
            else:
                newest[key] = (min(first, seen[0]), *max((last, document), (seen[1], seen[2]), key=lambda v: v[0]))
        del data
        path = self._path(f"{n}.sorted")
        with open(path, "wb") as out:
            for first, _last, document in sorted(newest.values(), key=lambda e: e[0]):
                out.write(_HEAD.pack(first, 0, 0, len(document)))
                out.write(document)
        os.unlink(self._path(n))
        return path


def _entries(f: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    with f:
        while True:
            head = f.read(_HEAD.size)
            if not head:
                return
            first, _last, _key_len, doc_len = _HEAD.unpack(head)
            yield first, f.read(doc_len)
