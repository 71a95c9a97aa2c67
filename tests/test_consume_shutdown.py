"""A stop (SIGTERM) of `gangscope consume` between a job's end and its diagnosis: the index still ends
as `replay` builds it. Against the real Kafka and OpenSearch, on both consumer backends.

The loop ends a job's attempt (its containers closed and forgotten) in its idle work, and diagnoses
it later in the same or a later cycle; a stop that landed in between committed offsets past the
job's lines without the diagnosis, so no later reader ever ended or diagnosed that attempt
(tests/test_consume_order.py lost 1 diagnosis of 8 in about 1 run of 4 under load)."""

from __future__ import annotations

import threading

import pytest

from gangscope.pipeline.run import config
from gangscope.pipeline.run.service import Service
from kafka_backends import kafka_client  # noqa: F401  (the fixture: each server test once per backend)
from kafka_fixtures import (
    ROOT,
    comparable,
    committed_offsets,
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

PODS = ROOT / "fixtures" / "gang" / "a_image_pull_backoff" / "pods"
DEADLINE_S = 90  # deadlines for the index to settle, not speed assertions


class StoppedAtAnAttemptsEnd(Service):
    """The service, told by the test when to end the jobs' attempts: at the next cycle it ends them
    as its idle work does when they are quiet, and stops right after, as a SIGTERM that lands
    before the cycle that would have diagnosed them."""

    def __init__(self, cfg):
        super().__init__(cfg, install_signals=False)
        self.end_now = threading.Event()
        self.ended: list[str] = []

    def _cycle(self, poll_ms: int = 200) -> None:
        if self.end_now.is_set() and not self.stopping:
            for job in sorted(self.jobs):
                self._finish_job(job)
                self.ended.append(job)
            self.jobs.clear()
            self.stop()
            return
        super()._cycle(poll_ms)


@pytest.mark.usefixtures("kafka_client")
def test_a_stop_between_a_jobs_end_and_its_diagnosis_leaves_replays_index(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, kafka_client, tmp_path):
    """The stop's commit is the first (an hour between commits), so the checkpoint it saves is of the
    state after the job's end: the job's containers closed and forgotten."""
    want, topic, prefix, group, messages = _pods_in_a_topic(kafka_bootstrap, opensearch_url, kafka_topic, index_prefix)
    service = StoppedAtAnAttemptsEnd(_config(kafka_bootstrap, opensearch_url, topic, prefix, group, kafka_client,
                                             attempt_idle=3600, open_wait=6))
    thread, exit_code = _run_in_a_thread(service)
    try:
        wait_until(lambda: service.lines >= len(messages) and service.jobs, DEADLINE_S, what="the job read")
    finally:
        service.end_now.set()
        thread.join(DEADLINE_S)
    assert not thread.is_alive() and exit_code == [0]
    assert service.ended, "the job's attempt was ended before the stop"
    _next_reader_ends_as_replay(kafka_bootstrap, opensearch_url, topic, prefix, group, want, tmp_path)


class ReadBackFailsThenStops(Service):
    """The service whose first read-back of an ended job's records fails (OpenSearch answering an
    error there, as under a restart), and which is stopped right then: the job's containers are
    already closed and forgotten, only the diagnosis is left to make."""

    def __init__(self, cfg):
        super().__init__(cfg, install_signals=False)
        self.failed_reads: list[str] = []

    def _job_records(self, job: str):
        if not self.failed_reads:
            self.failed_reads.append(job)
            self.stop()
            raise OSError("the test's read-back failure")
        return super()._job_records(job)


@pytest.mark.usefixtures("kafka_client")
def test_a_stop_after_a_failed_read_back_commits_nothing_past_the_job(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, kafka_client, tmp_path):
    """The job is owed its diagnosis until it is made: the loop and the stop commit nothing past its
    lines. They did: the job went back to waiting for quiet, the stop found nothing to diagnose and
    committed the end offsets with a checkpoint of the state after the job's end (its containers
    forgotten; the stop's commit is the first, an hour between commits), so no later reader ever
    diagnosed the attempt."""
    want, topic, prefix, group, _ = _pods_in_a_topic(kafka_bootstrap, opensearch_url, kafka_topic, index_prefix)
    service = ReadBackFailsThenStops(_config(kafka_bootstrap, opensearch_url, topic, prefix, group, kafka_client,
                                             attempt_idle=2, open_wait=2))
    thread, exit_code = _run_in_a_thread(service)
    thread.join(DEADLINE_S)
    assert not thread.is_alive() and exit_code == [0]
    assert service.failed_reads, "the job ended and its read-back failed"
    assert not documents(opensearch_url, prefix).get("diagnosis"), "the first reader made no diagnosis"
    _next_reader_ends_as_replay(kafka_bootstrap, opensearch_url, topic, prefix, group, want, tmp_path)


def _pods_in_a_topic(kafka_bootstrap, opensearch_url, kafka_topic, index_prefix):
    """replay's index of PODS (what every consumer must end with; it has a diagnosis), and a new topic
    of two partitions holding PODS' lines: (want, topic, prefix, group, messages)."""
    replay_prefix = index_prefix + "-replay-"
    replay_into(opensearch_url, replay_prefix, paths=[PODS])
    want = comparable(documents(opensearch_url, replay_prefix))
    assert want.get("diagnosis"), "the fixture's job has a diagnosis"
    topic = kafka_topic(partitions=2)
    messages = fluentbit_records([PODS])
    produce(kafka_bootstrap, topic, messages)
    return want, topic, index_prefix + "-", f"{topic}-g", messages


def _config(kafka_bootstrap, opensearch_url, topic, prefix, group, kafka_client, *, attempt_idle, open_wait):
    """A consumer's settings with an hour between commits (a stop's commit is the first)."""
    return config.load({"bootstrap": kafka_bootstrap, "opensearch": opensearch_url, "topics": [topic],
                        "index_prefix": prefix, "group": group, "metrics_port": -1, "kafka_client": kafka_client,
                        "attempt_idle": attempt_idle, "commit_interval": 3600, "flush_idle": 1, "open_wait": open_wait,
                        "dead_letter_topic": "", "shutdown_timeout": 30}, environ={})


def _run_in_a_thread(service) -> tuple[threading.Thread, list[int]]:
    exit_code: list[int] = []
    thread = threading.Thread(target=lambda: exit_code.append(service.run()), daemon=True)
    thread.start()
    return thread, exit_code


def _next_reader_ends_as_replay(kafka_bootstrap, opensearch_url, topic, prefix, group, want, tmp_path) -> None:
    """A reader after the stopped one: whatever it committed, the index ends as replay's, diagnosis
    included, and every offset is committed."""
    log = tmp_path / "service.log"
    after = start_service(service_command(kafka_bootstrap, opensearch_url, topic, prefix, group,
                                          "--attempt-idle", "3"), log)
    try:
        wait_until(lambda: '"partition assigned"' in log.read_text(), DEADLINE_S, what="the next reader to join")
        settled(opensearch_url, prefix, want, DEADLINE_S)
    finally:
        assert stop(after) == 0, log.read_text()[-3000:]
    assert committed_offsets(kafka_bootstrap, group, topic) == end_offsets(kafka_bootstrap, topic)


def _event_messages(folder) -> tuple[list, list[tuple[None, bytes]]]:
    """The event files of a gang fixture, and the messages an events topic carries of them (a line of
    NDJSON each, a `kubectl get -o json` list as one)."""
    files = [p for p in (folder / "events.ndjson", folder / "workloads.json") if p.exists()]
    messages = [(None, line.encode()) for line in (folder / "events.ndjson").read_text().splitlines() if line.strip()]
    if (folder / "workloads.json").exists():
        messages.append((None, (folder / "workloads.json").read_bytes()))
    return files, messages


@pytest.mark.usefixtures("kafka_client")
def test_a_stop_within_an_end_events_grace_leaves_replays_index(
        kafka_bootstrap, opensearch_url, kafka_topic, index_prefix, tmp_path):
    """d_preemption's llama-eval is a job of events only: its end event is all that ends its attempt.
    The first reader stops within the grace after it (an hour here), its offsets committed past it;
    the next reader diagnoses the attempt from the events in the index."""
    folder = ROOT / "fixtures" / "gang" / "d_preemption"
    event_files, events = _event_messages(folder)
    replay_prefix = index_prefix + "-replay-"
    replay_into(opensearch_url, replay_prefix, paths=[folder / "pods"], events=event_files)
    want = comparable(documents(opensearch_url, replay_prefix))
    assert "team-d/llama-eval" in {d["job"] for d in want.get("diagnosis", {}).values()}
    topic, events_topic = kafka_topic(partitions=1), kafka_topic(partitions=1)
    prefix, group = index_prefix + "-", f"{topic}-g"
    produce(kafka_bootstrap, events_topic, events)
    produce(kafka_bootstrap, topic, fluentbit_records([folder / "pods"]))

    def command(grace: str, idle: str) -> list[str]:
        return service_command(kafka_bootstrap, opensearch_url, topic, prefix, group, "--events-topic", events_topic,
                               "--attempt-grace", grace, "--attempt-idle", idle, "--events-lookback", "100000")

    log = tmp_path / "service.log"
    first = start_service(command("3600", "3600"), log)
    try:  # every message read and acknowledged, the events' offsets committed past the end event
        wait_until(lambda: all(committed_offsets(kafka_bootstrap, group, t) == end_offsets(kafka_bootstrap, t)
                               for t in (topic, events_topic)), DEADLINE_S, what="every offset committed")
    finally:
        assert stop(first) == 0, log.read_text()[-3000:]
    assert "team-d/llama-eval" not in {d["job"] for d in documents(opensearch_url, prefix).get("diagnosis", {}).values()}
    joined = log.read_text().count('"partition assigned"')
    after = start_service(command("1", "3"), log)
    try:
        wait_until(lambda: log.read_text().count('"partition assigned"') > joined, DEADLINE_S,
                   what="the next reader to join")
        settled(opensearch_url, prefix, want, DEADLINE_S)
    finally:
        assert stop(after) == 0, log.read_text()[-3000:]
