"""The newest document of each id, in the order the ids first came, in memory that does not grow
with the run.

The local folder keeps one line per id for the kinds that are updated as a stream goes on (a
rank's epoch progress, a job attempt's diagnosis), as an index would: the last version written,
at the place of the first. Held in a dict, that is one encoded record per rank of the run (100k
tiny pod files: ~55 MB, ~540 bytes a rank). Here a dict holds up to `buffer` ids and
`max_bytes` of documents; a full dict is spilled to files on disk, partitioned by the id's CRC-32,
each entry with the sequence numbers of its first and last write. The byte bound counts for the
diagnoses (~1.1 KB each): 8k of them held, and packed all at once to be spilled, raised the peak
RSS of files-100000 by ~19 MB at the end of the run; a partition is packed at a time. At the end each partition is reduced alone (the earliest
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

from gangscope.pipeline.spill import private_directory

_PARTITIONS = 64
_BUFFER = 1 << 13  # ids held before a spill (~3 MB of encoded epoch records)
_MAX_BYTES = 2 << 20  # documents held before a spill, in bytes (~1,900 diagnoses)
_HEAD = struct.Struct("<QQII")  # first write, last write, id length, document length


class NewestById:
    """`put(record_id, document)` for every write; `documents()` once at the end."""

    def __init__(self, buffer: int = _BUFFER, max_bytes: int = _MAX_BYTES):
        self._buffer = buffer
        self._max_bytes = max_bytes
        self._held: dict[str, list] = {}  # id -> [first write, last write, document]
        self._bytes = 0  # of the documents held
        self._writes = 0
        self._dir: tempfile.TemporaryDirectory | None = None

    def put(self, record_id: str, document: bytes) -> None:
        seq = self._writes
        self._writes = seq + 1
        entry = self._held.get(record_id)
        if entry is None:
            self._held[record_id] = [seq, seq, document]
            self._bytes += len(document)
        else:
            entry[1] = seq
            self._bytes += len(document) - len(entry[2])
            entry[2] = document
        if len(self._held) >= self._buffer or self._bytes >= self._max_bytes:
            self._spill()

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = private_directory("gangscope-newest-")
        parts: list[list[tuple[bytes, list]]] = [[] for _ in range(_PARTITIONS)]
        for record_id, entry in self._held.items():
            key = record_id.encode()
            parts[zlib.crc32(key) % _PARTITIONS].append((key, entry))
        self._held = {}
        for n, part in enumerate(parts):
            if part:
                # packed one partition at a time: a copy of every document at once doubled the peak
                with open(self._path(n), "ab") as f:
                    f.write(b"".join(_HEAD.pack(first, last, len(key), len(document)) + key + document
                                     for key, (first, last, document) in part))
                parts[n] = []
        self._bytes = 0

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
