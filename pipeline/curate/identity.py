"""Who a line belongs to: the job of a pod, its rank hints, and the stamp every record gets."""

from __future__ import annotations

from dataclasses import dataclass, field

from gangscope.parsers.times import _VALID_HEADS, checked_utc
from gangscope.parsers.records import EpochRecord, Record, SignalRecord, StepRecord, TraceRecord, id_hasher, stable_id
from gangscope.pipeline.curate.naming import job_of_pod
from gangscope.pipeline.sources.files import PodIdentity


def job_of(identity: PodIdentity) -> str:
    """`namespace/name` of the job a pod belongs to: from its labels, else from its name."""
    return job_of_pod(identity.namespace or "default", identity.pod, dict(identity.labels), dict(identity.annotations))


@dataclass
class Stamper:
    """Writes the stream's identity, UTC time, attempt and deterministic id into records."""

    identity: PodIdentity
    job: str
    source: str
    attempt_of: object = None  # callable(job, utc_time) -> attempt number
    # callable(record, kind, detail): a value the stamp could not keep (a time that names no
    # instant, a number past what the index mappings hold) was set to null; the owner counts it.
    on_skip: object = field(default=None, repr=False)
    # Step ids of one rank share every coordinate but epoch, step and dialect: the hash of that
    # common prefix is kept per (rank, local rank) and copied, not recomputed.
    _step_prefixes: dict = field(default_factory=dict, repr=False)
    # Likewise the ids of a line's records (errors, traces, unnumbered steps) of one kind, stream
    # and rank share every coordinate but the line's time and seq (`record_id`).
    _line_prefixes: dict = field(default_factory=dict, repr=False)
    # What this container's torchrun agent said of its workers' ranks (parsers/rendezvous.py), the
    # latest few blocks, oldest first: (time of the block as `time_key` orders it, {local rank:
    # global rank}). A record that carries only a local rank gets the global rank of the block in
    # force at its line's time (a step held over a worker group's restart keeps its old rank).
    rank_maps: list | None = None

    def __getstate__(self) -> dict:
        # The prefix hashes are a cache (and hash objects do not pickle): a pickled stamper leaves them out.
        return {**self.__dict__, "_step_prefixes": {}, "_line_prefixes": {}, "on_skip": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    def __post_init__(self) -> None:
        ident = self.identity
        # the fields every record of the stream gets as they are (identity, job and source never change)
        self._where = (ident.namespace, ident.pod, ident.container, ident.node, self.job, self.source)

    def stamp(self, record: Record, stream: str | None) -> Record:
        # One pass of straight-line code per record (it runs for every record kept): the usual
        # time's check, the bounds and the id are written out here rather than called.
        record.namespace, record.pod, record.container, record.node, record.job, record.source = self._where
        if stream is not None:
            record.stream = stream
        time = record.time
        if time:
            # A runtime's malformed stamp is not written through: a `...Z` time is checked too
            # (times.checked_utc; its usual case inline: a second seen valid, a fraction of digits).
            if not (time[-1:] == "Z" and _VALID_HEADS.get(time[:19]) and (
                    len(time) == 20 or time[19] == "." and time[20:-1].isdigit() and time.isascii())):
                utc = checked_utc(time)
                if utc is not time:  # (a `Z` time is kept as it is)
                    if utc is None:
                        self._skipped(record, "bad_timestamp", f"time {time[:40]!r}")
                    record.time = time = utc
        elif time is not None:
            record.time = time = None
        rank, local_rank = record.rank, record.local_rank
        if self.rank_maps is not None and rank is None and local_rank is not None:
            record.rank = rank = self._global_rank(local_rank, time)
        # Numbers past a `long`: one chained comparison per field while all fit (None counts as 0).
        kind = type(record)
        if kind is StepRecord or kind is EpochRecord:
            step = record.step
            if not (LONG_MIN <= (step or 0) <= LONG_MAX and LONG_MIN <= (record.total_steps or 0) <= LONG_MAX
                    and LONG_MIN <= (record.total_epochs or 0) <= LONG_MAX and LONG_MIN <= (record.epoch or 0) <= LONG_MAX
                    and LONG_MIN <= (rank or 0) <= LONG_MAX and LONG_MIN <= (local_rank or 0) <= LONG_MAX):
                self._bound(record, _BOUNDED_FIELDS[kind])
                step, rank, local_rank = record.step, record.rank, record.local_rank
            if kind is StepRecord:
                metrics = record.metrics  # type: ignore[attr-defined]
                if metrics and not (LONG_MIN <= min(metrics.values()) and max(metrics.values()) <= LONG_MAX):
                    self._bound_metrics(record, metrics)
        elif not (LONG_MIN <= (rank or 0) <= LONG_MAX and LONG_MIN <= (local_rank or 0) <= LONG_MAX) or (
                kind is SignalRecord or kind is TraceRecord):
            self._bound(record, _BOUNDED_FIELDS.get(kind, _RANKS))
            rank, local_rank = record.rank, record.local_rank
        if self.attempt_of is not None:
            record.attempt = self.attempt_of(self.job, time)  # type: ignore[operator]
        if kind is StepRecord and step is not None:
            # record_id of a numbered step, from the hash of its rank's common prefix
            who = (rank, local_rank)
            prefix = self._step_prefixes.get(who)
            if prefix is None:
                prefix = self._step_prefix(record)
            h = prefix.copy()
            epoch, dialect = record.epoch, record.dialect  # type: ignore[attr-defined]
            h.update(f"{'' if epoch is None else epoch}\x1f{step}\x1f{'' if dialect is None else dialect}".encode("utf-8", "surrogatepass"))
        else:
            # record_id of any other record, from the hash of its kind, stream and rank's common
            # prefix (the namespace, pod and container are the stamp's: set above)
            prefix = self._line_prefixes.get((kind, record.stream, rank, local_rank))
            if prefix is None:
                prefix = self._line_prefix(record)
            h = prefix.copy()
            seq = record.seq
            h.update(f"{'' if time is None else time}\x1f{'' if seq is None else seq}".encode("utf-8", "surrogatepass"))
        record.id = h.hexdigest()
        return record

    def learn_ranks(self, time: str | None, global_of: dict[int, int]) -> None:
        """A rendezvous block at `time` (a record's time, as the envelope gave it) says which global
        rank each local rank is from then on."""
        utc = checked_utc(time) if time else None
        maps = self.rank_maps = (self.rank_maps or [])[-(RANK_MAPS_KEPT - 1):]
        maps.append((time_key(utc) if utc else None, dict(global_of)))

    def _global_rank(self, local_rank: int, utc: str | None) -> int | None:
        maps = self.rank_maps
        if utc is None or len(maps) == 1 and maps[0][0] is None:
            return maps[-1][1].get(local_rank)
        at = time_key(utc)
        for since, global_of in reversed(maps):
            if since is None or since <= at:
                return global_of.get(local_rank)
        return None  # a line from before the first block: its rank was not said yet

    def _bound(self, record: Record, names: tuple[str, ...]) -> None:
        """Numbers the index mappings cannot hold (past a `long`) become null, counted."""
        get = getattr
        for name in names:
            v = get(record, name)
            if type(v) is int and not LONG_MIN <= v <= LONG_MAX:
                setattr(record, name, None)
                self._skipped(record, "out_of_range", f"{name} of {v.bit_length()} bits")
        if type(record) is TraceRecord and record.frames:
            for frame in record.frames:  # type: ignore[attr-defined]
                if type(frame.line) is int and not LONG_MIN <= frame.line <= LONG_MAX:
                    frame.line = None
                    self._skipped(record, "out_of_range", "frame line")

    def _bound_metrics(self, record: Record, metrics: dict) -> None:
        for name, v in list(metrics.items()):
            if type(v) is int and not LONG_MIN <= v <= LONG_MAX:
                del metrics[name]
                self._skipped(record, "out_of_range", f"metrics.{name[:40]}")

    def _skipped(self, record: Record, kind: str, detail: str) -> None:
        if self.on_skip is not None:
            self.on_skip(record, kind, detail)  # type: ignore[operator]

    def _step_prefix(self, record: StepRecord):
        """The hash of the coordinates a rank's numbered steps share (stamp continues a copy)."""
        if len(self._step_prefixes) >= 4096:
            self._step_prefixes.clear()
        ident = self.identity
        head = ("step", record.job, ident.pod_uid or record.pod, record.container, record.rank, record.local_rank)
        prefix = self._step_prefixes[(record.rank, record.local_rank)] = id_hasher(*head, "")
        return prefix

    def _line_prefix(self, record: Record):
        """The hash of the coordinates a line's records of one kind, stream and rank share: all
        but the line's time and seq (the namespace, pod and container are the stamp's)."""
        if len(self._line_prefixes) >= 4096:
            self._line_prefixes.clear()
        stream, rank, local_rank = record.stream, record.rank, record.local_rank
        head = (record.kind, record.namespace, self.identity.pod_uid or record.pod, record.container, stream, rank, local_rank)
        prefix = self._line_prefixes[(type(record), stream, rank, local_rank)] = id_hasher(*head, "")
        return prefix


RANK_MAPS_KEPT = 16  # rendezvous blocks remembered per container (one per start or restart of its workers)


def time_key(utc: str) -> str:
    """A `...Z` time (checked_utc's) as text that sorts as the instants do: runtimes trim a
    fraction's trailing zeros, so `.5Z` would sort after `.51Z`."""
    head, _, fraction = utc[:-1].partition(".")
    return f"{head}.{fraction:0<9}"


# What an OpenSearch `long` holds (templates/: step, total_steps, epochs, counts, line numbers).
LONG_MAX = 2**63 - 1
LONG_MIN = -(2**63)
_RANKS = ("rank", "local_rank")
_BOUNDED_FIELDS: dict[type, tuple[str, ...]] = {
    StepRecord: _RANKS + ("step", "total_steps", "total_epochs", "epoch"),
    EpochRecord: _RANKS + ("step", "total_steps", "total_epochs", "epoch"),
    SignalRecord: _RANKS + ("step",),
}


def record_id(record: Record, pod_uid: str | None) -> str:
    """Deterministic: the same log line gives the same id from a file or from Kafka."""
    if isinstance(record, StepRecord) and record.step is not None:
        # One record per pod, rank, epoch and step: a redraw or a replay overwrites it (a
        # container restart that re-runs a step too); loops that restart their step
        # counter each epoch print "step 10" once per epoch. Not the attempt: it comes from
        # gang events, which may arrive after the line (a late event re-stamps the attempt
        # field in place; the id, like every line record's, is the line's alone). A new
        # attempt runs in new pods (a requeue deletes them), so the pod uid keeps two
        # attempts' "step 10" apart.
        who = (pod_uid or record.pod, record.container, record.rank, record.local_rank)
        return stable_id("step", record.job, *who, record.epoch, record.step, record.dialect)
    return stable_id(
        record.kind,
        record.namespace,
        pod_uid or record.pod,
        record.container,
        record.stream,
        record.rank,
        record.local_rank,
        record.time,
        record.seq,
    )


def with_derived_id(record: Record) -> Record:
    """Ids of records computed from other records: one epoch record per job, attempt and rank
    (updated in place as the stream advances), one signal per rank and step."""
    if record.id:
        return record
    who = record.rank if record.rank is not None else f"{record.pod}/{record.container}/{record.local_rank}"
    if record.kind == "epoch":
        record.id = stable_id("epoch", record.job, record.attempt, who)
    elif record.kind == "signal":
        record.id = stable_id("signal", record.signal, record.job, record.attempt, who, record.step)  # type: ignore[attr-defined]
    else:
        record.id = stable_id(record.kind, record.job, record.attempt, who, record.time, record.seq)
    return record
