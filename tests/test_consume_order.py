"""`gangscope consume` builds the index `replay` builds of the same logs and events, whatever the order
they arrive in: events late or first, pauses in the middle of a traceback, Trainer logs without a bar,
a SIGTERM mid-stream, a consumer killed during a rebalance, consumers of one group scaled out and the
topic given more partitions. The comparisons are of whole documents (all but `source`). Each runs on
both consumer backends, kafka-python and confluent-kafka (`kafka_client`, tests/kafka_backends.py).

Also here: the pieces those comparisons rest on, each on its own (the commit point of a partition
with an open record, the order records read back are diagnosed in, the summary's counts, the one
name of the index prefix)."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from kafka_backends import kafka_client  # noqa: F401  (the fixture: each server test once per backend)
from kafka_fixtures import (
    ROOT,
    committed_offsets,
    comparable,
    documents,
    end_offsets,
    fluentbit_records,
    produce,
    replay_into,
    service_command,
    settled,
    start_service,
    stop,
    wait_until,
)

SETTLE_S = 90  # a deadline for the index to settle, not a speed assertion


# --- the pieces ---------------------------------------------------------------------------------


def test_a_partition_with_an_open_record_commits_its_next_offset_once_its_state_is_checkpointed():
    from gangscope.pipeline.run.commit_point import commit_point, resume_point

    point = commit_point(500, [420, 460], checkpointed=True)
    assert point.offset == 500
    assert resume_point(point) == (500, 420)  # without a usable checkpoint: from the open record's first line
    assert commit_point(500, [420], checkpointed=False).offset == 420
    assert resume_point(commit_point(500, [], checkpointed=True)) == (500, 500)
    assert resume_point(None) == (None, None)


def test_records_read_back_are_diagnosed_in_the_order_replay_curated_them():
    """One line holds many states of a bar, all of one time and seq: read back from OpenSearch (any
    order) a rank's last step is the line's last state, as replay has it (was: by id, any state)."""
    from gangscope.pipeline.diagnose import back_half
    from gangscope.pipeline.diagnose.digest import JobDigest
    from gangscope.pipeline.run import replay as replay_mod

    delivered = []
    replay_mod.run(replay_mod.ReplayOptions(paths=[str(ROOT / "fixtures" / "dialects")]), delivered.extend)
    in_replay = JobDigest()
    for r in delivered:
        in_replay.add(r)
    indexed = list({r.id: r for r in delivered}.values())  # one document per id, as an index holds them
    random.Random(7).shuffle(indexed)
    read_back = back_half.digest_of(indexed)
    want = {k: s.step for k, s in in_replay.last_steps.items()}
    assert {k: s.step for k, s in read_back.last_steps.items()} == want
    assert want[("vision/mlp-lightning", 1, "mlp-lightning-master-0", None, None)] == 36


def test_the_summary_counts_each_record_once_however_often_it_was_updated(tmp_path):
    """A rank's epoch record is one document, rewritten as its progress goes on (was: 544 for 52)."""
    from gangscope.pipeline.run.cli import main

    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        assert main(["replay", str(ROOT / "fixtures" / "runs"), str(ROOT / "fixtures" / "dialects"), "--out", str(out),
                     "--no-progress", "--workers", workers]) == 0
        counts = json.loads((out / "summary.json").read_text())["records"]
        for kind, n in counts.items():
            ids = {json.loads(line)["id"] for line in (out / f"{kind}.ndjson").read_text().splitlines()}
            assert n == len(ids), (workers, kind)
        assert counts["epoch"] > 10


def test_index_prefix_is_the_one_name_and_prefix_an_old_spelling_that_warns(capsys):
    import argparse

    from gangscope.pipeline.run import config, opensearch_cli

    consume = argparse.ArgumentParser()
    config.add_arguments(consume)
    assert consume.parse_args(["--index-prefix", "a-"]).index_prefix == "a-"
    assert consume.parse_args(["--prefix", "b-"]).index_prefix == "b-"
    assert "--prefix is deprecated; use --index-prefix" in capsys.readouterr().err
    other = argparse.ArgumentParser()
    opensearch_cli.add_connection(other)
    assert other.parse_args(["--index-prefix", "c-"]).prefix == "c-"
    assert capsys.readouterr().err == ""
    assert other.parse_args(["--prefix", "d-"]).prefix == "d-"
    assert "--prefix is deprecated; use --index-prefix" in capsys.readouterr().err


# --- against the real Kafka and OpenSearch ------------------------------------------------------


def _pod_copy(source: Path, into: Path, keep=lambda line: True) -> Path:
    """A kubelet-layout copy of one pod folder (`<ns>_<pod>_<uid>/<container>/N.log`), lines filtered."""
    for log in source.rglob("*.log"):
        target = into / source.name / log.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(line for line in log.read_text(encoding="utf-8").splitlines(True) if keep(line)),
                          encoding="utf-8")
    return into


def _traceback_pod(root: Path, frames: int = 53) -> Path:
    """One pod whose log is a long traceback (107 lines with the defaults), printed at once."""
    log = root / "ml_order-trace-0_7a1c2d3e-0000-4000-8000-000000000107" / "trainer" / "0.log"
    log.parent.mkdir(parents=True)
    lines = ["starting epoch 1", "Traceback (most recent call last):"]
    for k in range(frames - 1):
        lines += [f'  File "/app/train/layer{k}.py", line {k + 10}, in forward', f"    out = self.block{k}(x)"]
    lines.append("ValueError: expected input of width 512, got 384")
    stamps = [f"2026-03-02T10:00:00.{i * 1000:09d}Z" for i in range(len(lines))]
    log.write_text("".join(f"{t} {'stdout' if i == 0 else 'stderr'} F {text}\n"
                           for i, (t, text) in enumerate(zip(stamps, lines))), encoding="utf-8")
    return root


def _events(folder: Path) -> tuple[list[Path], list[tuple[None, bytes]]]:
    files = [p for p in (folder / "events.ndjson", folder / "workloads.json") if p.exists()]
    messages = [(None, line.encode()) for line in (folder / "events.ndjson").read_text().splitlines() if line.strip()]
    if (folder / "workloads.json").exists():
        messages.append((None, (folder / "workloads.json").read_bytes()))
    return files, messages


def _assigned(log: Path, times: int = 1) -> None:
    """Wait until the service logging to `log` has been assigned partitions `times` times (it is up)."""
    wait_until(lambda: log.exists() and log.read_text().count('"partition assigned"') >= times, 60,
               what="the service to join its group")


def _kube_key(value: bytes) -> tuple:
    kube = json.loads(value)["kubernetes"]
    return kube["namespace_name"], kube["pod_name"]


@pytest.fixture
def order_inputs(tmp_path):
    """Pods and events of the adversarial run: (log folders, event files of jobs whose events come
    late, of jobs whose events come first, their event messages)."""
    gang = ROOT / "fixtures" / "gang"
    traces = _traceback_pod(tmp_path / "trace")
    hf = next((ROOT / "fixtures" / "dialects" / "hf_trainer" / "pods").iterdir())
    barless = _pod_copy(hf, tmp_path / "barless", keep=lambda line: " stdout " in line[:40])  # no tqdm bar
    late_files, late = _events(gang / "a_image_pull_backoff")
    first_files, first = _events(gang / "d_preemption")
    logs = [gang / "a_image_pull_backoff" / "pods", gang / "d_preemption" / "pods", traces, barless]
    return logs, late_files + first_files, late, first


@pytest.mark.usefixtures("kafka_client")
def test_events_late_or_first_a_pause_mid_traceback_barless_trainer_logs_and_a_sigterm_give_replays_index(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, order_inputs, tmp_path):
    logs, event_files, late_events, first_events = order_inputs
    replay_prefix = index_prefix + "-replay-"
    replay_into(opensearch_url, replay_prefix, paths=logs, events=event_files)
    want = comparable(documents(opensearch_url, replay_prefix))
    assert {"step", "trace", "error", "event", "diagnosis"} <= set(want)
    topic, events = kafka_topic(partitions=2), kafka_topic(partitions=1)
    prefix, group = index_prefix + "-", f"{topic}-g"
    cmd = service_command(kafka_bootstrap, opensearch_url, topic, prefix, group, "--events-topic", events,
                          "--attempt-grace", "1", "--shutdown-timeout", "10",
                          "--events-lookback", "100000")  # the fixtures' events are older than the default 72 h
    messages = fluentbit_records(logs)
    trace_pod = ("ml", "order-trace-0")
    trace = [m for m in messages if _kube_key(m[1]) == trace_pod]
    others = [m for m in messages if _kube_key(m[1]) != trace_pod]
    produce(kafka_bootstrap, events, first_events)  # one job's events before its logs
    log = tmp_path / "service.log"
    service = start_service(cmd, log)
    try:
        _assigned(log)
        produce(kafka_bootstrap, topic, others[: len(others) // 2] + trace[:55])
        time.sleep(3)  # a pause in delivery mid-traceback, 3 x --flush-idle
        produce(kafka_bootstrap, topic, trace[55:] + others[len(others) // 2:])
        asked = time.monotonic()
        assert stop(service) == 0  # SIGTERM mid-stream: flushes, commits, exits within --shutdown-timeout
        assert time.monotonic() - asked < 10
        assigned = log.read_text().count('"partition assigned"')
        service = start_service(cmd, log)
        _assigned(log, assigned + 1)
        produce(kafka_bootstrap, events, late_events)  # the other job's events after all its logs
        settled(opensearch_url, prefix, want, SETTLE_S)
    finally:
        assert stop(service) == 0, (tmp_path / "service.log").read_text()[-3000:]
    assert committed_offsets(kafka_bootstrap, group, topic) == end_offsets(kafka_bootstrap, topic)


@pytest.mark.usefixtures("kafka_client")
def test_trainer_logs_without_a_bar_are_indexed_while_the_pod_still_runs(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, order_inputs):
    logs, *_ = order_inputs
    topic = kafka_topic(partitions=1)
    prefix = index_prefix + "-"
    cmd = service_command(kafka_bootstrap, opensearch_url, topic, prefix, f"{topic}-g", "--open-wait", "120",
                          "--attempt-idle", "120")
    produce(kafka_bootstrap, topic, fluentbit_records([logs[3]]))
    service = start_service(cmd, Path(logs[3]) / "service.log")
    try:
        # The pod is taken as running for 120 s (--open-wait, --attempt-idle): the steps come well before,
        # the service's start included (it makes every kind's index first: ~4-12 s at load 17-20, where
        # a deadline of 8 s failed on both backends).
        wait_until(lambda: len(documents(opensearch_url, prefix).get("step", {})) >= 10, 60,
                   what="the ten logged steps indexed while the pod is still taken as running")
    finally:
        assert stop(service) == 0


@pytest.mark.usefixtures("kafka_client")
def test_three_consumers_one_killed_in_a_rebalance_then_more_partitions_give_replays_index(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, tmp_path):
    from kafka.admin import KafkaAdminClient, NewPartitions

    from kafka_fixtures import split_by_job

    paths = [ROOT / "fixtures" / "dialects"]
    replay_prefix = index_prefix + "-replay-"
    replay_into(opensearch_url, replay_prefix, paths=paths)
    want = comparable(documents(opensearch_url, replay_prefix))
    topic = kafka_topic(partitions=3)
    prefix, group = index_prefix + "-", f"{topic}-g"
    cmd = service_command(kafka_bootstrap, opensearch_url, topic, prefix, group, "--session-timeout", "6",
                          "--metadata-refresh", "1", "--max-poll-records", "100")
    first, second = split_by_job(fluentbit_records(paths))
    produce(kafka_bootstrap, topic, first)
    procs = [start_service(cmd, tmp_path / f"service-{i}.log") for i in range(2)]
    try:
        _assigned(tmp_path / "service-0.log")
        wait_until(lambda: any(committed_offsets(kafka_bootstrap, group, topic).values()), 30, what="a first commit")
        procs.append(start_service(cmd, tmp_path / "service-2.log"))  # a third joins: the group rebalances ...
        time.sleep(1.5)
        procs[0].kill()  # ... and one is killed in the middle of it (kill -9: no goodbye, no commit)
        procs[0].wait(10)
        admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
        admin.create_partitions({topic: NewPartitions(total_count=5)})  # the topic grows
        admin.close()
        produce(kafka_bootstrap, topic, second)  # jobs that start after it: keyed onto all five partitions
        settled(opensearch_url, prefix, want, SETTLE_S)
    finally:
        for p in procs[1:]:
            assert stop(p) == 0
    committed = {p: offset or 0 for p, offset in committed_offsets(kafka_bootstrap, group, topic).items()}
    assert committed == end_offsets(kafka_bootstrap, topic)  # a partition never written to has nothing to commit
