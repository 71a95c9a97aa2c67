"""Curation: raw lines of one container in, stamped records out.

The flow for one container log: envelope -> logical lines (CRI partials joined,
rank prefixes removed, one sub-stream per stream and rank) -> the line parsers
of `LINE_PARSERS`, in order -> records stamped with the pod's identity and a
deterministic id. Lines that no parser wants and that fall inside no open
multi-line record cost one split and one regex search.
"""

from __future__ import annotations

from typing import Callable, Iterable

from gangscope.parsers import envelopes, times
from gangscope.parsers.lines import COMPOSE_BAR, COMPOSE_REACH, INNER_REACH, PREFIX_FIRST, TORCHX_MARK, TORCHX_REACH, Line, may_be_prefixed, strip_rank_prefixes
from gangscope.parsers.wraps import join_wrapped
from gangscope.parsers.json_logs import ECS_MARK, MARK as TRACE_MARK, expand as expand_json_log
from gangscope.parsers.redact import redact_record
from gangscope.parsers.records import Record, TraceRecord
from gangscope.parsers.rendezvous import RankMap
from gangscope.parsers.steps import TrainerLogFolder
from gangscope.pipeline.curate.identity import Stamper, job_of
from gangscope.pipeline.curate.snapshot import ContainerState, IdentityState, PartialState, RankMapState
from gangscope.pipeline.isolation import failures_of
from gangscope.pipeline.sources.files import PodIdentity, decode_block, invalid_cri_lines, whole_characters
from gangscope.pipeline.curate.stats import CurationLimits, CurationStats
from gangscope.pipeline.curate.substream import LINE_PARSERS, RuleFailed, SubStream, NO_TIME, STREAMS
from gangscope.pipeline.curate.block_lines import (DEADLINE_CHARS, deadline_text, newlines, prefix_may_continue, skipped_from,
                                                   time_and_stream_of, combined_prefilter, scanner_for, text_hints_for)
from gangscope.pipeline.curate.trace_errors import error_of_trace
from gangscope.pipeline.curate.scan import exact_block_databases
from gangscope.pipeline.curate.step_lines import STEP_BIT, feed_step_line
from gangscope.pipeline.curate.repeats import REPEATED_ERRORS, RepeatedErrors


# How far back a line looks for earlier lines of its stream with the same time.
SEQ_LOOKBACK_LINES = 10_000
# Line(...) without the Python frame of a NamedTuple's __new__ (the same tuple), once per line fed
_new_line = tuple.__new__
# A CRI stream's name in bytes -> as text.
STREAM_NAMES = {b"stdout": "stdout", b"stderr": "stderr"}


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
        self.stamper.on_skip = self._value_skipped
        parser_classes = parser_classes if parser_classes is not None else LINE_PARSERS
        self.parser_classes = parser_classes
        self.wanted = combined_prefilter(parser_classes)
        self.scanner = scanner_for(parser_classes) if (block_scan and fmt == "cri") else None
        # the parsers whose bits the exact scan of an ASCII block (or batch of texts) answers
        # (see _scan_cri_block and partition.TextScanner.hints)
        self.exact_mask = exact_block_databases(tuple(cls.PREFILTER for cls in parser_classes))[2] if block_scan else 0
        # the hints of a line for the step parser alone, where step_lines.feed_step_line may take it (-1: never)
        self.step_only = STEP_BIT if (parser_classes is LINE_PARSERS and self.exact_mask & STEP_BIT) else -1
        # lines that come without the block scan's hints (other envelopes, Kafka, joined CRI
        # partials) get them from one scan of their text (compiled on first use); the reference
        # path tests them in Python
        self.block_scan = block_scan
        self.subs: dict[object, SubStream] = {}
        # keys of sub-streams with an open record; a dict, not a set: records closed by idle
        # time or at the end come out in the order they opened, whatever the hash seed
        self.open_keys: dict = {}
        self.partial: dict[str, list] = {}  # stream -> [first_time, size, chunks...]
        self.partial_at: dict[str, object] = {}  # stream -> position of its first chunk
        # stream -> the first bytes of a character its last P chunk ended in (the runtime cuts a long
        # line into 16 KiB chunks by bytes): the next chunk of the stream begins with the rest
        self.cut_tail: dict[str, bytes] = {}
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
        # The container's lines read so far, every stream, a line written in pieces once (its
        # partial chunks do not count, its last does: a runtime's P, P, F lines and Fluent Bit's one
        # joined record are one line); the line being read counts. The Trainer folder bounds the
        # wait of the bar records it holds by them. Within a block of the scan the line being read
        # is counted from the block's start (`_in_block`, `_block_pos`: see `_line_no`).
        self.lines_read = 0
        # [block, lines before it, offset counted to, newlines before that, partial chunks read in it, its lines]
        self._in_block: list | None = None
        self._block_pos = 0

    # -- blocks of raw bytes -------------------------------------------------
    def feed_block(self, block: bytes) -> list[Record]:
        """A block of whole lines as read from the file."""
        if self.scanner is None:
            if self.fmt == "cri" and (self.cut_tail or not block.isascii()):
                # (a character cut between a P chunk and the next chunk of its stream: see _cri_text)
                self.stats.invalid_utf8_lines += invalid_cri_lines(block, {s.encode(): t for s, t in self.cut_tail.items()})
                return self.feed_lines([self._cri_text(raw) for raw in block.split(b"\n")])
            lines, invalid = decode_block(block)
            self.stats.invalid_utf8_lines += invalid
            return self.feed_lines(lines)
        return self._scan_cri_block(block)

    def _scan_cri_block(self, block: bytes) -> list[Record]:
        """The fast path: only the lines the scanner hits, and the lines that may continue an
        open record (same stream, same rank prefix), are decoded and parsed; the others are
        counted."""
        stats = self.stats
        n_lines = newlines(block) + 1
        stats.lines += n_lines
        b = self._in_block = [block, self.lines_read, 0, 0, 0, n_lines]
        try:
            return self._scan_cri_lines(block, stats)
        finally:
            self.lines_read = b[1] + n_lines - b[4]
            self._in_block = None

    def _scan_cri_lines(self, block: bytes, stats: CurationStats) -> list[Record]:
        exact_from = None
        ascii_block = block.isascii()
        if not ascii_block or self.cut_tail:
            stats.invalid_utf8_lines += invalid_cri_lines(block, {s.encode(): t for s, t in self.cut_tail.items()})
        if not ascii_block:
            hints = self.scanner.candidates(block)
        elif self.exact_mask:
            # the parsers' bits of exact_mask are re's answer for a line's text where its matches
            # lie in it (exact_from: from where they do), so SubStream.feed needs no scan of its own
            hints, exact_from = self.scanner.exact_candidates(block)
        else:
            hints = self.scanner.candidates(block)
        out: list[Record] = []
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
            if open_now is None:
                if i == n_starts:
                    break
                if starts[i] != pos:
                    if len(stale) != 2:  # (block_lines.skipped_from)
                        stale = {b"stdout": stale.get(b"stdout", pos), b"stderr": stale.get(b"stderr", pos)}
                    pos = starts[i]
            end = block.find(b"\n", pos)
            if end < 0:
                end = size
            self._block_pos = pos
            # The CRI header read in bytes, as _cri_line splits it: the time, the stream, the tag.
            first = block.find(b" ", pos, end)
            time = None
            second = block.find(b" ", first + 1, end) if first >= 0 else -1
            if open_now is not None:
                deadline = self.deadline
                if deadline is not None:  # (no deadline, nothing to expire: the time is not cut)
                    head = first if first >= 0 else end
                    if ascii_block:  # _expire_due in bytes: an ASCII time's first characters are its first bytes
                        expired = bool(self.open_keys) and block[pos : min(head, pos + DEADLINE_CHARS)] > deadline
                        if expired:
                            time = block[pos:head].decode("ascii")
                            self._expire(time, out)
                    else:
                        time = block[pos:head].decode("utf-8", "replace")
                        expired = self._expire_due(time, out)
                    if expired:
                        if not (self.open_keys or self.partial):
                            open_now = None
                            continue
                        open_now = self._open_streams()
                # block_lines.may_continue, on the offsets found: a line no open record of its stream
                # can take costs three searches and a slice (no copy of its text, no split)
                if i == n_starts or starts[i] != pos:
                    third = block.find(b" ", second + 1, end) if second >= 0 else -1
                    if third >= 0:  # (fewer than 3 spaces: not plain CRI, the line reader judges it)
                        stream = block[first + 1 : second]
                        if stream not in open_now[0] and (stream not in open_now[1] or not prefix_may_continue(
                                block[third + 1 : end], stream, open_now[2])):
                            if len(stale) != 2:
                                stale = {b"stdout": stale.get(b"stdout", pos), b"stderr": stale.get(b"stderr", pos)}
                            pos = end + 1
                            continue
            stream = block[first + 1 : second] if second >= 0 else None
            # a complete line of a stream with no partial pending goes straight to _logical
            plain = stream in STREAM_NAMES and block[second + 1 : second + 3] == b"F "
            if stale:
                if not plain:
                    time_bytes, stream = time_and_stream_of(block, pos, end)
                    if stream in stale:
                        self._sync_stream(block, pos, stream, stale.pop(stream), time_bytes)
                elif stream in stale:
                    self._seq_before(block, pos, stream, stale.pop(stream), block[pos:first])
            if not plain or (self.partial and STREAM_NAMES[stream] in self.partial):
                self._cri_envelope(self._cri_text(block[pos:end]), out, hints.get(pos, 0))
            else:
                if time is None:
                    time = block[pos:first].decode("utf-8", "replace")
                if exact_from is None:
                    self._logical(time, STREAM_NAMES[stream], block[second + 3 : end].decode("utf-8", "replace"), out,
                                  hints=hints.get(pos, 0))
                else:  # ASCII: offsets in bytes are offsets in characters
                    at = exact_from.get(pos, end - pos)
                    at = at - (second + 3 - pos) if at >= 0 else -1
                    hinted = hints.get(pos, 0)
                    text = block[second + 3 : end].decode("ascii")
                    # a step line that only the step parser reads goes to it straight (step_lines.py),
                    # where no sub-stream of its stream holds an open record
                    if not (hinted == self.step_only and (open_now is None or stream not in open_now[0] and stream not in open_now[1])
                            and feed_step_line(self, time, STREAM_NAMES[stream], text, at, out)):
                        self._logical(time, STREAM_NAMES[stream], text, out, hints=hinted, exact_from=at)
            pos = end + 1
            if self.open_keys or self.partial:
                cached = self._open_cache  # _open_streams' answer stands while no partial is pending
                open_now = cached[1] if (cached is not None and not cached[0] and not self.partial) else self._open_streams()
            else:
                open_now = None
        if pos <= size:
            stale = skipped_from(stale, pos)
        for stream, first_stale in stale.items():
            self._sync_stream(block, size + 1, stream, first_stale)
        self.note_latest()
        b = self._in_block
        self.lines_read = b[1] + b[5] - b[4]
        self._in_block = None
        self._bar_wait_ends(out)
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
                    may_be_prefixed(text) and any(type(k) is tuple and k[0] == stream for k in opened)):
                return False
        if self.last_time.get(stream, NO_TIME) == stamp:
            self.last_seq[stream] += 1
        else:
            self.last_time[stream] = stamp
            self.last_seq[stream] = 0
        self.lines_read += 1
        return True

    def _note_end(self, time: str | None) -> None:
        """Remember how far the job's log goes (a stall is judged against it)."""
        seconds = times.seconds(time) if time else None
        if seconds is not None:
            job_end = self.stats.job_end
            job = self.stamper.job
            if seconds > job_end.get(job, float("-inf")):
                job_end[job] = seconds

    def _open_streams(self) -> tuple[frozenset, frozenset, frozenset]:
        """(streams with an open record or partial, streams with an open rank-prefixed record,
        (stream, rank) of the open records of sub-streams keyed by a rank alone)."""
        partial = tuple(self.partial)
        if self._open_cache is None or self._open_cache[0] != partial:
            plain = {k.encode() for k in self.open_keys if isinstance(k, str)}
            plain.update(stream.encode() for stream in partial)
            prefixed = {k[0].encode() for k in self.open_keys if not isinstance(k, str)}
            ranked = {(k[0].encode(), k[1]) for k in self.open_keys if not isinstance(k, str) and k[2] is None}
            self._open_cache = (partial, (frozenset(plain), frozenset(prefixed), frozenset(ranked)))
        return self._open_cache[1]

    def _seq_before(self, block: bytes, pos: int, stream: bytes, skipped_from: int, time: bytes) -> None:
        """`_sync_stream` for the complete line at `pos` of time `time`, in one search where it can: when
        no line from `skipped_from` on starts with that time, and the state's last time of `stream` is
        another, the line's seq is 0 whatever the skipped lines were (it starts a run of its own), and
        `_logical` sets the state from it: nothing to look back at."""
        if time.isascii():  # (bytes that are not could decode to the text of other bytes)
            needle = b"\n" + time + b" "
            if block.find(needle, skipped_from - 1 if skipped_from else 0, pos) < 0 and not (
                    skipped_from == 0 and block.startswith(needle[1:])):
                if self.last_time.get(STREAM_NAMES[stream], NO_TIME) != time.decode("ascii"):
                    return
        self._sync_stream(block, pos, stream, skipped_from, time)

    def _sync_stream(self, block: bytes, pos: int, stream: bytes, skipped_from: int, time: bytes | None = None) -> None:
        """Set last_time/last_seq of `stream` as they stand just before offset `pos`, looking
        back over the lines the fast path skipped since offset `skipped_from` (the state counts
        every line before it). With the `time` of the line at `pos`: a previous line of another
        time is all that line's seq needs to know (0)."""
        p = pos - 1  # the newline before `pos`, or the end of the block
        first_ts = None
        run = 0
        done = reached = False
        steps = 0  # the lines looked at, as one at a time from `pos` back (SEQ_LOOKBACK_LINES bounds them)
        marker = b" " + stream + b" F"  # between the time and the text of a complete line
        find, rfind = block.find, block.rfind
        # times compared as the text _logical gets (bytes that are not UTF-8 replaced: two such
        # times can be one text, as on the line-by-line path)
        want = None if time is None else time.decode("utf-8", "replace")
        # The lines of other streams (and partial chunks) say nothing: from one line of this stream
        # back to the one before it in one search for `marker`, not line by line (a block of one
        # stream's lines made this walk every line of the other: ~1.7k instructions a line). A line found
        # counts where `marker` follows its first space; `steps` counts the lines passed over.
        lo = rfind(b"\n", 0, skipped_from) + 1 if skipped_from > 0 else 0  # the first line looked at starts here
        while steps < SEQ_LOOKBACK_LINES:
            if p < skipped_from:
                reached = True  # back where the state stands
                break
            at = rfind(marker, lo, p)
            if at < 0:  # no line of this stream left: the lines from `lo` to `p` are passed over
                # (at most p - lo + 1 of them: counted only where that many could reach the bound)
                if steps + p - lo + 1 < SEQ_LOOKBACK_LINES or steps + newlines(block, lo, p) + 1 < SEQ_LOOKBACK_LINES:
                    reached = True
                break
            start = rfind(b"\n", 0, at) + 1
            end = find(b"\n", at, p)
            if end < 0:
                end = p
            passed = newlines(block, end, p) + 1  # the lines from the one ending at `p` to this one
            if steps + passed > SEQ_LOOKBACK_LINES:
                break  # the walk ends before this line
            steps += passed
            p = start - 1
            if at != (space := find(b" ", start, end)) and (space < 0 or not block.startswith(marker, space, end)):
                continue  # the marker is in the text of a line of another stream, or of a partial chunk
            ts = block[start:space].decode("utf-8", "replace")
            if first_ts is None:
                first_ts = ts
                if want is not None and ts != want:
                    done = True  # the line at `pos` starts a run of its own: seq 0
                    break
            elif ts == first_ts:
                run += 1
            else:
                done = True
                break
        if first_ts is None:
            return  # no line of this stream before `pos` in this block: the state stands
        name, ts = stream.decode(), first_ts
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
        when = deadline_text(due)
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
        self.deadline = None if earliest is None else deadline_text(earliest)

    # -- lines as text (the reference path) ----------------------------------
    def feed_lines(self, raws: Iterable[str]) -> list[Record]:
        out: list[Record] = []
        if self.fmt == "cri":
            cri_line = self._cri_line
            for raw in raws:
                self.lines_read += 1
                cri_line(raw, out)
            self.stats.lines += len(raws) if isinstance(raws, list) else 0
            self.note_latest()
            self._bar_wait_ends(out)
            return out
        decode = self.decode
        stats = self.stats
        text_mode = self.fmt == "text"
        if text_mode and isinstance(raws, list):
            # A plain text file may be a terminal's copy, its long lines hard-wrapped (parsers/wraps.py).
            joined = join_wrapped(raws)
            stats.lines += len(raws) - len(joined)
            raws = joined
        elif self.fmt in envelopes.KUBE_HEAD_FORMATS and isinstance(raws, list):  # [h26c] a tool's output copied from a terminal
            joined = envelopes.join_wrapped_heads(raws)
            stats.lines += len(raws) - len(joined)
            raws = joined
        last_time = None
        for raw in raws:
            stats.lines += 1
            self.lines_read += 1
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
            self._envelope(env, out)
        self._note_end(last_time)
        self._bar_wait_ends(out)
        return out

    def _cri_line(self, raw: str, out: list[Record], hints: int = -1, exact_from: int = -1) -> None:
        """One CRI line: complete lines of streams with nothing pending cost one split,
        two dict look-ups and one regex search. `exact_from` (-1: none): the offset in `raw` from
        which the block scan's exact bits (`exact_mask`) hold for a text (see BlockScanner.exact_candidates)."""
        parts = raw.split(" ", 3)
        self._expire_due(parts[0], out)
        if len(parts) != 4 or parts[2] != "F" or parts[1] not in STREAMS or (self.partial and parts[1] in self.partial):
            self._cri_envelope(raw, out, hints)
            return
        self._logical(parts[0], parts[1], parts[3], out, hints=hints,
                      exact_from=exact_from - (len(raw) - len(parts[3])) if exact_from >= 0 else -1)

    def _expire_due(self, time: str, out: list[Record]) -> bool:
        """The step every CRI line takes first while records are open: `time` (the line's text up
        to its first space) past the deadline closes the records idle by then. Whether it did."""
        # (time[:22] orders against the deadline as the line's first 22 characters do: the space
        # after it sorts below every character of a deadline)
        if self.deadline is not None and self.open_keys and time[:DEADLINE_CHARS].encode() > self.deadline:
            self._expire(time, out)
            return True
        return False

    def _cri_text(self, raw: bytes) -> str:
        """A CRI line that goes through the envelope, as text: a character the runtime cut between a
        P chunk and the next chunk of its stream is decoded whole from its bytes (invalid_cri_lines
        counts the same way)."""
        if not self.cut_tail and raw.isascii():
            return raw.decode("ascii")
        parts = raw.split(b" ", 3)
        if len(parts) != 4 or parts[1] not in STREAM_NAMES:
            return raw.decode("utf-8", "replace")
        text = whole_characters(self.cut_tail, STREAM_NAMES[parts[1]], parts[2] == b"P", parts[3])
        return (raw[: len(raw) - len(parts[3])] + text).decode("utf-8", "replace")

    def _cri_envelope(self, raw: str, out: list[Record], hints: int) -> None:
        """A CRI line that is not a complete line of a stream with nothing pending: through the envelope."""
        env = envelopes.decode_cri(raw)
        if env is None:
            if raw.strip():
                self.stats.unreadable_lines += 1
            return
        self._envelope(env, out, hints)

    def feed_envelope(self, env: envelopes.Envelope, out: list[Record], hints: int = -1, exact_from: int = -1) -> None:
        """One line of the container as its envelope (a Kafka message, a Fluent Bit record)."""
        self.lines_read += 1
        self._envelope(env, out, hints, exact_from)

    def _envelope(self, env: envelopes.Envelope, out: list[Record], hints: int = -1, exact_from: int = -1) -> None:
        stream = env.stream
        pending = self.partial.get(stream)
        if env.partial:
            if self._in_block is not None:  # a chunk is no line of its own (see lines_read)
                self._in_block[4] += 1
            else:
                self.lines_read -= 1
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
        if "\n" in text:
            # A record of several lines: Fluent Bit's multiline parsers (`multiline.parser python`, the
            # multiline filter) join a traceback into one record's `log`; each line is read as its own.
            for piece in text.split("\n"):
                self._logical(time, stream, piece[:-1] if piece.endswith("\r") else piece, out, seq_time=env.time)
            return
        # The hints of a joined line's last chunk say nothing of its earlier chunks.
        self._logical(time, stream, text, out, seq_time=env.time, hints=-1 if pending is not None else hints,
                      exact_from=-1 if pending is not None else exact_from)

    def _logical(
        self,
        time: str | None,
        stream: str,
        text: str,
        out: list[Record],
        seq: int | None = None,
        seq_time=None,
        hints: int = -1,
        exact_from: int = -1,
    ) -> None:
        """A complete logical line: seq, rank prefixes, then the parsers that want it. `exact_from`
        (-1: none): where in `text` the block scan's exact bits start to hold; when the rank
        prefixes end there or before, `hints` is re's answer for the parsers of `exact_mask`."""
        if text[:1] == "{" and (TRACE_MARK in text or ECS_MARK in text):
            lines = expand_json_log(text)  # a JSON log line with its traceback in a field (parsers/json_logs.py)
            if lines is not None:
                for n, line in enumerate(lines):
                    if seq is not None and n:  # plain text numbers its lines itself
                        self.text_seq += 1
                    self._logical(time, stream, line, out, seq=None if seq is None else seq + n, seq_time=seq_time)
                return
        if self.trainer_logs.bar_due is not None:
            self._bar_wait_ends(out)
        if seq is None:  # (next_seq, inline: once per line)
            stamp = time if seq_time is None else seq_time
            if self.last_time.get(stream, NO_TIME) == stamp:
                seq = self.last_seq[stream] + 1
            else:
                seq = 0
                self.last_time[stream] = stamp
            self.last_seq[stream] = seq
        raw = text if hints != -1 else None  # (the block scan's hints: see repeats.py)
        if raw is not None:
            # an error line whose text was seen, answered as it was then (repeats.py)
            entry = REPEATED_ERRORS.entries.get((stream, text))
            if (entry is not None and entry[0] is self.parser_classes and entry[1] == hints
                    and entry[2] == (self.exact_mask if exact_from >= entry[5] else 0)):
                sub = self.subs.get(entry[3])
                if sub is not None and not sub.open_bits:
                    sub.last_time = time
                    self._emit([RepeatedErrors.record(entry, time, seq)], stream, out)
                    return
        # A rank prefix starts with one of a few characters or is torch's "[rankN]:" after a head
        # (parsers/lines.may_be_prefixed, inlined): most lines have none and skip the two calls.
        first = text[:1]
        if (first in PREFIX_FIRST or first.isdigit() or text.find("[rank", 1, INNER_REACH) > 0 or text[24:25] == "["
            or text.find(COMPOSE_BAR, 1, COMPOSE_REACH) > 0  # [h24d] docker compose's prefix (parsers/lines.py)
            or text.find(TORCHX_MARK, 1, TORCHX_REACH) > 0):  # [h25d] torchx's role/replica prefix (parsers/lines.py)
            size = len(text)
            text, rank, local_rank = strip_rank_prefixes(text)
            key = (stream, rank, local_rank) if (rank is not None or local_rank is not None) else stream
            known = self.exact_mask if exact_from >= size - len(text) else 0  # the prefixes are a head of the text
        else:
            rank = local_rank = None
            key = stream
            known = self.exact_mask if exact_from >= 0 else 0
        if hints == -1 and self.block_scan:
            text_hints = text_hints_for(self.parser_classes)
            if text_hints is not None:
                hints = text_hints.of(text)
        sub = self.subs.get(key)
        if sub is None or not sub.open_bits:
            if not hints or (hints == -1 and not self.wanted(text)):
                return
            if sub is None:
                sub = self.subs[key] = SubStream(self.parser_classes)
        was_open = sub.open_bits != 0
        sub.last_time = time
        try:
            records = sub.feed(_new_line(Line, (time, seq, text, rank, local_rank)), hints, known)
        except RuleFailed as failed:
            records = self._rule_failed(failed, key, time, seq)
        else:
            if records and raw is not None and not was_open and not sub.open_bits:
                REPEATED_ERRORS.note(raw, text, stream, self.parser_classes, sub.fed, hints, known, key, records)
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

    def next_seq(self, stream: str, stamp: str | None) -> int:
        """A line's position among its stream's lines with the same time (0 for a new time)."""
        if stream in self.last_time and self.last_time[stream] == stamp:
            seq = self.last_seq[stream] + 1
        else:
            seq = 0
            self.last_time[stream] = stamp
        self.last_seq[stream] = seq
        return seq

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
        if RankMap in map(type, records):
            records = self._learn_ranks(records)
        if stream is not None:
            for record in records:
                record.stream = stream
        if fold:
            # The Trainer's step dicts get their step numbers from its bar (another stream),
            # so they may be held here until the bar tells; step ids depend on them.
            try:
                # A bar may still come while a line is being written in pieces, or while a sub-stream
                # holds an open record: the step parser keeps a bar state open until the next one
                # (torchrun --tee: the dicts can come through before the bar's first state is out).
                folder = self.trainer_logs
                records = folder.add(records, bar_may_come=bool(self.partial or self.open_keys), line_no=self._line_no)
                if folder.cut:
                    self.stats.bar_steps_released_at_bound += folder.cut
                    folder.cut = 0
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

    def _line_no(self) -> int:
        """The container's line being read, from 1 (every stream), the same on every path: within a
        block of the scan, its lines before `_block_pos` (counted on from where the last call did)."""
        b = self._in_block
        if b is None:
            return self.lines_read
        pos = self._block_pos
        if pos > b[2]:
            b[3] += newlines(b[0], b[2], pos)
            b[2] = pos
        return b[1] + b[3] - b[4] + 1

    def _bar_wait_ends(self, out: list[Record]) -> None:
        """The bar records the Trainer folder holds go on once the container has read `bar_wait_lines`
        lines since the first of them with no dict (see TrainerLogFolder): checked at every line fed
        and at the end of every block, so that they need no later record of the container to go."""
        due = self.trainer_logs.bar_due
        if due is not None and self._line_no() >= due:
            self._emit([], None, out)

    def _learn_ranks(self, records: list) -> list[Record]:
        """The torchrun agent's latest rank map (it replaces the one before: a restarted worker
        group may have other ranks) stamps the records after it; it is no record itself."""
        kept = []
        for record in records:
            if type(record) is RankMap:
                self.stamper.learn_ranks(record.time, record.global_of)
            else:
                kept.append(record)
        return kept

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

    def _value_skipped(self, record: Record, kind: str, detail: str) -> None:
        """A value of a record the stamp set to null (a malformed time, a number out of range): counted."""
        position = self.position
        if position is None:
            position = f"line at {record.time} ({record.stream} #{record.seq})"
        self.stats.skips.add("curate", kind, file=self.source, position=position, detail=detail,
                             record=record.kind)

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
            partial=[PartialState(stream=stream, time=p[0], size=p[1], chunks=p[2:], at=self.partial_at.get(stream),
                                  cut_tail=self.cut_tail.get(stream, b""))
                     for stream, p in self.partial.items()],
            last_time=dict(self.last_time), last_seq=dict(self.last_seq), text_seq=self.text_seq,
            deadline_due=self._deadline_due, trainer_logs=self.trainer_logs.snapshot(), last_used=self.last_used,
            lines_read=self.lines_read,
            rank_maps=[RankMapState(since=since, global_of=global_of) for since, global_of in self.stamper.rank_maps or ()],
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
            if p.cut_tail:
                c.cut_tail[p.stream] = p.cut_tail
        c.last_time, c.last_seq, c.text_seq = dict(state.last_time), dict(state.last_seq), state.text_seq
        c._deadline_due = state.deadline_due
        c.deadline = None if state.deadline_due is None else deadline_text(state.deadline_due)
        c.trainer_logs.restore(state.trainer_logs)
        c.lines_read = state.lines_read
        c.last_used = state.last_used
        if state.rank_maps:
            c.stamper.rank_maps = [(m.since, dict(m.global_of)) for m in state.rank_maps]
        return c

    def holds_open(self) -> int:
        """How many structures a later line of this container could still continue or complete: open
        multi-line records, partial lines, and the Trainer's logs waiting for their step numbers."""
        folder = self.trainer_logs
        # TrainerLogFolder keeps what it holds in these two lists (parsers/steps.py)
        held = bool(getattr(folder, "_logs", None) or getattr(folder, "_held", None))
        return len(self.open_keys) + len(self.partial) + held

    def open_positions(self) -> list:
        """Where the records still open started (positions as set in `position`)."""
        found = [self.subs[key].opened_at for key in self.open_keys]
        found.extend(self.partial_at.values())
        return [p for p in found if p is not None]

    def close(self) -> list[Record]:
        """End of the container's log: dangling partials become lines, open records are flushed."""
        out: list[Record] = []
        self.cut_tail.clear()  # (a character cut at the end of a dangling partial: its replacement is lost with it)
        for stream, pending in list(self.partial.items()):
            self.stats.dangling_partials += 1
            del self.partial[stream]
            self.partial_at.pop(stream, None)
            self._logical(pending[0], stream, "".join(pending[2:]), out)
        # In the order their open records started, not the order the sub-streams were made: a line that makes one
        # differs between a message fed alone and a batch's block scan, and the records a replay or a batch gives
        # must come out the same (an open bar step on stdout and a trace on stderr, both cut by the log's end).
        for key, sub in sorted(self.subs.items(), key=_by_opening):
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


def _by_opening(item) -> tuple:
    """Sort key of a (key, sub-stream) pair: where its open record started; one with nothing open last (a stable sort
    keeps the rest as made)."""
    opened_at = item[1].opened_at if item[1].open_bits else None
    return (0, opened_at) if isinstance(opened_at, int) else (1, 0)
