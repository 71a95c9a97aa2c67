"""What a run keeps in memory about each job for diagnosis and the report, bounded.

Step records are thinned to a bounded series per job (for the charts) plus the last step of
each rank (for the summaries); the last steps and the epoch records, one per rank, wait on disk
once they are many (diagnose/rank_spool.py), and are read back a part of the jobs at a time
(`partitions`, `records_in`). The series wait on disk too, as every step appended to one (see
`_add_step`): in memory a job is its counts, whatever its steps. Every other record is kept up to a count per kind and within a
byte budget for all of them together (their JSON size, an estimate of what they hold). Past
the budget, long records are cut down to what the diagnosis reads of them (`summarized`), then
records are dropped (`dropped`, by kind) from the job attempt that holds the most bytes, the
least telling first (see `_class_of`) and within a class the latest in time first, since the
diagnosis looks for the earliest failure. The sink gets every record whole either way: only
the copy kept here is cut.
"""

from __future__ import annotations

import heapq
from array import array
import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterator

import msgspec

from gangscope.parsers import times
from gangscope.parsers.records import Record, StepRecord, TraceRecord, encode, job_key
from gangscope.pipeline.diagnose.rank_spool import PARTITIONS, RankSpool, partition_of
from gangscope.pipeline.diagnose.root_cause import failure_tier
from gangscope.pipeline.spill import PartitionedRecords

# A record longer than this (as JSON) is summarized once the budget is reached.
SUMMARY_BYTES = 4096
# What a summarized record keeps: the first and last lines of a trace, the lines after torchrun's
# "Root Cause" header (parsers/errors.py child_failures reads them), the frames at both ends, and
# the head and tail of a long string (the diagnosis reads the start of a message and searches
# a line for a rank, an exit code, an allocation size).
HEAD_LINES, TAIL_LINES, ROOT_CAUSE_LINES = 2, 24, 12
HEAD_FRAMES, TAIL_FRAMES = 2, 8
HEAD_CHARS, TAIL_CHARS = 1500, 500
# Drop order, first out first: warnings (never a failure), traces (their errors are kept apart:
# a trace is evidence; a ChildFailedError box also maps ranks, so it stays with the causes),
# launcher summaries that say nothing new, effects of another rank's failure, the causes
# (and signals, divergence warnings, boxes), events (the scheduler's verdict).
_WARNINGS, _TRACES, _SUMMARIES, _EFFECTS, _CAUSES, _EVENTS = range(6)
_BY_TIER = {3: _SUMMARIES, 2: _EFFECTS, 1: _CAUSES, 0: _CAUSES}


@dataclass
class JobDigest:
    max_records_per_kind: int = 200_000
    max_steps_per_job: int = 4_000
    max_steps: int = 50_000  # in the series of all jobs together
    max_bytes: int = 16 << 20  # the non-step records kept, as JSON (2-4 times that in memory)
    records: dict[str, dict[int, Record]] = field(default_factory=lambda: defaultdict(dict))  # kind -> {entry: record}
    latest: RankSpool = field(default_factory=RankSpool)  # epoch records by id
    series_buffer: int = 1 << 12  # steps appended to a series held before they go to disk
    # each rank's last step by (job, attempt, pod, rank, local_rank), tagged with its number
    last_steps: RankSpool = field(default_factory=RankSpool)
    dropped: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # over the count or the byte budget
    summarized: int = 0  # records cut down to what the diagnosis reads
    series_steps: int = 0  # step records in `steps`
    bytes: int = 0
    _sizes: dict[int, tuple[int, tuple]] = field(default_factory=dict, init=False, repr=False)  # entry -> (bytes, attempt)
    _attempts: dict[tuple, "_AttemptBytes"] = field(default_factory=dict, init=False, repr=False)
    _entries: itertools.count = field(default_factory=itertools.count, init=False, repr=False)
    # Attempts by bytes, the biggest first: (-bytes, tie, key), one entry pushed per change; an entry
    # whose bytes are no longer its attempt's is stale and skipped (see _biggest).
    _by_size: list = field(default_factory=list, init=False, repr=False)
    # The budget was reached once: from then on, long records are summarized as they come and every
    # record kept has its place in its attempt's drop order (until then, only bytes are counted).
    _over: bool = field(default=False, init=False, repr=False)
    # Each job's step series by its job (`step.job or ""`): its place in the order of their first
    # steps here, its counts in the arrays at that place, its steps appended on disk (`_appended`,
    # partitioned by that job, each headed by (place, its place in the series, thinnings then,
    # its number)): see `_add_step`.
    _series: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _series_jobs: list[str] = field(default_factory=list, init=False, repr=False)  # place -> job
    _seen: array = field(default_factory=lambda: array("q"), init=False, repr=False)  # steps seen
    _lengths: array = field(default_factory=lambda: array("q"), init=False, repr=False)  # steps held
    _thinned: array = field(default_factory=lambda: array("q"), init=False, repr=False)  # thinnings
    _appended: PartitionedRecords | None = field(default=None, init=False, repr=False)
    _appended_count: int = field(default=0, init=False, repr=False)  # on disk and held, dropped ones too
    # Step series by length, the longest first: -length * 2**32 + place (one int, the order of the
    # pair), pushed when a series grows or is thinned; an entry whose length is no longer its
    # series' is stale (see _longest_series). The tie is the job's place (the first of equally long
    # series, as max() took it). None until the longest series is first asked for (a run whose
    # series stay under `max_steps` together never asks): then made from the lengths.
    _by_length: list | None = field(default=None, init=False, repr=False)
    # Each step's number (as tagged in last_steps and kept with it in the series): a rank's last
    # step read back from disk is left out when it is in its job's series already.
    _step_numbers: itertools.count = field(default_factory=itertools.count, init=False, repr=False)

    def add(self, record: Record) -> None:
        kind = record.kind
        if kind == "step":
            self._add_step(record)  # type: ignore[arg-type]
        elif kind == "epoch":
            before = self.latest.get(record.id)
            if before is not None and before.pod is not record.pod:
                _share_strings(record, before)
            self.latest.put(record.id, job_key(record), record)
        elif kind == "diagnosis":
            return  # the back half's output, kept by its caller
        else:
            bucket = self.records[kind]
            if len(bucket) >= self.max_records_per_kind:
                self.dropped[kind] += 1
                return
            self._keep(bucket, record)
            if self.bytes > self.max_bytes:
                self._make_room()

    def _keep(self, bucket: dict[int, Record], record: Record) -> None:
        entry = next(self._entries)
        size = len(encode(record))
        if self._over and size > SUMMARY_BYTES:
            record = self._summary_of(record)
            size = len(encode(record))
        key = (record.job or record.pod, record.attempt)
        attempt = self._attempts.get(key)
        if attempt is None:
            attempt = self._attempts[key] = _AttemptBytes(key)
        # the attempt's own key, one tuple for all its records and heap entries (a copy each was
        # ~64 bytes a record and a size noted: 32k attempts past the budget at 400k tiny pod files)
        key = attempt.key
        bucket[entry] = record
        self._sizes[entry] = (size, key)
        self.bytes += size
        attempt.bytes += size
        if self._over:
            attempt.push(entry, record)
            self._note_size(key, attempt)

    def _make_room(self) -> None:
        if not self._over:
            self._over = True
            self._summarize_kept()
            for bucket in self.records.values():
                for entry, record in bucket.items():
                    self._attempts[self._sizes[entry][1]].push(entry, record)
            for key, attempt in self._attempts.items():
                self._note_size(key, attempt)
        while self.bytes > self.max_bytes:
            key = self._biggest()
            if key is None:
                break
            attempt = self._attempts[key]
            found = attempt.pop()
            if found is None:
                del self._attempts[key]
                continue
            entry, kind = found
            size, _ = self._sizes.pop(entry)
            del self.records[kind][entry]
            attempt.bytes -= size
            self.bytes -= size
            self.dropped[kind] += 1
            if attempt.bytes:
                self._note_size(key, attempt)
            else:  # its last record dropped: gone (many such attempts of many small jobs are memory)
                del self._attempts[key]

    def _note_size(self, key: tuple, attempt: "_AttemptBytes") -> None:
        heapq.heappush(self._by_size, (-attempt.bytes, next(self._entries), key))
        if len(self._by_size) > 4 * len(self._attempts) + 1024:  # mostly stale: start again
            self._by_size = [(-a.bytes, next(self._entries), k) for k, a in self._attempts.items()]
            heapq.heapify(self._by_size)

    def _biggest(self) -> tuple | None:
        """The attempt holding the most bytes (O(log n), where a scan of all attempts per record
        dropped made a run of many small jobs quadratic)."""
        heap = self._by_size
        while heap:
            neg, _tie, key = heap[0]
            attempt = self._attempts.get(key)
            if attempt is not None and attempt.bytes == -neg:
                return key
            heapq.heappop(heap)
        return None

    def _summarize_kept(self) -> None:
        for bucket in self.records.values():
            for entry, record in bucket.items():
                size, key = self._sizes[entry]
                if size <= SUMMARY_BYTES:
                    continue
                short = self._summary_of(record)
                smaller = len(encode(short))
                bucket[entry] = short
                self._sizes[entry] = (smaller, key)
                self._attempts[key].bytes -= size - smaller
                self.bytes -= size - smaller

    def _summary_of(self, record: Record) -> Record:
        """A copy of the record with what the diagnosis and the report read of it: the ends of
        long texts (a trace's first and last lines, its Root Cause box), of frame lists and of
        the strings in its details."""
        self.summarized += 1
        cut = {name: _cut(getattr(record, name)) for name in ("message", "line") if isinstance(getattr(record, name, None), str)}
        if getattr(record, "details", None):
            cut["details"] = _cut_value(record.details)  # type: ignore[attr-defined]
        if isinstance(record, TraceRecord):
            cut.update(text=_text_excerpt(record.text), frames=_ends(record.frames), truncated=True,
                       chain=[msgspec.structs.replace(link, message=_cut(link.message), frames=_ends(link.frames))
                              for link in _ends(record.chain)])  # fmt: skip
        return msgspec.structs.replace(record, **cut)

    def _add_step(self, step: StepRecord) -> None:
        job = step.job or ""
        number = next(self._step_numbers)
        self.last_steps.put((job, step.attempt, step.pod, step.rank, step.local_rank), job_key(step), step, number)
        # A job in memory is its place and three counts in arrays (the steps seen, held, and how often
        # its series was thinned: each thinning keeps every other step, and one step in 2**thinned
        # seen is appended from then on); its steps wait on disk as appended, each with its place in
        # the series then and `thinned` then, which say whether it is still kept (`_kept_steps`).
        # 50k jobs held ~50k step records and four dicts of counts (~40 MB) to the end of the run,
        # then an object of counts and two heap tuples (~320 bytes a job).
        place = self._series.get(job)
        if place is None:
            place = self._series[job] = len(self._series_jobs)
            self._series_jobs.append(job)
            self._seen.append(0)
            self._lengths.append(0)
            self._thinned.append(0)
        seen = self._seen[place]
        self._seen[place] = seen + 1
        thinned = self._thinned[place]
        if seen % (1 << thinned):
            return
        if self._appended is None:
            # a step thinned out before its spill is not written (a step dropped stays dropped)
            self._appended = PartitionedRecords(PARTITIONS, self.series_buffer, "gangscope-series-", StepRecord, 4,
                                                keep=self._still_kept)
        length = self._lengths[place]
        self._appended.add(partition_of(job), (place, length, thinned, number), step)
        self._appended_count += 1
        length += 1
        self._lengths[place] = length
        self.series_steps += 1
        if length >= self.max_steps_per_job:
            self._thin(place)
        else:
            self._note_length(place)
            if self.series_steps > self.max_steps:
                # many jobs, each under its own limit: thin the longest series (memory stays flat)
                self._thin(self._longest_series())
        if self._appended_count > 2 * self.series_steps + 4 * self.series_buffer:
            # mostly thinned out: the files keep what is still in a series (a step dropped stays
            # dropped), so the disk holds what the series do, not every step appended (looked at
            # after this step's thinning, so that it holds after every step)
            self._appended_count = self._appended.keep_only(self._still_kept)

    def _thin(self, place: int) -> None:
        """Every other step of the job's series, and half as many kept from now on."""
        length = self._lengths[place]
        kept = (length + 1) // 2
        self.series_steps -= length - kept
        self._lengths[place] = kept
        self._thinned[place] += 1
        self._note_length(place)

    def _note_length(self, place: int) -> None:
        if self._by_length is None:  # not asked for yet: made whole when it is
            return
        heapq.heappush(self._by_length, (-self._lengths[place] << 32) + place)
        if len(self._by_length) > 2 * len(self._series_jobs) + 1024:  # half stale: start again (ties by place: the same job found)
            self._by_length = self._lengths_heap()

    def _longest_series(self) -> int:
        """The place of the job whose step series is the longest (O(log n): a max over every job's
        series per step kept made a run of many small jobs quadratic)."""
        if self._by_length is None:
            self._by_length = self._lengths_heap()
        heap = self._by_length
        lengths = self._lengths
        while heap:
            key = heap[0]
            place = key & 0xFFFFFFFF
            if lengths[place] == -(key >> 32):
                return place
            heapq.heappop(heap)
        return max(range(len(lengths)), key=lengths.__getitem__)  # not reached: every series is noted

    def _lengths_heap(self) -> list[int]:
        """Every series' entry of `_by_length`, as it is now (none stale)."""
        heap = [(-length << 32) + place for place, length in enumerate(self._lengths)]
        heapq.heapify(heap)
        return heap

    def step_series(self) -> Iterator[tuple[str, list[StepRecord]]]:
        """(job, its series: the steps kept, in the order they came) of every job with steps, a
        partition of the jobs at a time (in the order of their first steps within one)."""
        for n in range(PARTITIONS if self._appended is not None else 0):
            by_job: dict[str, list[StepRecord]] = {}
            for _order, _number, step in self._kept_steps(n):
                by_job.setdefault(step.job or "", []).append(step)
            yield from by_job.items()

    def _kept_steps(self, n: int) -> list[tuple[int, int, StepRecord]]:
        """(job's order, number, step) of every step still in a series of partition `n`, in the
        order they came (a job's series is in one partition: its steps in its order). A step appended at
        place p of its series, after t thinnings of it, is kept after T thinnings in all when p
        is a multiple of 2**(T - t): each thinning keeps the even places and halves them."""
        return [(head[0], head[3], step) for head, step in self._appended.read(n, self._still_kept)]  # type: ignore[union-attr]

    def _still_kept(self, head: tuple[int, int, int, int]) -> bool:
        """Whether the step appended with `head` (its job's place, its place in the series, the
        job's thinnings then, its number) is still in its job's series."""
        return not head[1] % (1 << (self._thinned[head[0]] - head[2]))

    def absorb_counts(self, dropped: dict[str, int], summarized: int) -> None:
        """What another digest (a worker's) dropped and summarized before handing its records over."""
        for kind, n in dropped.items():
            self.dropped[kind] += n
        self.summarized += summarized

    def all_records(self) -> list[Record]:
        """Everything kept, steps included (the thinned series and each rank's last step), in
        memory at once: `parts` gives the same a part of the jobs at a time."""
        out: list[Record] = []
        for part in self.parts():
            out.extend(part)
        return out

    def parts(self) -> Iterator[list[Record]]:
        """What the digest kept, a part of the jobs at a time, every record of a job (by job_key)
        in the same part: the kept records kind by kind, the epoch records, each job's step
        series and each rank's last step not in its series, each in the order they were kept.
        One part (everything) while every rank's records are in memory, else one per partition
        of the spools (parts with nothing kept are given empty). Read as often as asked."""
        spools = (self.latest, self.last_steps)
        if not any(spool.spilled for spool in spools):
            everything = [e for n in range(PARTITIONS if self._appended is not None else 0) for e in self._kept_steps(n)]
            everything.sort(key=lambda e: e[0])  # by job, stable: each job's steps in the order they came
            yield self._part(0, list(self._kept()), everything)
            return
        for spool in spools:
            spool.spill()
        kept: list[list[Record]] = [[] for _ in range(PARTITIONS)]
        for r in self._kept():
            kept[partition_of(job_key(r))].append(r)
        # the series are on disk by job; a part is by job_key (its namespace too): put them there
        by_key = PartitionedRecords(PARTITIONS, self.series_buffer, "gangscope-series-parts-", StepRecord, 2)
        try:
            for n in range(PARTITIONS if self._appended is not None else 0):
                for order, number, step in self._kept_steps(n):
                    by_key.add(partition_of(job_key(step)), (order, number), step)
            for n in range(PARTITIONS):
                series = sorted(((head[0], head[1], step) for head, step in by_key.read(n)), key=lambda e: (e[0], e[1]))
                yield self._part(n, kept[n], series)
                kept[n] = series = []
        finally:
            by_key.close()

    def part_count(self) -> int:
        """How many parts `parts` gives."""
        return PARTITIONS if self.latest.spilled or self.last_steps.spilled else 1

    def part_of(self, job: str) -> int:
        """The part whose records are a job's (its job_key), where its attempts and report go."""
        return partition_of(job) if self.part_count() > 1 else 0

    def _kept(self) -> Iterator[Record]:
        for bucket in self.records.values():
            yield from bucket.values()

    def _part(self, n: int, kept: list[Record], series: list[tuple[int, int, StepRecord]]) -> list[Record]:
        numbers = {number for _order, number, _step in series}
        return [*kept, *(r for r, _tag in self.latest.entries(n)), *(step for _o, _n, step in series),
                *(s for s, number in self.last_steps.entries(n) if number not in numbers)]

    def close(self) -> None:
        """Remove what waits on disk (also done when the digest is collected)."""
        self.latest.close()
        self.last_steps.close()
        if self._appended is not None:
            self._appended.close()

    def release(self) -> None:
        """Let go of everything kept, once nothing reads it again (the end of a run, after the report:
        the sink's close then needs the room); what was dropped and summarized is still counted."""
        self.close()
        self.records = defaultdict(dict)
        self._sizes, self._attempts, self._by_size = {}, {}, []
        self._series, self._series_jobs, self._by_length, self._appended, self._appended_count = {}, [], None, None, 0
        self._seen, self._lengths, self._thinned = array("q"), array("q"), array("q")
        self.series_steps = self.bytes = 0


# The strings a rank's records repeat. A rank's last progress word is built from its parked state
# (run/parked_progress.py) with copies of them, while its earlier records (and its last step)
# still hold the originals: 100k tiny pod files kept ~40 MB of such copies to the end of the run.
_SHARED = ("id", "job", "namespace", "pod", "container", "node", "time", "source", "stream")


def _share_strings(record: Record, before: Record) -> None:
    """Point the record's strings at the equal ones of the version it replaces (same values: no
    output changes)."""
    for name in _SHARED:
        mine, theirs = getattr(record, name), getattr(before, name)
        if mine is not theirs and mine == theirs:
            setattr(record, name, theirs)


class _AttemptBytes:
    """The bytes one job attempt holds, and its records in the order they would be dropped."""

    __slots__ = ("key", "bytes", "heap")

    def __init__(self, key: tuple):
        self.key = key  # (job or pod, attempt)
        self.bytes = 0
        # (drop class, -time, -entry, kind) of each record, made on the first push (once the budget
        # is reached): the least telling class first, within it the latest first. One heap of flat
        # tuples: a dict of a heap per class of ((-time, -entry), entry, kind) was ~770 bytes an
        # attempt with one or two records (with most of tiny pod files' records dropped, every kept
        # error is an attempt of its own: 32k of them at 400k files)
        self.heap: list | None = None

    def push(self, entry: int, record: Record) -> None:
        t = times.seconds(record.time)
        # the latest first; a record without a time before any other
        item = (_class_of(record), -(t if t is not None else math.inf), -entry, record.kind)
        if self.heap is None:
            self.heap = [item]
        else:
            heapq.heappush(self.heap, item)

    def pop(self) -> tuple[int, str] | None:
        if not self.heap:
            return None
        _cls, _latest, neg_entry, kind = heapq.heappop(self.heap)
        return -neg_entry, kind


def _class_of(record: Record) -> int:
    kind = record.kind
    if kind == "error":
        tier = failure_tier(record)  # type: ignore[arg-type]
        if tier is None:
            # fp16 overflow warnings count towards a divergence verdict, an end-of-training line
            # is what a success rests on: both kept with the causes
            return _CAUSES if record.category in ("nan_loss", "success") else _WARNINGS  # type: ignore[attr-defined]
        return _BY_TIER[tier]
    if kind == "trace":
        box = record.form == "child_failed" or (record.exception_type or "").endswith("ChildFailedError")  # type: ignore[attr-defined]
        return _CAUSES if box else _TRACES
    return _EVENTS if kind == "event" else _CAUSES


def _ends(items: list, head: int = HEAD_FRAMES, tail: int = TAIL_FRAMES) -> list:
    return items if len(items) <= head + tail else items[:head] + items[-tail:]


def _text_excerpt(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= HEAD_LINES + TAIL_LINES:
        keep = lines
    else:
        keep = lines[:HEAD_LINES] + ["  ..."]
        for i, line in enumerate(lines):
            if line.startswith("Root Cause") and HEAD_LINES <= i < len(lines) - TAIL_LINES:
                keep += lines[i : min(i + ROOT_CAUSE_LINES, len(lines) - TAIL_LINES)] + ["  ..."]
                break
        keep += lines[-TAIL_LINES:]
    return "\n".join(_cut(line) for line in keep)


def _cut(text: str) -> str:
    if len(text) <= HEAD_CHARS + TAIL_CHARS + 5:
        return text
    return text[:HEAD_CHARS] + " ... " + text[-TAIL_CHARS:]


def _cut_value(value, depth: int = 0):
    """A JSON-like value with its long strings and lists cut to their ends."""
    if isinstance(value, str):
        return _cut(value)
    if depth > 16:
        return None
    if isinstance(value, dict):
        return {k: _cut_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_value(v, depth + 1) for v in _ends(value, HEAD_FRAMES, TAIL_FRAMES * 4)]
    return value

