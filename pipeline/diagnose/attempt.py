"""Diagnosis of each job attempt: the root cause, the first failing rank and the proof.

`diagnose(records, attempts=None)` works on stamped records, whether held in memory
(replay) or decoded back from OpenSearch (dicts are accepted and converted with
`from_dict`); nothing depends on object identity. The flow of one attempt is
`diagnose_attempt`: its failures and their root (`root_cause.py`), or else the
scheduler's verdict, a divergence, a stall or a clean end (`endings.py`); then the
symptoms and evidence (`evidence.py`) and the summary (`summary.py`).

One attempt is one unit of work (pipeline/isolation.py): an attempt whose diagnosis raises
gets an `unknown` diagnosis whose summary names the error and where it arose (`undiagnosed`),
never none, and the failure is counted.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from gangscope.parsers.records import DiagnosisRecord, Record, stable_id
from gangscope.pipeline.diagnose.endings import (
    collapsed_loss_scale, diverged, ended_badly, event_ids_of, event_verdict_of, from_event, no_failure, outcome_of,
    end_evidence, end_words, job_end, recovered, scheduler_diagnosis,
)
from gangscope.pipeline.diagnose.evidence import evidence_of, symptoms_of
from gangscope.pipeline.diagnose.nonfinite_tail import nonfinite_tail, without_recovered_losses
from gangscope.pipeline.diagnose.ranks import RankMap
from gangscope.pipeline.diagnose.root_cause import (
    box_agrees, box_outside_kills, failure_of, first_exit_of_same_error, find_root, first_failure, silent_ranks, without_handled, without_own_kills,
)
from gangscope.pipeline.diagnose.rules import CONFIDENCE, ENDLESS_OVERFLOW, NONFINITE_STEPS, PRINTED_NONFINITE_LOSS
from gangscope.pipeline.diagnose.summary import exception_type_of, sentence, summary_of
from gangscope.pipeline.diagnose.views import AttemptView, group_attempts
from gangscope.pipeline.isolation import StageFailures, frames_of

# The step of the diagnosis each module does, as an undiagnosed attempt's summary names it.
STEPS = {
    "root_cause.py": "root-cause selection",
    "ranks.py": "rank mapping",
    "evidence.py": "evidence",
    "summary.py": "the summary",
    "endings.py": "the attempt's ending",
    "gang_verdict.py": "the scheduler's verdict",
    "views.py": "grouping records by attempt",
    "attempt.py": "diagnosis",
}


def diagnose(records: Iterable[Record | dict], attempts: Iterable[Any] | None = None,
             failures: StageFailures | None = None, jobs: Iterable[str] = ()) -> list[DiagnosisRecord]:
    """One DiagnosisRecord per (job, attempt) found in the records or the given attempts, and
    one for the first attempt of each of `jobs` (the jobs whose logs were read) found in neither.

    `failures`: where an attempt whose diagnosis raised is counted (stage "diagnose"); that
    attempt still gets its diagnosis, from `undiagnosed`."""
    out = []
    for view in group_attempts(records, attempts, jobs):
        try:
            d = diagnose_attempt(view)
            d.summary = sentence(d.summary)  # [h31f] every summary one sentence that ends once, whichever step wrote it
            out.append(d)
        except Exception as exc:
            if failures is not None:
                failures.add("diagnose", exc, position=f"{view.job} attempt {view.attempt}", job=view.job,
                             attempt=view.attempt, step=step_of(exc))
            out.append(undiagnosed(view, exc))
    return out


def step_of(exc: BaseException) -> str:
    """The step of the diagnosis the exception arose in: the innermost frame in one of its modules."""
    for name, _function in reversed(frames_of(exc)):
        if name in STEPS:
            return STEPS[name]
    return "diagnosis"


def undiagnosed(view: AttemptView, exc: BaseException) -> DiagnosisRecord:
    """The diagnosis of an attempt whose diagnosis raised: category `unknown`, confidence 0, the
    error named in the summary. The outcome is the scheduler's end reason's when it has one, else
    `failed` when the attempt logged errors, else `running` (no end seen)."""
    end_reason = str(getattr(view.meta, "end_reason", "") or "")
    default = "failed" if view.errors else "running"
    return DiagnosisRecord(
        id=stable_id("diagnosis", view.job, view.attempt),
        job=view.job,
        attempt=view.attempt,
        namespace=view.job.split("/", 1)[0] if "/" in view.job else None,
        outcome=outcome_of(end_reason, failed=bool(view.errors), default=None if end_reason else default),
        category="unknown",
        summary=f"gangscope could not diagnose this attempt: {type(exc).__name__} in {step_of(exc)}",
        events=list(dict.fromkeys([*(getattr(view.meta, "event_ids", None) or []), *(e.id for e in view.events if e.id)])),
        confidence=0.0,
    )


def diagnose_attempt(view: AttemptView) -> DiagnosisRecord:
    """The DiagnosisRecord of one job attempt (see the module doc for the flow)."""
    ranks = RankMap(view)
    found = []  # (a loop: a generator inside a comprehension resumed once an error)
    for e in view.errors:
        f = failure_of(e, ranks)
        if f is not None:
            found.append(f)
    found += box_outside_kills(view, ranks)  # [h31d] a worker killed from outside that the box does not name as root cause
    failures = without_handled(found, view)
    failures = without_recovered_losses(failures, view)  # a NaN step the loss came back from
    failures = without_own_kills(failures)  # srun's / slurmstepd's own kill of the step
    event_ids = event_ids_of(view)
    end_reason = str(getattr(view.meta, "end_reason", "") or "")
    event_verdict = event_verdict_of(view, end_reason)

    root, how = find_root(failures)
    if how == "rank_report":  # [h28g] ranks that raised the same exception: the box says which exited on it first
        root = first_exit_of_same_error(view, root, failures)
    if root is None or how == "effect":  # a divergence explains what only effects show
        overflows = [e for e in view.errors if e.category == "nan_loss"]
        nonfinite = [s for s in view.steps if "loss" in (s.nonfinite or ()) or s.loss is not None and not math.isfinite(s.loss)]
        printed = [e for e in overflows if e.pattern == PRINTED_NONFINITE_LOSS]  # lines no step dialect reads
        if (len(overflows) >= ENDLESS_OVERFLOW or collapsed_loss_scale(overflows)
                or (nonfinite and (view.signals or ended_badly(end_reason) or len(nonfinite) >= NONFINITE_STEPS))
                or (printed and (view.signals or ended_badly(end_reason) or len(printed) >= NONFINITE_STEPS))):  # fmt: skip
            return diverged(view, overflows, nonfinite, event_ids, end_reason)
        tail_steps, tail_printed = nonfinite_tail(view)  # the loss stayed non-finite to the end of a stream
        if tail_steps or tail_printed:
            return diverged(view, [*tail_printed, *(e for e in overflows if e not in tail_printed)], tail_steps, event_ids, end_reason)
    # [gang, issue 6] Kueue's own verdict (diagnose/gang_verdict.py) where the scheduler decides the attempt.
    if root is None or (event_verdict is not None and event_verdict[0] in ("pods_ready_timeout", "node_failure", root.category)):
        gang = scheduler_diagnosis(view, failures)
        if gang is not None:
            return gang
    if event_verdict is not None and (root is None or event_verdict[0] in ("pods_ready_timeout", "node_failure")):
        return from_event(view, event_verdict, failures, event_ids)
    if root is None:
        return no_failure(view, event_ids, end_reason)
    went_on = recovered(view, failures, root, event_ids)  # the job completed after a failure it recovered from
    if went_on is not None:
        return went_on

    category = root.category
    first = first_failure(root, ranks)
    suspects: list[int] = []
    if category == "nccl_timeout":
        # The ranks that never reported the timeout are the suspects. A silent rank the log shows
        # alive (its steps, its lines) is the first failure; one only inferred from the ranks
        # below the highest seen (ranks are dense from 0) is named in the summary, and the first
        # failure stays the first rank the log shows timing out.
        suspects = silent_ranks(failures, ranks)
        if suspects:
            how = "silent_suspect"
            seen = [r for r in suspects if r in ranks.seen()]
            if seen:
                first = {"pod": ranks.pod_of(seen[0]), "rank": seen[0],
                         "node": ranks.node_of(seen[0]), "time": root.error.time}  # fmt: skip
    if how == "rank_report" and box_agrees(view, root, ranks):
        how = "corroborated"
    symptoms = symptoms_of(failures, root, suspects)
    evidence = evidence_of(view, root, failures, suspects)
    outcome = outcome_of(end_reason, failed=True)
    summary = summary_of(view, root, first, symptoms, suspects)
    if category == "preempted":  # a stop from outside that the job's own time limit sent (SPEC rev. 2 `time_limit`)
        end = job_end(view)
        if end is not None and end["category"] == "time_limit":
            category = "time_limit"
            summary = f"{summary}; the job's controller says {end_words(end)}: its time limit stopped it"
            evidence = [*end_evidence(end), *evidence]
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
        exception_type=exception_type_of(view, root.error),
        first_failure=first,
        summary=summary,
        evidence=evidence,
        symptoms=symptoms,
        events=event_ids,
        confidence=CONFIDENCE[how],
    )
