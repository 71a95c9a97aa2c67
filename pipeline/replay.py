"""Batch replay: files in, curated records into a sink, a diagnosis per job attempt at the end.

One visible flow: discover sources -> read gang events (attempts) -> curate each
container's lines -> derived records (progress, signals) -> sink, while a bounded
digest per job is kept -> diagnose -> report.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Iterable

from gangscope.parsers import envelopes
from gangscope.parsers.records import Record
from gangscope.pipeline import curate
from gangscope.pipeline.digest import JobDigest
from gangscope.pipeline.errors import UsageError
from gangscope.pipeline.identity import with_derived_id
from gangscope.pipeline.sources.files import LogSource, PodIdentity, ReadStats, decode_block, discover, read_blocks, read_lines

SAMPLE_LINES = 20


@dataclass
class ReplayOptions:
    paths: list[str]
    events: list[str] = field(default_factory=list)
    fmt: str = "auto"
    max_line_bytes: int = 1 << 20
    block_scan: bool = True  # False: the reference path, every line read as text


@dataclass
class ReplayResult:
    files: int = 0
    pods: int = 0
    read: ReadStats = field(default_factory=ReadStats)
    curation: curate.CurationStats = field(default_factory=curate.CurationStats)
    records: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    skipped_events: int = 0
    digest: JobDigest = field(default_factory=JobDigest)
    diagnoses: list[Record] = field(default_factory=list)
    attempts: dict = field(default_factory=dict)

    @property
    def unreadable(self) -> int:
        return self.curation.unreadable_lines + self.curation.invalid_utf8_lines + self.read.invalid_utf8_lines + self.skipped_events

    @property
    def exit_code(self) -> int:
        bad = self.unreadable or self.problems or self.read.errors or self.read.long_lines_cut
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
            "skipped_events": self.skipped_events,
            "problems": self.problems + self.read.errors,
        }


Progress = Callable[[int], None]


def run(options: ReplayOptions, write: Callable[[list[Record]], None], progress: Progress | None = None) -> ReplayResult:
    """Curate the given paths, handing each batch of records to `write`."""
    if options.fmt != "auto" and options.fmt not in envelopes.FORMATS:
        raise UsageError(f"--format must be one of auto, {', '.join(envelopes.FORMATS)}; got {options.fmt!r}")
    return Replay(options, write, progress).run()


class Replay:
    """One batch run: its sources, its sink callback and what it keeps about each job."""

    def __init__(self, options: ReplayOptions, write: Callable[[list[Record]], None], progress: Progress | None):
        self.options = options
        self.write = write
        self.progress = progress
        self.result = ReplayResult()
        self.tracker = _new_tracker()
        self.attempt_of = None

    def run(self) -> ReplayResult:
        result = self.result
        sources, problems = discover(self.options.paths)
        result.problems.extend(problems)
        self.attempt_of = self._load_events(self.options.events)
        pods = set()
        for source in sources:
            result.files += len(source.paths)
            for batch in self._curate_source(source):
                self._deliver(batch)
            pods.add((source.identity.namespace, source.identity.pod))
        result.pods = len(pods)
        self._finish()
        return result

    # -- logs ------------------------------------------------------------------
    def _curate_source(self, source: LogSource):
        curator = None
        read = self.result.read
        for path in source.paths:
            last_bytes = read.bytes
            for block in read_blocks(path, read, max_line_bytes=self.options.max_line_bytes):
                if curator is None:
                    fmt = self.options.fmt
                    if fmt == "auto":
                        fmt = envelopes.detect_format(decode_block(block[:1 << 16])[0][:SAMPLE_LINES])
                    curator = self._curator_for(source.identity, fmt)
                yield curator.feed_block(block)
                if self.progress is not None:
                    self.progress(read.bytes - last_bytes)
                    last_bytes = read.bytes
        if curator is not None:
            yield curator.close()

    def _curator_for(self, identity: PodIdentity, fmt: str):
        stats = self.result.curation
        if fmt == "fluentbit":
            return curate.FluentBitCurator(stats, identity, attempt_of=self.attempt_of)
        return curate.ContainerCurator(
            identity, fmt, stats, attempt_of=self.attempt_of, block_scan=self.options.block_scan
        )

    def _deliver(self, batch: list[Record]) -> None:
        if not batch:
            return
        if self.tracker is not None:
            derived = []
            for record in batch:
                if record.kind == "step":
                    derived.extend(self.tracker.add(record))
            if derived:
                batch = batch + [with_derived_id(r) for r in derived]
        counts = self.result.records
        add = self.result.digest.add
        for record in batch:
            counts[record.kind] = counts.get(record.kind, 0) + 1
            add(record)
        self.write(batch)

    # -- events ----------------------------------------------------------------
    def _load_events(self, paths: list[str]):
        """Read gang/Kubernetes event files; return the attempt lookup for log records."""
        if not paths:
            return None
        result = self.result
        try:
            from gangscope.parsers.events import decode_event_stream
            from gangscope.pipeline.gang import attempt_lookup, build_attempts
        except ImportError:
            result.problems.append("--events given, but this build cannot read events yet")
            return None
        sources, problems = discover(paths)
        result.problems.extend(problems)
        events = []
        for source in sources:
            for path in source.paths:
                for block in read_lines(path, result.read):
                    for item in decode_event_stream(block):
                        if getattr(item, "kind", None) == "event":
                            events.append(item)
                        else:
                            result.skipped_events += 1
        result.attempts = build_attempts(events)
        lookup = attempt_lookup(result.attempts)
        for event in events:
            if event.job:
                event.attempt = lookup(event.job, event.time)
        self._deliver(events)
        return lookup

    # -- the end ---------------------------------------------------------------
    def _finish(self) -> None:
        result = self.result
        if self.tracker is not None:
            self._deliver([with_derived_id(r) for r in self.tracker.finish()])
            try:
                from gangscope.parsers.progress import find_stragglers
            except ImportError:
                find_stragglers = None
            if find_stragglers is not None:
                steps = [r for series in result.digest.steps.values() for r in series]
                self._deliver([with_derived_id(r) for r in find_stragglers(steps)])
        try:
            from gangscope.pipeline.diagnose import diagnose
        except ImportError:
            return
        attempts = [a for job_attempts in result.attempts.values() for a in job_attempts] or None
        result.diagnoses = list(diagnose(result.digest.all_records(), attempts))
        self._deliver(result.diagnoses)


def _new_tracker():
    try:
        from gangscope.parsers.progress import ProgressTracker
    except ImportError:
        return None
    return ProgressTracker()


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
