"""`gangscope consume`: the Kafka consumer service, curating pod logs and events into OpenSearch.

One loop, one thread (kafka-python's IO thread aside):

    poll -> decode (dead-letter what cannot be read) -> curate per partition -> progress
         -> idle work (close quiet containers that hold nothing open, end quiet attempts)
         -> sink.flush (acknowledged) -> correct jobs whose attempts late events cut anew
         -> diagnose ended attempts from OpenSearch -> checkpoint state -> commit offsets

End-to-end acknowledgement: an offset is committed only after OpenSearch acknowledged every
record the messages before it produced (and the dead-letter topic every message it got), and
the partition's state at that offset is checkpointed first (pipeline/run/checkpoint.py), so a
restart or a new owner resumes exactly where the last acknowledgement left off; a record still
open travels in the checkpoint (commit_point.py). While OpenSearch is unreachable the partitions
are paused and nothing is committed; the flush is retried with backoff until it goes through.

The pieces, one job each, in the order a message meets them:
  log_messages.py (a log partition's messages decoded and curated), event_messages.py (an events
  partition's messages into the event book), job_clocks.py (when a job's attempt is over),
  late_events.py and job_index.py (a job's records brought to its attempts anew, read back,
  corrected, deleted), job_analysis.py (an ended job's diagnosis), delivery.py (the bulk in flight),
  offset_commits.py (commit marks taken, offsets committed) and commit_point.py (the offset to
  commit, where to resume), partition_restore.py (an assigned partition's state: its checkpoint or
  a new one), partition_ends.py (each partition's end, for the lag and caught up),
  indexed_events.py (the events already indexed, read at start), rebalance.py (what a rebalance
  does), failure_report.py (units of work that raised, reported), checkpoint.py, service_metrics.py.
This module holds the loop and what ties the pieces together: which partition holds what, what
is pending, when to hand over, deliver, correct, diagnose and commit.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

import structlog
from kafka.errors import KafkaError
from opensearchpy.exceptions import OpenSearchException

from gangscope.parsers.records import Record
from gangscope.pipeline.run import checkpoint, job_index
from gangscope.pipeline.run.commit_point import commit_point, resume_point
from gangscope.pipeline.run.delivery import Bulk, BulkInFlight, CommitMark
from gangscope.pipeline.run.event_messages import EventsPartition, read_event_messages
from gangscope.pipeline.run.failure_report import report_failures
from gangscope.pipeline.run.indexed_events import indexed_events
from gangscope.pipeline.run.job_analysis import analyse_job
from gangscope.pipeline.run.job_clocks import JobClock, due_jobs
from gangscope.pipeline.run.log_messages import curate_log_messages
from gangscope.pipeline.run.offset_commits import commit_offsets, take_mark
from gangscope.pipeline.run.partition_ends import PartitionEnds
from gangscope.pipeline.run.partition_restore import new_partition_state, restore_partition
from gangscope.pipeline.run.rebalance import RebalanceListener
from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
from gangscope.pipeline.curate.partition import LogPartition, text_scanner
from gangscope.pipeline.isolation import StageFailures, redacted
from gangscope.pipeline.sinks.indices import OpenSearchError
from gangscope.pipeline.sinks.opensearch import OpenSearchBusy
from gangscope.pipeline.sources import kafka as ksrc
from gangscope.pipeline.sources import kafka_auth

log = structlog.get_logger("gangscope.consume")

# Kinds the diagnosis reads back from OpenSearch (diagnoses are its output).
ANALYSED_KINDS = ("step", "epoch", "error", "trace", "event", "signal")
# While OpenSearch does not acknowledge, the retries are said at most this often (seconds).
RETRIES_SAID_EVERY = 30.0
# A poll that brings nothing returns after this many ms while records wait for the bulk in flight
# (else the loop's 200 ms): the throughput bench's last bulk went out 160 ms after the one before it
# was acknowledged, the loop sitting in an empty poll and OpenSearch idle meanwhile (a probe of
# python -m bench.kafka_consume --only throughput at 330aa36: read to 16.66 s, bulk acknowledged at
# 16.85 s, the next one sent at 17.01 s).
WAITING_POLL_MS = 20
# A poll's messages of a log partition are curated in slices of this many; between two, a bulk
# OpenSearch acknowledged meanwhile is followed by the next (Service._hand_over_between).
POLL_SLICE = 1000
# Under a backlog, records pending go out once this many wait (or `flush_interval` passed).
GATHER_RECORDS = 5000


# --- the service ----------------------------------------------------------------------------


class Service:
    """The consumer service; `run()` returns the exit code."""

    def __init__(self, cfg, *, install_signals: bool = True, own_process: bool = False):
        self.cfg = cfg
        self.install_signals = install_signals
        # the service is what the process runs (`main`): the cycle collector is set for it once started
        self.own_process = own_process
        self.stopping = False
        self.stop_requested_at: float | None = None
        from gangscope.pipeline.run.service_metrics import ServiceMetrics

        self.metrics = ServiceMetrics()
        self.book = EventBook()
        # Units of work that raised here (a message, a job's attempts or analysis): with the partitions'
        # and the sink's, into /metrics and the log by _count_failures; the loop goes on without them.
        self.failures = StageFailures()
        self.attempt_of = AttemptOf(self.book)
        self.states: dict[Any, LogPartition | EventsPartition] = {}
        self.saved: dict[Any, int] = {}  # tp -> offset of its last checkpoint/commit
        self.checkpointed: dict[Any, int] = {}  # tp -> offset of its last checkpoint saved (or restored)
        self.first_read: dict[Any, int] = {}  # tp -> the first offset this consumer read of it
        self.pending: dict[Any, list[Record]] = {}
        self.pending_free: list[Record] = []  # job-level records (diagnoses, stragglers)
        self.new_partitions: set = set()
        self.jobs: dict[str, JobClock] = {}
        self.to_analyse: set[str] = set()
        self.to_correct: set[str] = set()  # jobs whose attempts a late event cut anew (late_events.py)
        self.diagnosis_owed: set[str] = set()  # ended jobs whose records could not be read back: no commit till then
        self.sink = None
        self.inflight: BulkInFlight | None = None  # the bulk OpenSearch is indexing while the loop goes on
        self._saving = threading.Lock()  # held by the bulk thread while it saves checkpoints (_save_owned)
        self.retry: Bulk | None = None  # a bulk OpenSearch did not acknowledge, sent again by _deliver
        self._acked: Bulk | None = None  # acknowledged, its marks not committed yet (_take_acknowledged)
        self._retries_said = 0.0  # when the retries were last said
        self.store: checkpoint.CheckpointStore | None = None
        self.consumer = None
        self.ends: PartitionEnds | None = None  # the partitions' end offsets, for the lag and caught up
        self.dead: ksrc.DeadLetters | None = None
        self.sink_ok = False
        self.kafka_ok = True  # False from a failed offset commit to the next one that goes through
        self._throttled = (0, 0)  # the sink's 429 counts already in the metrics
        self._bulk_splits = 0  # the sink's bulks sent in halves already in the metrics
        self.server = None
        self.last_commit = time.monotonic()
        self.last_flush = 0.0
        self.lines = 0
        self.scanner = text_scanner()

    # -- life cycle ------------------------------------------------------------------------

    def stop(self, *_args) -> None:
        """Ask the loop to stop (signal handlers call this)."""
        if not self.stopping:
            self.stopping = True
            self.stop_requested_at = time.monotonic()

    def run(self) -> int:
        cfg = self.cfg
        if self.install_signals and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.stop)
            signal.signal(signal.SIGINT, self.stop)
        self._start_http()
        log.info("starting", **{k: v for k, v in cfg.public().items() if v not in (None, "", [])})
        try:
            # refused Kafka credentials are a configuration error: said at once, before any waiting
            kafka_auth.check(cfg, "consume")
            if not self._connect_sink():
                return 0
            self._load_events()
            from gangscope.pipeline.sources.kafka_client import open_consumer

            try:
                options = ksrc.consumer_options(cfg)
                options["metadata_max_age_ms"] = int(cfg.metadata_refresh * 1000)  # partitions added are read within it
                self.consumer = open_consumer(cfg, cfg.kafka_client, options)
                self.ends = PartitionEnds(self.consumer)
                if cfg.dead_letter_topic:
                    self.dead = ksrc.DeadLetters(cfg, cfg.dead_letter_topic)
            except KafkaError as exc:
                from gangscope.pipeline.errors import UsageError

                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise UsageError(f"consume: cannot reach Kafka at {cfg.bootstrap} ({reason})") from None
            self.consumer.subscribe(list(cfg.topics) + list(cfg.events_topics), listener=RebalanceListener(self))
            for topic in (*cfg.topics, *cfg.events_topics):
                # The topics' metadata before the first poll joins the group: a join without it assigns
                # nothing and waits for a metadata refresh to rebalance (kafka-python).
                self.consumer.partitions_for_topic(topic)
            log.info("subscribed", topics=list(cfg.topics), events_topics=list(cfg.events_topics), group=cfg.group,
                     kafka_client=cfg.kafka_client)
            if self.own_process:
                from gangscope.pipeline.run import collector

                collector.settle(cfg.max_poll_records)  # start-up's heap frozen, young collections rarer
            while not self.stopping:
                self._cycle()
            return self._shutdown()
        finally:
            if self.server is not None:
                self.server.close()

    def _cycle(self, poll_ms: int = 200) -> None:
        read = self._poll(self._poll_wait(poll_ms))
        now = time.monotonic()
        self._idle_work(now)
        # a bulk OpenSearch acknowledged is counted and its marks committed once the next is on its way
        self._collect(defer=True)
        try:
            self._send_or_gather(read, now)
        finally:
            self._take_acknowledged()  # (done already where the order matters)

    def _poll_wait(self, poll_ms: int) -> int:
        """How long a poll that brings nothing waits (ms): `poll_ms`, or WAITING_POLL_MS while records
        wait for the bulk in flight, so that they go out once OpenSearch acknowledged it rather than
        when the poll gives up."""
        if self.inflight is not None and self.inflight.busy() and (self.pending_free or any(self.pending.values())):
            return min(poll_ms, WAITING_POLL_MS)
        return poll_ms

    def _send_or_gather(self, read: int, now: float) -> None:
        waiting = sum(len(v) for v in self.pending.values())
        if self.inflight.busy():
            if waiting < 20_000:
                return  # the next bulk gathers while OpenSearch indexes this one
            self._collect(timeout=None, defer=True)  # a backlog: no more in memory until OpenSearch caught up
        if self._gather_more(read, waiting, now):
            return
        commit_due = self._flush_due(now)
        if self.sink_ok and not self.to_correct and not self.to_analyse:
            self._hand_over(commit_due and not self.diagnosis_owed)
            self._gauges()
            return
        # OpenSearch failing, or work that reads the index back: everything acknowledged first, in turn
        self._take_acknowledged()
        if not self._deliver() or not self._settle_jobs():
            return
        if commit_due:
            self._commit_all()
        self._gauges()

    def _flush_due(self, now: float) -> bool:
        """A flush starts at `now` (failures counted, its time kept); whether a commit is due with it."""
        self._count_failures()
        self.last_flush = now
        return now - self.last_commit >= self.cfg.commit_interval

    def _gather_more(self, read: int, waiting: int, now: float) -> bool:
        """Whether the records pending wait for the next polls' (nothing in flight): under a backlog a
        few polls share one bulk request, for at most `flush_interval`; caught up (every log partition
        read to the end its last fetch saw, or nothing read), every poll is flushed. Caught up was
        taken as a poll that read nothing, which a steady stream never makes: at 10,000 lines/s
        every record waited for the 0.25 s interval (python -m bench.kafka_consume --only delay with
        a probe at c552894: a bulk every 0.25-0.3 s, each acknowledged in 0.03-0.4 s, polls every
        0.07-0.2 s)."""
        if not read or waiting >= GATHER_RECORDS or now - self.last_flush >= self.cfg.flush_interval:
            return False
        # (a partition this consumer has read nothing of yet has no end it could be behind)
        logs = [s for s in self.states.values() if isinstance(s, LogPartition) and s.next_offset is not None]
        return not logs or any(s.caught_up_since is None for s in logs)

    def _hand_over(self, commit_due: bool) -> None:
        """What is pending to the bulk in flight (nothing is in flight now), with every partition's
        commit mark when a commit is due; with nothing to send, the marks are committed at once.

        The bulk is on its way before anything else is done: the one acknowledged just before is
        counted and its marks committed (checkpoints saved, offsets committed), then the marks of
        this one are taken (its checkpoints encoded), while OpenSearch indexes. Done before the
        send, they kept OpenSearch waiting for the next bulk: at 10,000 lines/s (bench.kafka_consume
        --only delay, per-bulk stamps, load 12) it idled 6.0 s of 16 between bulks under a backlog,
        2.6 s of them in marks taken and committed."""
        bulk = Bulk({tp: records for tp, records in self.pending.items() if records}, self.pending_free)
        self.pending, self.pending_free = {}, []
        try:
            if self.dead is not None:
                self.dead.flush(timeout=30)  # dead letters acknowledged before any offset after them
            if bulk.count():
                self.sink.write(bulk.all_records())  # encoded here; sent on the worker thread
        except (OpenSearchError, OpenSearchException, KafkaError, OSError) as exc:
            self._put_back(bulk)
            self._take_acknowledged()
            self._sink_failed(exc)
            return
        if bulk.count():
            self.inflight.start(bulk)
        # the earlier bulk's marks committed before this one's are taken: offsets committed in order,
        # and a partition checkpointed at its offset already is not encoded again
        self._take_acknowledged()
        if not commit_due:
            return
        self.last_commit = time.monotonic()
        marks = {tp: m for tp, state in self.states.items() if (m := self._mark(tp, state)) is not None}
        if bulk.count():
            bulk.marks = marks  # their offsets committed by the loop once the bulk is done
            if marks:
                self.inflight.save_after(bulk, self._save_owned)  # their checkpoints, once it is acknowledged
        elif marks:
            self._commit_marks(marks)  # nothing to send: everything before the marks is acknowledged

    def _collect(self, timeout: float | None = 0, defer: bool = False) -> bool:
        """Take in the bulk in flight once done (waiting at most `timeout`, None: until it is):
        acknowledged, its records are counted and its marks committed (defer: by `_take_acknowledged`,
        later in the cycle); failed, its records go back to the front of the queue. False while it
        is still going."""
        bulk = self.inflight.done(timeout)
        if bulk is None:
            return not self.inflight.busy()
        if bulk.error is not None:
            if not isinstance(bulk.error, (OpenSearchError, OpenSearchException, KafkaError, OSError)):
                raise bulk.error
            self._retry_later(bulk)
            self._sink_failed(bulk.error)
            return True
        self.metrics.sink_latency.observe(bulk.seconds)
        self._take_acknowledged()  # one deferred before: its marks first
        self._acked = bulk
        if not defer:
            self._take_acknowledged()
        return True

    def _take_acknowledged(self) -> None:
        """The bulk `_collect` took in acknowledged: its records counted, its marks committed."""
        bulk, self._acked = self._acked, None
        if bulk is None:
            return
        self._acknowledged(bulk.all_records())
        if bulk.marks:
            self._commit_marks(bulk.marks, bulk)

    def _put_back(self, bulk: Bulk) -> None:
        """A bulk that did not go through: its records before the ones gathered since (of the
        partitions still owned), to be sent again."""
        for tp, records in bulk.records.items():
            if tp in self.states:
                self.pending[tp] = records + self.pending.get(tp, [])
        self.pending_free = bulk.free + self.pending_free

    def _retry_later(self, bulk: Bulk) -> None:
        """A bulk in flight that failed: `_deliver` sends again what OpenSearch did not acknowledge of
        it (the sink's error says which documents), without its commit marks."""
        if self.retry is not None:  # not while one is retried (nothing is handed over then): kept anyway
            self._put_back(bulk)
            return
        bulk.unsent, bulk.marks = getattr(bulk.error, "unsent", None), None
        for tp in [tp for tp in bulk.records if tp not in self.states]:
            self._drop_from_retry(tp, bulk)
        self.retry = bulk

    def _drop_from_retry(self, tp, bulk: Bulk | None = None) -> bool:
        """Whether the bulk to retry held records of partition `tp` (taken away: its next owner sends
        them); they are taken out, and the bulk's remaining records are written to the sink anew."""
        if bulk is None:
            bulk = self.retry
        if bulk is None or tp not in bulk.records:
            return False
        del bulk.records[tp]
        bulk.unsent = None
        return True

    def _sink_failed(self, exc: BaseException) -> None:
        """OpenSearch (or the dead-letter topic) did not acknowledge: said once, counted; until a
        delivery goes through, the loop delivers synchronously, paused, with backoff (`_deliver`)."""
        self._count_throttled()
        if self.sink_ok:
            what = "busy (429)" if isinstance(exc, OpenSearchBusy) else "unavailable"
            log.warning(f"opensearch {what}: consumption paused, nothing committed", error=str(exc))
            self._retries_said = time.monotonic()
        self.sink_ok = False
        self.metrics.sink_down.set(1)
        self.metrics.sink_retries.inc()

    def _poll(self, poll_ms: int) -> int:
        batch = self.consumer.poll(timeout_ms=poll_ms)
        took = getattr(self.consumer, "took_brokers_down", None)  # the confluent backend's word
        if took is not None and took() and self.kafka_ok:
            # Kafka unavailable until an offset commit goes through again, as after a failed one
            self.kafka_ok = False
            self.metrics.kafka_down.set(1)
            log.warning("kafka unreachable: every broker is down; offsets stay uncommitted until one goes through")
        if self.new_partitions:
            self._adopt(batch)
        if batch:
            self._consume(batch)
        self._note_caught_up(time.monotonic())
        return sum(len(m) for m in batch.values())

    def _settle_jobs(self, deadline: float | None = None) -> bool:
        """The jobs a late event cut anew corrected, the jobs whose attempt ended diagnosed, their
        records acknowledged: whether none is left, so that offsets may be committed past them. The
        loop and a stop both settle before any commit: a commit between an attempt's end and its
        diagnosis went past the job's lines, whose containers its end had closed and forgotten, so
        no later reader ever ended or diagnosed it (tests/test_consume_shutdown.py). A job whose
        records could not be read back stays owed until its diagnosis is made. Left undone
        (OpenSearch failing, past the deadline), nothing is committed and the next owner reads again
        from the last commit, where the job was still open."""
        if self.to_correct:
            self._correct_jobs()
            if not self._deliver(deadline=deadline):
                return False
        if self.to_analyse:
            if not self._analyse() or not self._deliver(deadline=deadline):
                return False
        return not self.to_correct and not self.to_analyse and not self.diagnosis_owed

    def _note_caught_up(self, now: float) -> None:
        for tp, state in self.states.items():
            if not isinstance(state, LogPartition):
                continue
            high = self.ends.highwater(tp, now)
            behind = high is None or state.next_offset is None or state.next_offset < high
            if behind or self.consumer.paused():
                state.caught_up_since = None
            elif state.caught_up_since is None:
                state.caught_up_since = now

    def _shutdown(self) -> int:
        deadline = (self.stop_requested_at or time.monotonic()) + self.cfg.shutdown_timeout
        log.info("stopping", pending=sum(len(v) for v in self.pending.values()) + len(self.pending_free),
                 jobs_to_correct=len(self.to_correct), jobs_to_diagnose=len(self.to_analyse | self.diagnosis_owed))
        if self._deliver(deadline=deadline) and self._settle_jobs(deadline):
            try:
                self._commit_all()
            except Exception as exc:  # a commit that fails at exit: the next owner reads again
                log.warning("final commit failed", error=str(exc))
        else:
            log.warning("stopped without committing: OpenSearch did not acknowledge in time, or a job's attempt "
                        "ended and could not be corrected or diagnosed; the next owner reads again from the last commit")
        self.states.clear()  # the revocation that close() triggers has nothing left to do
        self.pending.clear()
        self.inflight.close()
        try:
            self.consumer.close(autocommit=False, timeout_ms=max(1000, int((deadline - time.monotonic()) * 1000)))
        except Exception as exc:
            log.warning("consumer close failed", error=str(exc))
        if self.dead is not None:
            self.dead.close(timeout=max(1.0, deadline - time.monotonic()))
        if self.sink is not None:
            try:
                self.sink.close()
            except OpenSearchError:
                pass
        log.info("stopped", lines=self.lines)
        return 0

    def _start_http(self) -> None:
        if self.cfg.metrics_port < 0:
            return
        from gangscope.pipeline.run.service_metrics import MetricsServer

        try:
            self.server = MetricsServer(self.metrics, self.health, self.cfg.metrics_host, self.cfg.metrics_port)
        except OSError as exc:
            from gangscope.pipeline.errors import UsageError

            raise UsageError(f"consume: cannot serve /metrics on {self.cfg.metrics_host}:{self.cfg.metrics_port}: "
                             f"{exc.strerror or exc}") from None
        log.info("metrics", url=f"http://{self.cfg.metrics_host}:{self.server.port}/metrics")

    def health(self) -> dict:
        joined = self.consumer is not None and bool(self.states)
        return {"ok": self.sink_ok and self.consumer is not None and not self.stopping,
                "opensearch": "up" if self.sink_ok else "unreachable",
                "kafka": "up" if self.kafka_ok else "unreachable",
                "partitions": len(self.states),
                "joined": joined, "stopping": self.stopping, "unacknowledged": self._unacknowledged()}

    def _unacknowledged(self) -> int | None:
        """Records made and not acknowledged by OpenSearch yet: waiting, in flight, to send again (None
        when the loop changed them while they were counted: this runs on the HTTP server's thread).
        A reader of /metrics cannot tell that a bulk is in flight: a throughput bench that took the
        records out staying the same for a second for the end stopped before the last bulk of a run
        whose bulks took longer (45,704 and 48,532 of 66,399 records indexed, bench.honest at load 5-9)."""
        try:
            waiting = sum(len(v) for v in list(self.pending.values())) + len(self.pending_free)
            retry = self.retry
            return (waiting + (self.inflight.records() if self.inflight is not None else 0)
                    + (retry.count() if retry is not None else 0))
        except RuntimeError:  # a dict changed size while it was read
            return None

    # -- OpenSearch ------------------------------------------------------------------------

    def _connect_sink(self) -> bool:
        """The sink (and checkpoint store); waits with backoff while OpenSearch is unreachable."""
        from gangscope.pipeline.sinks.opensearch import OpenSearchSink

        cfg = self.cfg
        wait = cfg.backoff_initial
        while not self.stopping:
            try:
                self.sink = OpenSearchSink(
                    cfg.opensearch, prefix=cfg.index_prefix, max_retries=1, initial_backoff=0.2,
                    batch_docs=1 << 30, batch_bytes=1 << 62, username=cfg.opensearch_username,
                    password=cfg.opensearch_password, ca_certs=cfg.opensearch_ca_certs,
                    timeout=cfg.opensearch_timeout, dead_letter=None)
                self.sink.prepare()  # every kind's index made now, not in the loop when its first record comes
                if cfg.checkpoints:
                    self.store = checkpoint.CheckpointStore(self.sink.client, cfg.index_prefix, cfg.group, cfg.opensearch)
                    self.store.ensure()
                self.inflight = BulkInFlight(self.sink)
                self.sink_ok = True
                self.metrics.sink_down.set(0)
                return True
            except OpenSearchError as exc:
                self.metrics.sink_down.set(1)
                log.warning("opensearch unreachable, waiting", error=str(exc), retry_in=wait)
                time.sleep(wait)
                wait = min(cfg.backoff_max, wait * 2)
        return False

    def _deliver(self, deadline: float | None = None) -> bool:
        """Everything pending acknowledged by OpenSearch (and dead letters by Kafka).

        While OpenSearch fails, the partitions are paused and polled (to stay in the group), and
        the bulk is tried again with backoff, each try sending only the documents OpenSearch has not
        acknowledged yet (`_flush_now`); said every RETRIES_SAID_EVERY seconds. Returns False only
        when stopping ran out of time."""
        wait = self.cfg.backoff_initial
        paused = False
        tries = 0
        if self.inflight.busy():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._collect(timeout=left):
                return False  # still in flight at the deadline: nothing more is committed
        while True:
            if self.retry is None:
                self.retry = Bulk({tp: records for tp, records in self.pending.items() if records}, self.pending_free)
                self.pending, self.pending_free = {}, []
            bulk = self.retry
            try:
                if bulk.count() and bulk.unsent != []:
                    self._flush_now(bulk)
                if self.dead is not None:
                    self.dead.flush(timeout=30)
            except (OpenSearchError, OpenSearchException, KafkaError, OSError) as exc:
                self._sink_failed(exc)
                tries += 1
                self._say_retrying(bulk, exc, tries)
                if self.stopping and deadline is None:
                    deadline = (self.stop_requested_at or time.monotonic()) + self.cfg.shutdown_timeout
                if deadline is not None and time.monotonic() + wait > deadline:
                    return False
                if self.consumer is not None:
                    self.consumer.pause(*self.consumer.assignment())
                    paused = True
                    self._poll(int(wait * 1000))  # keeps the membership; a rebalance may drop pending
                    self.consumer.pause(*self.consumer.assignment())
                else:
                    time.sleep(wait)
                wait = min(self.cfg.backoff_max, wait * 2)
                continue
            self.retry = None
            self._acknowledged(bulk.all_records())
            if self.pending_free or any(self.pending.values()):
                continue  # read while paused (a partition assigned meanwhile): delivered too
            if paused and self.consumer is not None:
                self.consumer.resume(*self.consumer.assignment())
            return True

    def _flush_now(self, bulk: Bulk) -> None:
        """A bulk's documents to OpenSearch, on this thread: those an earlier try left unsent, or
        (none known) every record written to the sink. Raises what the sink raises, the documents
        still unsent noted in the bulk; once acknowledged, `bulk.unsent` is empty."""
        unsent, bulk.unsent = bulk.unsent, None
        if unsent is None:
            self.sink.write(bulk.all_records())
        else:
            self.sink.requeue(unsent)
        t0 = time.monotonic()
        try:
            self.sink.flush()
        except BaseException as exc:
            bulk.unsent = getattr(exc, "unsent", None)
            raise
        bulk.unsent = []
        self.metrics.sink_latency.observe(time.monotonic() - t0)

    def _say_retrying(self, bulk: Bulk, exc: BaseException, tries: int) -> None:
        """The retries while OpenSearch does not acknowledge, said at most every RETRIES_SAID_EVERY
        seconds: a pause that goes on shows whether it gets anywhere."""
        now = time.monotonic()
        if now - self._retries_said < RETRIES_SAID_EVERY:
            return
        self._retries_said = now
        unsent = bulk.count() if bulk.unsent is None else len(bulk.unsent)
        log.warning("opensearch still not acknowledging: retrying", records=bulk.count(), documents_unsent=unsent,
                    tries=tries, error=str(exc)[:300])

    def _acknowledged(self, records: list[Record]) -> None:
        """Records OpenSearch acknowledged: counted, and into the job metrics."""
        self._count_throttled()
        kinds: dict[str, int] = {}
        for r in records:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
        for kind, n in kinds.items():
            self.metrics.records_out.labels(kind).inc(n)
        self.metrics.jobs.observe(records)  # the job metrics of what OpenSearch acknowledged
        if not self.sink_ok:
            log.info("opensearch reachable again: consumption resumed")
        self.sink_ok = True
        self.metrics.sink_down.set(0)

    def _count_throttled(self) -> None:
        """The sink's 429 retries since the last look, into the metrics."""
        stats = self.sink.stats
        now = (stats.throttled_requests, stats.throttled_documents)
        for level, n, before in zip(("request", "document"), now, self._throttled):
            if n > before:
                self.metrics.sink_throttled.labels(level).inc(n - before)
        self._throttled = now
        splits = getattr(stats, "bulk_splits", 0)
        if splits > self._bulk_splits:
            self.metrics.sink_bulk_splits.inc(splits - self._bulk_splits)
            self._bulk_splits = splits

    # -- partitions ------------------------------------------------------------------------

    def _load_events(self) -> None:
        """The gang events already indexed (the last `events_lookback` hours) into the event book."""
        if self.cfg.events_lookback <= 0:
            return
        records = indexed_events(self.sink.client, self.cfg.index_prefix, self.cfg.events_lookback)
        if records:
            self.book.add(records)
            log.info("events loaded", events=len(records), jobs=len(self.book.attempts))
            self._end_undiagnosed()

    def _end_undiagnosed(self) -> None:
        """The jobs whose attempts the loaded events end, without a diagnosis in the index: ended
        again after the grace, as when their end event was read (undiagnosed.py says why)."""
        from gangscope.pipeline.run.undiagnosed import undiagnosed_jobs

        try:
            jobs = undiagnosed_jobs(self.sink.client, self.cfg.index_prefix, self.book.ended)
        except (OpenSearchError, OpenSearchException, OSError) as exc:
            log.warning("ended attempts without a diagnosis not looked for", error=str(exc)[:300])
            return
        finish_at = time.monotonic() + self.cfg.attempt_grace
        for job in jobs:
            self.jobs.setdefault(job, JobClock(time.monotonic())).finish_at = finish_at
        if jobs:
            log.info("ended attempts without a diagnosis: diagnosed after the grace", jobs=len(jobs))

    def _is_events(self, tp) -> bool:
        return tp.topic in self.cfg.events_topics

    def _adopt(self, batch: dict) -> None:
        """Set up the partitions just assigned: restore a checkpoint, or start at the committed offset."""
        now = time.monotonic()
        for tp in sorted(self.new_partitions):
            if tp not in self.consumer.assignment():
                continue
            committed, open_from = resume_point(self.consumer.committed(tp, metadata=True))
            state, start = None, open_from
            if not self._is_events(tp) and self.store is not None:
                state, start = self._restore(tp, committed, now)
                if state is None:
                    start = open_from  # no usable checkpoint: from the first line of what was open at the commit
                else:
                    self.checkpointed[tp] = start
            if start is None:
                # Never committed: from the first offset this consumer read, if it read any. kafka-python
                # (3.x) keeps the fetch position of a partition revoked and assigned back, but the
                # revocation dropped what was read without an acknowledgement: it must be read again.
                start = self.first_read.get(tp)
            if state is None:
                state = self.new_state(tp)
            self.states[tp] = state
            if isinstance(state, LogPartition):  # what a failure counted in its curation names as its file
                state.read_from(f"{tp.topic}/{tp.partition}")
            if isinstance(state, LogPartition):
                for job in state.jobs():  # restored containers end like any others, when quiet
                    self.jobs.setdefault(job, JobClock(now))
            if start is not None:
                self.saved[tp] = start
                state.next_offset = start
                messages = batch.get(tp)
                if messages and messages[0].offset <= start <= messages[-1].offset:
                    batch[tp] = [m for m in messages if m.offset >= start]
                else:
                    batch.pop(tp, None)
                    self.consumer.seek(tp, start)
            if self.sink_ok:
                # kafka-python (3.x) keeps the paused flag of a partition revoked while OpenSearch was
                # away and assigned back after it returned: nothing would resume it.
                self.consumer.resume(tp)
            log.info("partition assigned", topic=tp.topic, partition=tp.partition, start=start, committed=committed)
        self.new_partitions.clear()
        self.metrics.partitions.set(len(self.states))

    def new_state(self, tp) -> "LogPartition | EventsPartition":
        """The state of a partition read from its start or its committed offset (no checkpoint)."""
        return new_partition_state(self._is_events(tp), self.attempt_of, self.cfg.max_containers)

    def _restore(self, tp, committed: int | None, now: float) -> tuple[LogPartition | None, int | None]:
        return restore_partition(self.store, tp, committed, now, attempt_of=self.attempt_of,
                                 max_containers=self.cfg.max_containers, retry_wait=self.cfg.backoff_initial,
                                 stopping=lambda: self.stopping)

    def release(self, tps, lost: bool = False) -> dict:
        """Partitions taken away: checkpoint and offsets for what is acknowledged; drop the rest."""
        offsets = {}
        for tp in tps:
            with self._saving:  # not while the bulk thread saves checkpoints of the states it holds
                state = self.states.pop(tp, None)
            in_retry = self._drop_from_retry(tp)
            unacked = self.pending.pop(tp, None) or self.inflight.holds(tp) or in_retry
            self.new_partitions.discard(tp)
            if state is None or lost or unacked:
                continue  # never acknowledged: the next owner reads it again
            point = self._save(tp, state)
            if point is not None:
                offsets[tp] = point
        self.metrics.partitions.set(len(self.states))
        if offsets:
            log.info("partitions released", offsets={f"{tp.topic}/{tp.partition}": o.offset for tp, o in offsets.items()})
        return offsets

    # -- consuming -------------------------------------------------------------------------

    def _consume(self, batch: dict) -> None:
        now = time.monotonic()
        sliced = False
        for tp, messages in batch.items():
            state = self.states.get(tp)
            if state is None or not messages:
                continue
            self.metrics.lines_in.labels(tp.topic).inc(len(messages))
            self.first_read.setdefault(tp, messages[0].offset)
            self.lines += len(messages)
            if isinstance(state, EventsPartition):
                self._consume_events(state, messages, self.pending.setdefault(tp, []), now)
                continue
            for start in range(0, len(messages), POLL_SLICE):
                if sliced:
                    self._hand_over_between()
                sliced = True
                # (looked up again: a hand-over between slices took the pending records away)
                self._consume_logs(state, messages[start:start + POLL_SLICE], self.pending.setdefault(tp, []), now)

    def _hand_over_between(self) -> None:
        """Between two slices of a poll's log messages: once OpenSearch acknowledged the bulk in
        flight, what the slices before gathered goes out now, as at the end of a cycle
        (`_send_or_gather`: under a backlog, 5,000 records or `flush_interval`), rather than when
        the whole poll is curated: a poll of 10,000 messages took 0.2-0.5 s to curate, OpenSearch
        idle meanwhile (bench.kafka_consume's throughput run with a probe of the bulks' times at
        3677c17, load 13-18: 4.1-5.7 s of 13.8-21.3 s between an acknowledgement and the next send,
        0.5-0.8 s at once). Only on the plain path: nothing to retry, no job to correct or diagnose
        (those deliver synchronously, which polls), and never waiting for the bulk in flight."""
        if not self.sink_ok or self.retry is not None or self.to_correct or self.to_analyse:
            return
        if self.inflight.busy() and not self._collect(defer=True):
            return  # still in flight
        if self.sink_ok and not self.inflight.busy() and (self.pending_free or any(self.pending.values())):
            now = time.monotonic()
            waiting = sum(len(v) for v in self.pending.values())
            if waiting < GATHER_RECORDS and now - self.last_flush < self.cfg.flush_interval:
                return  # gathers on, as _gather_more lets a backlog's records do (acknowledgement taken later)
            self._hand_over(self._flush_due(now) and not self.diagnosis_owed)
        self._take_acknowledged()

    def _consume_logs(self, state: LogPartition, messages: list, out: list[Record], now: float) -> None:
        for job in curate_log_messages(state, messages, out, self.scanner, self.failures, self._dead_letter, now):
            clock = self.jobs.get(job)
            if clock is None:
                self.jobs[job] = JobClock(now)
            else:
                clock.last_line = now

    def _consume_events(self, state: EventsPartition, messages: list, out: list[Record], now: float) -> None:
        read = read_event_messages(state, messages, self.book, self.failures, self._dead_letter)
        out.extend(read.records)
        self.to_correct |= read.recut
        for job in read.ended:
            self.jobs.setdefault(job, JobClock(now)).finish_at = now + self.cfg.attempt_grace

    def _dead_letter(self, message, bad: ksrc.Undecodable) -> None:
        self.metrics.dead_letters.labels(bad.reason).inc()
        if self.dead is not None:
            # the detail quotes the message (an unknown `kind`, a label's name): a header masked
            # like the records; the value stays the message as it came, to be read again
            self.dead.send(message, bad.reason, redacted(bad.detail))
        else:
            log.warning("undecodable message dropped (no dead-letter topic)", topic=message.topic,
                        partition=message.partition, offset=message.offset, reason=bad.reason)

    # -- idle work: quiet containers, ended attempts ------------------------------------------

    def _idle_work(self, now: float) -> None:
        cfg = self.cfg
        for tp, state in self.states.items():
            if isinstance(state, LogPartition):
                before = self.pending.get(tp)
                out = before if before is not None else []
                cut = state.flush_idle(now, cfg.flush_idle, out, cfg.open_wait)
                if cut:
                    self.metrics.open_records_cut.inc(cut)
                    log.warning("open records closed before their end: their containers were quiet for open_wait",
                                topic=tp.topic, partition=tp.partition, records=cut, open_wait=cfg.open_wait)
                if out and before is None:
                    self.pending[tp] = out
        partitions = [s for s in self.states.values() if isinstance(s, LogPartition)]
        for job in due_jobs(self.jobs, partitions, now, cfg.attempt_idle, cfg.open_wait):
            self._finish_job(job)
            del self.jobs[job]

    def _finish_job(self, job: str) -> None:
        ends = [s.stats.job_end.get(job) for s in self.states.values() if isinstance(s, LogPartition)]
        ends = [e for e in ends if e is not None]
        job_end = max(ends) if ends else None
        for tp, state in self.states.items():
            if isinstance(state, LogPartition) and job in state.jobs():
                state.finish_job(job, job_end, self.pending.setdefault(tp, []))
        self.to_analyse.add(job)

    def _correct_jobs(self) -> None:
        """Jobs whose attempts changed: their records brought to the attempts a replay gives."""
        from gangscope.pipeline.run.late_events import correct_job

        jobs, self.to_correct = sorted(self.to_correct), set()
        partitions = [s for s in self.states.values() if isinstance(s, LogPartition)]
        for job in jobs:
            ends = [e for s in partitions if (e := s.stats.job_end.get(job)) is not None]
            try:
                done = correct_job(job, client=self.sink.client, prefix=self.cfg.index_prefix,
                                   attempt_of=self.attempt_of, partitions=partitions, job_end=max(ends, default=None))
            except (OpenSearchError, OpenSearchException, OSError) as exc:
                log.warning("late events: records not corrected yet; tried again", job=job, error=str(exc)[:300])
                self.to_correct.add(job)
                continue
            self.pending_free.extend(done.records)
            if done.diagnosed and not any(job in s.jobs() for s in partitions):
                self.to_analyse.add(job)
            if done.moved or done.deleted:
                log.info("late events: records moved to their attempts", job=job, moved=done.moved,
                         deleted=done.deleted)

    def _analyse(self) -> bool:
        """Stragglers and the diagnosis of each finished job, from its records in OpenSearch; whether
        every job's records could be read (one that could not is diagnosed later)."""
        jobs, self.to_analyse = sorted(self.to_analyse), set()
        read_all = True
        for job in jobs:
            try:
                records = self._job_records(job)
            except (OpenSearchError, OpenSearchException, OSError) as exc:
                # the job ends again (and is diagnosed then) once it has been quiet once more
                log.warning("cannot read the job's records back; diagnosis later", job=job, error=str(exc)[:300])
                self.jobs[job] = JobClock(time.monotonic())
                self.diagnosis_owed.add(job)
                read_all = False
                continue
            self.diagnosis_owed.discard(job)
            found = analyse_job(job, records, self.book.attempts.get(job), self.failures, self.cfg.digest_max_bytes)
            if found is None:
                continue  # counted; the job's records stay indexed, without a diagnosis
            if found.stale:  # of an attempt that is no more (its job's attempts cut anew)
                try:
                    job_index.delete(self.sink.client, self.cfg.index_prefix, found.stale)
                except (OpenSearchError, OpenSearchException, OSError) as exc:
                    log.warning("stale diagnoses not deleted", job=job, error=str(exc)[:300])
            self.pending_free.extend(found.made)
            self.metrics.diagnoses.inc()
            log.info("attempt diagnosed", job=job, records=len(records))
        return read_all

    def _count_failures(self) -> None:
        """The units of work that raised since the last look (here, in the partitions' curation, in
        the sink): into /metrics and the log."""
        report_failures(self.failures, [*self.states.values(), self.sink], self.metrics)

    def _job_records(self, job: str) -> list[Record]:
        """The job's records the diagnosis reads, and its diagnoses so far (to delete those not made again)."""
        return job_index.job_records(self.sink.client, self.cfg.index_prefix, job, (*ANALYSED_KINDS, "diagnosis"))

    # -- checkpoints and commits -------------------------------------------------------------

    def _mark(self, tp, state) -> CommitMark | None:
        """The partition's commit point as it stands: its checkpoint encoded now (saved by `_save_mark`
        once everything before it is acknowledged)."""
        return take_mark(tp, state, self.store, self.checkpointed.get(tp))

    def _save_mark(self, tp, mark: CommitMark):
        """Save a mark's checkpoint; returns the offset (with its metadata) that is safe to commit
        (commit_point.py: past an open record only when its state is checkpointed)."""
        self._save_checkpoints({tp: mark})
        return self._commit_point(tp, mark)

    def _save_checkpoints(self, marks: dict) -> None:
        """The marks' checkpoints saved, all in one request (raises OpenSearchError if one is not)."""
        todo = {tp: mark for tp, mark in marks.items() if mark.data is not None}
        if not todo:
            return
        self.store.save_many([(tp.topic, tp.partition, mark.offset, mark.data) for tp, mark in todo.items()])
        for tp, mark in todo.items():
            self.checkpointed[tp] = mark.offset
        self.metrics.checkpoints.inc(len(todo))

    def _commit_point(self, tp, mark: CommitMark):
        self.saved[tp] = mark.offset
        return commit_point(mark.offset, mark.open_positions, self.checkpointed.get(tp) == mark.offset)

    def _save(self, tp, state):
        """Checkpoint one acknowledged partition; returns the offset that is safe to commit, or None."""
        mark = self._mark(tp, state)
        return None if mark is None else self._save_mark(tp, mark)

    def _commit_all(self) -> None:
        """Checkpoint and commit every partition whose records are all acknowledged."""
        self.last_commit = time.monotonic()
        marks = {}
        for tp, state in self.states.items():
            if self.pending.get(tp) or self.inflight.holds(tp) or (self.retry and tp in self.retry.records):
                continue
            mark = self._mark(tp, state)
            if mark is not None:
                marks[tp] = mark
        self._commit_marks(marks)

    def _save_owned(self, marks: dict) -> dict:
        """On the bulk thread, once the bulk that carried the marks is acknowledged: the checkpoints of
        the marks of partitions still owned (by the same state as when marked), in one request;
        tp -> the offset saved. (A partition revoked meanwhile is saved by nobody here: its records
        up to the mark are acknowledged, but its next owner decides; the loop, which revokes, takes
        it out of `states`, under `_saving`, before the next owner can have read anything: a save of
        this thread can no more land after the one release() makes, older than the offset it commits.)"""
        with self._saving:  # release() takes a partition away only between two saves
            todo = {tp: mark for tp, mark in marks.items() if mark.data is not None and self.states.get(tp) is mark.state}
            if todo:
                self.store.save_many([(tp.topic, tp.partition, mark.offset, mark.data) for tp, mark in todo.items()])
        return {tp: mark.offset for tp, mark in todo.items()}

    def _commit_marks(self, marks: dict, bulk: Bulk | None = None) -> None:
        """Save the marks' checkpoints (unless the bulk thread saved them once `bulk`, which carried
        the marks, was acknowledged), then commit their offsets (the partitions still owned, by the
        same state as when marked)."""
        # not those revoked since (and maybe assigned back): their owner then decides
        owned = {tp: mark for tp, mark in marks.items() if self.states.get(tp) is mark.state}
        try:
            if bulk is not None and bulk.save_error is not None:
                raise bulk.save_error
            if bulk is not None and bulk.saved is not None:
                # saved on the bulk thread: only what it saved, or what had nothing to save, is committed
                owned = {tp: mark for tp, mark in owned.items() if mark.data is None or tp in bulk.saved}
                for tp in owned:
                    if tp in bulk.saved:
                        self.checkpointed[tp] = bulk.saved[tp]
                self.metrics.checkpoints.inc(len(bulk.saved))
            else:
                self._save_checkpoints(owned)
        except OpenSearchError as exc:
            log.warning("checkpoint not saved; offsets not committed", error=str(exc))
            return
        offsets = {tp: self._commit_point(tp, mark) for tp, mark in owned.items()}
        if offsets:
            self.kafka_ok = commit_offsets(self.consumer, offsets, max(1.0, 2 * self.cfg.commit_interval),
                                           self.metrics, self.kafka_ok)

    def _gauges(self) -> None:
        opened = 0
        for tp, state in self.states.items():
            opened += len(state.open_positions())
            high = self.ends.highwater(tp, time.monotonic())
            if high is not None and state.next_offset is not None:
                self.metrics.lag.labels(tp.topic, str(tp.partition)).set(max(0, high - state.next_offset))
        self.metrics.open_records.set(opened)


def main(cfg) -> int:
    """Run the service until SIGTERM/SIGINT; the exit code."""
    from gangscope.pipeline.run import log_redaction
    from gangscope.pipeline.run.config import process_list_warnings
    from gangscope.pipeline.spill import sweep_orphans

    log_redaction.configure(cfg.log_level)  # every line through the redactor, ours and the libraries'
    for warning in process_list_warnings(cfg):
        log.warning(warning)
    swept = sweep_orphans()  # what an earlier consumer killed with SIGKILL left in the temporary folder
    if swept:
        log.info("orphan_spill_folders_removed", count=swept)
    return Service(cfg, own_process=True).run()
