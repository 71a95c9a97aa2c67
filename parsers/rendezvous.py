"""torch elastic's rendezvous result: which global rank each local rank of a pod's workers is.

torchrun's agent logs, once its workers' ranks are assigned (and again after every restart of
the worker group), a block of `name=value` lines (pytorch/pytorch
torch/distributed/elastic/agent/server/api.py, `_rendezvous`: an f-string in older releases,
`logger.info("[%(role)s] Rendezvous complete for workers. Result:\\n  restart_count=%(...)s\\n ...")`
since, `event_log_handler` added last in newer releases; DLRover's agent logs the same block):

    [default] Rendezvous complete for workers. Result:
      restart_count=0
      master_addr=10.0.3.7
      master_port=29500
      group_rank=1
      group_world_size=2
      local_ranks=[0, 1]
      role_ranks=[2, 3]
      global_ranks=[2, 3]
      role_world_sizes=[4, 4]
      global_world_sizes=[4, 4]

It is an INFO record of the `torch.distributed.elastic.*` loggers, shown when `LOGLEVEL=INFO`
(the elastic loggers' level, WARNING by default: elastic/utils/logging.py). How it
reaches the log depends on the handler: Python's `INFO:<logger>:` on the first line only, the rest
raw (a root `basicConfig`: torch 1.x and 2.0-era logs pasted in public threads), or torch._logging's
glog header on every line (`I1201 10:00:01.123000 140 torch/distributed/elastic/agent/server/api.py:552]   group_rank=1`:
`TorchLogsFormatter` prefixes each line of a message; a real torch 2.15 run in
fixtures/runs/tee_prefix_rendezvous). Workers' lines that torchrun prefixes with
`[default<local rank>]:` then get their global rank from this map.
"""

from __future__ import annotations

import re

import msgspec

from gangscope.parsers.lines import Line

PREFILTER = r"Rendezvous complete for workers"

_HEADER = re.compile(r"\[(?P<role>[^\]\n]{0,64})\] Rendezvous complete for workers\. Result:\s*$")
# One `  name=value` line, behind torch._logging's glog header when the formatter repeats it.
_FIELD = re.compile(r"(?:[IWEDFC]\d{4} [\d:.]+ +\d+ [^\]]*\] ?)?\s*(?P<name>[a-z_]{4,24})=(?P<value>.*?)\s*$")
_RANKS = re.compile(r"\[(\d{1,9}(?:, \d{1,9}){0,4095})\]$")
_INT = re.compile(r"\d{1,9}$")
# In the order the agent writes them; a block ends at `global_ranks`, the last one read.
_NAMES = ("restart_count", "master_addr", "master_port", "group_rank", "group_world_size", "local_ranks",
          "role_ranks", "global_ranks")


class RankMap(msgspec.Struct, kw_only=True):
    """A pod's ranks as its torchrun agent assigned them (not a record: curation keeps it and
    stamps `rank` from it on records that carry only a local rank)."""

    role: str
    global_of: dict[int, int]  # local rank -> global rank
    group_rank: int | None = None
    restart_count: int | None = None
    time: str | None = None  # the header line's
    seq: int = 0


class RendezvousState(msgspec.Struct, tag="rendezvous", kw_only=True, omit_defaults=True):
    """A `RendezvousParser` in the middle of a block: its role, the header line's time and seq,
    and the values read so far."""

    role: str = ""
    time: str | None = None
    seq: int = 0
    values: dict[str, str] = {}


class RendezvousParser:
    """Reads the block above; emits one `RankMap` per block whose local and global ranks pair up."""

    PREFILTER = PREFILTER
    State = RendezvousState

    def __init__(self) -> None:
        self._header: Line | None = None
        self._role = ""
        self._values: dict[str, str] = {}

    @property
    def open(self) -> bool:
        return self._header is not None

    def feed(self, line: Line) -> tuple[bool, list]:
        text = line.text
        if "Rendezvous complete for workers" in text:
            m = _HEADER.search(text)
            if m is None:
                self._header = None
                return False, []
            self._header, self._role, self._values = line, m["role"], {}
            return True, []
        if self._header is None:
            return False, []
        m = _FIELD.match(text)
        name = m["name"] if m is not None else None
        if name not in _NAMES or name in self._values:
            self._header = None  # the block ended early (or is not one): nothing learnt
            return False, []
        self._values[name] = m["value"]
        if name != "global_ranks":
            return True, []
        header, self._header = self._header, None
        found = self._rank_map(header)
        return True, [found] if found is not None else []

    def _rank_map(self, header: Line) -> RankMap | None:
        values = self._values
        local = _ranks(values.get("local_ranks"))
        glob = _ranks(values.get("global_ranks"))
        if not local or glob is None or len(local) != len(glob) or len(set(local)) != len(local):
            return None
        return RankMap(role=self._role, global_of=dict(zip(local, glob)), group_rank=_int(values.get("group_rank")),
                       restart_count=_int(values.get("restart_count")), time=header.time, seq=header.seq)

    def close(self) -> list:
        self._header = None
        return []

    def snapshot(self) -> RendezvousState | None:
        if self._header is None:
            return None
        return RendezvousState(role=self._role, time=self._header.time, seq=self._header.seq, values=dict(self._values))

    def restore(self, state: RendezvousState) -> None:
        self._header = Line(state.time, state.seq, "")
        self._role, self._values = state.role, dict(state.values)


def _ranks(value: str | None) -> list[int] | None:
    if value is None:
        return None
    m = _RANKS.match(value)
    return [int(n) for n in m.group(1).split(", ")] if m is not None else None


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and _INT.match(value) else None
