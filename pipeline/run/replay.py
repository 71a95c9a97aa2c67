"""Batch replay: files in, curated records into a sink, a diagnosis per job attempt at the end.

One visible flow: discover sources -> read gang events (attempts, correlate/event_book.EventStream:
what attempts need in memory, the rest spooled) -> curate each container's lines -> derived
records (progress, signals) -> sink, while a bounded digest per job is kept -> the back half
(pipeline/diagnose/back_half.py: stragglers, diagnoses, the timelines the report draws).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from gangscope.parsers import envelopes
from gangscope.parsers.id_set import IdSet
from gangscope.parsers.records import Record
from gangscope.pipeline.correlate.progress import DerivedProgress
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.fluentbit import FluentBitCurator
from gangscope.pipeline.curate.stats import CurationLimits, CurationStats
from gangscope.pipeline.curate.events import every_event_of_lines
from gangscope.pipeline.diagnose import back_half
from gangscope.pipeline.diagnose.digest import JobDigest
from gangscope.pipeline.diagnose.spooled_diagnoses import SpooledDiagnoses
from gangscope.pipeline.errors import UsageError
from gangscope.pipeline.isolation import StageFailures, unit_of_work
from gangscope.pipeline.run import collector
from gangscope.pipeline.run.parked_progress import ParkedProgress
from gangscope.pipeline.run.record_counts import RecordCounts
from gangscope.pipeline.correlate.event_book import EventStream
from gangscope.pipeline.correlate.stamping import attempt_lookup
from gangscope.pipeline.sources.files import (
    LogSource, PodGroups, PodIdentity, ReadStats, decode_block, discover, read_blocks, read_lines,
)

SAMPLE_LINES = 20
EVENT_BATCH = 4096  # event records handed to the sink at a time
BENIGN_SKIPS = frozenset({"duplicate", "bookmark"})


@dataclass
class ReplayOptions:
    paths: list[str]
    events: list[str] = field(default_factory=list)
    fmt: str = "auto"
    max_line_bytes: int = 1 << 20
    block_scan: bool = True  # False: the reference path, every line read as text
    workers: int = 1  # processes; work is split by pod, never inside a pod's log
    digest_max_bytes: int = JobDigest.max_bytes  # what diagnosis keeps in memory (see pipeline/digest.py)
    max_containers: int = CurationLimits.max_containers  # curators of a Fluent Bit file
    # The command line's: no log file under any PATH (and no --events) is a usage error, raised
    # before anything is written; a library caller gets an empty result with its problems.
    require_input: bool = False


@dataclass
class ReplayResult:
    files: int = 0
    pods: int = 0
    read: ReadStats = field(default_factory=ReadStats)
    curation: CurationStats = field(default_factory=CurationStats)
    records: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    skipped_events: int = 0
    repeated_events: int = 0  # duplicates and watch bookmarks: nothing lost, not an error
    digest: JobDigest = field(default_factory=JobDigest)
    # one per job attempt, by job and attempt; waiting on disk a part of the jobs at a time (`parts()`)
    diagnoses: SpooledDiagnoses = field(default_factory=SpooledDiagnoses)
    attempts: dict = field(default_factory=dict)
    timelines: dict = field(default_factory=dict)  # job -> its gang timeline, for the report
    # Units of work that raised past curation (correlate, diagnose, report, sinks); the files' and
    # the curation's own are in `read` and `curation`: `stage_failures` holds them all.
    failures: StageFailures = field(default_factory=StageFailures)

    @property
    def stage_failures(self) -> StageFailures:
        """Every unit of work that raised and was skipped, in all stages (pipeline/isolation.py)."""
        return StageFailures().merge(self.read.failures).merge(self.curation.failures).merge(self.failures)

    @property
    def unreadable(self) -> int:
        return self.curation.unreadable_lines + self.curation.invalid_utf8_lines + self.read.invalid_utf8_lines + self.skipped_events

    @property
    def exit_code(self) -> int:
        # a line cut was not read as written: counted, and exit 1 (README). A dangling partial is read whole: the
        # container's last line without its newline, which containerd writes with the P tag (internal/cri/io/logger.go
        # redirectLogs: "readLine only returns error when the message doesn't end with a newline, in that case it
        # should be treated as a partial line"; a bar's last state when the process died): counted, not an exit 1.
        bad = (self.unreadable or self.problems or self.read.errors or self.read.long_lines_cut or self.stage_failures
               or self.curation.skips or self.curation.partial_lines_cut)
        return 1 if bad else 0

    def summary(self) -> dict:
        return {
            "files": self.files,
            "pods": self.pods,
            "lines": self.curation.lines,
            "bytes": self.read.bytes,
            "records": dict(sorted(self.records.items())),
            "unreadable_lines": self.curation.unreadable_lines,
            "invalid_utf8_lines": self.curation.invalid_utf8_lines + self.read.invalid_utf8_lines,
            "long_lines_cut": self.read.long_lines_cut,
            "partial_lines_cut": self.curation.partial_lines_cut,
            "dangling_partials": self.curation.dangling_partials,
            "open_records_flushed": self.curation.open_records_flushed,
            "containers_evicted": self.curation.containers_evicted,
            "bar_steps_released_at_bound": self.curation.bar_steps_released_at_bound,
            "digest_records_dropped": sum(self.digest.dropped.values()),
            "digest_records_summarized": self.digest.summarized,
            "skipped_events": self.skipped_events,
            "repeated_events": self.repeated_events,
            "problems": self.problems + self.read.errors,
            "stage_failures": self.stage_failures.summary(),
            "skips": skips_summary(self.curation.skips),
        }


Progress = Callable[[int], None]


def run(
    options: ReplayOptions,
    write: Callable[[list[Record]], None],
    progress: Progress | None = None,
    sink=None,
) -> ReplayResult:
    """Curate the given paths, handing each batch of records to `write`.

    With `options.workers > 1`, pods are curated in worker processes that write through
    their own part of `sink` (`sink.part(i)`), which the parent then takes in
    (`sink.absorb(part)`) in pod order; without a sink, workers keep nothing but the digest.
    """
    if options.fmt != "auto" and options.fmt not in envelopes.FORMATS:
        raise UsageError(f"--format must be one of auto, {', '.join(envelopes.FORMATS)}; got {options.fmt!r}")
    if options.workers < 1:
        raise UsageError(f"--workers must be at least 1; got {options.workers}")
    if options.max_containers < 1:
        raise UsageError(f"--max-containers must be at least 1; got {options.max_containers}")
    if options.digest_max_bytes < 0:
        raise UsageError(f"--digest-max-bytes must not be negative; got {options.digest_max_bytes}")
    return Replay(options, write, progress, sink).run()


class Replay:
    """One batch run: its sources, its sink callback and what it keeps about each job."""

    def __init__(self, options: ReplayOptions, write: Callable[[list[Record]], None], progress: Progress | None, sink=None):
        self.options = options
        self.sink = sink
        self.write = write
        self.progress = progress
        self.result = ReplayResult(digest=JobDigest(max_bytes=options.digest_max_bytes))
        self.attempts: dict = {}
        # each pod group's progress, finished at the end (when each job's end is known): parked
        # on disk meanwhile (run/parked_progress.py; in memory it was ~700 bytes a pod)
        self.rank_progress = ParkedProgress()
        self.jobs: set[str] = set()  # every job whose log was read: each gets a diagnosis, records or not
        self.counted = RecordCounts()  # summary.json's `records`: one document per id, counted at the end

    def run(self) -> ReplayResult:
        with collector.batch_run():
            return self._run()

    def _run(self) -> ReplayResult:
        result = self.result
        groups = PodGroups(self.options.paths)
        if self.options.require_input and not len(groups) and not self.options.events:
            raise UsageError("; ".join(groups.problems) or "no log files found")
        result.problems.extend(groups.problems)
        self.load_events(self.options.events)
        result.files = groups.files
        result.pods = len(groups)
        if self.options.workers > 1 and len(groups) > 1:
            self._curate_in_workers(groups)
        else:
            attempt_of = attempt_lookup_of(self.attempts)
            for group in groups:
                work = GroupWork(group, self.options, attempt_of, result.curation, result.read, self.progress)
                for batch in work.batches():
                    self.deliver(batch)
                self.rank_progress.park(work.rank_progress)
                self.jobs.update(work.jobs)
        self.finish()
        return result

    def _curate_in_workers(self, groups: PodGroups) -> None:
        import multiprocessing

        result = self.result
        # At most two tasks per worker handed out ahead of the parent: results wait for it in
        # pod order, and each holds its records, so memory stays flat when the parent is slower.
        ahead = threading.Semaphore(2 * self.options.workers)
        given_up = threading.Event()

        def tasks():
            for i, group in enumerate(groups):
                ahead.acquire()
                if given_up.is_set():
                    return
                yield (i, group, self.options, self.attempts, self.sink.part(i) if self.sink else None)

        context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
        with context.Pool(self.options.workers, initializer=die_with_parent, initargs=(os.getpid(),)) as pool, \
                _unblocking(given_up, ahead):
            for done in pool.imap(_curate_group_in_worker, tasks()):
                ahead.release()
                _merge_stats(result.curation, done.curation)
                _merge_stats(result.read, done.read)
                count = self.counted.add
                for kind, ids in done.counts.items():  # once per id across workers (summary.json)
                    for i in ids:
                        count(i, kind)
                result.digest.absorb_counts(done.dropped, done.summarized)
                for record in done.kept:
                    result.digest.add(record)
                if done.rank_progress is not None:
                    self.rank_progress.park(done.rank_progress)
                self.jobs.update(done.jobs)
                if self.sink is not None:
                    self.sink.absorb(done.part)
                if self.progress is not None:
                    self.progress(done.read.bytes)

    def deliver(self, batch: list[Record], kept: bool = False) -> None:
        """Count the records, keep them in the digest (unless `kept` there already), write them.
        A record is counted once per id: a rank's epoch record is one document, updated as its
        progress goes on (summary.json said 544 epoch records of the fixtures' 52 documents)."""
        if not batch:
            return
        self.counted.add_records(batch)
        if not kept:
            add = self.result.digest.add
            for record in batch:
                add(record)
        self.write(batch)

    # -- events ----------------------------------------------------------------
    def load_events(self, paths: list[str]):
        """Read gang/Kubernetes event files: the attempts they cut (for the log records' lookup),
        and every event record, stamped with its job and attempt, to the sink and the digest.
        Memory is what the attempts need, not every record (correlate/event_book.EventStream)."""
        if not paths:
            return
        result = self.result
        sources, problems = discover(paths)
        result.problems.extend(problems)
        stream = EventStream()
        try:
            file = 0
            for source in sources:
                for path in source.paths:
                    # One stream per file, not per block: a pretty-printed `kubectl get -o json` spans blocks.
                    lines = (line for block in read_lines(path, result.read) for line in block)
                    # Curated (decoded and redacted), repeats included: the stream drops them on disk.
                    for item in every_event_of_lines(lines):
                        if getattr(item, "kind", None) == "event":
                            stream.add(item, file)
                        elif getattr(item, "reason", None) in BENIGN_SKIPS:
                            result.repeated_events += 1
                        else:
                            result.skipped_events += 1
                            result.curation.skips.add("sources", item.reason, file=path, position=f"line {item.line}",
                                                      detail=None if item.reason == "bad_json" else item.detail)
                    file += 1
            result.repeated_events += stream.settle()
            result.attempts = self.attempts = stream.cut(failures=result.failures)
            batch: list[Record] = []
            for record in stream.stamped():
                batch.append(record)
                if len(batch) >= EVENT_BATCH:
                    self.deliver(batch)
                    batch = []
            self.deliver(batch)
        finally:
            stream.close()

    # -- the end ---------------------------------------------------------------
    def finish(self) -> None:
        """The end of the run: each rank's last progress word, then the back half (stragglers,
        diagnoses, timelines) over what the digest kept."""
        result = self.result
        try:
            for progress in self.rank_progress.taken_up():
                last_word: list[Record] = []
                with unit_of_work(result.failures, "correlate", step="progress"):
                    last_word = progress.finish(result.curation.job_end)
                self.deliver(last_word)
        finally:
            self.rank_progress.close()
        found = back_half.analyse(result.digest, result.attempts, failures=result.failures, jobs=sorted(self.jobs))
        self.deliver(found.stragglers, kept=True)
        result.diagnoses = found.diagnoses
        result.timelines = found.timelines
        batch = []
        for diagnosis in result.diagnoses:  # read back from disk a batch at a time, in their order
            batch.append(diagnosis)
            if len(batch) >= EVENT_BATCH:
                self.deliver(batch)
                batch = []
        self.deliver(batch)
        for kind, n in self.counted.counts().items():
            result.records[kind] = result.records.get(kind, 0) + n


def skips_summary(skips: StageFailures) -> list[dict]:
    """summary.json `skips`: [{"stage", "kind", "count", "examples": [{"file", "position", "detail"}]}]:
    input skipped by design (a field of the wrong type, a value out of range, a malformed time or
    document), each kind counted with where it was; `stage_failures` are the crashes caught."""
    return [{"stage": e["stage"], "kind": e["error"], "count": e["count"], "examples": e["examples"]}
            for e in skips.summary()]


class GroupWork:
    """Curating one pod's sources: lines -> records -> derived progress records."""

    def __init__(self, group, options: ReplayOptions, attempt_of, curation, read, progress=None):
        self.group = group
        self.options = options
        self.attempt_of = attempt_of
        self.curation = curation
        self.read = read
        self.progress = progress
        self.rank_progress = DerivedProgress()
        self.jobs: set[str] = set()  # the jobs of the containers read

    def batches(self):
        """The pod's records. The progress tracker's last word (final epoch states, a stall
        until the end of the log) waits for `DerivedProgress.finish`, when the job's end is known."""
        for source in self.group:
            for batch in self._curate_source(source):
                yield self._with_progress_records(batch)

    def _curate_source(self, source: LogSource):
        curator = None
        read = self.read
        for path in source.paths:
            last_bytes = start = read.bytes
            for block in read_blocks(path, read, max_line_bytes=self.options.max_line_bytes):
                if curator is None:
                    fmt = self.options.fmt
                    if fmt == "auto":
                        fmt = envelopes.detect_format(decode_block(block[: 1 << 16])[0])
                    curator = self._curator_for(source.identity, fmt)
                curator.source = path  # named where a failure is counted
                # The last net (parsers and records are guarded inside): a block the curator raises
                # on is counted and skipped, the file goes on (pipeline/isolation.py).
                batch: list[Record] = []
                with unit_of_work(self.curation.failures, "curate", file=path,
                                  position=f"block ending at byte {read.bytes - start}"):
                    batch = curator.feed_block(block)
                yield batch
                if self.progress is not None:
                    self.progress(read.bytes - last_bytes)
                    last_bytes = read.bytes
        if curator is not None:
            batch = []
            with unit_of_work(self.curation.failures, "curate", file=source.display, position="end of the log"):
                batch = curator.close()
            self.jobs.update(jobs_of(curator))
            yield batch

    def _curator_for(self, identity: PodIdentity, fmt: str):
        if fmt == "fluentbit":
            limits = CurationLimits(max_containers=self.options.max_containers)
            return FluentBitCurator(self.curation, identity, attempt_of=self.attempt_of, limits=limits)
        if fmt in envelopes.POD_HEAD_FORMATS:  # [h26c] a tool's head names each line's pod: a container each, as Fluent Bit's
            limits = CurationLimits(max_containers=self.options.max_containers)
            return FluentBitCurator(self.curation, identity, attempt_of=self.attempt_of, limits=limits).reading(fmt)
        return ContainerCurator(
            identity, fmt, self.curation, attempt_of=self.attempt_of, block_scan=self.options.block_scan
        )

    def _with_progress_records(self, batch: list[Record]) -> list[Record]:
        derived = self.rank_progress.derive(batch, failures=self.curation.failures) if batch else None
        return batch + derived if derived else batch


@dataclass
class GroupDone:
    """What a worker hands back: its counts, what it kept for the diagnosis, its part of the sink."""

    counts: dict[str, list[str]]  # the ids of its records by kind, each once (the parent counts them)
    curation: CurationStats
    read: ReadStats
    # The records its digest kept, pickled with the rest: as they were made, an int in a float field
    # too (records.pack made that epoch 1 a 1.0, unlike the same record kept in-process).
    kept: list[Record]
    part: object
    rank_progress: DerivedProgress | None = None
    dropped: dict[str, int] = field(default_factory=dict)  # by the worker's digest
    summarized: int = 0
    jobs: set[str] = field(default_factory=set)  # the jobs whose logs it read


def _curate_group_in_worker(task) -> GroupDone:
    index, group, options, attempts, make_part = task
    part = make_part() if make_part is not None else None
    curation, read = CurationStats(), ReadStats()
    digest = JobDigest(max_bytes=options.digest_max_bytes)
    counts: dict[str, list[str]] = {}
    counted = IdSet()
    work = GroupWork(group, options, attempt_lookup_of(attempts), curation, read)
    for batch in work.batches():
        for record in batch:
            if counted.add(record.id):
                counts.setdefault(record.kind, []).append(record.id)
            digest.add(record)
        if part is not None:
            part.write(batch)
    if part is not None:
        part.close()
    return GroupDone(
        counts, curation, read, digest.all_records(), part.handoff() if part is not None else None, work.rank_progress,
        dict(digest.dropped), digest.summarized, work.jobs,
    )


def die_with_parent(parent: int) -> None:
    """A worker's first act: end when the replay that started it ends, even by SIGKILL (which runs
    no clean-up of the parent's): Linux's PR_SET_PDEATHSIG, else a thread that watches the parent
    id. Without it, workers went on curating and writing their parts after the parent was gone."""
    import signal

    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()


@contextlib.contextmanager
def _unblocking(given_up: threading.Event, ahead: threading.Semaphore):
    """On the way out of the pool (an error in the parent included), let the task generator
    return: while it waits for room, the pool's task handler never sends its workers their
    stop, and the pool's terminate waits for them forever (the run hung instead of failing)."""
    try:
        yield
    finally:
        given_up.set()
        ahead.release()


def _merge_stats(into, other) -> None:
    for name, value in vars(other).items():
        if isinstance(value, int):
            setattr(into, name, getattr(into, name) + value)
        elif isinstance(value, list):
            getattr(into, name).extend(value)
        elif name == "job_end":
            mine = getattr(into, name)
            for job, end in value.items():
                if end > mine.get(job, float("-inf")):
                    mine[job] = end
        elif isinstance(value, dict):
            mine = getattr(into, name)
            for key, count in value.items():
                mine[key] = mine.get(key, 0) + count
        elif isinstance(value, StageFailures):
            getattr(into, name).merge(value)


def jobs_of(curator) -> set[str]:
    """The jobs of the containers a curator read (a Fluent Bit curator holds one per container)."""
    containers = getattr(curator, "curators", None)
    if containers is None:
        return {curator.stamper.job}
    return {c.stamper.job for c in containers.values()}


def attempt_lookup_of(attempts: dict):
    """The attempt lookup handed to the curators; None without gang events (every record: attempt 1)."""
    return attempt_lookup(attempts) if attempts else None


def total_bytes(paths: list[str]) -> int | None:
    total = 0
    for path in paths:
        if path == "-":
            return None
        if os.path.isdir(path):
            for root, _dirs, names in os.walk(path):
                for name in names:
                    try:
                        total += os.path.getsize(os.path.join(root, name))
                    except OSError:
                        pass
        elif os.path.isfile(path):
            total += os.path.getsize(path)
    return total
