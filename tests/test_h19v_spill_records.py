"""Headed records waiting on disk (pipeline/spill.PartitionedRecords, the digest's step series):
an object comes back as it was kept, type for type (an int in a float field stays an int, a float
in an int field, a lone surrogate, an int past 64 bits: each where MessagePack would not carry
it, pickled), in the order added, only the heads the reader keeps decoded; keep_only and a keep
at the spill drop exactly what they refuse."""

from __future__ import annotations

import math
import pickle
import random

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from gangscope.parsers.records import StepRecord
from gangscope.pipeline.spill import PartitionedRecords

FLOATS = ("epoch", "loss", "learning_rate", "grad_norm", "throughput", "step_time_s")


def _exact(value):
    """A value with the type of everything in it (1 and 1.0, [] and (), 'a' and a str subclass differ)."""
    if isinstance(value, msgspec.Struct):
        return (type(value), tuple((f, _exact(getattr(value, f))) for f in value.__struct_fields__))
    if isinstance(value, dict):
        return (dict, tuple((_exact(k), _exact(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_exact(v) for v in value))
    if isinstance(value, float) and math.isnan(value):
        return (float, "nan")
    return (type(value), value)


_values = st.one_of(st.none(), st.integers(-2**70, 2**70), st.floats(allow_nan=True), st.booleans())
_texts = st.one_of(st.none(), st.text(max_size=8), st.just("a\udc80b"))


@st.composite
def steps(draw, i):
    fields = {name: draw(_values) for name in FLOATS if draw(st.booleans())}
    step = draw(st.one_of(st.none(), st.integers(0, 10**6), st.just(5.0), st.integers(2**64, 2**65)))
    return StepRecord(id=f"s{i}", job=draw(_texts), pod=draw(_texts), rank=draw(st.one_of(st.none(), st.integers(0, 64))),
                      time=draw(_texts), seq=draw(st.integers(0, 3)), step=step,
                      metrics=draw(st.dictionaries(st.text(max_size=4), _values, max_size=3)),
                      nonfinite=draw(st.one_of(st.none(), st.lists(st.text(max_size=4), max_size=2))),
                      dialect=draw(st.sampled_from([None, "hf_trainer"])), **fields)


@settings(max_examples=80, deadline=None)
@given(st.data(), st.integers(1, 40), st.sampled_from([1, 2, 5, 1000]), st.integers(2, 4))
def test_records_come_back_as_kept_in_their_order_whatever_spills(data, count, buffer, modulo):
    runs = PartitionedRecords(3, buffer, "test-h19v-", StepRecord, 2)
    added: list[list] = [[], [], []]
    for i in range(count):
        record = data.draw(steps(i))
        n = data.draw(st.integers(0, 2))
        runs.add(n, (i, i % modulo), record)
        added[n].append(((i, i % modulo), record))
    for n in range(3):
        assert [_exact(e) for e in runs.read(n)] == [_exact(e) for e in added[n]]
        keep = lambda head: head[1] == 0  # noqa: E731
        assert [_exact(e) for e in runs.read(n, keep)] == [_exact(e) for e in added[n] if keep(e[0])]
    left = runs.keep_only(lambda head: head[0] % 2 == 0)
    assert left == sum(1 for part in added for head, _ in part if head[0] % 2 == 0)
    for n in range(3):
        assert [_exact(e) for e in runs.read(n)] == [_exact(e) for e in added[n] if e[0][0] % 2 == 0]
    runs.close()


def test_an_int_in_a_float_field_stays_an_int_and_the_rest_of_its_frame_goes_as_messagepack():
    runs = PartitionedRecords(1, 4, "test-h19v-", StepRecord, 1)
    records = [StepRecord(id="a", loss=2.5, epoch=1.0, metrics={"acc": 0.5}), StepRecord(id="b", loss=2, epoch=1),
               StepRecord(id="c", metrics={"tokens": 3}), StepRecord(id="d", job="j\udc80", step=7)]
    for i, r in enumerate(records):
        runs.add(0, (i,), r)
    assert runs.spilled
    back = [r for _, r in runs.read(0)]
    assert [_exact(r) for r in back] == [_exact(r) for r in records]
    assert type(back[1].loss) is int and type(back[1].epoch) is int and type(back[2].metrics["tokens"]) is int
    frame = next(runs._frames(0))
    assert list(frame[2]) == [0, 1, 1, 1]  # only the three MessagePack cannot carry are pickled
    assert pickle.loads(bytes(memoryview(frame[3])[frame[1][1]:frame[1][2]])) == records[1]
    runs.close()
    # a frame where nothing raises: the ints made floats are found by the encoding again
    runs = PartitionedRecords(1, 2, "test-h19v-", StepRecord, 1)
    runs.add(0, (0,), records[0])
    runs.add(0, (1,), records[2])
    assert [_exact(r) for _, r in runs.read(0)] == [_exact(records[0]), _exact(records[2])]
    assert list(next(runs._frames(0))[2]) == [0, 1]
    runs.close()


def test_a_reader_decodes_only_the_heads_it_keeps_and_a_keep_at_the_spill_writes_only_those():
    decoded = []
    runs = PartitionedRecords(2, 8, "test-h19v-", StepRecord, 2, keep=lambda head: head[1] != 3)
    original = runs._decoder.decode
    runs._decoder = type("Counting", (), {"decode": lambda self, data: decoded.append(1) or original(data)})()
    rng = random.Random(5)
    added = []
    for i in range(50):
        r = StepRecord(id=f"s{i}", job="j", step=i, loss=rng.random())
        runs.add(i % 2, (i, i % 4), r)
        added.append((i, r))
    got = list(runs.read(0, lambda head: head[0] % 10 == 0))
    on_disk = [i for i, r in added if i < 48 and i % 2 == 0 and i % 4 != 3 and i % 10 == 0]
    assert [h[0] for h, _ in got] == [i for i, r in added if i % 2 == 0 and i % 10 == 0]
    assert len(decoded) == len(on_disk)  # the 48 spilled; 48 and 49 still held, never encoded
    spilled = sum(len(frame[2]) for n in range(2) for frame in runs._frames(n))
    assert spilled == sum(1 for i, _ in added if i < 48 and i % 4 != 3)
    runs.close()
