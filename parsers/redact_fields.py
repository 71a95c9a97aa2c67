"""What redaction looks at: every field of every record kind that can hold text, but those
`KEPT` names, each with its reason.

There is no registry of what to redact, only this table of what not to: a record kind added
to parsers/records.py is redacted in every text field without anyone telling redaction about
it. Which fields of a type can hold text is worked out once per type, from its annotations.
"""

from __future__ import annotations

from types import NoneType
from typing import Any, Callable, Literal, get_origin

import msgspec

from gangscope.parsers.records import DiagnosisRecord, ErrorRecord, EventRecord, Record, StepRecord, TraceRecord

# The fields redaction leaves as they are, per record kind (a kind has its bases' entries
# too), each with its reason: what must stay byte-stable for ids and joins. Every other field
# of every record kind that can hold text is redacted -- a str, or the strings in lists,
# dicts and nested structs -- including the fields of kinds added later: there is no
# registry of what to redact, only this table of what not to.
KEPT: dict[type, dict[str, str]] = {
    Record: {
        "id": "the deterministic id (hex) every sink writes and upserts on",
        "job": "namespace/name of the job: joins records, attempts and diagnoses; part of ids",
        "namespace": "the Kubernetes identity of the stream (a DNS name): part of every id",
        "pod": "the Kubernetes identity of the stream: part of every id, joins logs to events",
        "container": "the Kubernetes identity of the stream: part of every id",
        "node": "the node of the pod: joins records to node events",
        "time": "RFC 3339 time: part of ids, orders everything, places records in attempts",
        "source": "the file or topic the record was read from: where a replay or a consumer resumes",
        "stream": "stdout or stderr: part of ids",
    },
    StepRecord: {"dialect": "a name from the step parsers' dialect table, never log text: part of the step id"},
    TraceRecord: {"fingerprint": "hex digest of the trace's stable frames: groups one trace printed by many ranks"},
    ErrorRecord: {"trace_id": "the id of the trace the error stands for: joins the two"},
    EventRecord: {
        "object_name": "the pod or workload the event is about: joins events to pods and attempts "
        "(a DNS name the `sk-` token shape could match)",
    },
    DiagnosisRecord: {"events": "ids of the event records the verdict rests on: joins to the events index"},
}

# Field types that never hold text.
NOT_TEXT = frozenset((int, float, bool, NoneType, bytes))
_TEXT_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def text_fields(cls: type) -> tuple[tuple[str, bool], ...]:
    """The fields of a struct type redaction looks at, as (name, plain): every field whose type
    can hold text and that KEPT does not name for the type or its bases; `plain` when the field
    is a str (or optional str), else its value is walked. Worked out once per type."""
    fields = _TEXT_FIELDS.get(cls)
    if fields is None:
        kept = {name for base in cls.__mro__ for name in KEPT.get(base, ())}
        fields = tuple((f.name, _is_str(f.type)) for f in msgspec.structs.fields(cls)
                       if f.name not in kept and _may_hold_text(f.type))  # fmt: skip
        _TEXT_FIELDS[cls] = fields
    return fields


def known_clean_check(fields: tuple[tuple[str, bool], ...], clean: set[str], names: set[str]) -> Callable[[Any], bool]:
    """A function of a record telling that its text fields (`text_fields`) need no look: each
    is None, empty, a text in `clean`, or a dict of keys in `names` to numbers (a step's metrics).
    Nearly every record passes here. It is written out field by field and compiled (as
    dataclasses writes `__init__`): a loop over the fields costs a step record, and steps are
    most records, about three times as much."""
    lines = ["def known_clean(obj):"]
    for name, plain in fields:
        assert name.isidentifier()
        lines.append(f"    v = obj.{name}")
        if plain:
            lines.append("    if not (v is None or (type(v) is str and (v in clean or not v))): return False")
        else:
            lines.append("    if not (v is None or (type(v) is dict and (not v or (names.issuperset(v) and"
                         " not_text.issuperset(map(type, v.values()))))) or (type(v) is list and not v)): return False")
    lines.append("    return True")
    scope: dict[str, Any] = {"clean": clean, "names": names, "not_text": NOT_TEXT}
    exec("\n".join(lines), scope)  # noqa: S102 -- the source is made above from field names only
    return scope["known_clean"]


def _is_str(annotation: Any) -> bool:
    return annotation is str or (get_origin(annotation) is not None and set(_args(annotation)) <= {str, NoneType}
                                 and str in _args(annotation))  # fmt: skip


def _args(annotation: Any) -> tuple:
    return getattr(annotation, "__args__", ())


def _may_hold_text(annotation: Any) -> bool:
    """False only for types known never to hold text (numbers, booleans, literals chosen in
    code, and containers of them); anything else, unknown types included, is walked."""
    if annotation in NOT_TEXT:
        return False
    if get_origin(annotation) is Literal:
        return False
    args = _args(annotation)
    if get_origin(annotation) is not None and args:
        return any(_may_hold_text(a) for a in args if a is not Ellipsis)
    return True
