"""Snapshots of curation state: versioned plain data, never pickled objects.

A snapshot holds exactly what curation needs to go on from where it stopped: each container's
open records (their lines so far), CRI partials, per-stream time and seq counters, what the step
parsers learnt of the stream, the Trainer's logs dicts waiting for their step, the progress of
each rank, and the counters of the run. Each stateful class writes its part with `snapshot()`
and takes it back with `restore()` (or `from_snapshot()`); the classes of its parts are declared
here and next to the parsers (`TraceState`, `StepState`, `TrainerLogsState`, `TrackerState`),
with named fields: no attribute name is a storage format by accident. What a build rebuilds by
itself (compiled patterns, caches, limits, the attempt lookup) is not in it.

On the wire (MessagePack, which keeps an int an int and a NaN a NaN; zlib on top)::

    {"schema": 2, "gangscope": "<version that wrote it>", "partition": {...}}

`decode` reads only the schema this build writes: any other, and anything that is not a
snapshot at all (a pickle of an older build, garbage), raises `SnapshotError` with a sentence a
log can show; nothing in the payload is ever executed. Schema 1 was the pickled checkpoints.
Change a state class in a way an older reader would misread (a field renamed, its meaning
changed) and bump `SCHEMA`; a new field with a default needs no bump.
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec

from gangscope import __version__
from gangscope.parsers.progress import TrackerState
from gangscope.parsers.rendezvous import RendezvousState
from gangscope.parsers.steps import StepState, TrainerLogsState
from gangscope.parsers.traces import TraceState

SCHEMA = 2


class SnapshotError(ValueError):
    """A snapshot this build does not read (another schema, or not a snapshot at all)."""


class IdentityState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A container's `PodIdentity`."""

    namespace: str | None = None
    pod: str = "unknown"
    pod_uid: str | None = None
    container: str | None = None
    restart: int = 0
    node: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()


class SubState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One sub-stream (a stream, and the rank its lines' prefixes name): the state of each of its
    parsers that has one (by kind), where its open record started (`opened_at`, a source
    position such as a Kafka offset) and the time of its last line."""

    stream: str
    rank: int | None = None
    local_rank: int | None = None
    parsers: list[TraceState | StepState | RendezvousState] = []
    opened_at: int | None = None
    last_time: str | None = None


class PartialState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A CRI line of `stream` still being joined from P chunks: the first chunk's time and
    position (`at`), the chunks kept and their size, and the first bytes of a character the last
    chunk ended in (`cut_tail`: the runtime cuts by bytes; the next chunk holds the rest)."""

    stream: str
    time: str | None = None
    size: int = 0
    chunks: list[str] = []
    at: int | None = None
    cut_tail: bytes = b""


class RankMapState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A rendezvous block of the container's torchrun agent (parsers/rendezvous.py): since when
    (identity.time_key of its time; None without one), the global rank of each local rank."""

    since: str | None = None
    global_of: dict[int, int] = {}


class ContainerState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One container's curator: who it is (`key` in its Fluent Bit stream, `identity`, `job`,
    the envelope format `fmt`, the `source` named in failures), its sub-streams in the order they
    began (`open`: the indices of those with an open record, in the order those opened), its
    partial lines, per stream the time and seq of its last complete line, the line counter of a
    plain-text log (`text_seq`), when an open record may go idle (`deadline_due`, epoch
    seconds), the Trainer's logs folding, the tick it was last fed at (`last_used`) and the rank
    maps of its torchrun agent (`rank_maps`, oldest first)."""

    key: tuple[Any, ...] = ()
    identity: IdentityState
    fmt: str
    job: str
    source: str | None = None
    subs: list[SubState] = []
    open: list[int] = []
    partial: list[PartialState] = []
    last_time: dict[str, str | None] = {}
    last_seq: dict[str, int] = {}
    text_seq: int = 0
    deadline_due: float | None = None
    trainer_logs: TrainerLogsState = msgspec.field(default_factory=TrainerLogsState)
    last_used: int = 0
    rank_maps: list[RankMapState] = []
    lines_read: int = 0  # the container's lines read so far (the Trainer folder's bar wait counts them)


class CuratorState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A Fluent Bit stream's curator: its containers in the order they were first seen (each
    one's `last_used` says how recently it was fed), lines fed (`tick`) and eviction rounds."""

    containers: list[ContainerState] = []
    tick: int = 0
    evictions: int = 0


class StatsState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The counters of `CurationStats`, the time of each job's latest line (`job_end`) and the
    failures caught (`isolation.StageFailures.summary()`)."""

    lines: int = 0
    unreadable_lines: int = 0
    invalid_utf8_lines: int = 0
    partial_lines_cut: int = 0
    dangling_partials: int = 0
    open_records_flushed: int = 0
    containers_evicted: int = 0
    bar_steps_released_at_bound: int = 0
    records: dict[str, int] = {}
    problems: list[str] = []
    job_end: dict[str, float] = {}
    failures: list[dict[str, Any]] = []
    skips: list[dict[str, Any]] = []  # CurationStats.skips, as the failures


class PartitionState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One pod-log partition (`LogPartition`): its curator, counters, the progress of the ranks
    whose steps it curated (None: it derives none), the containers closed since their last line
    (`flushed`, by key), the curator's eviction rounds it last pruned for, and the next offset to
    read."""

    curator: CuratorState = msgspec.field(default_factory=CuratorState)
    stats: StatsState = msgspec.field(default_factory=StatsState)
    progress: TrackerState | None = None
    flushed: list[tuple[Any, ...]] = []
    evictions_seen: int = 0
    next_offset: int | None = None


class _Head(msgspec.Struct):
    """What is read first: the schema decides whether the rest is read at all."""

    schema: int
    gangscope: str = "?"


class Snapshot(msgspec.Struct):
    schema: int
    gangscope: str
    partition: PartitionState


_encoder = msgspec.msgpack.Encoder()
_head = msgspec.msgpack.Decoder(_Head)
_snapshot = msgspec.msgpack.Decoder(Snapshot)


def encode(partition: PartitionState) -> bytes:
    """A partition's snapshot as bytes (MessagePack, zlib-compressed)."""
    return zlib.compress(_encoder.encode(Snapshot(SCHEMA, __version__, partition)), 1)


def decode(data: bytes) -> PartitionState:
    """The partition state in `data`; SnapshotError when it is not a snapshot this build reads."""
    try:
        raw = zlib.decompress(data)
    except (zlib.error, TypeError) as exc:
        raise SnapshotError(f"not a gangscope snapshot (not zlib data: {exc})") from None
    try:
        head = _head.decode(raw)
    except msgspec.DecodeError as exc:  # includes a pickle (schema 1), which is never unpickled
        raise SnapshotError(f"not a gangscope snapshot ({exc})") from None
    if head.schema != SCHEMA:
        relation = "newer" if head.schema > SCHEMA else "older"
        raise SnapshotError(f"schema {head.schema} (gangscope {head.gangscope}) is {relation} than this build reads ({SCHEMA})")
    try:
        return _snapshot.decode(raw).partition
    except msgspec.DecodeError as exc:
        raise SnapshotError(f"schema {SCHEMA} snapshot does not read as one ({exc})") from None
