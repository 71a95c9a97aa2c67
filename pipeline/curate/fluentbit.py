"""Fluent Bit records: one ContainerCurator per container named in each record's `kubernetes` block."""

from __future__ import annotations

from typing import Iterable

from gangscope.parsers import envelopes
from gangscope.parsers.records import Record
from gangscope.pipeline.curate.snapshot import CuratorState
from gangscope.pipeline.sources.files import PodIdentity, decode_block
from gangscope.pipeline.curate.stats import CurationLimits, CurationStats
from gangscope.pipeline.curate.container import ContainerCurator


class FluentBitCurator:
    """Fluent Bit records carry their pod in each record: one ContainerCurator per container,
    at most `limits.max_containers` of them (the least recently fed go first)."""

    tick = 0  # lines fed; a curator's `last_used` is the tick of its last line
    evictions = 0  # eviction rounds (an owner keeping per-container state compares it)
    limits = CurationLimits()
    source: str | None = None  # the file (or topic) read: its containers' curators name it in failures
    lines_read = 0  # lines of the source fed so far (positions of skips)
    fmt = "fluentbit"  # [h26c] the envelope read (`reading`): its containers' curators are stamped with it
    read = staticmethod(envelopes.read_fluentbit)  # [h26c] a line -> its envelope, Rejected or None

    def __init__(self, stats: CurationStats, fallback: PodIdentity, **kwargs):
        self.stats = stats
        self.fallback = fallback
        self.kwargs = kwargs
        self.limits = kwargs.get("limits") or self.limits
        self.curators: dict[tuple, ContainerCurator] = {}
        self.position = None  # see ContainerCurator.position

    def reading(self, fmt: str) -> "FluentBitCurator":
        """[h26c] Read lines of another envelope that names each line's container (envelopes.POD_HEAD_FORMATS:
        kubectl --prefix, stern, logcli), its decoder in place of Fluent Bit's. Returns self."""
        self.fmt = fmt
        self.read = envelopes.reader(fmt)
        return self

    def feed_block(self, block: bytes) -> list[Record]:
        lines, invalid = decode_block(block)
        self.stats.invalid_utf8_lines += invalid
        return self.feed_lines(lines)

    def feed_lines(self, raws: Iterable[str]) -> list[Record]:
        out: list[Record] = []
        fed: dict[int, ContainerCurator] = {}  # the containers of these lines (not all: thousands may be kept)
        stats = self.stats
        if self.fmt != "fluentbit" and isinstance(raws, list):  # [h26c] a tool's output copied from a terminal
            joined = envelopes.join_wrapped_heads(raws)
            stats.lines += len(raws) - len(joined)
            raws = joined
        for raw in raws:
            stats.lines += 1
            self.lines_read += 1
            env = self.read(raw)
            if type(env) is not envelopes.Envelope:
                if env is envelopes.HELD:  # [h28e] held by the reader until the lines after it complete it
                    continue
                if env is not None:  # a record with a field of the wrong type: a skip of its own kind
                    position = self.position if self.position is not None else f"line {self.lines_read}"
                    stats.skips.add("curate", env.kind, file=self.source, position=position, detail=env.detail)
                elif raw.strip():
                    stats.unreadable_lines += 1
                continue
            curator = self.feed_envelope(env, out)
            fed[id(curator)] = curator
        for curator in fed.values():
            curator.note_latest()
        return out

    def feed_envelope(self, env: envelopes.Envelope, out: list[Record], hints: int = -1, exact_from: int = -1,
                      key: tuple | None = None) -> "ContainerCurator":
        """`key`: the envelope's `kube_key` when the caller has it."""
        kube = env.kubernetes
        if key is None:
            key = kube_key(kube)
        curator = self.curators.get(key)
        if curator is None:
            if len(self.curators) >= self.limits.max_containers:
                self.evict(out)
            identity = identity_from_kubernetes(kube) if kube else self.fallback
            curator = self.curators[key] = ContainerCurator(identity, self.fmt, self.stats, **self.kwargs)
            curator.source = self.source
        self.tick += 1
        curator.last_used = self.tick
        curator.position = self.position
        curator.feed_envelope(env, out, hints, exact_from)
        return curator

    def evict(self, out: list[Record]) -> None:
        """Close the least recently fed eighth of the curators: what they hold open becomes
        records in `out` (counted as flushed early), then they are forgotten. A container that
        speaks again gets a new curator. In rounds, so that the sort is paid once per many new
        containers."""
        cap = self.limits.max_containers
        n = max(1, len(self.curators) - cap + 1, cap // 8)
        by_age = sorted(self.curators.items(), key=lambda kv: kv[1].last_used)[:n]
        for key, curator in by_age:
            self.stats.open_records_flushed += len(curator.open_keys)
            out.extend(curator.close())
            curator.note_latest()
            del self.curators[key]
        self.stats.containers_evicted += len(by_age)
        self.evictions += 1

    def note_fed(self, keys) -> set[str]:
        """The containers (`kube_key`s) that got lines, some counted by `skip_unwanted` alone:
        they were used now (eviction goes by it) and their job's log reaches their latest line.
        Returns their jobs."""
        jobs = set()
        curators = self.curators
        tick = self.tick
        for key in keys:
            c = curators.get(key)
            if c is not None:
                c.last_used = tick
                c.note_latest()
                jobs.add(c.stamper.job)
        return jobs

    def job_of(self, key: tuple) -> str | None:
        c = self.curators.get(key)
        return c.stamper.job if c is not None else None

    def jobs(self) -> set[str]:
        """The jobs of the containers kept."""
        return {c.stamper.job for c in self.curators.values()}

    def close_container(self, key: tuple) -> list[Record]:
        """Close one container's curator: what it holds open becomes records (it stays, for
        lines that come later)."""
        c = self.curators.get(key)
        return c.close() if c is not None else []

    def forget(self, key: tuple) -> None:
        """Drop a container's curator (closed by its owner first): a later line starts a new one."""
        self.curators.pop(key, None)

    def open_positions(self) -> list:
        """Where the records still open in any container started."""
        return [p for curator in self.curators.values() for p in curator.open_positions()]

    def snapshot(self) -> CuratorState:
        """Every container's curation state, as plain data."""
        return CuratorState(containers=[c.snapshot(key) for key, c in self.curators.items()], tick=self.tick,
                            evictions=self.evictions)

    @classmethod
    def from_snapshot(cls, state: CuratorState, stats: CurationStats, fallback: PodIdentity, **kwargs) -> "FluentBitCurator":
        """The curator `state` describes; arguments as for the constructor."""
        curator = cls(stats, fallback, **kwargs)
        curator.tick, curator.evictions = state.tick, state.evictions
        for c in state.containers:
            curator.curators[tuple(c.key)] = ContainerCurator.from_snapshot(c, stats, **kwargs)
        return curator

    def close(self) -> list[Record]:
        out: list[Record] = []
        for curator in self.curators.values():
            out.extend(curator.close())
        return out


def kube_key(kube: dict | None) -> tuple:
    if not kube:
        return ()
    return (kube.get("namespace_name"), kube.get("pod_id") or kube.get("pod_name"), kube.get("container_name"))


def identity_from_kubernetes(kube: dict) -> PodIdentity:
    """A pod identity from filter_kubernetes' block (FORMATS.md 1.4)."""

    def pairs(value: object) -> tuple[tuple[str, str], ...]:
        if not isinstance(value, dict):
            return ()
        return tuple(sorted((str(k), str(v)) for k, v in value.items()))

    def text(name: str) -> str | None:
        value = kube.get(name)
        return value if isinstance(value, str) and value else None

    return PodIdentity(
        namespace=text("namespace_name"),
        pod=text("pod_name") or "unknown",
        pod_uid=text("pod_id"),
        container=text("container_name"),
        node=text("host"),
        labels=pairs(kube.get("labels")),
        annotations=pairs(kube.get("annotations")),
    )
