"""Checkpoints of a partition's curation state, kept in OpenSearch beside the records.

Parsers carry state across lines (an open traceback, a step being assembled, the epoch a
Keras header announced, a progress tracker's recent steps). Replaying from the first line
of an open record loses none of the records, but a replay that starts mid-stream can read
later lines differently than a run that never stopped. So, after the sink acknowledged
everything up to an offset, the service writes the partition's snapshot at that offset
(pipeline/curate/snapshot.py: versioned plain data, never a pickle) into
`<prefix>gangscope-checkpoint`, and only then commits the offset to Kafka. A consumer that
takes the partition over (restart or rebalance) restores the checkpoint and goes on from
its offset: the index ends as if nothing had happened. Without a usable checkpoint (none, or
one this build does not read: `SnapshotError`) it falls back to the committed offset, which
never lies past an open record.
"""

from __future__ import annotations

import base64
import json
import time

from opensearchpy import exceptions as os_exc

from gangscope import __version__
from gangscope.pipeline.curate import snapshot
from gangscope.pipeline.curate.stats import CurationLimits
from gangscope.pipeline.curate.partition import LogPartition
from gangscope.pipeline.curate.snapshot import SCHEMA, SnapshotError
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.indices import OpenSearchError, OpenSearchUnavailable

__all__ = ["CheckpointStore", "SnapshotError", "dumps", "loads", "index_name"]

TEMPLATE = "checkpoint.json.j2"
# What of a bulk answer is read: each item's status and error.
_BULK_ANSWER = "errors,items.*.status,items.*.error"
INDEX_SCHEMA = 1  # of the index's mapping (templates/index/checkpoint.json.j2), not of the snapshots


def dumps(partition: LogPartition) -> bytes:
    """The partition's snapshot, as stored."""
    return snapshot.encode(partition.snapshot())


def loads(data: bytes, attempt_of, limits: CurationLimits | None = None, progress=None) -> LogPartition:
    """The partition a stored snapshot describes (call `restored` on it before use); arguments as
    for LogPartition. SnapshotError when this build does not read it; nothing in it is executed."""
    state = snapshot.decode(data)
    try:
        return LogPartition.from_snapshot(state, attempt_of, limits=limits, progress=progress)
    except Exception as exc:  # read as the schema says, but not a state this build can take up
        raise SnapshotError(f"schema {SCHEMA} snapshot does not restore ({type(exc).__name__}: {exc})") from None


def index_name(prefix: str = "") -> str:
    return f"{prefix}gangscope-checkpoint"


class CheckpointStore:
    """Saves and loads one state per (group, topic, partition)."""

    def __init__(self, client, prefix: str, group: str, url: str = "opensearch"):
        self.client = client
        self.index = index_name(prefix)
        self.group = group
        self.url = url
        self._ready = False

    def _call(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except os_exc.ConnectionError as exc:
            raise OpenSearchUnavailable(indices.describe(exc, self.url)) from None
        except os_exc.NotFoundError:
            raise
        except os_exc.TransportError as exc:
            raise OpenSearchError(indices.describe(exc, self.url)) from None

    def ensure(self) -> None:
        if self._ready:
            return
        if not self._call(self.client.indices.exists, index=self.index):
            replicas = 0 if indices.node_count(self.client) == 1 else 1
            body = indices.render(TEMPLATE, schema=INDEX_SCHEMA, replicas=replicas)
            try:
                self.client.indices.create(index=self.index, body=body)
            except os_exc.RequestError as exc:
                if exc.error != "resource_already_exists_exception":
                    raise OpenSearchError(indices.describe(exc, self.url)) from None
            except os_exc.ConnectionError as exc:
                raise OpenSearchUnavailable(indices.describe(exc, self.url)) from None
        self._ready = True

    def _id(self, topic: str, partition: int) -> str:
        return f"{self.group}/{topic}/{partition}"

    def save(self, topic: str, partition: int, offset: int, state: bytes) -> None:
        """Store the state (`dumps`) at `offset` (the next offset to read); returns once the server has it."""
        self.save_many([(topic, partition, offset, state)])

    def save_many(self, states: list[tuple[str, int, int, bytes]]) -> None:
        """Store each (topic, partition, offset, state) in one bulk request; returns once the server
        has every one, else raises OpenSearchError naming the first it refused (those it took stay
        saved: a checkpoint ahead of its committed offset is one the next owner may use or not, as
        partition_restore.py decides). One request per partition stood in the service's loop at every
        commit: 4 round trips to a busy node were 5.6 % of the loop's wall time at 10,000 lines/s
        (py-spy --idle, bench.kafka_consume --only delay), a consumer of 32 partitions made 32."""
        if not states:
            return
        self.ensure()
        now = int(time.time() * 1000)
        lines = []
        for topic, partition, offset, state in states:
            lines.append(json.dumps({"index": {"_index": self.index, "_id": self._id(topic, partition)}}))
            lines.append(json.dumps({
                "group": self.group, "topic": topic, "partition": partition, "offset": offset,
                "saved_at": now, "version": __version__, "schema": SCHEMA,
                "state": base64.b64encode(state).decode("ascii"),
            }))
        answer = self._call(self.client.bulk, body="\n".join(lines) + "\n", filter_path=_BULK_ANSWER)
        items = answer.get("items") if isinstance(answer, dict) else None
        if not isinstance(items, list) or len(items) != len(states):
            raise OpenSearchError(f"OpenSearch at {indices.redact(self.url)} answered {len(states)} checkpoints "
                                  f"with {len(items) if isinstance(items, list) else 'no'} items; not saved")
        for (topic, partition, _offset, _state), item in zip(states, items):
            info = next(iter(item.values()), None) if isinstance(item, dict) and item else None
            status = info.get("status") if isinstance(info, dict) else None
            if not isinstance(status, int) or not 200 <= status < 300:
                error = info.get("error") if isinstance(info, dict) else item
                raise OpenSearchError(f"checkpoint of {topic}/{partition} not saved by OpenSearch at "
                                      f"{indices.redact(self.url)} (status {status}): {str(error)[:200]}")

    def load(self, topic: str, partition: int) -> tuple[int, bytes] | None:
        """(offset, state) of the partition's checkpoint, or None when there is none. Whether this
        build reads the state is for `loads` to say (with the reason when it does not)."""
        try:
            doc = self._call(self.client.get, index=self.index, id=self._id(topic, partition))
        except os_exc.NotFoundError:
            return None
        src = doc.get("_source") or {}
        if not isinstance(src.get("offset"), int) or not isinstance(src.get("state"), str):
            return None
        try:
            return src["offset"], base64.b64decode(src["state"], validate=True)
        except ValueError:
            return src["offset"], b""  # not base64: `loads` says it is no snapshot

    def delete(self, topic: str, partition: int) -> None:
        try:
            self._call(self.client.delete, index=self.index, id=self._id(topic, partition))
        except os_exc.NotFoundError:
            pass
