"""The shape every streaming parser has.

A parser is instantiated once per logical stream (one pod, container, stdout or
stderr, and rank prefix) and fed that stream's lines in order. It is pure: the
only time it knows is the time written in the lines.

- `PREFILTER` (module or class attribute): a regex source. A line that does not
  match it is never fed to the parser unless the parser is `open`. This keeps the
  hot path cheap: most log lines interest no parser at all.
- `feed(line)` returns `(consumed, records)`: `consumed` says the line belongs to a
  multi-line record of this parser, and later parsers in the chain should not see it.
- `open` is true while the parser holds an unfinished multi-line record and so
  must see every next line of its stream.
- `close()` ends the stream (end of file, idle timeout): unfinished records are
  emitted (marked truncated where that applies).
"""

from __future__ import annotations

from typing import Protocol

from gangscope.parsers.lines import Line
from gangscope.parsers.records import Record


class StreamParser(Protocol):
    PREFILTER: str

    @property
    def open(self) -> bool: ...

    def feed(self, line: Line) -> tuple[bool, list[Record]]: ...

    def close(self) -> list[Record]: ...
