"""Checkpoints of a partition's curation state, kept in OpenSearch beside the records.

Parsers carry state across lines (an open traceback, a step being assembled, the epoch a
Keras header announced, a progress tracker's recent steps). Replaying from the first line
of an open record loses none of the records, but a replay that starts mid-stream can read
later lines differently than a run that never stopped. So, after the sink acknowledged
everything up to an offset, the service pickles the partition's state at that offset into
`<prefix>gangscope-checkpoint`, and only then commits the offset to Kafka. A consumer that
takes the partition over (restart or rebalance) restores the checkpoint and goes on from
its offset: the index ends as if nothing had happened. Without a usable checkpoint it falls
back to the committed offset, which never lies past an open record.
"""

from __future__ import annotations

import base64
import io
import pickle
import time
import zlib
from typing import Any

from opensearchpy import exceptions as os_exc

from gangscope import __version__
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.indices import OpenSearchError, OpenSearchUnavailable

SCHEMA = 1
TEMPLATE = "checkpoint.json.j2"


class _Pickler(pickle.Pickler):
    """Objects shared by every partition (caches, callbacks) travel by name, not by value."""

    def __init__(self, file, shared: dict[str, Any]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._names = {id(obj): name for name, obj in shared.items()}

    def persistent_id(self, obj: Any) -> str | None:
        return self._names.get(id(obj))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, shared: dict[str, Any]):
        super().__init__(file)
        self._shared = shared

    def persistent_load(self, pid: str) -> Any:
        return self._shared[pid]


_SCALARS = (str, bytes, int, float, bool, type(None))
PARSER_MODULES = ("gangscope.parsers", "gangscope.pipeline.curate.curators", "gangscope.pipeline.curate.identity")


def module_constants(prefixes: tuple[str, ...] = PARSER_MODULES) -> dict[str, Any]:
    """Module-level objects of the parser modules (dialect tables, compiled grammars, caches), and the
    members of their module-level lists, tuples and dicts: shared by every state, never copied into
    a checkpoint (many hold lambdas, which do not pickle, and none of them is per-stream state)."""
    import sys
    import types

    found: dict[str, Any] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(prefixes):
            continue
        for attr, value in list(vars(module).items()):
            if attr.startswith("__") or isinstance(value, (types.ModuleType, type, types.FunctionType,
                                                            types.BuiltinFunctionType) + _SCALARS):
                continue
            found[f"{name}:{attr}"] = value
            members = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
            for i, member in enumerate(members):
                if not isinstance(member, _SCALARS + (type, types.FunctionType)):
                    found.setdefault(f"{name}:{attr}[{i}]", member)
    return found


def dumps(state: Any, shared: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf, shared).dump(state)
    return zlib.compress(buf.getvalue(), 1)


def loads(data: bytes, shared: dict[str, Any]) -> Any:
    return _Unpickler(io.BytesIO(zlib.decompress(data)), shared).load()


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
            body = indices.render(TEMPLATE, schema=SCHEMA, replicas=replicas)
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
        """Store the state at `offset` (the next offset to read); returns once the server has it."""
        self.ensure()
        body = {
            "group": self.group, "topic": topic, "partition": partition, "offset": offset,
            "saved_at": int(time.time() * 1000), "version": f"{__version__}/{SCHEMA}",
            "state": base64.b64encode(state).decode("ascii"),
        }
        self._call(self.client.index, index=self.index, id=self._id(topic, partition), body=body)

    def load(self, topic: str, partition: int) -> tuple[int, bytes] | None:
        """(offset, state) of the partition's checkpoint, or None when there is none usable."""
        try:
            doc = self._call(self.client.get, index=self.index, id=self._id(topic, partition))
        except os_exc.NotFoundError:
            return None
        src = doc.get("_source") or {}
        if src.get("version") != f"{__version__}/{SCHEMA}" or not isinstance(src.get("offset"), int):
            return None  # another build's parsers: their state is not ours to restore
        return src["offset"], base64.b64decode(src["state"])

    def delete(self, topic: str, partition: int) -> None:
        try:
            self._call(self.client.delete, index=self.index, id=self._id(topic, partition))
        except os_exc.NotFoundError:
            pass
