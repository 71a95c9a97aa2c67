"""Each pod group's progress, parked on disk from the end of its log until the end of the run.

A rank's last progress word (its final epoch state, a stall until its job's end) can only be
said once every job's end is known, at the end of the run. Until then each pod group's tracker
waits as its snapshot (the plain data a checkpoint holds), packed with msgpack and appended to
one temporary file, length first: memory does not grow with the pods (in memory, ~700 bytes a
pod: 100k tiny pod files kept ~70 MB of parked snapshots). At the end they are taken up again
one at a time, in the order they were parked.
"""

from __future__ import annotations

import struct
import tempfile
from typing import Iterator

import msgspec

from gangscope.parsers.progress import TrackerState
from gangscope.pipeline.correlate.progress import DerivedProgress

_LENGTH = struct.Struct("<I")


class ParkedProgress:
    """`park(progress)` as each pod group's log ends; `taken_up()` once, at the end."""

    _encode = msgspec.msgpack.Encoder().encode
    _decode = msgspec.msgpack.Decoder(TrackerState).decode

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="gangscope-progress-")
        self.parked = 0

    def park(self, progress: DerivedProgress) -> None:
        data = ParkedProgress._encode(progress.snapshot())
        self._file.write(_LENGTH.pack(len(data)))
        self._file.write(data)
        self.parked += 1

    def taken_up(self) -> Iterator[DerivedProgress]:
        """Each parked group's progress again, in parking order, one at a time (the caller says
        its last word: `DerivedProgress.finish(job_end)`)."""
        f = self._file
        f.flush()
        f.seek(0)
        for _ in range(self.parked):
            (size,) = _LENGTH.unpack(f.read(_LENGTH.size))
            progress = DerivedProgress()
            progress.restore(ParkedProgress._decode(f.read(size)))
            yield progress

    def close(self) -> None:
        self._file.close()
