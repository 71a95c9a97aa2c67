"""Diagnosis: per job attempt, the root cause, the first failing rank and the proof.

`diagnose(records, attempts=None)` works on stamped records, whether held in memory
(replay) or decoded back from OpenSearch (dicts are accepted and converted with
`from_dict`); nothing depends on object identity.

How the root cause is found (cause -> effect is data, below):

1. Every error record becomes a *failure* with a tier. Tier 0: a failure a rank
   reports about itself (an OOM, an exception, a crash). Tier 1: a launcher saying a
   worker died of a signal that names a cause (SIGKILL -> host memory). Tier 2: the
   categories that are usually the EFFECT of another rank's failure (`EFFECTS`:
   collective timeouts, lost peers, torchrun's SIGTERM, a lost rendezvous store).
   Tier 3: launcher summaries that say nothing new (exit code 1, ChildFailedError).
   Warnings (NCCL WARN, skipped fp16 steps) are never failures.
2. The root is the earliest failure of tiers 0-1. An effect can be reported before
   its cause (peers see a closed socket before the killed rank's launcher notices),
   so a tier-2 failure only wins when it is more than `EFFECT_SLACK_S` earlier.
   With no tier 0-1 failure, the earliest tier-2 failure is the root.
3. When the root is a collective timeout and some known ranks never reported one,
   those silent ranks are the suspects: `first_failure` names the first of them.
4. Everything else that failed becomes a symptom, by category, with its ranks.

torchrun's "Root Cause (first observed failure)" entry is used as evidence and to
find the global rank of a launcher-level failure, never as the answer.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from gangscope.parsers.envelopes import time_seconds
from gangscope.parsers.errors import CAUSE, SUMMARY, WARNING, child_failures, rule_role
from gangscope.parsers.records import (
    DiagnosisRecord,
    EpochRecord,
    ErrorRecord,
    EventRecord,
    Record,
    SignalRecord,
    StepRecord,
    TraceRecord,
    from_dict,
    stable_id,
)

# ----------------------------------------------------------------------------- cause and effect

#: Categories that one rank's failure produces on the OTHER ranks, and how.
EFFECTS: dict[str, str] = {
    "nccl_timeout": "blocked in a collective the failed rank never joined until the NCCL watchdog or gloo timeout fired",
    "nccl_error": "lost their connection to it (NCCL / gloo peer gone)",
    "preempted": "were stopped with SIGTERM by their launcher",
    "rendezvous_error": "lost the rendezvous / store it hosted",
}

#: An effect may be printed before its cause is (a killed rank says nothing; its launcher
#: notices within its monitor interval, while peers see the closed socket at once).
EFFECT_SLACK_S = 120.0

#: Among simultaneous effects, the one that explains the others comes first: a SIGTERM a
#: launcher RECEIVED (eviction, preemption) makes its peers lose their connection, which
#: makes collectives time out. (torchrun's own SIGTERMs to the survivors of a failure are
#: launcher summaries or warnings, never a tier-2 failure.)
EFFECT_ORDER = ("preempted", "nccl_error", "rendezvous_error", "nccl_timeout")

#: Launcher-level failures whose category names a cause: a death by SIGKILL or SIGTERM, or the
#: child's own exception copied into torchrun's box from its error file (the only trace of it
#: when the rank's lines could not be read, e.g. under a custom --log-line-prefix-template).
INFORMATIVE_SUMMARY = frozenset({"host_oom", "preempted", "cuda_oom", "gpu_hardware", "cuda_error",
                                 "checkpoint_error", "storage_io", "dataloader_error", "nan_loss",
                                 "python_exception"})  # fmt: skip

#: Loss-scale overflows in one attempt beyond which the run is called diverged (fp16
#: dynamic loss scaling skips an occasional step by design).
ENDLESS_OVERFLOW = 20

#: How sure a diagnosis is, by what it rests on.
CONFIDENCE = {
    "rank_report": 0.9,  # a rank printed its own failure
    "corroborated": 0.95,  # ... and its launcher's box agrees
    "launcher": 0.75,  # only the launcher saw it (SIGKILL leaves no trace in the rank)
    "effect": 0.6,  # only effects were seen
    "silent_suspect": 0.6,  # the ranks that never timed out
    "event": 0.8,  # the scheduler said so
    "clean_end": 0.9,
    "no_error": 0.5,
    "stall": 0.6,
    "short_of_end": 0.4,  # the log ends before the run's own totals, with no error
    "unknown": 0.2,
}

#: What the summary says a root category means for the rank it happened on.
WHAT_HAPPENED: dict[str, str] = {
    "cuda_oom": "ran out of GPU memory",
    "host_oom": "was killed for host memory (SIGKILL / OOM killer)",
    "nccl_timeout": "hit a collective timeout",
    "nccl_error": "failed in communication",
    "cuda_error": "hit a CUDA error",
    "gpu_hardware": "hit a GPU hardware fault",
    "dataloader_error": "lost a DataLoader worker",
    "storage_io": "failed on storage I/O",
    "checkpoint_error": "failed to save or load a checkpoint",
    "nan_loss": "diverged (loss NaN/Inf)",
    "python_exception": "raised",
    "preempted": "was stopped by SIGTERM",
    "rendezvous_error": "failed the rendezvous",
    "unknown": "crashed",
}

#: What the scheduler's events say about an attempt: (pattern on reason / end_reason, category, outcome).
EVENT_VERDICTS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"PodsReadyTimeout", re.I), "pods_ready_timeout", "evicted"),
    (re.compile(r"NodeFailure|NodeNotReady|NodeLost", re.I), "node_failure", "evicted"),
    (re.compile(r"Preempt|InClusterQueue|InCohort", re.I), "preempted", "evicted"),
    (re.compile(r"OOMKill", re.I), "host_oom", "failed"),
)


# ----------------------------------------------------------------------------- the model


@dataclass
class Failure:
    """One error record as diagnosis sees it."""

    error: ErrorRecord
    tier: int
    t: float  # seconds since the epoch (inf when the line had no time)
    rank: int | None

    @property
    def category(self) -> str:
        return self.error.category


@dataclass
class AttemptView:
    """The records of one job attempt, sorted by kind."""

    job: str
    attempt: int
    errors: list[ErrorRecord] = field(default_factory=list)
    traces: list[TraceRecord] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    epochs: list[EpochRecord] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    signals: list[SignalRecord] = field(default_factory=list)
    meta: Any = None  # the gang's Attempt (duck-typed: job, number, start, end, end_reason, event_ids)


def job_key(record: Record) -> str:
    job = record.job or record.pod or "unknown"
    if "/" in job or not record.namespace:
        return job
    return f"{record.namespace}/{job}"


def group_attempts(records: Iterable[Record | dict], attempts: Iterable[Any] | None = None) -> list[AttemptView]:
    views: dict[tuple[str, int], AttemptView] = {}

    def view(job: str, number: int) -> AttemptView:
        key = (job, number)
        if key not in views:
            views[key] = AttemptView(job, number)
        return views[key]

    for meta in attempts or ():
        view(str(meta.job), int(meta.number)).meta = meta
    buckets = {"error": "errors", "trace": "traces", "step": "steps", "epoch": "epochs", "event": "events", "signal": "signals"}
    for record in records:
        if isinstance(record, dict):
            record = from_dict(record)
        bucket = buckets.get(record.kind)
        if bucket is None:
            continue
        getattr(view(job_key(record), record.attempt or 1), bucket).append(record)
    return [views[k] for k in sorted(views)]


# ----------------------------------------------------------------------------- entry point


def diagnose(records: Iterable[Record | dict], attempts: Iterable[Any] | None = None) -> list[DiagnosisRecord]:
    """One DiagnosisRecord per (job, attempt) found in the records or the given attempts."""
    return [diagnose_attempt(v) for v in group_attempts(records, attempts)]


def diagnose_attempt(view: AttemptView) -> DiagnosisRecord:
    ranks = RankMap(view)
    failures = _without_handled([f for f in (_failure(e, ranks) for e in view.errors) if f is not None], view)
    event_ids = _event_ids(view)
    end_reason = str(getattr(view.meta, "end_reason", "") or "")
    event_verdict = _event_verdict(view, end_reason)

    root, how = _root(failures)
    if root is None:
        overflows = [e for e in view.errors if e.category == "nan_loss"]
        nonfinite = [s for s in view.steps if s.loss is not None and not math.isfinite(s.loss)]
        if len(overflows) >= ENDLESS_OVERFLOW or (nonfinite and (view.signals or _ended_badly(end_reason))):
            return _diverged(view, overflows, nonfinite, event_ids, end_reason)
    # [gang, issue 6] Kueue's own verdict (pipeline/gang.py) where the scheduler decides the attempt.
    if root is None or (event_verdict is not None and event_verdict[0] in ("pods_ready_timeout", "node_failure", root.category)):
        gang = _gang_verdict(view, failures)
        if gang is not None:
            return gang
    if event_verdict is not None and (root is None or event_verdict[0] in ("pods_ready_timeout", "node_failure")):
        return _from_event(view, event_verdict, failures, event_ids)
    if root is None:
        return _no_failure(view, event_ids, end_reason)

    category = root.category
    first = _first_failure(root, ranks)
    suspects: list[int] = []
    if category == "nccl_timeout":
        suspects = _silent_ranks(failures, ranks)
        if suspects:
            how = "silent_suspect"
            first = {"pod": ranks.pod_of(suspects[0]), "rank": suspects[0],
                     "node": ranks.node_of(suspects[0]), "time": root.error.time}  # fmt: skip
    if how == "rank_report" and _box_agrees(view, root, ranks):
        how = "corroborated"
    symptoms = _symptoms(failures, root, suspects)
    evidence = _evidence(view, root, failures, suspects)
    outcome = _outcome(end_reason, failed=True)
    return DiagnosisRecord(
        id=stable_id("diagnosis", view.job, view.attempt),
        job=view.job,
        attempt=view.attempt,
        namespace=view.job.split("/", 1)[0] if "/" in view.job else None,
        pod=first.get("pod") if first else None,
        node=first.get("node") if first else None,
        rank=first.get("rank") if first else None,
        time=root.error.time,
        outcome=outcome,
        category=category,
        exception_type=_exception_type(view, root.error) if how != "silent_suspect" else None,
        first_failure=first,
        summary=_summary(view, root, first, symptoms, suspects),
        evidence=evidence,
        symptoms=symptoms,
        events=event_ids,
        confidence=CONFIDENCE[how],
    )


# ----------------------------------------------------------------------------- failures and the root


def failure_tier(error: ErrorRecord) -> int | None:
    """The tier of the failure an error record stands for (module doc); None for a warning."""
    role = rule_role(error.pattern)
    if role == WARNING:
        return None
    if role == SUMMARY or _is_box(error):
        return 1 if error.category in INFORMATIVE_SUMMARY else 3
    return 2 if error.category in EFFECTS else 0


def _failure(error: ErrorRecord, ranks: RankMap) -> Failure | None:
    tier = failure_tier(error)
    if tier is None:
        return None
    t = time_seconds(error.time)
    return Failure(error, tier, t if t is not None else math.inf, ranks.rank_of(error))


def _without_handled(failures: list[Failure], view: AttemptView) -> list[Failure]:
    """Tracebacks a rank printed and survived (traceback.print_exc, logging.exception) are not
    failures. Where torch's excepthook is on (a trace of the pod carries a [rankN]: prefix, as
    uncaught exceptions then do), an unprefixed Python exception of that pod was such a print."""
    hooked = {t.pod for t in view.traces if t.rank is not None}
    kept = []
    for f in failures:
        e = f.error
        if (f.tier == 0 and e.trace_id and e.category == "python_exception" and e.rank is None
                and e.pod in hooked and not _is_box(e)):  # fmt: skip
            continue
        kept.append(f)
    return kept


def _is_box(error: ErrorRecord) -> bool:
    return "ChildFailedError" in (error.line or "") or (error.message or "").startswith("ChildFailedError")


def _root(failures: list[Failure]) -> tuple[Failure | None, str]:
    """The earliest cause; effects only when nothing else explains them (see module doc)."""

    def key(f: Failure) -> tuple:
        order = EFFECT_ORDER.index(f.category) if f.category in EFFECT_ORDER else -1
        return (f.t, f.tier, order)

    causes = sorted((f for f in failures if f.tier <= 1), key=key)
    effects = sorted((f for f in failures if f.tier == 2), key=key)
    if causes:
        root = causes[0]
        if effects and effects[0].t < root.t - EFFECT_SLACK_S:
            return effects[0], "effect"
        root = _sharpen(root, causes)
        return root, ("rank_report" if root.tier == 0 else "launcher")
    if effects:
        # Simultaneous effects: the one that explains the others (a lost peer explains a timeout).
        first_t = effects[0].t
        close = [f for f in effects if f.t - first_t <= EFFECT_SLACK_S]
        return min(close, key=lambda f: (EFFECT_ORDER.index(f.category), f.t)), "effect"
    rest = sorted(failures, key=key)
    return (rest[0], "unknown") if rest else (None, "unknown")


def _sharpen(root: Failure, causes: list[Failure]) -> Failure:
    """A crash with no category of its own ('Fatal Python error: Aborted') next to a specific
    failure of the same pod: the specific one says what happened."""
    if root.category != "unknown":
        return root
    for other in causes:
        if other is root or other.category == "unknown" or other.error.pod != root.error.pod:
            continue
        if abs(other.t - root.t) <= EFFECT_SLACK_S and (other.rank is None or root.rank in (None, other.rank)):
            return other
    return root


def _silent_ranks(failures: list[Failure], ranks: RankMap) -> list[int]:
    """Known ranks that never reported a timeout nor a failure of their own."""
    reported = {f.rank for f in failures if f.rank is not None and f.tier in (0, 2)}
    timed_out = {f.rank for f in failures if f.category == "nccl_timeout" and f.rank is not None}
    known = ranks.known()
    silent = sorted(known - reported)
    if not timed_out or not silent or len(silent) >= len(known) / 2 + (len(known) == 2):
        return []
    return silent


# ----------------------------------------------------------------------------- ranks, pods, nodes


class RankMap:
    """Where each rank ran, from every record that says so and from torchrun's boxes."""

    def __init__(self, view: AttemptView):
        self.pod: dict[int, str] = {}
        self.node: dict[int, str] = {}
        self.by_local: dict[tuple[str | None, int], int] = {}
        self.box: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
        self.extra: set[int] = set()
        self._by_pod: dict[str | None, list[int]] | None = None
        pods = {r.pod for r in (*view.errors, *view.traces, *view.steps) if r.pod}
        self.single_pod = len(pods) == 1
        for record in (*view.errors, *view.traces, *view.steps, *view.epochs, *view.signals):
            if record.rank is not None:
                self._place(record.rank, record.pod, record.node)
                if record.local_rank is not None:
                    self.by_local.setdefault((record.pod, record.local_rank), record.rank)
        for trace in view.traces:
            if trace.form == "child_failed" or (trace.exception_type or "").endswith("ChildFailedError"):
                for failure in child_failures(trace):
                    rank, local = failure.get("rank"), failure.get("local_rank")
                    if isinstance(rank, int):
                        self._place(rank, trace.pod, trace.node)
                        if isinstance(local, int):
                            self.by_local[(trace.pod, local)] = rank
                    self.box[trace.pod].append(failure)

    def _place(self, rank: int, pod: str | None, node: str | None) -> None:
        self.extra.add(rank)
        if pod:
            self.pod.setdefault(rank, pod)
        if node:
            self.node.setdefault(rank, node)

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

    def rank_of(self, error: ErrorRecord) -> int | None:
        """The global rank of an error; for launcher lines, from `local_rank: N` and the box."""
        if error.rank is not None:
            return error.rank
        if _is_box(error):  # its text lists other failures before the root cause
            return self._rank_from_box(error)
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
        if local is not None and self.single_pod:
            return local  # one pod: its local ranks are the global ranks
        return None

    def _rank_from_box(self, error: ErrorRecord) -> int | None:
        entries = self.box.get(error.pod) or []
        if not entries:
            return None
        if _is_box(error):
            roots = [e for e in entries if e.get("root_cause")]
            return roots[0].get("rank") if roots else None
        signal = _signal_of(error)
        if signal is not None:
            hits = [e for e in entries if e.get("exitcode") == -signal]
            if len(hits) == 1:
                return hits[0].get("rank")
        return None


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


def _first_failure(root: Failure, ranks: RankMap) -> dict[str, Any]:
    error = root.error
    rank = root.rank
    pod = error.pod or (ranks.pod_of(rank) if rank is not None else None)
    node = error.node or (ranks.node_of(rank) if rank is not None else None)
    return {"pod": pod, "rank": rank, "node": node, "time": error.time}


# ----------------------------------------------------------------------------- symptoms and evidence


def _symptoms(failures: list[Failure], root: Failure, suspects: list[int]) -> list[dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {}
    for f in failures:
        if f is root or f.tier in (1, 3):
            continue
        g = groups.setdefault(f.category, {"category": f.category, "ranks": set(), "pods": set(), "count": 0})
        if f.rank is not None:
            g["ranks"].add(f.rank)
        if f.error.pod:
            g["pods"].add(f.error.pod)
        g["count"] += 1
    out = []
    for g in groups.values():
        g["ranks"] = sorted(g["ranks"])
        g["pods"] = sorted(g["pods"])
        out.append(g)
    return sorted(out, key=lambda g: (-len(g["ranks"]), -g["count"], g["category"]))


def _evidence(view: AttemptView, root: Failure, failures: list[Failure], suspects: list[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [_error_evidence(root.error)]
    traces = {t.id: t for t in view.traces}
    trace = traces.get(root.error.trace_id or "")
    if trace is not None and trace.text:
        out.append(_record_evidence(trace, _trace_excerpt(trace.text)))
    box = _box_of_pod(view, root.error.pod)
    if box is not None:
        excerpt = _root_cause_excerpt(box.text)
        if excerpt:
            out.append(_record_evidence(box, excerpt))
    seen = {root.category} if not suspects else set()
    for f in sorted(failures, key=lambda f: f.t):
        if f is root or f.tier != 2 and f.tier != 0 or f.category in seen:
            continue
        seen.add(f.category)
        out.append(_error_evidence(f.error))
        if len(out) >= 6:
            break
    return out


def _error_evidence(error: ErrorRecord) -> dict[str, Any]:
    return {"record_id": error.id, "kind": "error", "pod": error.pod, "rank": error.rank, "time": error.time,
            "text": error.line or error.message}  # fmt: skip


def _record_evidence(record: Record, text: str) -> dict[str, Any]:
    return {"record_id": record.id, "kind": record.kind, "pod": record.pod, "rank": record.rank,
            "time": record.time, "text": text}  # fmt: skip


def _trace_excerpt(text: str, tail: int = 4) -> str:
    """The header and the last lines of a trace: where it was raised and what."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) <= tail + 1:
        return "\n".join(lines)
    return "\n".join([lines[0], "  ...", *lines[-tail:]])


def _root_cause_excerpt(text: str) -> str | None:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Root Cause"):
            body = [ln for ln in lines[i : i + 9] if not set(ln.strip()) <= set("=")]
            return "\n".join(body)
    return None


def _box_of_pod(view: AttemptView, pod: str | None) -> TraceRecord | None:
    for trace in view.traces:
        if trace.pod == pod and (trace.form == "child_failed" or (trace.exception_type or "").endswith("ChildFailedError")):
            return trace
    return None


def _box_agrees(view: AttemptView, root: Failure, ranks: RankMap) -> bool:
    box = _box_of_pod(view, root.error.pod)
    if box is None or root.rank is None:
        return False
    return any(f.get("root_cause") and f.get("rank") == root.rank for f in child_failures(box))


# ----------------------------------------------------------------------------- words


def _exception_type(view: AttemptView, error: ErrorRecord) -> str | None:
    if error.trace_id:
        m = re.match(r"^([A-Za-z_][\w.]*)(?::|$)", error.message or "")
        if m and not error.message.startswith("ChildFailedError root cause"):
            return m.group(1)
        for trace in view.traces:
            if trace.id == error.trace_id:
                return trace.exception_type
    return None


def _who(first: dict[str, Any] | None) -> str:
    if not first:
        return "a rank"
    rank, pod, node = first.get("rank"), first.get("pod"), first.get("node")
    who = f"rank {rank}" if rank is not None else "a worker"
    if pod:
        who += f" in pod {pod}"
    if node:
        who += f" on node {node}"
    return who


def _step_at(view: AttemptView, rank: int | None, pod: str | None, t: float) -> int | None:
    best: tuple[float, int] | None = None
    for s in view.steps:
        if s.step is None or (rank is not None and s.rank is not None and s.rank != rank):
            continue
        if rank is None and pod and s.pod != pod:
            continue
        st = time_seconds(s.time)
        if st is None or st > t + 1:
            continue
        if best is None or (st, s.step) > best:
            best = (st, s.step)
    return best[1] if best else None


_ALLOC = re.compile(r"Tried to allocate ([\d.]+ [KMGTP]?i?B)")


def _detail(error: ErrorRecord) -> str:
    m = _ALLOC.search(error.message or "") or _ALLOC.search(error.line or "")
    if m:
        return f" (tried to allocate {m.group(1)})"
    message = (error.message or "").strip()
    if error.category in ("python_exception", "checkpoint_error", "storage_io", "dataloader_error", "cuda_error",
                          "nan_loss", "gpu_hardware", "rendezvous_error", "nccl_error", "unknown"):  # fmt: skip
        return f": {message[:160]}" if message else ""
    return ""


def _ranks_text(ranks: list[int]) -> str:
    if not ranks:
        return ""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    runs, start = [], ranks[0]
    for a, b in zip(ranks, ranks[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return "ranks " + ",".join(runs)


def _summary(view: AttemptView, root: Failure, first: dict[str, Any], symptoms: list[dict[str, Any]],
             suspects: list[int]) -> str:  # fmt: skip
    error = root.error
    if suspects:
        timed = next((s for s in symptoms if s["category"] == "nccl_timeout"), None)
        reporters = len(timed["ranks"]) if timed else 0
        op = _op_of(error)
        text = (f"{reporters} ranks hit a collective timeout{op} while {_ranks_text(suspects)} never reported one: "
                f"{_ranks_text(suspects)} ({_who(first)}) is the suspect (stuck or dead before the collective)")
    else:
        step = _step_at(view, first.get("rank"), first.get("pod"), root.t)
        at = f" at step {step}" if step is not None else ""
        when = f" at {error.time}" if error.time and step is None else ""
        text = f"{_who(first)} {WHAT_HAPPENED.get(root.category, 'failed')}{at}{when}{_detail(error)}"
    tail = [f"{len(s['ranks']) or s['count']} {'rank' if (len(s['ranks']) or s['count']) == 1 else 'ranks'} then "
            f"{EFFECTS[s['category']]}" for s in symptoms if s["category"] in EFFECTS and s["category"] != "nccl_timeout" or
            (s["category"] == "nccl_timeout" and not suspects)][:2]  # fmt: skip
    return text + ("; " + "; ".join(tail) if tail else "")


def _op_of(error: ErrorRecord) -> str:
    m = re.search(r"SeqNum=(\d+), OpType=(\w+)", error.line or "")
    if m:
        return f" in {m.group(2)} (SeqNum={m.group(1)})"
    m = re.search(r"for (recv|send) operation", error.line or "")
    return f" (gloo {m.group(1)})" if m else ""


# ----------------------------------------------------------------------------- no failure, events, divergence


def _event_ids(view: AttemptView) -> list[str]:
    ids = list(getattr(view.meta, "event_ids", None) or [])
    for e in view.events:
        if e.id and e.id not in ids:
            ids.append(e.id)
    return ids


def _event_verdict(view: AttemptView, end_reason: str) -> tuple[str, str, Any] | None:
    if end_reason and end_reason.lower() in ("finished", "succeeded"):
        # The scheduler says the attempt finished: events such as PreemptedWorkload, which Kueue
        # records on the preemptor, describe what it did to others, not what ended it.
        return None
    for pattern, category, outcome in EVENT_VERDICTS:
        if end_reason and pattern.search(end_reason):
            return category, outcome, None
    for event in sorted(view.events, key=lambda e: e.time or ""):
        text = f"{event.reason or ''} {event.message or ''}"
        for pattern, category, outcome in EVENT_VERDICTS:
            if pattern.search(event.reason or "") or (category == "host_oom" and pattern.search(text)):
                return category, outcome, event
    return None


def _from_event(view: AttemptView, verdict: tuple[str, str, Any], failures: list[Failure], event_ids: list[str]) -> DiagnosisRecord:
    category, outcome, event = verdict
    first = None
    evidence = []
    if event is not None:
        first = {"pod": event.object_name if (event.object_kind or "").lower() == "pod" else None, "rank": None,
                 "node": event.node, "time": event.time}  # fmt: skip
        evidence.append({"record_id": event.id, "kind": "event", "pod": event.pod, "rank": None, "time": event.time,
                         "text": f"{event.reason}: {event.message or ''}".strip()})  # fmt: skip
    reason = getattr(view.meta, "end_reason", None)
    phrases = {
        "pods_ready_timeout": "the gang never became ready in time and was evicted (PodsReady timeout)",
        "node_failure": "a node under the job was lost",
        "preempted": "the workload was preempted by the scheduler",
        "host_oom": "a container was OOMKilled",
    }
    summary = phrases[category] + (f" ({reason})" if reason else "")
    return DiagnosisRecord(
        id=stable_id("diagnosis", view.job, view.attempt), job=view.job, attempt=view.attempt,
        namespace=view.job.split("/", 1)[0] if "/" in view.job else None,
        time=event.time if event is not None else getattr(view.meta, "end", None),
        outcome=_outcome(str(reason or ""), failed=True, default=outcome), category=category,
        first_failure=first, summary=summary, evidence=evidence,
        symptoms=_symptoms(failures, None, []) if failures else [], events=event_ids, confidence=CONFIDENCE["event"],
    )  # fmt: skip


def _gang_verdict(view: AttemptView, failures: list[Failure]) -> DiagnosisRecord | None:
    """[gang, issue 6] pipeline/gang.py's scheduler verdict for an attempt Kueue evicted or has not admitted yet:
    the pod that held the gang back and why (with its own log lines), the preemptor, the node, requeues."""
    if view.meta is None or not hasattr(view.meta, "details"):
        return None
    from gangscope.pipeline.correlate.gang import diagnosis_record, scheduler_verdict

    verdict = scheduler_verdict(view.meta, [*view.errors, *view.traces])
    if verdict is None:
        return None
    return diagnosis_record(verdict, _symptoms(failures, None, []) if failures else [])


def _diverged(view: AttemptView, overflows: list[ErrorRecord], nonfinite: list[StepRecord], event_ids: list[str],
              end_reason: str) -> DiagnosisRecord:  # fmt: skip
    first_step = min(nonfinite, key=lambda s: s.time or "") if nonfinite else None
    first_overflow = min(overflows, key=lambda e: e.time or "") if overflows else None
    anchor = first_step or first_overflow
    first = {"pod": anchor.pod, "rank": anchor.rank, "node": anchor.node, "time": anchor.time}
    if first_step is not None:
        summary = f"the loss became non-finite at step {first_step.step} ({_who(first)})"
    else:
        summary = f"the fp16 loss scale overflowed {len(overflows)} times (skipped steps): training diverged"
    evidence = [_error_evidence(e) for e in overflows[:2]]
    if first_step is not None:
        evidence.insert(0, _record_evidence(first_step, f"step {first_step.step} loss {first_step.loss}"))
    return DiagnosisRecord(
        id=stable_id("diagnosis", view.job, view.attempt), job=view.job, attempt=view.attempt,
        namespace=view.job.split("/", 1)[0] if "/" in view.job else None, time=anchor.time,
        outcome=_outcome(end_reason, failed=True), category="nan_loss", first_failure=first, summary=summary,
        evidence=evidence, symptoms=[], events=event_ids, confidence=CONFIDENCE["effect"],
    )  # fmt: skip


def _no_failure(view: AttemptView, event_ids: list[str], end_reason: str) -> DiagnosisRecord:
    stalls = [s for s in view.signals if s.signal == "stall"]
    base = dict(id=stable_id("diagnosis", view.job, view.attempt), job=view.job, attempt=view.attempt,
                namespace=view.job.split("/", 1)[0] if "/" in view.job else None, events=event_ids)  # fmt: skip
    if stalls:
        first_stall = min(stalls, key=lambda s: s.time or "")
        stalled = sorted({s.rank for s in stalls if s.rank is not None})
        first = {"pod": first_stall.pod, "rank": first_stall.rank, "node": first_stall.node, "time": first_stall.time}
        where = f"{_ranks_text(stalled)} " if stalled else ""
        step = f" after step {first_stall.step}" if first_stall.step is not None else ""
        summary = f"progress of {where or 'the job '}stopped{step} with no error in the logs ({first_stall.message or 'stall'})"
        return DiagnosisRecord(
            **base, time=first_stall.time, outcome=_outcome(end_reason, failed=False, default="running"),
            category="hang", first_failure=first, summary=summary,
            evidence=[_record_evidence(s, s.message or f"stall at step {s.step}") for s in stalls[:4]],
            confidence=CONFIDENCE["stall"],
        )  # fmt: skip
    if _ended_badly(end_reason):
        return DiagnosisRecord(**base, outcome="failed", category="unknown", confidence=CONFIDENCE["unknown"],
                               summary=f"the attempt ended ({end_reason}) and the logs do not say why")  # fmt: skip
    if getattr(view.meta, "end", "x") is None and view.meta is not None:
        return DiagnosisRecord(**base, outcome="running", category="success", confidence=CONFIDENCE["no_error"],
                               summary="still running; no error in the logs so far")  # fmt: skip
    done = _clean_end(view)
    if done or re.search(r"succe", end_reason, re.I):
        return DiagnosisRecord(**base, outcome="succeeded", category="success", confidence=CONFIDENCE["clean_end"],
                               summary=f"finished cleanly{(': ' + done) if done else ''}")  # fmt: skip
    short = _short_of_the_end(view)
    if short:
        # The run said how long it is and its log ends before that with no error: a job that
        # is still running, or one that hung with no later line to show the gap.
        return DiagnosisRecord(**base, outcome="running", category="hang", confidence=CONFIDENCE["short_of_end"],
                               summary=f"progress stopped at {short} and the log ends there with no error: "
                                       "the job is still running or hung")  # fmt: skip
    return DiagnosisRecord(**base, outcome="succeeded", category="success", confidence=CONFIDENCE["no_error"],
                           summary="no error and no stall in the logs (the logs do not show the end of training)")  # fmt: skip


def _short_of_the_end(view: AttemptView) -> str | None:
    """Where the run stopped, when its own totals show it stopped short of the end."""
    latest: dict[tuple, Any] = {}
    for e in view.epochs:
        if e.progress is not None:
            key = (e.pod, e.rank, e.local_rank)
            if key not in latest or (e.time or "") >= (latest[key].time or ""):
                latest[key] = e
    if not latest or any(e.progress >= 0.999 for e in latest.values()):
        return None
    furthest = max(latest.values(), key=lambda e: e.progress)
    parts = []
    if furthest.step is not None and furthest.total_steps:
        parts.append(f"step {furthest.step}/{furthest.total_steps}")
    if furthest.epoch is not None and furthest.total_epochs:
        parts.append(f"epoch {min(int(furthest.epoch) + 1, furthest.total_epochs)} of {furthest.total_epochs}")
    return ", ".join(parts) or f"{furthest.progress:.0%}"


def _clean_end(view: AttemptView) -> str | None:
    for s in sorted(view.steps, key=lambda s: s.time or "", reverse=True):
        if s.step is not None and s.total_steps and s.step >= s.total_steps:
            return f"step {s.step}/{s.total_steps} reached"
    for e in view.epochs:
        if e.progress is not None and e.progress >= 0.999:
            return f"epoch {e.epoch:g} of {e.total_epochs}" if e.epoch is not None and e.total_epochs else "progress 100%"
    return None


def _ended_badly(end_reason: str) -> bool:
    return bool(end_reason) and re.search(r"fail|evict|error|deactivat|killed", end_reason, re.I) is not None


def _outcome(end_reason: str, failed: bool, default: str | None = None) -> str:
    if end_reason:
        if re.search(r"evict|preempt|podsready|deactivat", end_reason, re.I):
            return "evicted"
        if re.search(r"succe", end_reason, re.I) and not failed:
            return "succeeded"
        if re.search(r"fail", end_reason, re.I):
            return "failed"
    return default or ("failed" if failed else "succeeded")


__all__ = ["diagnose", "diagnose_attempt", "group_attempts", "EFFECTS", "CONFIDENCE", "Failure", "CAUSE"]
