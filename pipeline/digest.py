"""What a run keeps in memory about each job for diagnosis and the report, bounded.

Everything but step records is kept (up to a cap per kind); step records are
thinned to a bounded series per job (for the charts) plus the last step of each
rank (for the summaries), so that memory does not grow with the input.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from gangscope.parsers.records import Record, StepRecord


@dataclass
class JobDigest:
    max_records_per_kind: int = 200_000
    max_steps_per_job: int = 4_000
    records: dict[str, list[Record]] = field(default_factory=lambda: defaultdict(list))
    latest: dict[str, Record] = field(default_factory=dict)  # epoch records by id
    steps: dict[str, list[StepRecord]] = field(default_factory=lambda: defaultdict(list))
    step_stride: dict[str, int] = field(default_factory=lambda: defaultdict(lambda: 1))
    step_seen: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    last_steps: dict[tuple, StepRecord] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, record: Record) -> None:
        kind = record.kind
        if kind == "step":
            self._add_step(record)  # type: ignore[arg-type]
        elif kind == "epoch" or kind == "diagnosis":
            self.latest[record.id] = record
        else:
            bucket = self.records[kind]
            if len(bucket) < self.max_records_per_kind:
                bucket.append(record)
            else:
                self.dropped[kind] += 1

    def _add_step(self, step: StepRecord) -> None:
        job = step.job or ""
        self.last_steps[(job, step.attempt, step.pod, step.rank, step.local_rank)] = step
        seen = self.step_seen[job]
        self.step_seen[job] = seen + 1
        stride = self.step_stride[job]
        if seen % stride:
            return
        series = self.steps[job]
        series.append(step)
        if len(series) >= self.max_steps_per_job:
            self.steps[job] = series[::2]
            self.step_stride[job] = stride * 2

    def all_records(self) -> list[Record]:
        """Everything kept, steps included (the thinned series and each rank's last step)."""
        out: list[Record] = []
        for bucket in self.records.values():
            out.extend(bucket)
        out.extend(r for r in self.latest.values() if r.kind == "epoch")
        seen = set()
        for series in self.steps.values():
            for step in series:
                seen.add(id(step))
                out.append(step)
        out.extend(s for s in self.last_steps.values() if id(s) not in seen)
        return out
