"""Lines fed to a bare TraceParser, for tests of what it makes of a rendered traceback."""

from __future__ import annotations

from gangscope.parsers.lines import Line
from gangscope.parsers.records import TraceRecord
from gangscope.parsers.traces import TraceParser


def feed_traces(lines: list[str]) -> list[TraceRecord]:
    """The traces a TraceParser makes of `lines` (one stream, numbered from 0), closed at the end."""
    parser = TraceParser()
    out: list = []
    for i, text in enumerate(lines):
        out.extend(parser.feed(Line(None, i, text))[1])
    out.extend(parser.close())
    return out
