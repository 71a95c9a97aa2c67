"""Redaction is a step of the chain no record skips: every text field of every record kind is
redacted unless parsers/redact_fields.KEPT names it (with its reason), and nothing planted in the input
reaches a sink or `gangscope diagnose --json`.

The secrets are made-up Hugging Face tokens (`hf_` + 34 letters and digits), one per place
they are planted, so a leak names its place.
"""

from __future__ import annotations

import json
import re
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import msgspec
import pytest

from gangscope.parsers.records import AnyRecord, ChainLink, Frame, RECORD_KINDS, Record, decode, encode
from gangscope.parsers.redact import MASK, Redactor
from gangscope.parsers.redact_fields import KEPT
from gangscope.pipeline.curate import events as curate_events
from gangscope.pipeline.run.cli import main

ROOT = Path(__file__).resolve().parents[1]
UID = "0c6d1111-2222-3333-4444-555566667777"


def secret(i: int) -> str:
    return f"hf_{i:02d}QrTzLmNpXvBcDfGhJkWsYuAeIoPqRsTu"


SECRET = secret(0)
PASSWORD = "S3cr3tPa55w0rd"  # no token shape: only the name of its key gives it away
HF_TOKEN = re.compile(r"hf_\d\dQrTzLmNpXvBcDfGhJkWsYuAeIoPqRsTu")


# ----------------------------------------------------------------------------- every field of every kind


def planted(annotation: Any) -> Any:
    """A value of the annotated type with SECRET in every string it can hold (dict keys too,
    and PASSWORD under a secret-named key where any value goes); None when the type holds no text."""
    if annotation is str:
        return f"seen {SECRET} here"
    if annotation in (int, float, bool, types.NoneType):
        return None
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        return next((v for v in map(planted, args) if v is not None), None)
    if origin is list:
        item = planted(args[0])
        return None if item is None else [item]
    if origin is dict:
        value = planted(args[1])
        out = {f"key {SECRET}": 1.0 if value is None else value}
        if args[1] is Any:
            out["DB_PASSWORD"] = PASSWORD
        return out
    if annotation is Any:
        return {"nested": [{"note": f"deep {SECRET}"}], "DB_PASSWORD": PASSWORD}
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return annotation(**{f.name: planted(f.type) for f in msgspec.structs.fields(annotation)})
    raise AssertionError(f"the test does not know how to plant into {annotation!r}")


def kept_fields(cls: type) -> set[str]:
    return {name for base in cls.__mro__ for name in KEPT.get(base, ())}


class NoteRecord(Record, tag="note"):
    """A record kind made up here: nobody told redaction about it."""

    note: str = ""
    labels: list[str] = []
    extra: dict[str, Any] | None = None


KINDS = [*get_args(AnyRecord), NoteRecord]


@pytest.mark.parametrize("cls", KINDS, ids=lambda c: c.__name__)
def test_a_secret_in_any_text_field_of_any_record_kind_is_masked_unless_kept(cls):
    fields = {f.name: planted(f.type) for f in msgspec.structs.fields(cls)}
    record = cls(**{name: value for name, value in fields.items() if value is not None})
    Redactor().record(record)
    kept = kept_fields(cls)
    for name, value in fields.items():
        if value is None:
            continue  # numbers and flags: no text to plant
        after = json.dumps(msgspec.to_builtins(getattr(record, name)))
        if name in kept:
            assert SECRET in after, f"{cls.__name__}.{name} is kept: it must come out as it went in"
        else:
            assert SECRET not in after and PASSWORD not in after, f"{cls.__name__}.{name} leaked: {after}"
            assert MASK in after


def test_a_record_kind_nobody_registered_is_redacted():
    record = NoteRecord(note=f"HF_TOKEN={SECRET}", labels=[f"tag {SECRET}"], extra={"env": {"DB_PASSWORD": PASSWORD}},
                        pod="llama-train-worker-0")  # fmt: skip
    Redactor().record(record)
    assert SECRET not in encode(record).decode() and PASSWORD not in encode(record).decode()
    assert record.note == f"HF_TOKEN={MASK}" and record.pod == "llama-train-worker-0"


def test_nested_frames_and_chain_links_are_masked_in_place():
    link = ChainLink(exception_type="ValueError", message=f"bad {SECRET}",
                     frames=[Frame(file=f"/w/{SECRET}/a.py", line=1, function="f", code=f"x = '{SECRET}'")])  # fmt: skip
    assert Redactor().value(link) is link
    assert SECRET not in encode(link).decode()


def test_a_value_nested_deeper_than_the_walk_goes_is_masked_whole():
    deep: Any = f"at the bottom {SECRET}"
    for _ in range(100):
        deep = {"down": [deep]}
    record = get_args(AnyRecord)[4](details=deep)  # an EventRecord: its details come from the cluster
    Redactor().record(record)
    assert SECRET not in encode(record).decode() and MASK in encode(record).decode()


def test_every_kept_field_is_a_field_of_its_kind_and_says_why():
    for cls, fields in KEPT.items():
        names = {f.name for f in msgspec.structs.fields(cls)}
        for name, reason in fields.items():
            assert name in names, f"KEPT names {cls.__name__}.{name}, which is not a field"
            assert len(reason.split()) >= 4, f"{cls.__name__}.{name}: say why it is kept"


def test_a_record_with_no_secret_comes_out_unchanged_and_as_the_same_objects():
    step = get_args(AnyRecord)[1](step=3, loss=2.5, metrics={"epoch_step": 3.0}, throughput_unit="tokens/s")
    before = encode(step)
    metrics = step.metrics
    r = Redactor()
    for _ in range(2):  # the second time from what the first one learned
        r.record(step)
        assert encode(step) == before and step.metrics is metrics


# ----------------------------------------------------------------------------- the one step


def test_records_are_redacted_only_in_curation():
    """The step sits in pipeline/curate: the log lines' emission path and the events' one
    function; no source, driver or sink calls it, and sources hand on decoded input only."""
    callers = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pipeline").rglob("*.py")
                     if "redact_record" in p.read_text())  # fmt: skip
    assert callers == ["pipeline/curate/container.py", "pipeline/curate/events.py"]
    for path in (ROOT / "pipeline" / "sources").rglob("*.py"):
        text = path.read_text()
        assert "parsers.redact" not in text and "parsers.events" not in text and "pipeline.curate" not in text, path


# ----------------------------------------------------------------------------- end to end


def _at(second: int, frac: int = 0) -> str:
    return f"2024-05-01T12:{second // 60:02d}:{second % 60:02d}.{frac:09d}Z"


def _log_lines() -> list[str]:
    lines = [f"{_at(i)} stdout F epoch 1 step {i}/100 loss {2.5 - i * 0.01:.3f}" for i in range(1, 21)]
    # a Trainer dict: its keys become a step's metric names
    lines.append(f"{_at(21, 5)} stdout F {{'loss': 2.1, 'learning_rate': 0.0001, '{secret(1)}': 1.0, 'epoch': 0.2}}")
    lines.append(f"{_at(30)} stderr F node-7:4021:4102 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got "
                 f"completion from peer with {secret(15)}")  # fmt: skip
    trace = [  # a stall of the steps, then a chained traceback with a secret in every part of it
        "Traceback (most recent call last):",
        f'  File "/workspace/{secret(2)}/train.py", line 40, in {secret(3)}',
        f"    api = HfApi(token='{secret(4)}')",
        f"ValueError: bad token {secret(5)}",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        f'  File "/workspace/{secret(6)}/run.py", line 7, in main',
        f"    login({secret(7)})",
        f"RuntimeError: launch failed with {secret(8)}",
    ]
    lines += [f"{_at(400, i)} stderr F {text}" for i, text in enumerate(trace)]
    return lines


EVENTS = [
    {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "llama-train-worker-0.1", "namespace": "team-a", "uid": "e1"},
        "involvedObject": {"kind": "Pod", "namespace": "team-a", "name": "llama-train-worker-0"},
        "reason": "Failed", "type": "Warning", "message": f"Failed to pull image with token {secret(10)}",
        "firstTimestamp": _at(402), "lastTimestamp": _at(402), "count": 1,
    },
    {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "llama-train-worker-0", "namespace": "team-a", "uid": UID, "creationTimestamp": _at(0),
                     "labels": {"training.kubeflow.org/job-name": "llama-train", "note": secret(11)},
                     "annotations": {"kubeflow.org/note": f"token {secret(12)}"}},
        "spec": {"nodeName": "gpu-1", "containers": [{"name": "pytorch", "image": "trainer:1"}]},
        "status": {"phase": "Failed", "reason": "Error", "message": f"pod failed: {secret(13)}",
                   "containerStatuses": [{"name": "pytorch", "restartCount": 0, "state": {"terminated": {
                       "exitCode": 1, "reason": "Error", "message": f"exit with {secret(14)}",
                       "startedAt": _at(1), "finishedAt": _at(403)}}}]},
    },
]  # fmt: skip


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    """A small job whose logs and events hold a secret in every place text goes: (logs, events)."""
    root = tmp_path_factory.mktemp("planted")
    logs = root / "logs" / f"team-a_llama-train-worker-0_{UID}" / "pytorch"
    logs.mkdir(parents=True)
    (logs / "0.log").write_text("\n".join(_log_lines()) + "\n")
    events = root / "events.ndjson"
    events.write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    return root / "logs", events


def test_no_planted_secret_reaches_the_local_sink_and_every_record_kind_is_there(planted_run, tmp_path):
    logs, events = planted_run
    out = tmp_path / "out"
    main(["replay", str(logs), "--events", str(events), "--out", str(out), "--no-progress"])
    written = {p.name: p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()}
    assert {f"{kind}.ndjson" for kind in RECORD_KINDS} <= set(written), "every kind, derived ones too, is checked"
    for kind in ("trace", "error", "step", "event", "diagnosis"):
        assert MASK in written[f"{kind}.ndjson"], f"a secret was planted where {kind} records come from"
    leaks = {name: sorted(set(HF_TOKEN.findall(text))) for name, text in written.items() if HF_TOKEN.search(text)}
    assert not leaks


def test_records_made_after_curation_are_built_only_from_redacted_text(planted_run, tmp_path):
    """Epochs, signals and diagnoses come from records that went through the step: each one
    written is what the step would make of it (the step changes nothing in it)."""
    logs, events = planted_run
    out = tmp_path / "out"
    main(["replay", str(logs), "--events", str(events), "--out", str(out), "--no-progress"])
    r = Redactor()
    for kind in RECORD_KINDS:
        for line in (out / f"{kind}.ndjson").read_bytes().splitlines():
            assert encode(r.record(decode(line))) == encode(decode(line)), f"a {kind} record the step would still change"


def test_no_planted_secret_reaches_diagnose_json(planted_run, capsys):
    logs, events = planted_run
    main(["diagnose", str(logs), "--events", str(events), "--json"])
    printed = capsys.readouterr().out
    diagnoses = json.loads(printed)
    assert diagnoses and MASK in printed
    assert not HF_TOKEN.findall(printed)


def test_events_from_a_file_and_from_kafka_messages_are_redacted_byte_identically():
    from_file = [r for r in curate_events.events_of_lines([json.dumps(e) for e in EVENTS]) if r.kind == "event"]
    from_kafka = [r for e in EVENTS for r in curate_events.events_of_message(json.dumps(e).encode()).records]
    assert len(from_file) >= 3 and [encode(r) for r in from_kafka] == [encode(r) for r in from_file]
    assert not HF_TOKEN.findall(b"".join(encode(r) for r in from_file).decode())
