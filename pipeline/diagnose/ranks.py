"""Where each rank ran: pods, nodes and global ranks, from the records and torchrun's boxes.

A "box" is torchrun's ChildFailedError summary: it lists each failed local rank
with its global rank, exit code and whether it was the root cause.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from gangscope.parsers.errors import SUMMARY, child_failures, rank_in_text, rule_role
from gangscope.parsers.records import ErrorRecord, TraceRecord
from gangscope.pipeline.diagnose.views import AttemptView


class RankMap:
    """Where each rank ran, from every record that says so and from torchrun's boxes."""

    def __init__(self, view: AttemptView):
        self.pod: dict[int, str] = {}
        self.node: dict[int, str] = {}
        self.by_local: dict[tuple[str | None, int], int] = {}
        self.box: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
        self.box_of_trace: dict[str, list[dict[str, Any]]] = {}  # one pod can print several boxes (agents, restarts)
        self.failed_local: dict[str | None, set[int]] = defaultdict(set)  # local ranks a launcher says failed
        self.extra: set[int] = set()
        self._by_pod: dict[str | None, list[int]] | None = None
        pods = {r.pod for r in (*view.errors, *view.traces, *view.steps) if r.pod}
        self.single_pod = len(pods) == 1
        for record in (*view.errors, *view.traces, *view.steps, *view.epochs, *view.signals):
            if record.rank is not None:
                self._place(record.rank, record.pod, record.node)
                if record.local_rank is not None:
                    self.by_local.setdefault((record.pod, record.local_rank), record.rank)
        for error in view.errors:
            if error.local_rank is not None and rule_role(error.pattern) == SUMMARY:
                self.failed_local[error.pod].add(error.local_rank)
        for trace in view.traces:
            if trace.form == "child_failed" or (trace.exception_type or "").endswith("ChildFailedError"):
                for failure in child_failures(trace):
                    rank, local = failure.get("rank"), failure.get("local_rank")
                    if isinstance(rank, int):
                        self._place(rank, trace.pod, trace.node)
                        if isinstance(local, int):
                            self.by_local[(trace.pod, local)] = rank
                    self.box[trace.pod].append(failure)
                    if trace.id:
                        self.box_of_trace.setdefault(trace.id, []).append(failure)

    def _place(self, rank: int, pod: str | None, node: str | None) -> None:
        self.extra.add(rank)
        if pod:
            self.pod.setdefault(rank, pod)
        if node:
            self.node.setdefault(rank, node)

    def box_time(self, error: ErrorRecord) -> str | None:
        """The time torchrun's box gives its root-cause failure (the `time` field, local time of the
        agent: "%Y-%m-%d_%H:%M:%S"), for a box error whose line has none."""
        entries = self.box_of_trace.get(error.trace_id or "") or []
        roots = [e for e in entries if e.get("root_cause")] or entries
        when = str(roots[0].get("time") or "") if roots else ""
        return when.replace("_", "T", 1) + "Z" if re.fullmatch(r"\d{4}-\d\d-\d\d_\d\d:\d\d:\d\d", when) else None

    def seen(self) -> set[int]:
        """Ranks some record names (without the dense fill of `known`)."""
        return set(self.pod) | set(self.node) | self.extra

    def known(self) -> set[int]:
        """Ranks seen, and the ranks below the highest one seen: global ranks are dense (0..world-1)."""
        seen = set(self.pod) | set(self.node) | self.extra
        return set(range(max(seen) + 1)) if seen else set()

    def pod_of(self, rank: int) -> str | None:
        return self.pod.get(rank)

    def node_of(self, rank: int) -> str | None:
        return self.node.get(rank)

    def ranks_of_pod(self, pod: str | None) -> list[int]:
        if self._by_pod is None:
            by_pod: dict[str | None, list[int]] = defaultdict(list)
            for r, p in sorted(self.pod.items()):
                by_pod[p].append(r)
            self._by_pod = by_pod
        return self._by_pod.get(pod, [])

    def rank_of(self, error: ErrorRecord, box: bool | None = None) -> int | None:
        """The global rank of an error; for launcher lines, from `local_rank: N` and the box.
        `box`: `is_box(error)` where the caller has it."""
        if error.rank is not None:
            return error.rank
        if is_box(error) if box is None else box:  # its text lists other failures before the root cause
            return self._rank_from_box(error)
        named = rank_in_text(error.message or "") if error.message else None
        if named is not None:
            return named
        local = error.local_rank
        if local is None:
            m = re.search(r"local_rank: (\d+)", error.line or "")
            local = int(m.group(1)) if m else None
        if local is not None and (error.pod, local) in self.by_local:
            return self.by_local[(error.pod, local)]
        box_rank = self._rank_from_box(error)
        if box_rank is not None:
            return box_rank
        pod_ranks = self.ranks_of_pod(error.pod)
        if len(pod_ranks) == 1:
            return pod_ranks[0]
        if local is None and len(self.failed_local.get(error.pod) or ()) == 1:
            # a rank's own report without a prefix, in a pod whose launcher says one worker failed
            local = next(iter(self.failed_local[error.pod]))
            if (error.pod, local) in self.by_local:
                return self.by_local[(error.pod, local)]
        if local is not None and self.single_pod:
            return local  # one pod: its local ranks are the global ranks
        return None

    def _rank_from_box(self, error: ErrorRecord) -> int | None:
        entries = self.box.get(error.pod) or []
        if not entries:
            return None
        if is_box(error):
            entries = self.box_of_trace.get(error.trace_id or "", entries)
            roots = [e for e in entries if e.get("root_cause")]
            return roots[0].get("rank") if roots else None
        signal = _signal_of(error)
        if signal is not None:
            hits = [e for e in entries if e.get("exitcode") == -signal]
            if len(hits) == 1:
                return hits[0].get("rank")
        return _rank_by_exception_line(error, entries)


def _rank_by_exception_line(error: ErrorRecord, entries: list[dict[str, Any]]) -> int | None:
    """[h31d] An unprefixed traceback's rank from the box entry whose traceback ends in the same exception line.

    Under @record a worker's uncaught exception goes to its error file (torch/distributed/elastic/multiprocessing/errors/
    error_handler.py record_exception: the formatted traceback) and the agent's box prints that file's traceback in the
    worker's entry, under its global rank (errors/__init__.py ChildFailedError.format_msg: `rank : N (local_rank: M)`,
    `traceback : ...`). Before torch 2.2 no `[rankN]:` prefix tells which local rank printed a traceback to the pod's
    stream (real runs fixtures/runs/*_torch2_1), so the entry is the only place that says it: one rank, only where exactly
    one rank's entry ends in that line word for word (two ranks that raised the same error stay unknown)."""
    said = (error.line or "").strip()
    if not said or error.trace_id is None:
        return None
    ranks = {e.get("rank") for e in entries
             if isinstance(e.get("rank"), int) and _last_line(str(e.get("message") or "")) == said}  # fmt: skip
    return ranks.pop() if len(ranks) == 1 else None


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


_FATAL_SIGNALS = {"Segmentation fault": 11, "Aborted": 6, "Bus error": 7, "Floating point exception": 8,
                  "Illegal instruction": 4}  # fmt: skip


def _signal_of(error: ErrorRecord) -> int | None:
    for name, number in _FATAL_SIGNALS.items():
        if name in (error.message or ""):
            return number
    m = re.search(r"exitcode: (-\d+)", error.line or "")
    if m:
        return -int(m.group(1))
    return {"host_oom": 9}.get(error.category)


def is_box(error: ErrorRecord) -> bool:
    """Whether an error record is (a line of) torchrun's ChildFailedError box."""
    return "ChildFailedError" in (error.line or "") or (error.message or "").startswith("ChildFailedError")


def box_of_pod(view: AttemptView, pod: str | None) -> TraceRecord | None:
    """The ChildFailedError box torchrun printed in a pod, if any."""
    for trace in view.traces:
        if trace.pod == pod and (trace.form == "child_failed" or (trace.exception_type or "").endswith("ChildFailedError")):
            return trace
    return None
