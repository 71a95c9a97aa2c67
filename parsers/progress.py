"""Epoch progress, stalls and stragglers, derived from `StepRecord`s.

Progress is a consumer of step records rather than part of `StepParser`: it is
kept per job and rank, while a parser sees one stream (the Trainer writes its
steps to stdout and its bar to stderr), and it needs nothing but the records.

`ProgressTracker` is fed step records in order (of any number of jobs and ranks:
it keeps one `RankProgress` per job, attempt, pod, container and rank) and
answers with `EpochRecord`s and stall `SignalRecord`s that carry the identity of
the step record they come from. It is pure: the only times it knows are the
records' own.

`EpochRecord` fields:
- `epoch`: epochs elapsed, as a float (1.5 = halfway through the second epoch),
  whatever base the framework numbers its epochs from; `floor(epoch)` is the
  number of completed epochs, and the panel's "epoch n of N" is
  `min(floor(epoch) + 1, total_epochs)`. Where the log gives no position within
  the epoch, it is the number of epochs before the current one.
- `step`, `total_steps`: the latest step and its total as the step records say.
- `progress`: 0..1, from the global step and its total, else from the epoch and
  the position within it, else from the Trainer's fractional epoch; None when
  the log does not say how long the run is.
- `eta_s`: remaining progress / recent progress rate, the rate measured over the
  last records with distinct times; a bar's own estimate when the times cannot tell.

An `EpochRecord` is emitted for the first step, whenever the epoch changes, when
progress has advanced by `progress_step` (default 1%) or, when progress is
unknown, the step by `every_steps`; `finish()` always emits the last state.
"""

from __future__ import annotations

import math
from collections import deque
from statistics import median
from typing import Any, Mapping, NamedTuple

import msgspec

from gangscope.parsers import times
from gangscope.parsers.dialects import FACTS
from gangscope.parsers.records import EpochRecord, SignalRecord, StepRecord, record_from_state, record_state


def d_name(rec: StepRecord) -> str | None:
    d = FACTS.get(rec.dialect or "")
    return d.name if d is not None else None


class DialectFacts(NamedTuple):
    """What progress needs to know of a dialect (plain data: trackers travel between processes)."""

    name: str
    epoch_base: int | None
    step_scope: str


def _facts(dialect: str | None) -> DialectFacts | None:
    d = FACTS.get(dialect or "")
    return None if d is None else DialectFacts(d.name, d.epoch_base, d.step_scope)


_IDENTITY = ("job", "attempt", "namespace", "pod", "container", "node", "rank", "local_rank", "source")


_NO_TIME = float("-inf")


class RankState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A `RankProgress` in a snapshot, with the rank it follows (`job` ... `local_rank`).

    `last`: its latest step record (`records.record_state`); `state`: the progress it worked out
    (step, totals, epoch, progress, eta_s); `points`: recent (time, progress) pairs for the rate;
    `intervals`: recent times between steps; `last_step_at`/`last_step`: the time and (epoch,
    step) of the latest new step; `in_epoch`, `first_epoch`, `epoch_len`: what it learnt of the
    step numbers; `dialect`: of the latest record; `next`: what the next record must reach to be
    emitted (`_thresholds`)."""

    job: str | None = None
    attempt: int = 1
    namespace: str | None = None
    pod: str | None = None
    container: str | None = None
    rank: int | None = None
    local_rank: int | None = None
    last: dict[str, Any] | None = None
    state: dict[str, Any] = {}
    points: list[tuple[float, float]] = []
    intervals: list[float] = []
    last_step_at: float | None = None
    last_step: tuple[Any, Any] | None = None
    in_epoch: bool | None = None
    first_epoch: int | float | None = None
    epoch_len: float | None = None
    dialect: str | None = None
    next: tuple[Any, tuple[Any, Any], Any, Any] | None = None


class JobEndState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The time (epoch seconds) of the latest step of one job attempt."""

    job: str | None = None
    attempt: int = 1
    time: float = 0.0


class TrackerState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A `ProgressTracker` in a snapshot: its ranks, and the latest step time of each job attempt."""

    ranks: list[RankState] = []
    job_end: list[JobEndState] = []


class ProgressTracker:
    """Progress of every job rank it is fed (see `RankProgress` for the parameters)."""

    def __init__(self, **params):
        self.params = params
        self._ranks: dict[tuple, RankProgress] = {}
        self._job_end: dict[tuple, float] = {}  # (job, attempt) -> time of its latest step

    def add(self, rec: StepRecord) -> list[EpochRecord | SignalRecord]:
        job, attempt = rec.job, rec.attempt
        key = (job, attempt, rec.namespace, rec.pod, rec.container, rec.rank, rec.local_rank)  # a rank's stream
        rp = self._ranks.get(key)
        if rp is None:
            rp = self._ranks[key] = RankProgress(**self.params)
        ts = rec.time  # rp.time_of(rec), written out (one call fewer per step record)
        known = rp._time
        if ts == known[0]:
            t = known[1]
        else:
            t = times.seconds(ts)
            rp._time = (ts, t)
        if t is not None:
            jk = (job, attempt)
            if t > self._job_end.get(jk, _NO_TIME):
                self._job_end[jk] = t
        return rp.add_at(rec, t)

    def finish(self, end_time: str | None = None) -> list[EpochRecord | SignalRecord]:
        """Every rank's last state. A rank is judged stalled against `end_time`, by default
        the time of its job's latest step (a rank that stopped while its peers went on)."""
        out: list[EpochRecord | SignalRecord] = []
        end = times.seconds(end_time)
        for key, rp in self._ranks.items():
            out.extend(rp.finish(end if end is not None else self._job_end.get((key[0], key[1]))))
        return out

    def finish_each(self, job_end: Mapping[str, float]) -> list[EpochRecord | SignalRecord]:
        """Every rank's last state, judged for a stall against the end of its own job's log
        (`job_end`: job -> epoch seconds of its latest line; a job missing there, against nothing)."""
        out: list[EpochRecord | SignalRecord] = []
        for key, rp in self._ranks.items():
            out.extend(rp.finish(job_end.get(key[0])))
        return out

    def finish_job(self, job: str | None, end: float | None) -> list[EpochRecord | SignalRecord]:
        """The last state of every rank of `job`, judged for a stall against `end` (epoch
        seconds); the tracker forgets them (the job's attempt is over)."""
        out: list[EpochRecord | SignalRecord] = []
        for key in [k for k in self._ranks if k[0] == job]:
            out.extend(self._ranks.pop(key).finish(end))
        for key in [k for k in self._job_end if k[0] == job]:
            del self._job_end[key]
        return out

    def snapshot(self) -> TrackerState:
        """Every rank's progress, as plain data (the parameters are the tracker's, not state)."""
        ranks = []
        for key, rp in self._ranks.items():
            job, attempt, namespace, pod, container, rank, local_rank = key
            ranks.append(rp.snapshot(RankState(job=job, attempt=attempt, namespace=namespace, pod=pod,
                                               container=container, rank=rank, local_rank=local_rank)))
        return TrackerState(ranks=ranks, job_end=[JobEndState(job=j, attempt=a, time=t) for (j, a), t in self._job_end.items()])

    def restore(self, state: TrackerState) -> None:
        """Take up the ranks of `state`, with this tracker's parameters."""
        self._ranks = {}
        for r in state.ranks:
            key = (r.job, r.attempt, r.namespace, r.pod, r.container, r.rank, r.local_rank)
            rp = self._ranks[key] = RankProgress(**self.params)
            rp.restore(r)
        self._job_end = {(e.job, e.attempt): e.time for e in state.job_end}


class RankProgress:
    """Epoch progress and stalls of one job rank.

    - `stall_factor`: a stall is no new step for this many times the median interval
      between steps,
    - `min_stall_s`: and for at least this long (a 20 ms gap after 2 ms steps is no stall).
    - `min_intervals`: intervals needed before a stall can be judged.
    - `progress_step`, `every_steps`: how far the run must advance before a new
      `EpochRecord` (progress fraction, or steps when progress is unknown).
    - `rate_window`: how many recent points (distinct times) the ETA's rate uses.
    """

    def __init__(
        self,
        stall_factor: float = 5.0,
        min_stall_s: float = 30.0,
        min_intervals: int = 5,
        progress_step: float = 0.01,
        every_steps: int = 100,
        rate_window: int = 20,
    ):
        self.stall_factor = stall_factor
        self.min_stall_s = min_stall_s
        self.min_intervals = min_intervals
        self.progress_step = progress_step
        self.every_steps = every_steps
        self._last: StepRecord | None = None
        self._state: dict = {}
        self._points: deque[tuple[float, float]] = deque(maxlen=rate_window)
        self._intervals: deque[float] = deque(maxlen=50)
        self._last_step_at: float | None = None
        self._last_step_key: tuple | None = None
        # plain loops print "epoch e/E step s/S": is s counted within the epoch?
        self._in_epoch: bool | None = None
        self._first_epoch: float | None = None
        # steps per epoch, learnt where global steps cross an epoch boundary
        self._epoch_len: float | None = None
        self._time: tuple[str | None, float | None] = (None, None)  # the last time read
        # the dialect of the last record and its facts (looked up once per change, not per step)
        self._dialect: str | None = None
        self._facts = None
        # what the next record must reach to be emitted (see add_at)
        self._next: tuple | None = None

    def snapshot(self, into: RankState) -> RankState:
        """This rank's progress, written into `into` (which names the rank)."""
        into.last = None if self._last is None else record_state(self._last)
        into.state = dict(self._state)
        into.points = list(self._points)
        into.intervals = list(self._intervals)
        into.last_step_at, into.last_step = self._last_step_at, self._last_step_key
        into.in_epoch, into.first_epoch, into.epoch_len = self._in_epoch, self._first_epoch, self._epoch_len
        into.dialect, into.next = self._dialect, self._next
        return into

    def restore(self, state: RankState) -> None:
        """Take up the progress of `state` (with this object's parameters)."""
        last = None if state.last is None else record_from_state(state.last)
        if last is not None and not isinstance(last, StepRecord):
            raise ValueError(f"a rank's latest record is a {last.kind} record, not a step")
        self._last = last
        self._state = dict(state.state)
        self._points.clear()
        self._points.extend(state.points)
        self._intervals.clear()
        self._intervals.extend(state.intervals)
        self._last_step_at, self._last_step_key = state.last_step_at, state.last_step
        self._in_epoch, self._first_epoch, self._epoch_len = state.in_epoch, state.first_epoch, state.epoch_len
        self._dialect, self._facts = state.dialect, _facts(state.dialect)
        self._next = state.next

    def time_of(self, rec: StepRecord) -> float | None:
        """The record's time in seconds (remembered: a bar's states share their line's time)."""
        if rec.time == self._time[0]:
            return self._time[1]
        t = times.seconds(rec.time)
        self._time = (rec.time, t)
        return t

    def add(self, rec: StepRecord) -> list[EpochRecord | SignalRecord]:
        return self.add_at(rec, self.time_of(rec))

    def add_at(self, rec: StepRecord, t: float | None) -> list[EpochRecord | SignalRecord]:
        """`add` of a record whose time in seconds (`time_of`) the caller has worked out.

        Written out: what were the calls of _watch_stall, _learn_scope, _eta and _should_emit,
        in that order (a call each per step record was ~a tenth of its cost; callgrind: see the
        commit). `_progress` stays a method (a test puts its reference in its place)."""
        out: list[EpochRecord | SignalRecord] = []
        dialect = rec.dialect
        if dialect != self._dialect:
            self._dialect = dialect
            self._facts = _facts(dialect)
        step, rec_epoch, prev = rec.step, rec.epoch, self._last
        # a stall: the time since the last new step, against the median interval between steps
        if t is not None and step is not None:
            key = (rec_epoch, step)
            if key != self._last_step_key:
                last_at = self._last_step_at
                if last_at is not None and t > last_at:
                    gap = t - last_at
                    base = self._baseline() if gap > self.min_stall_s else None
                    if base is not None and gap > self.stall_factor * base and prev is not None:
                        out.append(self._stall(prev, gap, base, f"before step {step}"))
                    self._intervals.append(gap)
                if last_at is None or t > last_at:
                    self._last_step_at = t
                self._last_step_key = key
        # the step numbers' scope: counted within the epoch, or global (and then the epoch's length)
        if rec_epoch is not None:
            if self._first_epoch is None:
                self._first_epoch = rec_epoch
            if prev is not None and step is not None and prev.step is not None and prev.epoch is not None \
                    and rec_epoch > prev.epoch:
                self._in_epoch = step <= prev.step
                if not self._in_epoch and self._epoch_len is None and float(prev.epoch).is_integer():
                    # the last step logged in an epoch ~ where it ended (exact when the log interval divides it)
                    index = int(prev.epoch) - self._epoch_base(prev)
                    if index >= 0 and prev.step > 0:
                        self._epoch_len = prev.step / (index + 1)
        self._last = rec
        state = self._progress(rec)
        progress = state["progress"]
        points = self._points
        if t is not None and progress is not None:
            if not points or t > points[-1][0]:
                points.append((t, progress))
            else:  # same time (a bar's states): keep the furthest point
                points[-1] = (points[-1][0], progress)
        # the ETA: remaining progress / the recent rate; a global bar's own estimate when the times cannot tell
        eta = None
        if progress is not None and progress >= 1.0:
            eta = 0.0
        else:
            if progress is not None and len(points) >= 2:
                (t0, p0), (t1, p1) = points[0], points[-1]
                if t1 > t0 and p1 > p0:
                    eta = (1.0 - progress) * (t1 - t0) / (p1 - p0)
            if eta is None and "eta_s" in rec.metrics:
                d = self._facts
                if d is not None and d.step_scope == "global":
                    eta = rec.metrics["eta_s"]
        state["eta_s"] = eta
        self._state = state
        # emitted only when the run went forward enough: a value going back and forth does not count.
        # The thresholds are worked out when a record is emitted (`_thresholds`), so a step that
        # changes nothing worth a record costs a few comparisons.
        nxt = self._next
        if nxt is None:
            emit = True
        else:
            next_epoch, totals, p0, next_step = nxt
            e1 = state["epoch"]
            if e1 is not None and (next_epoch is None or e1 >= next_epoch):
                emit = True
            else:
                total, total_epochs = state["total_steps"], state["total_epochs"]
                if (total is not None and total != totals[0]) or (total_epochs is not None and total_epochs != totals[1]):
                    emit = True
                elif progress is not None:
                    emit = p0 is None or progress - p0 >= self.progress_step - 1e-9 or (progress >= 1.0 > p0)
                else:
                    s1 = state["step"]
                    emit = s1 is not None and (next_step is None or s1 >= next_step)
        if emit:
            out.append(self._record(state))
        return out

    def finish(self, end_time: str | float | None = None) -> list[EpochRecord | SignalRecord]:
        """The last state, and a stall when the log ends long after the last step."""
        out: list[EpochRecord | SignalRecord] = []
        if self._last is None:
            return out
        end = end_time if isinstance(end_time, float) else times.seconds(end_time)
        if end is not None and self._last_step_at is not None:
            gap = end - self._last_step_at
            base = self._baseline() if gap > self.min_stall_s else None
            if base is not None and gap > self.stall_factor * base:
                out.append(self._stall(self._last, gap, base, "until the end of the log"))
        out.append(self._record(self._state))
        return out

    # ------------------------------------------------------------------ progress

    def _epoch_base(self, rec: StepRecord) -> int:
        d = self._facts if rec.dialect == self._dialect else _facts(rec.dialect)
        if d is not None and d.epoch_base is not None:
            return d.epoch_base  # type: ignore[return-value]
        # plain loops: "epoch 0" is 0-based; anything else is taken as counting from 1
        return 0 if self._first_epoch == 0 else 1

    def _position(self, rec: StepRecord) -> tuple[float, float] | None:
        """(n, N): the position within the current epoch, when the log says it."""
        m = rec.metrics
        if "epoch_step" in m and m.get("epoch_steps"):
            return m["epoch_step"], m["epoch_steps"]
        d = self._facts
        if d is not None and d.step_scope == "auto" and rec.step is not None and rec.total_steps:
            in_epoch = self._in_epoch if self._in_epoch is not None else rec.total_epochs is not None
            if in_epoch:
                return rec.step, rec.total_steps
        if self._epoch_len and rec.step is not None and rec.epoch is not None:
            index = int(rec.epoch) - self._epoch_base(rec)
            return max(rec.step - index * self._epoch_len, 0.0), self._epoch_len
        return None

    def _progress(self, rec: StepRecord) -> dict:
        prev = self._state
        step, total_steps, total_epochs, rec_epoch = rec.step, rec.total_steps, rec.total_epochs, rec.epoch
        if step is None:
            step = prev.get("step")
        if not total_steps:
            total_steps = prev.get("total_steps")
        if not total_epochs:
            total_epochs = prev.get("total_epochs")
        d = self._facts
        # _position says None unless one of these holds (each of its answers needs one)
        pos = self._position(rec) if ("epoch_step" in rec.metrics or self._epoch_len
                                      or d is not None and d.step_scope == "auto") else None
        trainer = d is not None and d.name == "hf_trainer"
        epoch = None
        if rec_epoch is not None:
            if trainer:
                epoch = float(rec_epoch)  # the Trainer prints epochs elapsed
            else:
                epoch = float(int(rec_epoch) - self._epoch_base(rec))
                if pos is not None:
                    epoch += min(pos[0] / pos[1], 1.0)
        if not total_epochs and trainer and epoch and rec.step and rec.total_steps:
            # the Trainer's epoch is global step / steps per epoch, its bar's total the last step
            # (a dict numbered by TrainerLogFolder carries both itself)
            n = rec.total_steps * epoch / rec.step
            if n >= 1 and abs(n - round(n)) < 0.01 * n:
                total_epochs = round(n)
        progress = None
        if pos is not None and total_epochs and epoch is not None:
            progress = epoch / total_epochs
        elif pos is None and step is not None and total_steps:
            progress = step / total_steps
        elif epoch is not None and total_epochs:
            progress = epoch / total_epochs
        if progress is not None:  # within 0..1 (as min(max(progress, 0.0), 1.0): a NaN stays one)
            if progress < 0.0:
                progress = 0.0
            elif progress > 1.0:
                progress = 1.0
        # eta_s is add_at's, in its place: a sixth key set later would grow the dict
        return {"step": step, "total_steps": total_steps, "total_epochs": total_epochs,
                "epoch": epoch if epoch is not None else prev.get("epoch"), "progress": progress, "eta_s": None}

    def _thresholds(self, state: dict) -> tuple:
        """(epoch that starts a new record, totals, progress, step that starts a new record) after `state`."""
        e0, p0, s0 = state.get("epoch"), state.get("progress"), state.get("step")
        return (
            None if e0 is None else math.floor(e0) + 1,
            (state.get("total_steps"), state.get("total_epochs")),
            p0,
            None if s0 is None else s0 + self.every_steps,
        )

    def _record(self, state: dict) -> EpochRecord:
        self._next = self._thresholds(state)
        rec = self._last
        assert rec is not None
        return EpochRecord(
            time=rec.time,
            seq=rec.seq,
            **{f: getattr(rec, f) for f in _IDENTITY},
            epoch=state.get("epoch"),
            total_epochs=state.get("total_epochs"),
            step=state.get("step"),
            total_steps=state.get("total_steps"),
            progress=state.get("progress"),
            eta_s=state.get("eta_s"),
        )

    # ------------------------------------------------------------------ stalls

    def _baseline(self) -> float | None:
        if len(self._intervals) < self.min_intervals:
            return None
        base = median(self._intervals)
        return base if base > 0 else None

    def _stall(self, last: StepRecord, gap: float, base: float, where: str) -> SignalRecord:
        return SignalRecord(
            time=last.time,
            seq=last.seq,
            **{f: getattr(last, f) for f in _IDENTITY},
            signal="stall",
            step=last.step,
            value=round(gap, 3),
            baseline=round(base, 3),
            message=f"no new step for {gap:.1f} s after step {last.step} {where} (median interval {base:.2f} s)",
        )


def find_stragglers(
    records: list[StepRecord],
    threshold: float = 1.5,
    min_steps: int = 3,
    min_excess_s: float = 0.0,
    min_share: float = 0.5,
) -> list[SignalRecord]:
    """Ranks whose step time is an outlier against their peers (same job attempt) at the same step.

    At every step that two or more ranks report, a rank is slow when its step time
    exceeds `threshold` times the median of the other ranks' times (and by at least
    `min_excess_s`). A rank slow at `min_steps` steps or more, and at `min_share` or more of
    the steps it was compared at (a straggler is slow most of the time; a rank slow at a few
    steps of many is the jitter of a busy host), is a straggler: one
    signal per rank, at its first slow step, with its median time at its slow steps
    (`value`) against the peers' median there (`baseline`). Step time is
    `step_time_s`, else the inverse of the throughput.
    """
    by_step: dict[tuple, dict[int, tuple[float, StepRecord]]] = {}
    for r in records:
        if r.rank is None or r.step is None:
            continue
        t = r.step_time_s
        if t is None and r.throughput:
            t = 1.0 / r.throughput
        if t is None or not math.isfinite(t):
            continue
        by_step.setdefault((r.job, r.attempt, r.epoch, r.step), {})[r.rank] = (t, r)
    slow: dict[tuple, list[tuple[float, float, StepRecord]]] = {}
    compared: dict[tuple, int] = {}
    for (job, attempt, _e, _s), ranks in by_step.items():
        if len(ranks) < 2:
            continue
        for rank, (t, r) in ranks.items():
            peers = [pt for pr, (pt, _) in ranks.items() if pr != rank]
            base = median(peers)
            who = (job or "", attempt, rank)
            compared[who] = compared.get(who, 0) + 1
            if base > 0 and t > threshold * base and t - base >= min_excess_s:
                slow.setdefault(who, []).append((t, base, r))
    out = []
    for who in sorted(slow):
        rank = who[2]
        hits = slow[who]
        if len(hits) < min_steps or len(hits) < min_share * compared[who]:
            continue
        hits.sort(key=lambda h: (h[2].epoch or 0, h[2].step))
        first = hits[0][2]
        value = median(h[0] for h in hits)
        base = median(h[1] for h in hits)
        out.append(
            SignalRecord(
                time=first.time,
                seq=first.seq,
                **{f: getattr(first, f) for f in _IDENTITY},
                signal="straggler",
                step=first.step,
                value=round(value, 6),
                baseline=round(base, 6),
                message=(
                    f"rank {rank} was slower than its peers at {len(hits)} of {compared[who]} steps "
                    f"(median {value:.3g} s against {base:.3g} s, {value / base:.1f}x)"
                ),
            )
        )
    return out
