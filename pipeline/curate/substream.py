"""One sub-stream of a container (a stream, or a rank's prefixed lines in it): its logical lines fed
through the line parsers, in order (`LINE_PARSERS`), each parser guarded as a unit of work."""

from __future__ import annotations

import re

from gangscope.parsers import times
from gangscope.parsers.lines import Line
from gangscope.parsers.errors import ErrorDetector
from gangscope.parsers.records import Record
from gangscope.parsers.rendezvous import RendezvousParser
from gangscope.parsers.steps import StepParser
from gangscope.parsers.tool_exits import ToolExitDetector
from gangscope.parsers.traces import TraceParser
from gangscope.pipeline.curate.scan import exact_hints_for
from gangscope.pipeline.curate.snapshot import SubState


# Order matters: a trace consumes its lines, so step and error detectors never see the
# inside of a traceback (the error of a trace comes from classify_trace). Errors come before
# steps: a line that holds both (a tqdm bar with a watchdog timeout or an OVERFLOW glued to
# its end, as real logs have them) gives its step record and its error record. torch elastic's
# rendezvous block (which global rank each local rank is) gives no record: curation keeps it. A container tool's
# lower-case exit line (tool_exits.py) is read last, by its own anchored prefilter.
LINE_PARSERS: tuple[type, ...] = (TraceParser, ErrorDetector, RendezvousParser, StepParser, ToolExitDetector)


STREAMS = frozenset(("stdout", "stderr"))
NO_TIME = object()  # a stream with no line yet (None is a line without a time)


class RuleFailed(Exception):
    """One or more parsers of a sub-stream raised on a line (or on expiry or close); the others
    went on. `records` is what they gave, `failures` the (parser, exception) pairs. The parsers
    that raised were replaced by fresh ones: an open record they held may be corrupt, and is dropped."""

    def __init__(self, records: list[Record], failures: list[tuple[object, Exception]]):
        super().__init__(", ".join(type(exc).__name__ for _parser, exc in failures))
        self.records = records
        self.failures = failures


_PREFILTERS: dict[tuple[str, ...], tuple[list, object]] = {}


def _prefilters_of(parser_classes: tuple[type, ...]) -> tuple[list, object]:
    """(each parser's prefilter search, the table's exact hints: see scan.ExactHints), made once per
    table of prefilters (a job of 512 ranks makes a thousand sub-streams)."""
    patterns = tuple(cls.PREFILTER for cls in parser_classes)
    made = _PREFILTERS.get(patterns)
    if made is None:
        made = _PREFILTERS[patterns] = ([re.compile(p).search for p in patterns], exact_hints_for(patterns))
    return made


def _bits_of(parsers: list) -> tuple:
    """(bit, parser) of the parsers whose records can go idle (an `expire`), bit i for parser i."""
    return tuple((1 << i, p) for i, p in enumerate(parsers) if hasattr(p, "expire"))


class SubStream:
    """The parsers of one stream of one rank, and whether any of them holds an open record.

    `open_bits` has bit i set while parser i holds an open record; a parser's state changes
    only when it is fed, expired or closed, so it is read back only then. A parser that raises
    is one unit of work failing: it skips the line, is reset, and the others go on (RuleFailed)."""

    __slots__ = ("parsers", "prefilters", "exact", "expiring", "open_bits", "opened_at", "last_time", "_seconds", "fed")

    def __init__(self, parser_classes: tuple[type, ...]):
        self.parsers = [cls() for cls in parser_classes]
        self.prefilters, self.exact = _prefilters_of(parser_classes)
        self.expiring = _bits_of(self.parsers)  # (bit in open_bits, parser) of the parsers whose records can go idle
        self.open_bits = 0
        self.opened_at = None  # the source position of the line that opened the current record
        self.last_time = None  # the time of the last line fed
        self._seconds = (None, None)  # last_time in seconds, as last worked out
        self.fed = 0  # the bits of the parsers the last `feed` fed (curate/repeats.py reads it)

    @property
    def open(self) -> bool:
        return self.open_bits != 0

    def _read_open_bits(self) -> None:
        bits = 0
        bit = 1
        for parser in self.parsers:
            if parser.open:
                bits |= bit
            bit <<= 1
        self.open_bits = bits

    def due(self) -> float | None:
        """When (seconds) the earliest open record of this stream may be over if no line comes."""
        if not self.last_time:
            return None
        # the open ones as open_bits has them (read back whenever a parser is fed, expired or
        # closed, as due's callers do first): no `open` asked of every parser on every line
        bits = self.open_bits
        quiet = None
        for bit, parser in self.expiring:
            if bits & bit:
                q = parser.quiet_s
                if quiet is None or q < quiet:
                    quiet = q
        if quiet is None:
            return None
        if self._seconds[0] != self.last_time:
            self._seconds = (self.last_time, times.seconds(self.last_time))
        last = self._seconds[1]
        return None if last is None else last + quiet

    def expire(self, now: str) -> list[Record]:
        """Records of parsers whose open record has been idle since before `now`."""
        out: list[Record] = []
        failed = None
        for _bit, parser in self.expiring:
            if parser.open:
                try:
                    out.extend(parser.expire(now))
                except Exception as exc:
                    failed = self._reset(parser, exc, failed)
        self._read_open_bits()
        if failed is not None:
            raise RuleFailed(out, failed)
        return out

    def feed(self, line: Line, hints: int = -1, known: int = 0) -> list[Record]:
        """Feed a line to the parsers that are open or want it. `hints` has bit i set when the
        block scan found parser i's prefilter on the raw line (-1: unknown, test them all); for
        the bits of `known` it is the prefilter's exact answer on the text (the block scan's)."""
        out: list[Record] = []
        text = line.text
        open_bits = self.open_bits
        exact = known  # the parsers whose bit in `hints` is their prefilter's exact answer on `text`
        if self.exact is not None:
            wanted = hints & self.exact.mask & ~open_bits & ~known
            if wanted and (found := self.exact.of(text, wanted)) is not None:
                exact = wanted
                hints &= ~wanted | found
        bit = 1
        failed = None
        fed = 0
        for parser, wants in zip(self.parsers, self.prefilters):
            if open_bits & bit or (hints & bit and (exact & bit or wants(text))):
                fed |= bit
                try:
                    consumed, records = parser.feed(line)
                except Exception as exc:
                    failed = self._reset(parser, exc, failed)
                    open_bits &= ~bit
                    bit <<= 1
                    continue
                if parser.open:
                    open_bits |= bit
                else:
                    open_bits &= ~bit
                if records:
                    out.extend(records)
                if consumed:
                    break
            bit <<= 1
        self.open_bits = open_bits
        self.fed = fed
        if failed is not None:
            raise RuleFailed(out, failed)
        return out

    def close(self) -> list[Record]:
        out: list[Record] = []
        failed = None
        for parser in list(self.parsers):
            try:
                out.extend(parser.close())
            except Exception as exc:
                failed = self._reset(parser, exc, failed)
        self.open_bits = 0
        if failed is not None:
            raise RuleFailed(out, failed)
        return out

    def _reset(self, parser, exc: Exception, failed: list | None) -> list:
        """Replace a parser that raised by a fresh one; the failures so far, this one added."""
        i = next(i for i, p in enumerate(self.parsers) if p is parser)
        self.parsers[i] = type(parser)()
        self.expiring = _bits_of(self.parsers)
        return (failed or []) + [(parser, exc)]

    def snapshot(self, key) -> SubState:
        """This sub-stream (`key`: its stream, or (stream, rank, local rank)) as plain data: the
        state of each parser that keeps one (a parser with nothing to keep gives None)."""
        stream, rank, local_rank = (key, None, None) if isinstance(key, str) else key
        parsers = [state for state in (p.snapshot() for p in self.parsers if hasattr(p, "snapshot")) if state is not None]
        return SubState(stream=stream, rank=rank, local_rank=local_rank, parsers=parsers, opened_at=self.opened_at,
                        last_time=self.last_time)

    @classmethod
    def from_snapshot(cls, state: SubState, parser_classes: tuple[type, ...]) -> "SubStream":
        """A sub-stream of `parser_classes` that goes on from `state`."""
        sub = cls(parser_classes)
        for parser_state in state.parsers:
            parser = next((p for p in sub.parsers if getattr(p, "State", None) is type(parser_state)), None)
            if parser is None:
                raise ValueError(f"no parser of this build takes a {type(parser_state).__name__}")
            parser.restore(parser_state)
        sub._read_open_bits()
        sub.opened_at, sub.last_time = state.opened_at, state.last_time
        return sub
