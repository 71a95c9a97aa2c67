"""Error lines that recur: the error record of a line's text made once, copied for each line after.

Real gangs print the same warning on every rank, over and over (c10d's `The client socket has failed to
connect`, NCCL's and the data loader's warnings): the realistic corpus's 21,767 error records of 300,942
lines are 512 texts (one per rank prefix). Such a line costs `ContainerCurator._logical` its rank
prefixes, the sub-stream's dispatch and `ErrorDetector.feed` every time, though all three depend on its
text alone where its sub-stream holds nothing open.

What is remembered, per text (rank prefixes included), is kept only where the answer is the text's
alone: the line came with the block scan's hints (`hints` != -1), its sub-stream held no open record
before nor after it, `SubStream.feed` fed it to the `ErrorDetector` alone (`SubStream.fed`), and it made
exactly one record, an `ErrorRecord`. Which parsers a closed sub-stream feeds is a function of the text,
the hints and the exact bits (substream.py), and `ErrorDetector` keeps no state, so its record is a
function of the text, its rank prefixes, and the line's time and seq. A later line of the same stream and
text, parser table, hints and exact bits, whose sub-stream is there and holds nothing open, gets a copy
of that record with its own time and seq (`record`): what `_logical` would have made. tests/test_h25e_repeats.py holds the two paths' records equal and the bound.

Bounded: `MAX_ENTRIES` texts of at most `MAX_TEXT` characters, the oldest dropped first (counted in
`evicted`). One table per process: what it holds names no container (the stamp comes after).
"""

from __future__ import annotations

import msgspec

from gangscope.parsers.errors import ErrorDetector
from gangscope.parsers.records import ErrorRecord

MAX_ENTRIES = 2048
MAX_TEXT = 1024

_replace = msgspec.structs.replace


class RepeatedErrors:
    """(stream, text) -> (parser table, hints, exact bits, sub-stream key, the record as ErrorDetector made it,
    the length of the text's rank prefixes)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_text: int = MAX_TEXT):
        self.max_entries = max_entries
        self.max_text = max_text
        self.entries: dict[tuple[str, str], tuple] = {}
        self.evicted = 0  # entries dropped to keep the bound
        self._error_bit: dict[tuple, int] = {}  # parser table -> ErrorDetector's bit in it (-1: none)

    def note(self, text: str, body: str, stream: str, parsers: tuple, fed: int, hints: int, known: int,
             key, records: list) -> None:
        """The general path's answer for a line of `text` (`body`: without its rank prefixes, as the parsers
        read it; its sub-stream `key` closed before and after it; `fed`: the bits of the parsers
        `SubStream.feed` fed it to): kept where it is the text's alone (module doc)."""
        if len(records) != 1 or type(records[0]) is not ErrorRecord or len(text) > self.max_text or self.max_entries <= 0:
            return
        bit = self._error_bit.get(parsers)
        if bit is None:
            bit = self._error_bit[parsers] = next((1 << i for i, cls in enumerate(parsers) if cls is ErrorDetector), -1)
        if fed != bit:
            return
        entries = self.entries
        where = (stream, text)
        if where not in entries and len(entries) >= self.max_entries:
            del entries[next(iter(entries))]
            self.evicted += 1
        entries[where] = (parsers, hints, known, key, _replace(records[0]), len(text) - len(body))

    @staticmethod
    def record(entry: tuple, time: str | None, seq: int) -> ErrorRecord:
        """The entry's record for a line of `time` and `seq`."""
        return _replace(entry[4], time=time, seq=seq)


REPEATED_ERRORS = RepeatedErrors()
