"""Curation state of one Fluent Bit pod-log partition (a Kafka partition, or a range of one).

A partition feeds its envelopes, in offset order, through one FluentBitCurator and derives each
pod's progress records from the steps it curates; it knows which containers went quiet, closes
them, and finishes a job's containers and ranks when the job's attempt is over. The consumer
service keeps one per assigned partition (and checkpoints it); `replay --from-kafka` one per
partition of its range.
"""

from __future__ import annotations

from typing import Any

from gangscope.parsers.records import Record
from gangscope.pipeline.curate.fluentbit import FluentBitCurator, kube_key
from gangscope.pipeline.curate.stats import CurationLimits, CurationStats
from gangscope.pipeline.curate.substream import LINE_PARSERS
from gangscope.pipeline.curate.snapshot import PartitionState
from gangscope.pipeline.isolation import unit_of_work
from gangscope.pipeline.sources.files import PodIdentity

FALLBACK = PodIdentity(namespace=None, pod="unknown")


class TextScanner:
    """Which lines of a poll batch any parser could want: one Hyperscan scan over the batch.

    The same idea as the CRI block scan (pipeline/scan.py), over message texts: the parsers'
    PREFILTER patterns, anchors relaxed, compiled in prefilter mode (a superset of what they
    match). None when Hyperscan is missing: every line then goes through the parsers' own test.
    """

    def __init__(self, database, exact=None, rest=None, unsafe_id: int = -1, parser_classes: tuple = (), one_pass=None):
        self.database = database
        # the patterns the ASCII texts are scanned for exactly (scan.exact_block_databases)
        self.exact, self.rest, self._unsafe_id = exact, rest, unsafe_id
        self.one_pass = one_pass  # `exact` and `rest` as one database (scan.one_pass_database), None: two scans
        self.parser_classes = parser_classes  # the table whose bits `hints` gives

    @classmethod
    def build(cls, parser_classes) -> "TextScanner | None":
        from gangscope.pipeline.curate.scan import exact_block_databases, one_pass_database, parser_database

        patterns = tuple(c.PREFILTER for c in parser_classes)
        database = parser_database(patterns)
        exact, rest, _mask = exact_block_databases(patterns)
        one_pass = one_pass_database(patterns, always=False) if exact is not None else None
        return None if database is None else cls(database, exact, rest, len(patterns), tuple(parser_classes), one_pass)

    def hints(self, texts: list[str]) -> dict[int, tuple[int, int]]:
        """Index of each text a pattern hits (a text with a newline always counts as hit) -> (its
        parsers' bits, -1 for a text the curator scans itself; where in the text the bits of
        `exact_block_databases`' patterns are re's answer, -1 for none: ContainerCurator._logical's
        `hints` and `exact_from`). The ASCII texts are scanned as a CRI block is (one exact scan,
        BlockScanner.exact_candidates), so that the curator scans none of them again; the others
        as by `wanted`."""
        from gangscope.pipeline.curate.scan import exact_lines, exact_lines_one_pass

        if self.exact is None:
            return {i: (-1, -1) for i in self.wanted(texts)}
        plain = [i for i, t in enumerate(texts) if t.isascii() and "\n" not in t]
        block = "\n".join([texts[i] for i in plain]).encode("ascii")
        if b"\x1c" in block or b"\x1d" in block or b"\x1e" in block or b"\x1f" in block:
            return {i: (-1, -1) for i in self.wanted(texts)}  # separators only Python's \s matches: all by text
        out: dict[int, tuple[int, int]] = {}
        if len(plain) < len(texts):
            taken = set(plain)
            others = [i for i in range(len(texts)) if i not in taken]
            out.update((others[k], (-1, -1)) for k in self.wanted([texts[i] for i in others]))
        if plain:
            if self.one_pass is not None:
                lines, exact_from = exact_lines_one_pass(block, self.one_pass, self._unsafe_id)
            else:
                lines, exact_from = exact_lines(block, self.exact, self.rest, self._unsafe_id)
            at = {}
            pos = 0
            for i in plain:
                at[pos] = i
                pos += len(texts[i]) + 1
            for start, bits in lines.items():
                out[at[start]] = (bits, exact_from.get(start, 0))
        return out

    def wanted(self, texts: list[str]) -> set[int]:
        """Indices of the texts a pattern hits (texts with a newline always count as hit)."""
        encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
        block = b"\n".join(encoded)
        index: dict[int, int] = {}
        pos = 0
        for i, e in enumerate(encoded):
            index[pos] = i
            pos += len(e) + 1
        ends: list[int] = []
        self.database.scan(block, match_event_handler=lambda _id, _s, end, _f, _c: ends.append(end))
        found = {i for i, t in enumerate(texts) if "\n" in t}
        for end in ends:
            start = block.rfind(b"\n", 0, end - 1 if block[end - 1:end] == b"\n" else end) + 1
            i = index.get(start)
            if i is not None:
                found.add(i)
        return found


_SCANNER: list = []  # built on first use: [TextScanner | None]


def text_scanner() -> TextScanner | None:
    if not _SCANNER:
        _SCANNER.append(TextScanner.build(LINE_PARSERS))
    return _SCANNER[0]


class LogPartition:
    """Curation state of one pod-log partition: what a checkpoint holds.

    attempt_of: the attempt lookup handed to the curators (correlate.event_book.AttemptOf).
    stats, limits: the curation's counters and bounds (a new CurationStats by default).
    progress: what derives progress records from the curated steps (correlate.progress.
        DerivedProgress), kept per partition; None derives none.
    """

    _evictions_seen = 0  # the curator's eviction rounds last pruned for

    def __init__(self, attempt_of, stats: CurationStats | None = None,
                 limits: CurationLimits | None = None, progress=None):
        self.stats = stats if stats is not None else CurationStats()
        self.curator = FluentBitCurator(self.stats, FALLBACK, attempt_of=attempt_of, limits=limits)
        self.progress = progress
        self.next_offset: int | None = None
        self.last_seen: dict[tuple, float] = {}  # container key -> monotonic time of its last line
        self.flushed: set[tuple] = set()  # containers closed since their last line
        # Since when everything the partition has was read (None: behind). A container is quiet only
        # when there is nothing more to read: lines waiting in Kafka (after a pause, under lag) are
        # not silence.
        self.caught_up_since: float | None = None

    def snapshot(self) -> PartitionState:
        """What curation needs to go on from `next_offset`, as plain data (curate.snapshot). The
        monotonic times (`last_seen`, `caught_up_since`) are this process's: `restored` sets them."""
        return PartitionState(
            curator=self.curator.snapshot(), stats=self.stats.snapshot(),
            progress=self.progress.snapshot() if self.progress is not None else None,
            flushed=list(self.flushed), evictions_seen=self._evictions_seen, next_offset=self.next_offset,
        )

    @classmethod
    def from_snapshot(cls, state: PartitionState, attempt_of, limits: CurationLimits | None = None,
                      progress=None) -> "LogPartition":
        """The partition `state` describes; the arguments as for the constructor (a fresh
        `progress` takes up the ranks' progress of the snapshot). Call `restored` before use."""
        partition = cls(attempt_of, limits=limits, progress=progress)
        partition.stats.restore(state.stats)
        partition.curator = FluentBitCurator.from_snapshot(
            state.curator, partition.stats, FALLBACK, attempt_of=attempt_of, limits=limits)
        if progress is not None and state.progress is not None:
            progress.restore(state.progress)
        partition.flushed = {tuple(key) for key in state.flushed}
        partition._evictions_seen = state.evictions_seen
        partition.next_offset = state.next_offset
        return partition

    def read_from(self, source: str) -> None:
        """Name what the partition reads (e.g. "topic/partition"): a failure counted in its
        curation names it as its file, in the containers kept (restored ones too) and new ones."""
        self.curator.source = source
        for container in self.curator.curators.values():
            container.source = source

    def restored(self, now: float) -> "LogPartition":
        self.last_seen = {key: now for key in self.curator.curators}
        self.caught_up_since = None
        return self

    def quiet_since(self, last: float) -> float | None:
        return None if self.caught_up_since is None else max(last, self.caught_up_since)

    def feed(self, offset: int, env, out: list[Record], hints: int = -1, exact_from: int = -1,
             key: tuple | None = None) -> tuple:
        """Curate one message's envelope at `offset`; its records and their progress go to `out`.
        The last net (parsers and records are guarded inside): a message the curator raises on
        is counted (stage "curate") and skipped. `hints`, `exact_from`: the batch scan's (TextScanner.hints).
        `key`: the envelope's `kube_key` when the caller has it. Returns the key."""
        if key is None:
            key = kube_key(env.kubernetes)
        self.curator.position = offset
        start = len(out)
        try:
            self.curator.feed_envelope(env, out, hints, exact_from, key)
        except Exception as exc:
            self.stats.failures.add("curate", exc, file=self.curator.source, position=offset)
        self.next_offset = offset + 1
        if len(out) > start and self.progress is not None:
            out.extend(self.progress.derive(out, start, self.stats.failures))
        return key

    def feed_batch(self, items: list[tuple[int, Any]], out: list[Record], scanner: TextScanner | None) -> set:
        """(offset, envelope) pairs of one partition, in order. A line no parser wants, of a
        container with nothing open, costs its `seq` bookkeeping only
        (ContainerCurator.skip_unwanted). Returns the containers that got lines (for `touched`)."""
        touched = set()
        if not items:
            return touched
        if scanner is None:
            wanted = None
        elif scanner.parser_classes == self._parser_table():
            wanted = scanner.hints([env.text for _, env in items])
        else:
            wanted = dict.fromkeys(scanner.wanted([env.text for _, env in items]), (-1, -1))
        curators = self.curator.curators
        feed = self.feed
        # id of a `kubernetes` block -> its kube_key: the decoder gives the messages of one container
        # one block (sources/kafka.py), so its key is made once a batch; the blocks live as long as `items`.
        keys: dict[int, tuple] = {}
        for i, (offset, env) in enumerate(items):
            kube = env.kubernetes
            key = keys.get(id(kube))
            if key is None:
                key = keys[id(kube)] = kube_key(kube)
            if wanted is None or env.partial:
                feed(offset, env, out, -1, -1, key)
                continue
            hint = wanted.get(i)
            if hint is not None:
                feed(offset, env, out, hint[0], hint[1], key)
                continue
            c = curators.get(key)
            if c is None or not c.skip_unwanted(env.stream, env.time, env.text):
                feed(offset, env, out, -1, -1, key)
        self.next_offset = items[-1][0] + 1
        touched.update(keys.values())
        return touched

    def _parser_table(self) -> tuple | None:
        """The parsers of this partition's curators, when they take the batch scan's hints (None: they do not)."""
        kwargs = self.curator.kwargs
        if not kwargs.get("block_scan", True):
            return None
        table = kwargs.get("parser_classes")
        return tuple(LINE_PARSERS if table is None else table)

    def touched(self, keys: set, now: float) -> set[str]:
        """Note the containers that got lines; returns their jobs."""
        for key in keys:
            self.last_seen[key] = now
            self.flushed.discard(key)
        jobs = self.curator.note_fed(keys)
        if self.curator.evictions != self._evictions_seen:
            # containers evicted by the curator (closed, records out): forget them here too
            self._evictions_seen = self.curator.evictions
            kept = self.curator.curators
            for key in [k for k in self.last_seen if k not in kept]:
                del self.last_seen[key]
                self.flushed.discard(key)
        return jobs

    def flush_idle(self, now: float, idle_s: float, out: list[Record], wait_s: float | None = None) -> int:
        """Close the containers quiet for idle_s that hold nothing a later line could continue (for
        the record: nothing is made of them then). One that holds an open record (a traceback, a
        partial line, Trainer logs waiting for their step numbers) waits for its end, as a replay
        reads it whole whatever the pauses of its delivery: it is closed only after `wait_s` quiet
        (None: never; the end of its job's attempt closes it). Returns how many open structures
        were closed at that bound, before their end."""
        if self.caught_up_since is None or now - self.caught_up_since < idle_s:
            return 0
        cut = 0
        curators = self.curator.curators
        for key, seen in self.last_seen.items():
            if key in self.flushed or now - seen < idle_s:
                continue
            c = curators.get(key)
            holding = c.holds_open() if c is not None else 0
            if holding:
                if wait_s is None or now - seen < wait_s:
                    continue
                cut += holding
                self.stats.open_records_flushed += holding
            self.close_container(key, out)
        return cut

    def close_container(self, key: tuple, out: list[Record]) -> None:
        """Close one container: what it holds open becomes records (and their progress)."""
        self.flushed.add(key)
        start = len(out)
        out.extend(self.curator.close_container(key))
        if len(out) > start and self.progress is not None:
            out.extend(self.progress.derive(out, start, self.stats.failures))

    def close_all(self, out: list[Record]) -> None:
        """The end of a bounded read (`replay --from-kafka`): every container closed."""
        for key in list(self.curator.curators):
            self.close_container(key, out)

    def finish_job(self, job: str, job_end: float | None, out: list[Record]) -> None:
        """The job's attempt is over here: close its containers, give each rank's last progress
        state (judged against `job_end`, epoch seconds of the job's latest line anywhere)."""
        for key in list(self.curator.curators):
            if self.curator.job_of(key) == job:
                if key not in self.flushed:
                    self.close_container(key, out)
                self.curator.forget(key)
                self.last_seen.pop(key, None)
                self.flushed.discard(key)
        if self.progress is not None:
            last_word: list[Record] = []
            with unit_of_work(self.stats.failures, "correlate", position=job, job=job, step="progress"):
                last_word = self.progress.finish_job(job, job_end)
            out.extend(last_word)

    def containers(self) -> list[tuple]:
        """The containers whose curators are kept (`kube_key`s)."""
        return list(self.curator.curators)

    def jobs(self) -> set[str]:
        return self.curator.jobs()

    def holds_open(self, job: str) -> bool:
        """Whether a container of the job holds something a later line could continue (see flush_idle)."""
        return any(c.stamper.job == job and c.holds_open() for c in self.curator.curators.values())

    def containers_of(self, job: str) -> set[tuple]:
        """(namespace, pod name, container) of the job's containers curated here, as records name them."""
        return {(c.identity.namespace, c.identity.pod, c.identity.container)
                for c in self.curator.curators.values() if c.stamper.job == job}

    def open_positions(self) -> list[int]:
        return self.curator.open_positions()
