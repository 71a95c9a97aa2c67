"""A tqdm bar's records wait for the Trainer's dicts a bounded number of the container's lines.

TrainerLogFolder drops a bar's records when the Trainer's logs dicts come (the dicts are the step
lines), so it holds them until it knows. Bounded only by `max_held` records (10,000), a plain bar of
fewer states was held until the container closed: a consumer indexed none of its steps while the pod
ran, and pickled them all into every checkpoint (the realistic bench corpus: 7,562 bar records held
for 2,416 lines on average). Now they wait at most `bar_wait_lines` lines of the container from the
first one held, then go on (counted: `bar_steps_released_at_bound`), and so do the next ones; the same
records in the same order whichever way the lines come (blocks, lines, Kafka envelopes, a snapshot).
"""

from __future__ import annotations

import json
import random

import msgspec
import pytest

from kafka_backends import kafka_client  # noqa: F401  (the fixture: each server test once per backend)

from gangscope.parsers.records import StepRecord
from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
from gangscope.pipeline.curate import partition
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.snapshot import ContainerState
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.sources import kafka as ksrc
from gangscope.pipeline.sources.files import PodIdentity

UID = "5b0e2a4c-1111-4222-8333-944455556666"
POD = PodIdentity(namespace="team-a", pod="bar-train-worker-0", pod_uid=UID, container="pytorch")
TOTAL = 5000
NOISE = ["INFO data.py:88] loaded shard {n} of 1024", "GPU 3 temperature {n}C power 300W", "batch {n} tokens 4096 padding 3%"]


def bar(step: int) -> str:
    """A tqdm state as tqdm.std.format_meter draws it (no description: the Trainer's own bar looks the same)."""
    pct = 100 * step // TOTAL
    return f"{pct:3d}%|{'#' * (pct // 10):<10}| {step}/{TOTAL} [00:{step // 4 % 60:02d}<11:{step % 60:02d},  3.{step % 90 + 10}it/s]"


def trainer_dict(step: int, per_epoch: int = TOTAL) -> str:
    return "{'loss': %.4f, 'grad_norm': 1.25, 'learning_rate': 2e-05, 'epoch': %s}" % (2.5 - step / 10000, round(step / per_epoch, 4))


def pod_log(steps: int, noise_per_step: int = 3, dicts_at: tuple[int, ...] = (), seed: int = 3,
            redraw: bool = False, partials_every: int = 0) -> list[str]:
    """CRI lines of one pod: a bar state per step on stderr (torchrun --tee: one state a line), a few
    ordinary lines between them, Trainer dicts on stdout after the steps in `dicts_at`; with `redraw`,
    each dict's tqdm.write clears the bar and draws it again (blanks, an empty line, the same state:
    fixtures/dialects/hf_trainer_torchrun); with `partials_every`, a long line written in three pieces
    (the runtime's P, P, F lines) after every so many steps."""
    rng = random.Random(seed)
    out = []
    ns = 1_714_564_800 * 10**9

    def add(stream: str, text: str) -> None:
        nonlocal ns
        ns += rng.randint(1_000, 900_000)
        secs, frac = divmod(ns, 10**9)
        out.append(f"2024-05-01T12:{secs // 60 % 60:02d}:{secs % 60:02d}.{frac:09d}Z {stream} F {text}")

    add("stderr", f"  0%|          | 0/{TOTAL} [00:00<?, ?it/s]")
    for s in range(1, steps + 1):
        add("stderr", bar(s))
        for _ in range(noise_per_step):
            add("stdout", rng.choice(NOISE).format(n=rng.randint(0, 999)))
        if partials_every and s % partials_every == 0:
            dump = "config dump " + json.dumps({f"layer{i}": [round(rng.random(), 4)] * 8 for i in range(40)})
            third = len(dump) // 3
            for k, piece in enumerate((dump[:third], dump[third : 2 * third], dump[2 * third :])):
                add("stdout", piece)
                if k < 2:
                    out[-1] = out[-1].replace(" stdout F ", " stdout P ", 1)
        if s in dicts_at:
            add("stdout", trainer_dict(s))
            if redraw:
                add("stderr", " " * 46)
                add("stderr", "")
                add("stderr", bar(s))
    return out


def encoded(records) -> list[bytes]:
    """Each record as JSON, but for `source` (the envelope's format: cri or fluentbit)."""
    out = []
    for r in records:
        doc = msgspec.to_builtins(r)
        doc.pop("source", None)
        out.append(msgspec.json.encode(doc))
    return out


def by_blocks(lines: list[str], cuts: list[int], block_scan: bool = True) -> tuple[list, list, CurationStats]:
    """(records before close, after close, stats) of the lines fed as blocks cut at `cuts`."""
    stats = CurationStats()
    cur = ContainerCurator(POD, "cri", stats, block_scan=block_scan)
    out = []
    for a, b in zip([0, *cuts], [*cuts, len(lines)]):
        if a < b:
            out += cur.feed_block("\n".join(lines[a:b]).encode())
    return out, cur.close(), stats


def by_envelopes(lines: list[str], batch: int = 37, joined: bool = False) -> tuple[list, list, CurationStats]:
    """The same lines as a consumer reads them: Fluent Bit records through a LogPartition, in batches;
    `joined`: a line's pieces as Fluent Bit's multiline cri parser gives them, one record with the first
    piece's time (else a record per piece, `_p` P then F)."""
    kube = {"namespace_name": POD.namespace, "pod_name": POD.pod, "pod_id": UID, "container_name": POD.container,
            "labels": {}}
    part = partition.LogPartition(AttemptOf(EventBook()))
    items = []
    pieces: dict[str, list] = {}
    for raw in lines:
        time, stream, tag, text = raw.split(" ", 3)
        if joined and (tag == "P" or stream in pieces):
            pieces.setdefault(stream, []).append((time, text))
            if tag == "P":
                continue
            first = pieces.pop(stream)
            time, text = first[0][0], "".join(t for _, t in first)
        value = json.dumps({"time": time, "stream": stream, "_p": tag, "log": text, "kubernetes": kube}).encode()
        items.append((len(items), ksrc.decode_log(value)))
    out: list = []
    scanner = partition.text_scanner()
    for i in range(0, len(items), batch):
        part.feed_batch(items[i : i + batch], out, scanner)
    end: list = []
    part.close_all(end)
    return out, end, part.stats


def bar_steps(records) -> list[int]:
    return [r.step for r in records if isinstance(r, StepRecord) and r.dialect == "tqdm"]


def test_a_plain_bars_steps_go_on_before_the_pod_ends_once_the_wait_is_over():
    lines = pod_log(700)  # 2,801 lines, fewer bar records than max_held
    before, after, stats = by_blocks(lines, cuts=list(range(500, len(lines), 500)))
    # all out while the pod still runs but the last, which the step parser keeps until its stream moves on
    assert bar_steps(before) == list(range(1, 700))
    assert bar_steps(after) == [700]
    # the first state is line 2: the records of lines 2..2049 waited, then went on together
    assert stats.bar_steps_released_at_bound == 512
    assert stats.dangling_partials == 0 and stats.open_records_flushed == 0


@pytest.mark.parametrize("dict_at", [None, 300, 500, 503, 505, 507, 509, 511, 512, 520, 690])
def test_the_same_records_in_the_same_order_from_blocks_lines_and_kafka_envelopes(dict_at):
    """The wait ends at a line, not at the end of whatever was read: a dict just before or after it,
    blocks cut anywhere, lines one by one or a consumer's batches (a line in pieces as its pieces or
    joined by Fluent Bit) give the same records in order."""
    lines = pod_log(700, dicts_at=() if dict_at is None else (dict_at, dict_at + 100), partials_every=50)
    want_before, want_after, want_stats = by_blocks(lines, cuts=[])
    want = encoded(want_before + want_after)
    rng = random.Random(dict_at)
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(lines)), 6))
        before, after, stats = by_blocks(lines, cuts)
        assert encoded(before + after) == want
        assert stats.bar_steps_released_at_bound == want_stats.bar_steps_released_at_bound
    before, after, stats = by_blocks(lines, [], block_scan=False)
    assert encoded(before + after) == want
    for joined in (False, True):
        before, after, stats = by_envelopes(lines, joined=joined)
        got = [r for r in before + after if not (isinstance(r, StepRecord) and r.dialect is None)]  # (no derived progress)
        assert sorted(encoded(got)) == sorted(want), joined
        assert stats.bar_steps_released_at_bound == want_stats.bar_steps_released_at_bound


def test_a_trainer_whose_dicts_come_within_the_wait_keeps_only_its_dicts():
    lines = pod_log(700, dicts_at=tuple(range(100, 701, 100)))
    before, after, stats = by_blocks(lines, cuts=[1000])
    steps = [r for r in before + after if isinstance(r, StepRecord)]
    assert {r.dialect for r in steps} == {"hf_trainer"}
    assert [r.step for r in steps] == list(range(100, 701, 100))  # numbered from the bar
    assert stats.bar_steps_released_at_bound == 0


def test_a_dict_after_the_wait_ends_the_bars_records_from_there():
    """The Trainer's bar after all (a logging_steps past the wait): the records that went on stay,
    counted; from its first dict on the bar's records are dropped again and the dicts numbered."""
    lines = pod_log(700, dicts_at=(600, 700))
    before, after, stats = by_blocks(lines, cuts=[])
    records = before + after
    assert bar_steps(records) == list(range(1, 600))  # (600's state is out after the dict: the parser held it)
    assert [r.step for r in records if isinstance(r, StepRecord) and r.dialect == "hf_trainer"] == [600, 700]
    assert stats.bar_steps_released_at_bound == 512


def test_the_wait_survives_a_snapshot_and_stores_the_held_records_once():
    lines = pod_log(700)
    stats = CurationStats()
    whole = ContainerCurator(POD, "cri", stats)
    want = whole.feed_block("\n".join(lines).encode()) + whole.close()
    first = ContainerCurator(POD, "cri", CurationStats())
    got = first.feed_block("\n".join(lines[:1200]).encode())
    state = first.snapshot()
    held = state.trainer_logs.held
    assert len(held) == 299 and state.trainer_logs.bars == []  # each held record once, not twice
    assert state.lines_read == 1200
    again = msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=ContainerState)
    taken_up = ContainerCurator.from_snapshot(again, CurationStats())
    got += taken_up.feed_block("\n".join(lines[1200:]).encode()) + taken_up.close()
    assert encoded(got) == encoded(want)
    assert taken_up.stats.bar_steps_released_at_bound == stats.bar_steps_released_at_bound == 512


def test_the_trainers_bar_keeps_only_the_steps_its_next_dicts_may_ask_for():
    """The bar's record of each step waits for the dict of that step (its rate goes on the dict); those
    of steps before the last dict numbered are asked for by no later dict of the run. Kept, they were
    every step of the run in memory and in every checkpoint (3,000 here, growing with the run)."""
    lines = pod_log(3000, noise_per_step=1, dicts_at=tuple(range(10, 3001, 10)), redraw=True)
    cur = ContainerCurator(POD, "cri", CurationStats())
    records, most = [], 0
    for i in range(0, len(lines), 500):
        records += cur.feed_block("\n".join(lines[i : i + 500]).encode())
        state = cur.snapshot().trainer_logs
        most = max(most, len(state.bars))
    records += cur.close()
    assert most <= 20
    dicts = [r for r in records if isinstance(r, StepRecord) and r.dialect == "hf_trainer"]
    assert [r.step for r in dicts] == list(range(10, 3001, 10)) and not bar_steps(records)
    # (a dict released at once finds its step's state still with the step parser, which keeps it until
    # the bar moves on: only those that waited for S carry a rate here, each its own step's)
    rated = [r for r in dicts if r.throughput is not None]
    assert rated and all(r.throughput == float(f"3.{r.step % 90 + 10}") for r in rated)


# --- against the real Kafka and OpenSearch: searchable while the pod runs, then replay's index ---


def _write_pod(root, name: str, lines: list[str]):
    log = root / f"team-a_{name}_{UID}" / "pytorch" / "0.log"
    log.parent.mkdir(parents=True)
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root


@pytest.mark.usefixtures("kafka_client")
def test_a_plain_bar_and_barless_trainer_dicts_are_searchable_while_the_pod_runs_then_equal_replay(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, tmp_path):
    from kafka_fixtures import (ROOT, comparable, documents, fluentbit_records, produce, replay_into,
                                service_command, settled, start_service, stop, wait_until)

    bar_pod = _write_pod(tmp_path / "bar", "bar-train-worker-0", pod_log(700))
    hf = next((ROOT / "fixtures" / "dialects" / "hf_trainer" / "pods").iterdir())
    barless = tmp_path / "barless" / hf.name
    for log in hf.rglob("*.log"):  # the Trainer's run without its bar (its stderr left out)
        target = barless / log.relative_to(hf)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(x for x in log.read_text(encoding="utf-8").splitlines(True) if " stdout " in x[:40]),
                          encoding="utf-8")
    logs = [bar_pod, tmp_path / "barless"]
    replay_prefix = index_prefix + "-replay-"
    replay_into(opensearch_url, replay_prefix, paths=logs)
    want = comparable(documents(opensearch_url, replay_prefix))
    topic = kafka_topic(partitions=1)
    prefix, group = index_prefix + "-", f"{topic}-g"
    produce(kafka_bootstrap, topic, fluentbit_records(logs))
    running = service_command(kafka_bootstrap, opensearch_url, topic, prefix, group, "--open-wait", "300",
                              "--attempt-idle", "300")
    log = tmp_path / "service.log"
    service = start_service(running, log)

    def steps_indexed():
        steps = documents(opensearch_url, prefix).get("step", {}).values()
        bar = sum(1 for d in steps if d.get("dialect") == "tqdm" and d.get("pod") == "bar-train-worker-0")
        dicts = sum(1 for d in steps if d.get("dialect") == "hf_trainer")
        return bar >= 699 and dicts >= 10

    try:
        # Both pods are taken as running for 300 s (--open-wait, --attempt-idle): their steps come well
        # before (the service's start, ~4-12 s under load, included). Before: no bar step until the pod ended.
        wait_until(steps_indexed, 90, what="the bar's steps and the Trainer's dicts indexed while the pods run")
    finally:
        assert stop(service) == 0, log.read_text()[-3000:]
    # The pods end (a short --attempt-idle): the index is replay's, with the consumer's checkpoint taken up.
    service = start_service(service_command(kafka_bootstrap, opensearch_url, topic, prefix, group), log)
    try:
        settled(opensearch_url, prefix, want, 90)
    finally:
        assert stop(service) == 0, log.read_text()[-3000:]
