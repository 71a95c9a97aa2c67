"""LogPartition.feed_batch keys each message's container once per `kubernetes` block of the batch
(the decoder shares one block per container): containers interleaved in one batch, their blocks
shared, copied per message (as the general decoding gives them) or missing, are curated as each
message fed by itself, and the batch says every container it touched."""

from __future__ import annotations

import random

from gangscope.parsers.records import encode
from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
from gangscope.pipeline.correlate.progress import DerivedProgress
from gangscope.pipeline.curate import partition
from gangscope.pipeline.curate.fluentbit import kube_key
from gangscope.pipeline.sources import kafka as ksrc

from kafka_fixtures import fluentbit_records


def _interleaved(seed: int) -> list:
    """The fixture's envelopes, containers interleaved at random (each container's in order), a
    third of them with a copy of their block, one container's without any."""
    rng = random.Random(seed)
    per: dict[tuple, list] = {}
    for _key, value in fluentbit_records():
        env = ksrc.decode_log(value)
        per.setdefault(kube_key(env.kubernetes), []).append(env)
    assert len(per) > 3
    blockless = sorted(per)[1]
    queues = [list(v) for v in per.values()]
    items = []
    while queues:
        q = rng.choice(queues)
        env = q.pop(0)
        if not q:
            queues.remove(q)
        if kube_key(env.kubernetes) == blockless:
            env = env._replace(kubernetes=None)
        elif rng.random() < 1 / 3:
            env = env._replace(kubernetes=dict(env.kubernetes))
        items.append((len(items), env))
    return items


def _state():
    return partition.LogPartition(AttemptOf(EventBook()), progress=DerivedProgress())


def test_one_batch_of_interleaved_containers_curates_as_each_message_alone():
    items = _interleaved(4)
    by_one, out_one = _state(), []
    for offset, env in items:
        by_one.feed(offset, env, out_one)
    batched, out_batch = _state(), []
    touched = batched.feed_batch(items, out_batch, partition.text_scanner())
    assert touched == {kube_key(env.kubernetes) for _, env in items}
    assert () in touched  # the container without a block
    assert sorted(batched.containers()) == sorted(by_one.containers())
    by_one.close_all(out_one)
    batched.close_all(out_batch)
    assert len(out_batch) > 100
    assert [encode(r) for r in out_batch] == [encode(r) for r in out_one]
