"""Curation: raw lines of one container in, stamped records out.

The flow for one container log: envelope -> logical lines (CRI partials joined,
rank prefixes removed, one sub-stream per stream and rank) -> the line parsers
of `LINE_PARSERS`, in order -> records stamped with the pod's identity and a
deterministic id. Lines that no parser wants and that fall inside no open
multi-line record cost one split and one regex search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from gangscope.parsers import envelopes, times
from gangscope.parsers.lines import Line, strip_rank_prefixes
from gangscope.parsers.redact import redact_record
from gangscope.parsers.errors import ErrorDetector, classify_trace
from gangscope.parsers.records import ErrorRecord, Record, TraceRecord, stable_id
from gangscope.parsers.steps import StepParser, TrainerLogFolder
from gangscope.parsers.traces import TraceParser
from gangscope.pipeline.curate.identity import Stamper, job_of
from gangscope.pipeline.curate.scan import BlockScanner
from gangscope.pipeline.curate.snapshot import (ContainerState, CuratorState, IdentityState, PartialState, StatsState,
                                                SubState)
from gangscope.pipeline.isolation import StageFailures, failures_of
from gangscope.pipeline.sources.files import PodIdentity, decode_block


# Order matters: a trace consumes its lines, so step and error detectors never see the
# inside of a traceback (the error of a trace comes from classify_trace).
LINE_PARSERS: tuple[type, ...] = (TraceParser, StepParser, ErrorDetector)


@dataclass
class CurationLimits:
    max_partial_bytes: int = 1 << 20  # a CRI line re-assembled from P chunks is cut here
    # Open multi-line records per container (one per rank stream): each holds up to
    # TraceParser.max_bytes, so past this the quietest is flushed early (counted) (issue 10).
    max_open_records: int = 1024
    # Containers a Fluent Bit stream keeps curators for (FluentBitCurator): past this, the least
    # recently fed are closed (their open records flushed) and forgotten, counted (issue 10).
    max_containers: int = 20_000


@dataclass
class CurationStats:
    lines: int = 0
    unreadable_lines: int = 0
    invalid_utf8_lines: int = 0
    partial_lines_cut: int = 0
    dangling_partials: int = 0
    open_records_flushed: int = 0  # flushed before their end: over CurationLimits.max_open_records / max_containers
    containers_evicted: int = 0  # curators closed as the least recently fed: over CurationLimits.max_containers
    records: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    job_end: dict[str, float] = field(default_factory=dict)  # job -> time of its last line read
    failures: StageFailures = field(default_factory=StageFailures)  # parsers and records that raised (stage "curate")

    def snapshot(self) -> StatsState:
        return StatsState(
            lines=self.lines, unreadable_lines=self.unreadable_lines, invalid_utf8_lines=self.invalid_utf8_lines,
            partial_lines_cut=self.partial_lines_cut, dangling_partials=self.dangling_partials,
            open_records_flushed=self.open_records_flushed, containers_evicted=self.containers_evicted,
            records=dict(self.records), problems=list(self.problems), job_end=dict(self.job_end),
            failures=self.failures.summary(),
        )

    def restore(self, state: StatsState) -> None:
        self.lines, self.unreadable_lines, self.invalid_utf8_lines = state.lines, state.unreadable_lines, state.invalid_utf8_lines
        self.partial_lines_cut, self.dangling_partials = state.partial_lines_cut, state.dangling_partials
        self.open_records_flushed, self.containers_evicted = state.open_records_flushed, state.containers_evicted
        self.records, self.problems, self.job_end = dict(state.records), list(state.problems), dict(state.job_end)
        self.failures = StageFailures.from_summary(state.failures)


_STREAMS = frozenset(("stdout", "stderr"))
_NO_TIME = object()  # a stream with no line yet (None is a line without a time)


class RuleFailed(Exception):
    """One or more parsers of a sub-stream raised on a line (or on expiry or close); the others
    went on. `records` is what they gave, `failures` the (parser, exception) pairs. The parsers
    that raised were replaced by fresh ones: an open record they held may be corrupt, and is dropped."""

    def __init__(self, records: list[Record], failures: list[tuple[object, Exception]]):
        super().__init__(", ".join(type(exc).__name__ for _parser, exc in failures))
        self.records = records
        self.failures = failures


class SubStream:
    """The parsers of one stream of one rank, and whether any of them holds an open record.

    `open_bits` has bit i set while parser i holds an open record; a parser's state changes
    only when it is fed, expired or closed, so it is read back only then. A parser that raises
    is one unit of work failing: it skips the line, is reset, and the others go on (RuleFailed)."""

    __slots__ = ("parsers", "prefilters", "expiring", "open_bits", "opened_at", "last_time", "_seconds")

    def __init__(self, parser_classes: tuple[type, ...]):
        self.parsers = [cls() for cls in parser_classes]
        self.prefilters = [re.compile(cls.PREFILTER).search for cls in parser_classes]
        self.expiring = [p for p in self.parsers if hasattr(p, "expire")]  # parsers whose records can go idle
        self.open_bits = 0
        self.opened_at = None  # the source position of the line that opened the current record
        self.last_time = None  # the time of the last line fed
        self._seconds = (None, None)  # last_time in seconds, as last worked out

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
        quiet = [p.quiet_s for p in self.expiring if p.open]
        if not quiet:
            return None
        if self._seconds[0] != self.last_time:
            self._seconds = (self.last_time, times.seconds(self.last_time))
        last = self._seconds[1]
        return None if last is None else last + min(quiet)

    def expire(self, now: str) -> list[Record]:
        """Records of parsers whose open record has been idle since before `now`."""
        out: list[Record] = []
        failed = None
        for parser in self.expiring:
            if parser.open:
                try:
                    out.extend(parser.expire(now))
                except Exception as exc:
                    failed = self._reset(parser, exc, failed)
        self._read_open_bits()
        if failed is not None:
            raise RuleFailed(out, failed)
        return out

    def feed(self, line: Line, hints: int = -1) -> list[Record]:
        """Feed a line to the parsers that are open or want it. `hints` has bit i set when the
        block scan found parser i's prefilter on the raw line (-1: unknown, test them all)."""
        out: list[Record] = []
        text = line.text
        open_bits = self.open_bits
        bit = 1
        failed = None
        for parser, wants in zip(self.parsers, self.prefilters):
            if open_bits & bit or (hints & bit and wants(text)):
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
        self.expiring = [p for p in self.parsers if hasattr(p, "expire")]
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


def combined_prefilter(parser_classes: tuple[type, ...]) -> Callable[[str], object]:
    if not parser_classes:
        return lambda text: None
    return re.compile("|".join(f"(?:{cls.PREFILTER})" for cls in parser_classes)).search


_SCANNERS: dict[tuple[type, ...], BlockScanner | None] = {}


def scanner_for(parser_classes: tuple[type, ...]) -> BlockScanner | None:
    """One compiled block scanner per parser table (compiling takes milliseconds)."""
    if parser_classes not in _SCANNERS:
        _SCANNERS[parser_classes] = BlockScanner.build([cls.PREFILTER for cls in parser_classes])
    return _SCANNERS[parser_classes]




def _skipped_from(stale: dict[bytes, int], pos: int) -> dict[bytes, int]:
    """Both streams stale from `pos` on, unless one already was from an earlier line."""
    if len(stale) == 2:
        return stale
    return {b"stdout": stale.get(b"stdout", pos), b"stderr": stale.get(b"stderr", pos)}


def _time_and_stream_of(block: bytes, pos: int, end: int) -> tuple[bytes | None, bytes | None]:
    """(time, stream) of the CRI line at pos; the time only for a complete (F) line, the
    only kind whose time sets its stream's seq."""
    first = block.find(b" ", pos, end)
    if first < 0:
        return None, None
    second = block.find(b" ", first + 1, end)
    if second < 0:
        return None, None
    complete = block.startswith(b"F", second + 1, end)
    return (block[pos:first] if complete else None), block[first + 1 : second]


def _may_continue(block: bytes, pos: int, end: int, open_now: tuple[frozenset, frozenset]) -> bool:
    """Whether the raw line at pos can belong to an open record: its stream has an open
    record, and (for records of a rank-prefixed sub-stream) it carries a prefix."""
    line = block[pos:end] if end >= 0 else block[pos:]
    parts = line.split(b" ", 3)
    if len(parts) < 4:
        return True  # not plain CRI: let the line reader judge it
    plain, prefixed = open_now
    stream = parts[1]
    if stream in plain:
        return True
    return stream in prefixed and parts[3][:1] == b"["


# A deadline is compared with the first characters of a line's time, to the hundredth of a
# second ("2024-05-01T12:00:00.12"). Runtimes trim trailing zeros, so the text comparison can be
# off by less than that; it only decides when to ask the parsers, which judge exactly.
DEADLINE_CHARS = 22


def _deadline_text(seconds: float) -> bytes:
    whole = int(seconds)
    hundredths = int((seconds - whole) * 100)
    return f"{times.utc_second(whole)}.{hundredths:02d}".encode()


# How far back a line looks for earlier lines of its stream with the same time.
SEQ_LOOKBACK_LINES = 10_000


class ContainerCurator:
    """Curates the lines of one container (all its streams), in the order they were written.

    `seq` (a line's position among the complete lines of its stream that carry the same
    time) is what makes ids unique when a runtime stamps several lines alike; both
    paths below compute it the same way.
    """

    last_used = 0  # FluentBitCurator's tick at this container's last line
    source: str | None = None  # the file (or topic) read, named where a failure is counted

    def __init__(
        self,
        identity: PodIdentity,
        fmt: str,
        stats: CurationStats,
        *,
        attempt_of: Callable[[str, str | None], int] | None = None,
        job: str | None = None,
        limits: CurationLimits | None = None,
        parser_classes: tuple[type, ...] | None = None,
        block_scan: bool = True,
    ):
        self.identity = identity
        self.fmt = fmt
        self.decode = envelopes.DECODERS[fmt]
        self.stats = stats
        self.limits = limits or CurationLimits()
        self.stamper = Stamper(identity, job or job_of(identity), fmt, attempt_of)
        parser_classes = parser_classes if parser_classes is not None else LINE_PARSERS
        self.parser_classes = parser_classes
        self.wanted = combined_prefilter(parser_classes)
        self.scanner = scanner_for(parser_classes) if (block_scan and fmt == "cri") else None
        self.subs: dict[object, SubStream] = {}
        # keys of sub-streams with an open record; a dict, not a set: records closed by idle
        # time or at the end come out in the order they opened, whatever the hash seed
        self.open_keys: dict = {}
        self.partial: dict[str, list] = {}  # stream -> [first_time, size, chunks...]
        self.partial_at: dict[str, object] = {}  # stream -> position of its first chunk
        self.last_time: dict[str, str | None] = {}  # per stream: time and seq of the last complete line
        self.last_seq: dict[str, int] = {}
        self.text_seq = 0
        # The caller's position in its source (a Kafka offset), set before each line it
        # feeds; open records remember where they started, so that a consumer never
        # commits past the first line of a record that is still open.
        self.position = None
        self.deadline: bytes | None = None  # see _set_deadline
        self._deadline_due: float | None = None  # the seconds the deadline was made from
        self._open_cache = None  # see _open_streams
        self.trainer_logs = TrainerLogFolder()

    # -- blocks of raw bytes -------------------------------------------------
    def feed_block(self, block: bytes) -> list[Record]:
        """A block of whole lines as read from the file."""
        if self.scanner is None:
            lines, invalid = decode_block(block)
            self.stats.invalid_utf8_lines += invalid
            return self.feed_lines(lines)
        return self._scan_cri_block(block)

    def _scan_cri_block(self, block: bytes) -> list[Record]:
        """The fast path: only the lines the scanner hits, and the lines that may continue an
        open record (same stream, same rank prefix), are decoded and parsed; the others are
        counted."""
        stats = self.stats
        stats.lines += block.count(b"\n") + 1
        if not block.isascii():
            _lines, invalid = decode_block(block)
            stats.invalid_utf8_lines += invalid
        out: list[Record] = []
        hints = self.scanner.candidates(block)
        starts = sorted(hints)
        n_starts = len(starts)
        size = len(block)
        pos = 0
        i = 0
        # streams whose last_time/last_seq miss skipped lines -> where the first such line starts
        stale: dict[bytes, int] = {}
        # (plain streams, prefixed streams) while something is open, from the previous block too
        open_now = self._open_streams() if (self.open_keys or self.partial) else None
        while pos <= size:
            while i < n_starts and starts[i] < pos:
                i += 1
            end = -1
            if open_now is None:
                if i == n_starts:
                    break
                if starts[i] != pos:
                    stale = _skipped_from(stale, pos)
                    pos = starts[i]
            else:
                end = block.find(b"\n", pos)
                if self.deadline is not None and block[pos : pos + DEADLINE_CHARS] > self.deadline:
                    self._expire(block[pos : block.find(b" ", pos)].decode("utf-8", "replace"), out)
                    if not (self.open_keys or self.partial):
                        open_now = None
                        continue
                    open_now = self._open_streams()
                if (i == n_starts or starts[i] != pos) and not _may_continue(block, pos, end, open_now):
                    stale = _skipped_from(stale, pos)
                    pos = size + 1 if end < 0 else end + 1
                    continue
            if end < 0:
                end = block.find(b"\n", pos)
                if end < 0:
                    end = size
            if stale:
                time, stream = _time_and_stream_of(block, pos, end)
                if stream in stale:
                    self._sync_stream(block, pos, stream, stale.pop(stream), time)
            self._cri_line(block[pos:end].decode("utf-8", "replace"), out, hints.get(pos, 0))
            pos = end + 1
            open_now = self._open_streams() if (self.open_keys or self.partial) else None
        if pos <= size:
            stale = _skipped_from(stale, pos)
        for stream, skipped_from in stale.items():
            self._sync_stream(block, size + 1, stream, skipped_from)
        self.note_latest()
        return out

    def note_latest(self) -> None:
        """Note how far the job's log goes from the latest line of each stream (lines counted
        by `skip_unwanted` included)."""
        for time in self.last_time.values():
            self._note_end(time)

    def skip_unwanted(self, stream: str, stamp: str | None, text: str) -> bool:
        """A complete line that no parser wants: count it (its stream's seq) without a pass
        through the parsers, to the same end as `feed_envelope`. False, and nothing done, when
        the line may continue an open record or partial of its sub-stream (the plain stream's,
        or with a rank prefix a prefixed one's, as the CRI block scan judges it): then it must
        be fed."""
        opened = self.open_keys
        if opened or self.partial:
            if stream in opened or stream in self.partial or (
                    text[:1] == "[" and any(type(k) is tuple and k[0] == stream for k in opened)):
                return False
        if self.last_time.get(stream, _NO_TIME) == stamp:
            self.last_seq[stream] += 1
        else:
            self.last_time[stream] = stamp
            self.last_seq[stream] = 0
        return True

    def _note_end(self, time: str | None) -> None:
        """Remember how far the job's log goes (a stall is judged against it)."""
        seconds = times.seconds(time) if time else None
        if seconds is not None:
            job_end = self.stats.job_end
            job = self.stamper.job
            if seconds > job_end.get(job, float("-inf")):
                job_end[job] = seconds

    def _open_streams(self) -> tuple[frozenset, frozenset]:
        """(streams with an open record or partial, streams with an open rank-prefixed record)."""
        partial = tuple(self.partial)
        if self._open_cache is None or self._open_cache[0] != partial:
            plain = {k.encode() for k in self.open_keys if isinstance(k, str)}
            plain.update(stream.encode() for stream in partial)
            prefixed = {k[0].encode() for k in self.open_keys if not isinstance(k, str)}
            self._open_cache = (partial, (frozenset(plain), frozenset(prefixed)))
        return self._open_cache[1]

    def _sync_stream(self, block: bytes, pos: int, stream: bytes, skipped_from: int, time: bytes | None = None) -> None:
        """Set last_time/last_seq of `stream` as they stand just before offset `pos`, looking
        back over the lines the fast path skipped since offset `skipped_from` (the state counts
        every line before it). With the `time` of the line at `pos`: a previous line of another
        time is all that line's seq needs to know (0)."""
        p = pos - 1  # the newline before `pos`, or the end of the block
        first_ts = None
        run = 0
        done = reached = False
        steps = 0
        marker = b" " + stream + b" F"  # between the time and the text of a complete line
        find, rfind, startswith = block.find, block.rfind, block.startswith
        while steps < SEQ_LOOKBACK_LINES:
            if p < skipped_from:
                reached = True  # back where the state stands
                break
            start = rfind(b"\n", 0, p) + 1
            space = find(b" ", start, p)
            end, p = p, start - 1
            steps += 1
            if space < 0 or not startswith(marker, space, end):  # not a complete line of this stream
                continue
            ts = block[start:space]
            if first_ts is None:
                first_ts = ts
                if time is not None and ts != time:
                    done = True  # the line at `pos` starts a run of its own: seq 0
                    break
            elif ts == first_ts:
                run += 1
            else:
                done = True
                break
        if first_ts is None:
            return  # no line of this stream before `pos` in this block: the state stands
        name, ts = stream.decode(), first_ts.decode("utf-8", "replace")
        if not done and reached and self.last_time.get(name) == ts:
            run += self.last_seq[name] + 1  # the run goes on from the lines already counted
        self.last_time[name] = ts
        self.last_seq[name] = run

    # -- idle records ----------------------------------------------------------
    def _expire(self, now: str, out: list[Record]) -> None:
        """Close the open records whose streams have been quiet for longer than their
        parser's idle time, judged by the time of a line seen in any stream."""
        for key in list(self.open_keys):
            sub = self.subs[key]
            try:
                records = sub.expire(now)
            except RuleFailed as failed:
                records = self._rule_failed(failed, key, now)
            if records:
                self._emit(records, key if isinstance(key, str) else key[0], out)
            if not sub.open:
                self.open_keys.pop(key, None)
                self._open_cache = None
        self._set_deadline()

    def _lower_deadline(self, due: float | None) -> None:
        """Keep the deadline at or before `due` (it is a lower bound: a deadline that passes
        with nothing idle costs one `_expire`, which sets it right)."""
        if due is None or (self.deadline is not None and due >= self._deadline_due):  # type: ignore[operator]
            return
        when = _deadline_text(due)
        if self.deadline is None or when < self.deadline:
            self.deadline = when
            self._deadline_due = due

    def _set_deadline(self) -> None:
        """The time (as `YYYY-MM-DDTHH:MM:SS.ff`) after which some open record may be idle."""
        earliest = None
        for key in self.open_keys:
            due = self.subs[key].due()
            if due is not None:
                earliest = due if earliest is None else min(earliest, due)
        self._deadline_due = earliest
        self.deadline = None if earliest is None else _deadline_text(earliest)

    # -- lines as text (the reference path) ----------------------------------
    def feed_lines(self, raws: Iterable[str]) -> list[Record]:
        out: list[Record] = []
        if self.fmt == "cri":
            cri_line = self._cri_line
            for raw in raws:
                cri_line(raw, out)
            self.stats.lines += len(raws) if isinstance(raws, list) else 0
            self.note_latest()
            return out
        decode = self.decode
        stats = self.stats
        text_mode = self.fmt == "text"
        last_time = None
        for raw in raws:
            stats.lines += 1
            if text_mode:
                if raw.endswith("\r"):
                    raw = raw[:-1]
                self.text_seq += 1
                self._logical(None, "stdout", raw, out, seq=self.text_seq)
                continue
            env = decode(raw)
            if env is None:
                if raw.strip():
                    stats.unreadable_lines += 1
                continue
            last_time = env.time or last_time
            self.feed_envelope(env, out)
        self._note_end(last_time)
        return out

    def _cri_line(self, raw: str, out: list[Record], hints: int = -1) -> None:
        """One CRI line: complete lines of streams with nothing pending cost one split,
        two dict look-ups and one regex search."""
        parts = raw.split(" ", 3)
        if self.deadline is not None and self.open_keys and raw[:DEADLINE_CHARS].encode() > self.deadline:
            self._expire(parts[0], out)
        if len(parts) != 4 or parts[2] != "F" or parts[1] not in _STREAMS or (self.partial and parts[1] in self.partial):
            env = envelopes.decode_cri(raw)
            if env is None:
                if raw.strip():
                    self.stats.unreadable_lines += 1
                return
            self.feed_envelope(env, out, hints)
            return
        self._logical(parts[0], parts[1], parts[3], out, hints=hints)

    def feed_envelope(self, env: envelopes.Envelope, out: list[Record], hints: int = -1) -> None:
        stream = env.stream
        pending = self.partial.get(stream)
        if env.partial:
            if pending is None:
                self.partial[stream] = [env.time, len(env.text), env.text]
                self.partial_at[stream] = self.position
            elif pending[1] < self.limits.max_partial_bytes:
                pending.append(env.text)
                pending[1] += len(env.text)
            return
        time, text = env.time, env.text
        if pending is not None:
            del self.partial[stream]
            self.partial_at.pop(stream, None)
            time = pending[0]
            text = "".join(pending[2:]) + text
            if len(text) > self.limits.max_partial_bytes:
                text = text[: self.limits.max_partial_bytes]
                self.stats.partial_lines_cut += 1
        # The hints of a joined line's last chunk say nothing of its earlier chunks.
        self._logical(time, stream, text, out, seq_time=env.time, hints=-1 if pending is not None else hints)

    def _logical(
        self,
        time: str | None,
        stream: str,
        text: str,
        out: list[Record],
        seq: int | None = None,
        seq_time=None,
        hints: int = -1,
    ) -> None:
        """A complete logical line: seq, rank prefixes, then the parsers that want it."""
        if seq is None:
            stamp = time if seq_time is None else seq_time
            if stream in self.last_time and self.last_time[stream] == stamp:
                seq = self.last_seq[stream] + 1
            else:
                seq = 0
                self.last_time[stream] = stamp
            self.last_seq[stream] = seq
        rank = local_rank = None
        if text[:1] == "[":
            text, rank, local_rank = strip_rank_prefixes(text)
        key = (stream, rank, local_rank) if (rank is not None or local_rank is not None) else stream
        sub = self.subs.get(key)
        if sub is None or not sub.open_bits:
            if not hints or (hints == -1 and not self.wanted(text)):
                return
            if sub is None:
                sub = self.subs[key] = SubStream(self.parser_classes)
        was_open = sub.open_bits != 0
        sub.last_time = time
        try:
            records = sub.feed(Line(time, seq, text, rank, local_rank), hints)
        except RuleFailed as failed:
            records = self._rule_failed(failed, key, time, seq)
        if sub.open_bits:
            if not was_open or records:  # a record (re)started on this line
                sub.opened_at = self.position
            if not was_open:
                self.open_keys[key] = None
                self._open_cache = None
                if len(self.open_keys) > self.limits.max_open_records:
                    self._flush_quietest(key, out)  # issue 10: bounded memory
            self._lower_deadline(sub.due())
        elif was_open:
            self.open_keys.pop(key, None)
            self._open_cache = None
            # The deadline may now be early: that only costs one _expire that finds nothing.
        if records:
            self._emit(records, stream, out)

    def _flush_quietest(self, keep: object, out: list[Record]) -> None:
        """Close the open record whose stream has been quiet the longest (not `keep`'s)."""
        victims = [k for k in self.open_keys if k != keep]
        if not victims:
            return
        victim = min(victims, key=lambda k: self.subs[k].last_time or "")
        try:
            records = self.subs[victim].close()
        except RuleFailed as failed:
            records = self._rule_failed(failed, victim, "close")
        self.open_keys.pop(victim, None)
        self._open_cache = None
        self.stats.open_records_flushed += 1
        if records:
            self._emit(records, victim if isinstance(victim, str) else victim[0], out)

    def _emit(self, records: list[Record], stream: str | None, out: list[Record], fold: bool = True) -> None:
        if stream is not None:
            for record in records:
                record.stream = stream
        if fold:
            # The Trainer's step dicts get their step numbers from its bar (another stream),
            # so they may be held here until the bar tells; step ids depend on them.
            try:
                records = self.trainer_logs.add(records)
            except Exception as exc:  # the records go on unfolded, without their bar's step numbers
                self._record_failed(records[0] if records else None, exc, parser=type(self.trainer_logs).__name__)
        stamp = self.stamper.stamp
        for record in records:
            # One record is one unit of work: one that cannot be redacted or stamped is dropped, counted.
            try:
                # The redaction step: every record leaves curation through it, the error of a
                # trace too (built from the trace's redacted text, but no record skips the step).
                redact_record(record)
                stamp(record, None)
                error = error_of_trace(record) if isinstance(record, TraceRecord) else None
                if error is not None:
                    redact_record(error)
            except Exception as exc:
                self._record_failed(record, exc)
                continue
            out.append(record)
            if error is not None:
                out.append(error)

    # -- failures of one parser or one record (pipeline/isolation.py) ---------------------------
    def _rule_failed(self, failed: RuleFailed, key, time: str | None, seq: int | None = None) -> list[Record]:
        """Count the parsers that raised on a line (or on expiry or close: `time` says which);
        the records the others gave go on."""
        stream = key if isinstance(key, str) else key[0]
        if self.position is not None:
            position = self.position
        elif seq is None:
            position = f"{time} ({stream})"
        else:
            position = f"line at {time} ({stream} #{seq})"
        ledger = failures_of(self.stats)
        for parser, exc in failed.failures:
            ledger.add("curate", exc, file=self.source, position=position, parser=type(parser).__name__,
                       job=self.stamper.job)
        return failed.records

    def _record_failed(self, record: Record | None, exc: Exception, parser: str | None = None) -> None:
        position = self.position
        if position is None and record is not None:
            position = f"line at {record.time} ({record.stream} #{record.seq})"
        failures_of(self.stats).add("curate", exc, file=self.source, position=position, parser=parser,
                                    record=getattr(record, "kind", None), job=self.stamper.job)

    def snapshot(self, key: tuple = ()) -> ContainerState:
        """What this container's curation needs to go on, as plain data (`key`: its key in a
        Fluent Bit stream). Limits, the parser table and the attempt lookup are the owner's."""
        ident = self.identity
        index = {k: i for i, k in enumerate(self.subs)}
        return ContainerState(
            key=key, fmt=self.fmt, job=self.stamper.job, source=self.source,
            identity=IdentityState(namespace=ident.namespace, pod=ident.pod, pod_uid=ident.pod_uid, container=ident.container,
                                   restart=ident.restart, node=ident.node, labels=ident.labels, annotations=ident.annotations),
            subs=[sub.snapshot(k) for k, sub in self.subs.items()], open=[index[k] for k in self.open_keys],
            partial=[PartialState(stream=stream, time=p[0], size=p[1], chunks=p[2:], at=self.partial_at.get(stream))
                     for stream, p in self.partial.items()],
            last_time=dict(self.last_time), last_seq=dict(self.last_seq), text_seq=self.text_seq,
            deadline_due=self._deadline_due, trainer_logs=self.trainer_logs.snapshot(), last_used=self.last_used,
        )

    @classmethod
    def from_snapshot(cls, state: ContainerState, stats: CurationStats, **kwargs) -> "ContainerCurator":
        """The curator `state` describes, counting into `stats`; `kwargs` as for the constructor
        (attempt_of, limits, parser_classes, block_scan)."""
        i = state.identity
        identity = PodIdentity(namespace=i.namespace, pod=i.pod, pod_uid=i.pod_uid, container=i.container,
                               restart=i.restart, node=i.node, labels=i.labels, annotations=i.annotations)
        c = cls(identity, state.fmt, stats, job=state.job, **kwargs)
        c.source = state.source
        for s in state.subs:
            key = (s.stream, s.rank, s.local_rank) if (s.rank is not None or s.local_rank is not None) else s.stream
            c.subs[key] = SubStream.from_snapshot(s, c.parser_classes)
        keys = list(c.subs)
        c.open_keys = {keys[n]: None for n in state.open}
        for p in state.partial:
            c.partial[p.stream] = [p.time, p.size, *p.chunks]
            c.partial_at[p.stream] = p.at
        c.last_time, c.last_seq, c.text_seq = dict(state.last_time), dict(state.last_seq), state.text_seq
        c._deadline_due = state.deadline_due
        c.deadline = None if state.deadline_due is None else _deadline_text(state.deadline_due)
        c.trainer_logs.restore(state.trainer_logs)
        c.last_used = state.last_used
        return c

    def open_positions(self) -> list:
        """Where the records still open started (positions as set in `position`)."""
        found = [self.subs[key].opened_at for key in self.open_keys]
        found.extend(self.partial_at.values())
        return [p for p in found if p is not None]

    def close(self) -> list[Record]:
        """End of the container's log: dangling partials become lines, open records are flushed."""
        out: list[Record] = []
        for stream, pending in list(self.partial.items()):
            self.stats.dangling_partials += 1
            del self.partial[stream]
            self.partial_at.pop(stream, None)
            self._logical(pending[0], stream, "".join(pending[2:]), out)
        for key, sub in self.subs.items():
            stream = key if isinstance(key, str) else key[0]
            try:
                records = sub.close()
            except RuleFailed as failed:
                records = self._rule_failed(failed, key, "close")
            if records:
                self._emit(records, stream, out)
        self.open_keys.clear()
        self._open_cache = None
        try:
            held = self.trainer_logs.close()
        except Exception as exc:  # what it held is lost; the rest of the log's records are out
            self._record_failed(None, exc, parser=type(self.trainer_logs).__name__)
            held = []
        self._emit(held, None, out, fold=False)
        return out


def error_of_trace(trace: TraceRecord) -> ErrorRecord | None:
    """The pipeline error a finished trace stands for, linked to it by `trace_id`."""
    verdict = classify_trace(trace)
    if not verdict:
        return None
    category, message = verdict
    error = ErrorRecord(
        category=category,
        message=message,
        line=_exception_line(trace),
        trace_id=trace.id,
        pattern="trace",
    )
    for name in ("job", "attempt", "namespace", "pod", "container", "node", "rank", "local_rank", "time", "source", "stream", "seq"):
        setattr(error, name, getattr(trace, name))
    if error.rank is None and error.local_rank is None:
        error.local_rank = _spawned_process(trace)
    error.id = stable_id("error", trace.id)
    return error


def _spawned_process(trace: TraceRecord) -> int | None:
    """The child named by torch.multiprocessing.spawn's "-- Process N terminated with the
    following error:" (its process index, i.e. its local rank), for an error the parent printed."""
    for remote in (trace.details or {}).get("remote") or ():
        if isinstance(remote, dict) and isinstance(remote.get("process"), int):
            return remote["process"]
    return None


def _exception_line(trace: TraceRecord) -> str:
    if trace.exception_type:
        return f"{trace.exception_type}: {trace.message}" if trace.message else trace.exception_type
    return trace.text.splitlines()[0] if trace.text else ""


class FluentBitCurator:
    """Fluent Bit records carry their pod in each record: one ContainerCurator per container,
    at most `limits.max_containers` of them (the least recently fed go first)."""

    tick = 0  # lines fed; a curator's `last_used` is the tick of its last line
    evictions = 0  # eviction rounds (an owner keeping per-container state compares it)
    limits = CurationLimits()
    source: str | None = None  # the file (or topic) read: its containers' curators name it in failures

    def __init__(self, stats: CurationStats, fallback: PodIdentity, **kwargs):
        self.stats = stats
        self.fallback = fallback
        self.kwargs = kwargs
        self.limits = kwargs.get("limits") or self.limits
        self.curators: dict[tuple, ContainerCurator] = {}
        self.position = None  # see ContainerCurator.position

    def feed_block(self, block: bytes) -> list[Record]:
        lines, invalid = decode_block(block)
        self.stats.invalid_utf8_lines += invalid
        return self.feed_lines(lines)

    def feed_lines(self, raws: Iterable[str]) -> list[Record]:
        out: list[Record] = []
        fed: dict[int, ContainerCurator] = {}  # the containers of these lines (not all: thousands may be kept)
        for raw in raws:
            self.stats.lines += 1
            env = envelopes.decode_fluentbit(raw)
            if env is None:
                if raw.strip():
                    self.stats.unreadable_lines += 1
                continue
            curator = self.feed_envelope(env, out)
            fed[id(curator)] = curator
        for curator in fed.values():
            curator.note_latest()
        return out

    def feed_envelope(self, env: envelopes.Envelope, out: list[Record]) -> "ContainerCurator":
        kube = env.kubernetes
        key = _kube_key(kube)
        curator = self.curators.get(key)
        if curator is None:
            if len(self.curators) >= self.limits.max_containers:
                self.evict(out)
            identity = identity_from_kubernetes(kube) if kube else self.fallback
            curator = self.curators[key] = ContainerCurator(identity, "fluentbit", self.stats, **self.kwargs)
            curator.source = self.source
        self.tick += 1
        curator.last_used = self.tick
        curator.position = self.position
        curator.feed_envelope(env, out)
        return curator

    def evict(self, out: list[Record]) -> None:
        """Close the least recently fed eighth of the curators: what they hold open becomes
        records in `out` (counted as flushed early), then they are forgotten. A container that
        speaks again gets a new curator. In rounds, so that the sort is paid once per many new
        containers."""
        cap = self.limits.max_containers
        n = max(1, len(self.curators) - cap + 1, cap // 8)
        by_age = sorted(self.curators.items(), key=lambda kv: kv[1].last_used)[:n]
        for key, curator in by_age:
            self.stats.open_records_flushed += len(curator.open_keys)
            out.extend(curator.close())
            curator.note_latest()
            del self.curators[key]
        self.stats.containers_evicted += len(by_age)
        self.evictions += 1

    def note_fed(self, keys) -> set[str]:
        """The containers (`_kube_key`s) that got lines, some counted by `skip_unwanted` alone:
        they were used now (eviction goes by it) and their job's log reaches their latest line.
        Returns their jobs."""
        jobs = set()
        curators = self.curators
        tick = self.tick
        for key in keys:
            c = curators.get(key)
            if c is not None:
                c.last_used = tick
                c.note_latest()
                jobs.add(c.stamper.job)
        return jobs

    def job_of(self, key: tuple) -> str | None:
        c = self.curators.get(key)
        return c.stamper.job if c is not None else None

    def jobs(self) -> set[str]:
        """The jobs of the containers kept."""
        return {c.stamper.job for c in self.curators.values()}

    def close_container(self, key: tuple) -> list[Record]:
        """Close one container's curator: what it holds open becomes records (it stays, for
        lines that come later)."""
        c = self.curators.get(key)
        return c.close() if c is not None else []

    def forget(self, key: tuple) -> None:
        """Drop a container's curator (closed by its owner first): a later line starts a new one."""
        self.curators.pop(key, None)

    def open_positions(self) -> list:
        """Where the records still open in any container started."""
        return [p for curator in self.curators.values() for p in curator.open_positions()]

    def snapshot(self) -> CuratorState:
        """Every container's curation state, as plain data."""
        return CuratorState(containers=[c.snapshot(key) for key, c in self.curators.items()], tick=self.tick,
                            evictions=self.evictions)

    @classmethod
    def from_snapshot(cls, state: CuratorState, stats: CurationStats, fallback: PodIdentity, **kwargs) -> "FluentBitCurator":
        """The curator `state` describes; arguments as for the constructor."""
        curator = cls(stats, fallback, **kwargs)
        curator.tick, curator.evictions = state.tick, state.evictions
        for c in state.containers:
            curator.curators[tuple(c.key)] = ContainerCurator.from_snapshot(c, stats, **kwargs)
        return curator

    def close(self) -> list[Record]:
        out: list[Record] = []
        for curator in self.curators.values():
            out.extend(curator.close())
        return out


def _kube_key(kube: dict | None) -> tuple:
    if not kube:
        return ()
    return (kube.get("namespace_name"), kube.get("pod_id") or kube.get("pod_name"), kube.get("container_name"))


def identity_from_kubernetes(kube: dict) -> PodIdentity:
    """A pod identity from filter_kubernetes' block (FORMATS.md 1.4)."""

    def pairs(value: object) -> tuple[tuple[str, str], ...]:
        if not isinstance(value, dict):
            return ()
        return tuple(sorted((str(k), str(v)) for k, v in value.items()))

    def text(name: str) -> str | None:
        value = kube.get(name)
        return value if isinstance(value, str) and value else None

    return PodIdentity(
        namespace=text("namespace_name"),
        pod=text("pod_name") or "unknown",
        pod_uid=text("pod_id"),
        container=text("container_name"),
        node=text("host"),
        labels=pairs(kube.get("labels")),
        annotations=pairs(kube.get("annotations")),
    )
