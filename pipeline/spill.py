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

Partitioned records (`PartitionedRecords`) are the third: msgspec Structs with a head of ints,
each added to a partition of the caller's choosing (a job's), held up to a count in all and then
appended to the partition's file as MessagePack typed by the Struct (pickled where MessagePack would
not bring one back as it was kept), read back a partition at a time in the order they were added,
decoding only the objects whose heads the reader keeps (each job's step series, diagnose/digest.py).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import socket
import tempfile
from array import array
from typing import Any, Callable, Iterable, Iterator

import msgspec

CHUNK = 256  # objects pickled together

# A spill folder is named after the machine and the process that made it, "<prefix><host>.<pid>-<random>"
# (host: 8 hex of the hostname's hash), so that a later run can tell one that a process left behind when
# it was killed (SIGKILL: a TemporaryDirectory's finalizer never runs) from one a live process still uses.
# Spill *files* need none of this: tempfile.TemporaryFile has no name on disk once open.
_HOST = hashlib.blake2b(socket.gethostname().encode(errors="replace"), digest_size=4).hexdigest()
_ORPHAN = re.compile(r"gangscope-[a-z]+(?:-[a-z]+)*-([0-9a-f]{8})\.(\d{1,10})-[A-Za-z0-9_]+")


def private_directory(prefix: str) -> tempfile.TemporaryDirectory:
    """A temporary folder for one process's spill (`prefix` like "gangscope-series-"), named so that
    `sweep_orphans` can remove it once the process is gone."""
    return tempfile.TemporaryDirectory(prefix=f"{prefix}{_HOST}.{os.getpid()}-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone; a pid out of range is nobody's
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def sweep_orphans(folder: str | None = None) -> int:
    """Remove the spill folders this machine's processes left in `folder` (the temporary folder by
    default) and that no live process owns any more; how many were removed. Folders of another host
    (a temporary folder shared between machines), of another user, of a live pid, or named otherwise are
    left. Never raises: a folder that cannot be read or removed is left as it is."""
    import shutil

    folder = folder or tempfile.gettempdir()
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        match = _ORPHAN.fullmatch(entry.name)
        if match is None or match.group(1) != _HOST:
            continue
        pid = int(match.group(2))
        if pid == os.getpid() or _alive(pid):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if uid is not None and entry.stat(follow_symlinks=False).st_uid != uid:
                continue
            shutil.rmtree(entry.path)
            removed += 1
        except OSError:
            continue
    return removed


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
            self._dir = private_directory(self._prefix)
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


_PICKLED = 1  # an object's flag: pickled (its MessagePack did not come back the same)


class PartitionedRecords:
    """`add(partition, head, item)` for each object (`head`: a tuple of `width` ints, `item`: an
    object of `item_type`, a msgspec Struct), then `read(partition, keep)` as often as asked: each
    (head, item) `keep(head)` accepts, in the order they were added. Held in memory until `buffer`
    wait, then each partition's are appended to its file (see the module's docstring). `keep`
    given here is asked at each spill too: an object it refuses then is not written (for a
    caller whose refusals are final, as a thinned series' are)."""

    def __init__(self, partitions: int, buffer: int, prefix: str, item_type: type, width: int,
                 keep: Callable[[tuple], bool] | None = None):
        self._count = partitions
        self._buffer = buffer
        self._prefix = prefix
        self._width = width
        self._keep = keep
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder = msgspec.msgpack.Decoder(type=item_type)
        self._list_decoder = msgspec.msgpack.Decoder(type=list[item_type])  # type: ignore[valid-type]
        self._held: list[list[tuple]] = [[] for _ in range(partitions)]
        self._waiting = 0
        self._dir: tempfile.TemporaryDirectory | None = None

    @property
    def spilled(self) -> bool:
        return self._dir is not None

    def add(self, partition: int, head: tuple, item: Any) -> None:
        self._held[partition].append((head, item))
        self._waiting += 1
        if self._waiting >= self._buffer:
            self._spill()

    def _spill(self) -> None:
        if self._dir is None:
            self._dir = private_directory(self._prefix)
        keep = self._keep
        for n, held in enumerate(self._held):
            if keep is not None:
                held = [entry for entry in held if keep(entry[0])]
            if held:
                with open(os.path.join(self._dir.name, str(n)), "ab") as f:
                    pickle.dump(self._frame(held), f, protocol=pickle.HIGHEST_PROTOCOL)
            self._held[n] = []
        self._waiting = 0

    def _frame(self, held: list[tuple]) -> tuple[array, array, bytes, bytes]:
        """(heads, offsets, flags, blob) of the entries: every head's ints one after the other,
        object i in blob[offsets[i]:offsets[i + 1]], flags[i] how (0: MessagePack, 1: pickled)."""
        heads = array("q")
        for head, _item in held:
            heads.extend(head)
        # every object's MessagePack after an array32 header: the blob past the header is a list's
        # elements, checked in two calls (decoded as the typed list, encoded again)
        encode_into = self._encoder.encode_into
        blob = bytearray(b"\xdd" + len(held).to_bytes(4, "big"))
        offsets = array("Q")
        flags = bytearray(len(held))
        try:
            for _head, item in held:
                offsets.append(len(blob) - 5)
                encode_into(item, blob, -1)
            again = self._encoder.encode(self._list_decoder.decode(blob))
            same = again.endswith(memoryview(blob)[5:]) and len(again) - len(blob) + 5 in (1, 3, 5)
        except Exception:  # noqa: BLE001 - an object MessagePack cannot carry: found one by one below
            same = False
        if not same:
            blob, offsets = bytearray(5), array("Q")
            for i, (_head, item) in enumerate(held):
                offsets.append(len(blob) - 5)
                data = self._exact(item)
                if data is None:
                    data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
                    flags[i] = _PICKLED
                blob += data
        offsets.append(len(blob) - 5)
        return heads, offsets, bytes(flags), bytes(memoryview(blob)[5:])

    def _exact(self, item: Any) -> bytes | None:
        """The object's MessagePack, if it decodes to the same (None: pickle it)."""
        try:
            data = self._encoder.encode(item)
            return data if self._encoder.encode(self._decoder.decode(data)) == data else None
        except Exception:  # noqa: BLE001
            return None

    def _frames(self, partition: int) -> Iterator[tuple[array, array, bytes, bytes]]:
        if self._dir is None:
            return
        path = os.path.join(self._dir.name, str(partition))
        if not os.path.exists(path):
            return
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            while f.tell() < size:
                yield pickle.load(f)

    def _entries(self, frame: tuple[array, array, bytes, bytes], keep: Callable[[tuple], bool] | None):
        """(head, object's bytes, flag) of each entry of a frame that `keep` accepts."""
        heads, offsets, flags, blob = frame
        view = memoryview(blob)
        for i, head in enumerate(zip(*[iter(heads)] * self._width)):
            if keep is None or keep(head):
                yield head, view[offsets[i]:offsets[i + 1]], flags[i]

    def read(self, partition: int, keep: Callable[[tuple], bool] | None = None) -> Iterator[tuple[tuple, Any]]:
        """(head, object) of the partition's entries `keep` accepts (all without), in the order
        they were added; an object refused is not decoded."""
        decode = self._decoder.decode
        for frame in self._frames(partition):
            for head, data, flag in self._entries(frame, keep):
                yield head, (pickle.loads(data) if flag else decode(data))
        for head, item in list(self._held[partition]):
            if keep is None or keep(head):
                yield head, item

    def keep_only(self, keep: Callable[[tuple], bool]) -> int:
        """Every partition rewritten with the entries `keep` accepts, in their order (a frame at a
        time, objects not decoded); how many are left, held ones included."""
        self._spill()
        left = 0
        for n in range(self._count):
            path = os.path.join(self._dir.name, str(n))  # type: ignore[union-attr]
            if not os.path.exists(path):
                continue
            with open(path + ".kept", "wb") as out:
                for frame in self._frames(n):
                    heads, offsets, flags, blob = array("q"), array("Q"), bytearray(), bytearray()
                    for head, data, flag in self._entries(frame, keep):
                        heads.extend(head)
                        offsets.append(len(blob))
                        flags.append(flag)
                        blob += data
                    if flags:
                        offsets.append(len(blob))
                        pickle.dump((heads, offsets, bytes(flags), bytes(blob)), out, protocol=pickle.HIGHEST_PROTOCOL)
                        left += len(flags)
            os.replace(path + ".kept", path)
        return left

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
        self._held = [[] for _ in range(self._count)]
        self._waiting = 0
