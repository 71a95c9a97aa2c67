"""The record model: one typed struct per record kind, serialized in one place.

Every record carries the common fields of SPEC.md. Parsers fill the fields they
know (time, seq, rank and their own kind's fields); the pipeline stamps the
identity of the stream (namespace, pod, container, node, job), the attempt and
the deterministic `id`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec


class Record(msgspec.Struct, kw_only=True, tag_field="kind", gc=False):
    """Fields every record has (SPEC.md). `kind` is written from the subclass tag.

    Records are not tracked by the cycle collector (`gc=False`): a run makes one per step or
    error line and the digest keeps many, and each tracked one counted towards a collection that
    walked them all (replay of the realistic corpus: 3 full collections and 0.25 s CPU in the
    collector, 0.12 s untracked). A record never is in a reference cycle: every record is encoded
    as JSON, which a cycle through its fields would make fail."""

    id: str = ""
    job: str | None = None
    attempt: int = 1
    namespace: str | None = None
    pod: str | None = None
    container: str | None = None
    node: str | None = None
    rank: int | None = None
    time: str | None = None
    source: str | None = None
    # Where the line sat in its stream: `stream` is stdout/stderr, `seq` the position
    # among lines of the same stream with the same timestamp. Together with the
    # pod uid they make ids that do not depend on file paths or byte offsets.
    stream: str | None = None
    seq: int = 0
    local_rank: int | None = None

    @property
    def kind(self) -> str:
        return self.__struct_config__.tag  # type: ignore[return-value]


class Frame(msgspec.Struct):
    file: str
    line: int | None
    function: str | None
    code: str | None = None


class ChainLink(msgspec.Struct):
    """One exception of a chain, oldest first; `connector` is how it led to the next."""

    exception_type: str
    message: str
    frames: list[Frame] = []
    connector: str | None = None  # "cause" | "context" | None (last)


class TraceRecord(Record, tag="trace"):
    exception_type: str | None = None
    message: str | None = None
    frames: list[Frame] = []
    chain: list[ChainLink] = []
    fingerprint: str | None = None
    text: str = ""
    truncated: bool = False
    form: str = "traceback"  # traceback | exception_group | faulthandler | syntax_error | child_failed | remote
    line_count: int = 0
    # Free-form details some forms carry (ChildFailedError entries, sub-exceptions, ...).
    details: dict[str, Any] | None = None


class StepRecord(Record, tag="step"):
    step: int | None = None
    total_steps: int | None = None
    epoch: float | None = None
    total_epochs: int | None = None  # where the log says it ("Epoch 1/10"); epoch progress needs it
    loss: float | None = None
    learning_rate: float | None = None
    grad_norm: float | None = None
    throughput: float | None = None
    throughput_unit: str | None = None
    step_time_s: float | None = None
    metrics: dict[str, float] = {}
    nonfinite: list[str] | None = None  # SPEC rev. 2: fields (and metrics) printed as NaN/Inf; those fields are null
    dialect: str | None = None


class EpochRecord(Record, tag="epoch"):
    epoch: float | None = None
    total_epochs: int | None = None
    step: int | None = None
    total_steps: int | None = None
    progress: float | None = None
    eta_s: float | None = None


class ErrorRecord(Record, tag="error"):
    category: str = "unknown"
    message: str = ""
    line: str = ""
    trace_id: str | None = None
    pattern: str | None = None


class EventRecord(Record, tag="event"):
    reason: str | None = None
    type: str | None = None
    object_kind: str | None = None
    object_name: str | None = None
    message: str | None = None
    count: int = 1
    details: dict[str, Any] | None = None


class SignalRecord(Record, tag="signal"):
    """Derived signals about progress: a stall or a straggler."""

    signal: str = ""  # "stall" | "straggler"
    step: int | None = None
    value: float | None = None
    baseline: float | None = None
    message: str = ""


class DiagnosisRecord(Record, tag="diagnosis"):
    outcome: str = "running"
    category: str = "unknown"
    exception_type: str | None = None
    first_failure: dict[str, Any] | None = None
    summary: str = ""
    evidence: list[dict[str, Any]] = []
    symptoms: list[dict[str, Any]] = []
    events: list[str] = []
    confidence: float = 0.0
    details: dict[str, Any] | None = None


AnyRecord = TraceRecord | StepRecord | EpochRecord | ErrorRecord | EventRecord | SignalRecord | DiagnosisRecord

RECORD_KINDS = ("step", "epoch", "error", "trace", "event", "signal", "diagnosis")

# `kind` as a plain class attribute of each kind: read for every record on the hot path,
# where the base class's property costs a Python call.
for _cls in (TraceRecord, StepRecord, EpochRecord, ErrorRecord, EventRecord, SignalRecord, DiagnosisRecord):
    _cls.kind = _cls.__struct_config__.tag  # type: ignore[misc,assignment]

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(AnyRecord)


def encode(record: Record) -> bytes:
    """The one place a record becomes JSON."""
    return _encoder.encode(record)


def encode_lines(records: list[Record]) -> bytes:
    """NDJSON for a batch of records."""
    return _encoder.encode_lines(records)


def decode(data: bytes | str) -> AnyRecord:
    return _decoder.decode(data)


_packer = msgspec.msgpack.Encoder()
_unpacker = msgspec.msgpack.Decoder(list[AnyRecord])


def pack(records: list[Record]) -> bytes:
    """Records for another process (MessagePack: several times faster than pickling structs)."""
    return _packer.encode(records)


def unpack(data: bytes) -> list[Record]:
    return _unpacker.decode(data)  # type: ignore[return-value]


def to_dict(record: Record) -> dict[str, Any]:
    return msgspec.json.decode(_encoder.encode(record))


def from_dict(data: dict[str, Any]) -> AnyRecord:
    return msgspec.convert(data, AnyRecord)


_KINDS: dict[str, type[Record]] = {c.kind: c for c in (TraceRecord, StepRecord, EpochRecord, ErrorRecord, EventRecord,
                                                        SignalRecord, DiagnosisRecord)}  # type: ignore[misc]


def record_state(record: Record) -> dict[str, Any]:
    """A record held by a parser or tracker as plain data, for a snapshot: `kind` and the fields
    that differ from their defaults, values as they are. (A typed decode would turn an int in a
    float field into a float, and `epoch` 2 into 2.0 changes a step's id; MessagePack keeps both.)
    For records of scalar fields and dicts of them (steps, epochs, errors, signals)."""
    state: dict[str, Any] = {"kind": record.kind}
    for name, default in _DEFAULTS[record.kind]:
        value = getattr(record, name)
        if not (type(value) is type(default) and value == default):
            state[name] = value
    return state


def record_from_state(state: dict[str, Any]) -> Record:
    """The record `record_state` gave (ValueError for an unknown kind or field)."""
    fields = dict(state)
    cls = _KINDS.get(fields.pop("kind", None))  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"not a record kind: {state.get('kind')!r}")
    try:
        return cls(**fields)
    except TypeError as exc:
        raise ValueError(f"{cls.kind} record: {exc}") from None


_DEFAULTS = {
    kind: [(f.name, f.default if f.default is not msgspec.NODEFAULT else f.default_factory()) for f in msgspec.structs.fields(cls)]
    for kind, cls in _KINDS.items()
}


def stable_id(*parts: object) -> str:
    """A deterministic id from the given coordinates (never from paths or byte offsets)."""
    return id_hasher(*parts).hexdigest()


def id_hasher(*parts: object):
    """The hash behind `stable_id`, to be copied and continued by callers that share a prefix
    (pass "" last to end the prefix with its separator)."""
    text = "\x1f".join(["" if p is None else str(p) for p in parts])
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12)


def job_key(record: Record) -> str:
    """The job a record belongs to, as "namespace/job" (its pod when it names no job)."""
    job = record.job or record.pod or "unknown"
    if "/" in job or not record.namespace:
        return job
    return f"{record.namespace}/{job}"
