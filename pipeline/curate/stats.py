"""What curation counts and how far it may go: CurationStats (read back into summary.json) and
CurationLimits (memory bounds of one curator)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gangscope.pipeline.curate.snapshot import StatsState
from gangscope.pipeline.isolation import StageFailures


@dataclass
class CurationLimits:
    max_partial_bytes: int = 1 << 20  # a CRI line re-assembled from P chunks is cut here
    # Open multi-line records per container (one per rank stream): each holds up to
    # TraceParser.max_bytes, so past this the quietest is flushed early (counted) (issue 10).
    max_open_records: int = 1024
    # Containers a Fluent Bit stream keeps curators for (FluentBitCurator): past this, the least
    # recently fed are closed (their open records flushed) and forgotten, counted (issue 10).
    max_containers: int = 20_000


@dataclass
class CurationStats:
    lines: int = 0
    unreadable_lines: int = 0
    invalid_utf8_lines: int = 0
    partial_lines_cut: int = 0
    dangling_partials: int = 0
    open_records_flushed: int = 0  # flushed before their end: over CurationLimits.max_open_records / max_containers
    containers_evicted: int = 0  # curators closed as the least recently fed: over CurationLimits.max_containers
    # tqdm bar records released before it was known whether the Trainer's dicts would come (they drop
    # them): held past TrainerLogFolder's bounds (bar_wait_lines lines of the container, max_held records)
    bar_steps_released_at_bound: int = 0
    records: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    job_end: dict[str, float] = field(default_factory=dict)  # job -> time of its last line read
    failures: StageFailures = field(default_factory=StageFailures)  # parsers and records that raised (stage "curate")
    # Skips by design (issue 17): a line or value of the wrong type or out of range, counted by kind
    # (the ledger's "error") with file and position; the line's other records and its neighbours kept.
    skips: StageFailures = field(default_factory=StageFailures)

    def snapshot(self) -> StatsState:
        return StatsState(
            lines=self.lines, unreadable_lines=self.unreadable_lines, invalid_utf8_lines=self.invalid_utf8_lines,
            partial_lines_cut=self.partial_lines_cut, dangling_partials=self.dangling_partials,
            open_records_flushed=self.open_records_flushed, containers_evicted=self.containers_evicted,
            bar_steps_released_at_bound=self.bar_steps_released_at_bound,
            records=dict(self.records), problems=list(self.problems), job_end=dict(self.job_end),
            failures=self.failures.summary(), skips=self.skips.summary(),
        )

    def restore(self, state: StatsState) -> None:
        self.lines, self.unreadable_lines, self.invalid_utf8_lines = state.lines, state.unreadable_lines, state.invalid_utf8_lines
        self.partial_lines_cut, self.dangling_partials = state.partial_lines_cut, state.dangling_partials
        self.open_records_flushed, self.containers_evicted = state.open_records_flushed, state.containers_evicted
        self.bar_steps_released_at_bound = state.bar_steps_released_at_bound
        self.records, self.problems, self.job_end = dict(state.records), list(state.problems), dict(state.job_end)
        self.failures = StageFailures.from_summary(state.failures)
        self.skips = StageFailures.from_summary(state.skips)
