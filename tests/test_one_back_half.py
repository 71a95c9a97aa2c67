"""The service's incremental path and replay's batch path give the same records, without servers.

The same Fluent Bit records (one per fixture log line, tests/kafka_fixtures.fluentbit_records)
go two ways:
- batch: `replay` of a file holding them, with the gang's event files;
- incremental: the consumer service's own methods in the order its loop calls them, with the
  Kafka consumer and OpenSearch stood in for by lists and a dict: event messages one poll each
  (EventBook), then log messages in poll batches (LogPartition.feed_batch), then each job's end
  (finish_job), then the diagnosis of each finished job from its records "read back" from the
  index (back_half.digest_of + analyse).
The index each way ends with the same ids and documents: curated records, progress, event
records and their attempts, stragglers and diagnoses. tests/test_kafka_service.py holds the
same against a real Kafka and OpenSearch.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from kafka.structs import TopicPartition

from gangscope.parsers.records import from_dict, to_dict
from gangscope.pipeline.run import config as service_config
from gangscope.pipeline.run import replay as replay_mod
from gangscope.pipeline.run import service as service_mod

from kafka_fixtures import FIXTURES, ROOT, fluentbit_records

GANG = ROOT / "fixtures" / "gang"
LOGS, EVENTS = "logs", "events"
POLL = 97  # messages per poll batch (odd, so batches cut records and containers anywhere)


MEGATRON = (" iteration {:8d}/     100 | consumed samples: {:12d} | elapsed time per iteration (ms): {:.1f} | "
            "learning rate: 3.000000E-05 | lm loss: {:.6E} | loss scale: 1.0 |")


def straggling_job(root: Path) -> Path:
    """Four ranks of one job, one pod each: rank 3 twice as slow as its peers (a straggler),
    rank 2 gone silent after 12 steps while the others go on (a stall at the end of the log)."""
    from datetime import datetime, timedelta, timezone

    start = datetime(2026, 11, 30, 4, 0, 0, tzinfo=timezone.utc)
    for rank in range(4):
        folder = root / "pods" / f"team-s_straggle-worker-{rank}_0000000{rank}-aaaa-bbbb-cccc-000000000000" / "megatron"
        folder.mkdir(parents=True)
        ms, t, lines = (2000.0 if rank == 3 else 1000.0), 0.0, []
        for step in range(1, (12 if rank == 2 else 40) + 1):
            t += ms / 1000
            stamp = (start + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")
            lines.append(f"{stamp} stdout F [rank{rank}]: {MEGATRON.format(step, step * 128, ms, 5.0 - step / 100)}\n")
        (folder / "0.log").write_text("".join(lines))
    return root / "pods"


def scenarios():
    out = [pytest.param(FIXTURES, [], id="runs+dialects"), pytest.param(None, [], id="straggler+stall")]
    for folder in sorted(GANG.iterdir()):
        if (folder / "pods").is_dir() and (folder / "events.ndjson").exists():
            events = [p for p in (folder / "events.ndjson", folder / "workloads.json") if p.exists()]
            out.append(pytest.param([folder / "pods"], events, id=folder.name))
    return out


def event_messages(event_files: list[Path]) -> list[bytes]:
    """The event files as an events topic carries them: a line of NDJSON per message, a JSON
    document (a `kubectl get -o json` list) as one message."""
    out = []
    for path in event_files:
        if path.suffix == ".ndjson":
            out.extend(line.encode() for line in path.read_text().splitlines() if line.strip())
        else:
            out.append(path.read_bytes())
    return out


def batch_path(values: list[bytes], event_files: list[Path], tmp_path: Path) -> dict[str, dict]:
    """id -> document of `replay` of the Fluent Bit records written to a file."""
    path = tmp_path / "pods.fluentbit.log"
    path.write_bytes(b"".join(v + b"\n" for v in values))
    index: dict[str, dict] = {}
    replay_mod.run(replay_mod.ReplayOptions(paths=[str(path)], events=[str(p) for p in event_files]),
                   lambda batch: index.update((r.id, to_dict(r)) for r in batch))
    return index


def incremental_path(values: list[bytes], event_files: list[Path]) -> dict[str, dict]:
    """id -> document of the records the service's methods make of the same messages."""
    cfg = service_config.load({"bootstrap": "unused:9092", "opensearch": "http://unused:9200", "topics": [LOGS],
                               "events_topics": [EVENTS]}, environ={})
    svc = service_mod.Service(cfg, install_signals=False)
    logs_tp, events_tp = TopicPartition(LOGS, 0), TopicPartition(EVENTS, 0)
    for tp in (logs_tp, events_tp):
        svc.states[tp] = svc.new_state(tp)
    index: dict[str, dict] = {}

    def acknowledged():  # what _deliver hands the sink; a document is written when its record is
        for batch in [*svc.pending.values(), svc.pending_free]:
            index.update((r.id, to_dict(r)) for r in batch)
        svc.pending.clear()
        svc.pending_free = []

    def read_back(job: str):  # _job_records: the job's analysed kinds, as OpenSearch returns them
        return [from_dict(d) for d in index.values() if d.get("job") == job and d["kind"] in service_mod.ANALYSED_KINDS]

    svc._job_records = read_back
    messages = [SimpleNamespace(topic=EVENTS, partition=0, offset=i, value=v, key=None)
                for i, v in enumerate(event_messages(event_files))]
    for m in messages:  # the gang's events first, as replay reads them first
        svc._consume({events_tp: [m]})
        acknowledged()
    messages = [SimpleNamespace(topic=LOGS, partition=0, offset=i, value=v, key=None) for i, v in enumerate(values)]
    for start in range(0, len(messages), POLL):
        svc._consume({logs_tp: messages[start:start + POLL]})
        acknowledged()
    for job in sorted(svc.jobs):  # every attempt quiet at last (_idle_work)
        svc._finish_job(job)
        del svc.jobs[job]
    acknowledged()
    svc._analyse()
    acknowledged()
    return index


@pytest.mark.parametrize("paths, event_files", scenarios())
def test_the_service_and_replay_give_the_same_records_stragglers_and_diagnoses(paths, event_files, tmp_path):
    values = [value for _key, value in fluentbit_records(paths or [straggling_job(tmp_path / "job")])]
    want = batch_path(values, event_files, tmp_path)
    got = incremental_path(values, event_files)

    def of(index, kind, signal=None):
        return {i: d for i, d in index.items() if d["kind"] == kind and (signal is None or d.get("signal") == signal)}

    assert of(want, "diagnosis"), "every scenario has a diagnosis"
    assert of(got, "diagnosis") == of(want, "diagnosis")
    assert of(got, "signal", "straggler") == of(want, "signal", "straggler")
    if event_files:
        assert of(want, "event") and of(got, "event") == of(want, "event")
    if paths is None:  # progress derived per rank and judged at the job's end, stragglers found from the steps
        assert len(of(want, "signal", "straggler")) == 1 and len(of(want, "signal", "stall")) == 3
        assert of(got, "signal", "stall") == of(want, "signal", "stall")
    for kind in sorted({d["kind"] for d in [*want.values(), *got.values()]}):
        mine, theirs = of(got, kind), of(want, kind)
        assert set(mine) == set(theirs), f"{kind}: {len(set(theirs) - set(mine))} missing, {len(set(mine) - set(theirs))} extra"
        changed = sorted(i for i in mine if mine[i] != theirs[i])
        assert not changed, f"{kind}: {len(changed)} differ, e.g. {json.dumps(mine[changed[0]])[:400]} != {json.dumps(theirs[changed[0]])[:400]}"
    assert got == want
