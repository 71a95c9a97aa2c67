"""Diagnoses of attempts whose logs name no root cause: the scheduler's verdict, divergence,
a stall, a clean end, a run that stopped short; and the outcome an attempt's end reason means."""

from __future__ import annotations

import math
import re
from typing import Any

from gangscope.parsers import times
from gangscope.parsers.errors import ANNOUNCES_THE_TRACEBACK, END, LAST_WORD_FAILURES, WARNING, frame_key, groups_of, rule_role
from gangscope.parsers.records import DiagnosisRecord, ErrorRecord, StepRecord, stable_id
from gangscope.pipeline.correlate.job_ends import FAILED_END_REASONS
from gangscope.pipeline.correlate.signals import classify
from gangscope.pipeline.diagnose.evidence import error_evidence, record_evidence, symptoms_of
from gangscope.pipeline.diagnose.gang_verdict import diagnosis_record, scheduler_verdict
from gangscope.pipeline.diagnose.root_cause import Failure
from gangscope.pipeline.diagnose.rules import (
    BARS_NEEDING_PROGRESS, COLLAPSED_LOSS_SCALE, COLLAPSED_OVERFLOWS, CONFIDENCE, CUT_TRACEBACK_FORMS, CUT_TRACEBACK_FRAMES,
    EVENT_VERDICTS, EXCERPT_SOURCES, PRINTED_NONFINITE_LOSS, RENDERED_TRACEBACK_LINES, STALL_RESOLVED, TEARDOWN_AT_THE_END, LAST_WORD_WARNINGS,
)
from gangscope.pipeline.diagnose.rules import STALL_REPEATS  # h25a
from gangscope.pipeline.diagnose.rules import FALLBACK_NCCL_WARNINGS  # h28d
from gangscope.pipeline.diagnose.rules import TF_BFC_DUMP  # h34a
from gangscope.pipeline.diagnose.summary import cut_message, ranks_text, readable_message, who, without_stamp
from gangscope.pipeline.diagnose.views import AttemptView


def event_ids_of(view: AttemptView) -> list[str]:
    """The ids of the attempt's scheduler events: the gang's, then any other event record of the attempt."""
    ids = dict.fromkeys(getattr(view.meta, "event_ids", None) or [])  # ordered, and O(1) membership
    for e in view.events:
        if e.id:
            ids.setdefault(e.id)
    return list(ids)


def event_verdict_of(view: AttemptView, end_reason: str) -> tuple[str, str, Any] | None:
    """What the scheduler's events say ended the attempt: (category, outcome, the event or None); None when
    they say nothing or the attempt finished."""
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


def from_event(view: AttemptView, verdict: tuple[str, str, Any], failures: list[Failure], event_ids: list[str]) -> DiagnosisRecord:
    """A diagnosis from a scheduler event alone (the logs hold no better root cause)."""
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
        outcome=outcome_of(str(reason or ""), failed=True, default=outcome), category=category,
        first_failure=first, summary=summary, evidence=evidence,
        symptoms=symptoms_of(failures, None, []) if failures else [], events=event_ids, confidence=CONFIDENCE["event"],
    )  # fmt: skip


def job_end(view: AttemptView) -> dict[str, Any] | None:
    """How the job's controllers say the attempt ended (correlate/job_ends.py): {"outcome": "succeeded" |
    "failed", "category", "reason", "message", "event"}, or None when they say nothing of it. The attempt's
    end (a Kueue Workload's Finished condition, a Job's Completed event, ...) first, else the latest end
    event among the attempt's records (a job that Kueue does not manage has no attempt end)."""
    end = (getattr(view.meta, "details", None) or {}).get("end") if view.meta is not None else None
    if isinstance(end, dict) and end.get("outcome"):
        event = next((e for e in view.events if e.id == end.get("outcome_event_id")), None)
        return {"outcome": end["outcome"], "category": end.get("category"), "event": event,
                "reason": end.get("reason") or getattr(view.meta, "end_reason", None), "message": end.get("message")}
    if getattr(view.meta, "end", None) is not None and getattr(view.meta, "end_reason", None) != "Finished":
        return None  # the scheduler ended the attempt otherwise (an eviction): the gang verdict's, not a job end
    found = None
    for e in view.events:
        if (e.object_kind or "") == "Pod":
            continue
        s = classify(e)
        if s is None or s.kind != "finished" or not s.info.get("outcome"):
            continue
        if found is None or (e.time or "") >= (found["event"].time or ""):
            found = {"outcome": s.info["outcome"], "category": s.info.get("category"), "event": e,
                     "reason": s.info.get("reason"), "message": s.info.get("message")}
    return found


def end_words(end: dict[str, Any]) -> str:
    """The controller's own words for an end: `reason: message`."""
    message = " ".join(str(end.get("message") or "").split())[:200]
    return f"{end.get('reason') or 'Finished'}" + (f": {message}" if message else "")


def end_evidence(end: dict[str, Any]) -> list[dict]:
    e = end.get("event")
    if e is None:
        return []
    return [{"record_id": e.id, "kind": "event", "pod": e.pod, "rank": None, "time": e.time,
             "text": f"{e.reason}: {e.message or ''}".strip()}]  # fmt: skip


def succeeded_by_job(view: AttemptView, base: dict, end: dict[str, Any]) -> DiagnosisRecord:
    """A success the job's controller counted (Kueue Finished/Succeeded, Job Completed, PyTorchJobSucceeded,
    JobSet AllJobsCompleted), with the logs' own end where they show one."""
    done = _clean_end(view)
    e = end.get("event")
    return DiagnosisRecord(**base, outcome="succeeded", category="success",
                           confidence=CONFIDENCE["clean_end"] if done else CONFIDENCE["event"],
                           time=(e.time if e is not None else None) or getattr(view.meta, "end", None),
                           evidence=end_evidence(end),
                           summary=(f"finished cleanly: {done}; the job's controller says {end_words(end)}" if done else
                                    f"the job's controller counted the run complete ({end_words(end)}); no failure "
                                    "in the logs"))  # fmt: skip


def failed_by_job(view: AttemptView, base: dict, end: dict[str, Any]) -> DiagnosisRecord:
    """A failure the job's controller reported (a backoff limit, a deadline, ...) that the logs do not explain."""
    category = end.get("category") or "unknown"
    e = end.get("event")
    if category == "time_limit":
        summary = f"the scheduler's time limit ended the job ({end_words(end)}); no failure in the logs"
    else:
        summary = f"the job failed ({end_words(end)}) and the logs do not say why"
    return DiagnosisRecord(**base, outcome="failed", category=category,
                           confidence=CONFIDENCE["event"] if category != "unknown" else CONFIDENCE["unknown"],
                           time=(e.time if e is not None else None) or getattr(view.meta, "end", None),
                           evidence=end_evidence(end), summary=summary)  # fmt: skip


def recovered(view: AttemptView, failures: list[Failure], root: Failure, event_ids: list[str]) -> DiagnosisRecord | None:
    """A success the job's controller counted after failures the run went on from: a step was logged after the
    last of them (a rank restarted by torchrun's --max-restarts, an elastic membership change). None when the
    controller did not count a success, or the logs show no progress after the last failure (the failure in the
    logs then stands)."""
    end = job_end(view)
    last = max((f.t for f in failures if math.isfinite(f.t)), default=None)
    if end is None and last is not None:
        return recovered_in_logs(view, failures, root, event_ids, last)
    if end is None or end["outcome"] != "succeeded":
        return None
    if last is None:
        return None
    later = [s for s in view.steps if (t := times.seconds(s.time)) is not None and t > last]
    if not later:
        return None
    furthest = max(later, key=lambda s: (s.time or "", s.step if s.step is not None else -1))
    first = _first_failure(root.error)
    at = f" to step {furthest.step}" if furthest.step is not None else ""
    base = dict(id=stable_id("diagnosis", view.job, view.attempt), job=view.job, attempt=view.attempt,
                namespace=view.job.split("/", 1)[0] if "/" in view.job else None, events=event_ids)  # fmt: skip
    return DiagnosisRecord(
        **base, outcome="succeeded", category="success", confidence=CONFIDENCE["event"],
        time=(end["event"].time if end.get("event") is not None else None) or getattr(view.meta, "end", None),
        evidence=[*end_evidence(end), error_evidence(root.error), record_evidence(furthest, f"step {furthest.step}")],
        symptoms=symptoms_of(failures, None, []),
        summary=f"finished after recovering from {root.category} ({who(first)}): training went on{at} and the job's "
                f"controller says {end_words(end)}",
    )  # fmt: skip


def recovered_in_logs(view: AttemptView, failures: list[Failure], root: Failure, event_ids: list[str],
                      last: float) -> DiagnosisRecord | None:
    """[h30e] Without a controller's word: the logs' own end AFTER the last failure, the run's last step reached (its
    step N/N, as `_clean_end` reads it, bars seen only at their end excepted), by a step counted from 1 again (a group
    restarted from its start or a checkpoint: torchrun --max-restarts, an elastic restart, a launcher's retry, whose
    agents say nothing of the restart at their default log level) or going on. Runs: fixtures/runs/restart_recovers
    (torch 2.15, 1 pod x 2 ranks, --max-restarts=2: rank 1's ValueError in the first attempt, a restarted group that
    died in gloo's connectFullMesh, then a third attempt to `epoch 2/2 step 20/20`, exit 0). A log whose last failure
    comes after its last step (a crash while saving at the end) is untouched: the failure stands."""
    ends = [s for s in view.steps
            if s.step is not None and s.total_steps and s.step >= s.total_steps and s.dialect not in BARS_NEEDING_PROGRESS
            and (t := times.seconds(s.time)) is not None and t > last]
    if not ends:
        return None
    furthest = max(ends, key=lambda s: (s.time or "", s.step))
    first = _first_failure(root.error)
    base = dict(id=stable_id("diagnosis", view.job, view.attempt), job=view.job, attempt=view.attempt,
                namespace=view.job.split("/", 1)[0] if "/" in view.job else None, events=event_ids)  # fmt: skip
    return DiagnosisRecord(
        **base, outcome="succeeded", category="success", confidence=CONFIDENCE["end_line"], time=furthest.time,
        evidence=[error_evidence(root.error), record_evidence(furthest, f"step {furthest.step}")],
        symptoms=symptoms_of(failures, None, []),
        summary=f"finished after recovering from {root.category} ({who(first)}): training went on after it to step "
                f"{furthest.step}/{furthest.total_steps} (a restarted group, or a retry)",
    )  # fmt: skip


def scheduler_diagnosis(view: AttemptView, failures: list[Failure]) -> DiagnosisRecord | None:
    """[gang, issue 6] The scheduler's verdict (diagnose/gang_verdict.py) for an attempt Kueue evicted or has not admitted yet:
    the pod that held the gang back and why (with its own log lines), the preemptor, the node, requeues."""
    if view.meta is None or not hasattr(view.meta, "details"):
        return None
    verdict = scheduler_verdict(view.meta, [*view.errors, *view.traces])
    if verdict is None:
        return None
    return diagnosis_record(verdict, symptoms_of(failures, None, []) if failures else [])


def diverged(view: AttemptView, overflows: list[ErrorRecord], nonfinite: list[StepRecord], event_ids: list[str],
              end_reason: str) -> DiagnosisRecord:  # fmt: skip
    """A diagnosis of a run whose loss became non-finite or whose fp16 loss scale kept overflowing."""
    first_step = min(nonfinite, key=lambda s: s.time or "") if nonfinite else None
    first_overflow = min(overflows, key=lambda e: e.time or "") if overflows else None
    anchor = first_step or first_overflow
    first = {"pod": anchor.pod, "rank": anchor.rank, "node": anchor.node, "time": anchor.time}
    printed = [e for e in overflows if e.pattern == PRINTED_NONFINITE_LOSS]
    if first_step is not None:
        at = f" at step {first_step.step}" if first_step.step is not None else ""
        filtered = first_step.loss is not None and math.isfinite(first_step.loss)  # nonfinite_tail: the Trainer's NaN filter
        how = f", grad norm NaN/Inf with the loss logged as {first_step.loss} ({len(nonfinite)} last reports)" if filtered else ""
        summary = f"the loss became non-finite{at} ({who(first)}){how}"
    elif printed:
        first_printed = min(printed, key=lambda e: (e.time or "", e.seq or 0))
        anchor = first_printed
        first = {"pod": anchor.pod, "rank": anchor.rank, "node": anchor.node, "time": anchor.time}
        overflows = [first_printed, *(e for e in overflows if e is not first_printed)]
        summary = (f"the training loss was printed as {groups_of(first_printed).get('value', 'nan')} {len(printed)} "
                   f"times ({who(first)}), first: {cut_message(without_stamp(' '.join((first_printed.line or '').split())))}")  # h20b: at a word, '...'
    else:  # [h31f] who overflowed, and the first overflow's line as the proof
        line = cut_message(without_stamp(" ".join((first_overflow.line or first_overflow.message or "").split()))) if first_overflow else ""
        summary = (f"the fp16 loss scale overflowed {len(overflows)} times ({who(first)}; skipped steps): training diverged"
                   + (f"; first: {line}" if line else ""))
    evidence = [error_evidence(e) for e in overflows[:2]]
    if first_step is not None:
        evidence.insert(0, record_evidence(first_step, f"step {first_step.step} loss {first_step.loss}"))
    return DiagnosisRecord(
        id=stable_id("diagnosis", view.job, view.attempt), job=view.job, attempt=view.attempt,
        namespace=view.job.split("/", 1)[0] if "/" in view.job else None, time=anchor.time,
        outcome=outcome_of(end_reason, failed=True), category="nan_loss", first_failure=first, summary=summary,
        evidence=evidence, symptoms=[], events=event_ids, confidence=CONFIDENCE["effect"],
    )  # fmt: skip


def collapsed_loss_scale(overflows: list[ErrorRecord]) -> bool:
    """Whether the fp16 loss scale kept overflowing at a collapsed value (rules.COLLAPSED_LOSS_SCALE)."""
    low = 0
    for e in overflows:
        floor = COLLAPSED_LOSS_SCALE.get(e.pattern or "")
        if floor is None:
            continue
        try:
            scale = float(groups_of(e).get("scale", "nan"))
        except ValueError:
            continue
        if scale <= floor:
            low += 1
    return low >= COLLAPSED_OVERFLOWS


def _first_failure(record) -> dict:
    """The `first_failure` of a diagnosis: where and when `record` (an error or trace record) was seen."""
    return {"pod": record.pod, "rank": record.rank, "node": record.node, "time": record.time}


def no_failure(view: AttemptView, event_ids: list[str], end_reason: str) -> DiagnosisRecord:
    """A diagnosis of an attempt with no failure in its logs (SPEC rev. 2): first what the job's controllers
    say of its end (`job_end`: a success they counted; a failure they reported, `time_limit` or `unknown`,
    after a stall the logs show), a stall (`hang`), a bad
    end the logs do not explain (`unknown`), the evidence of an end (`success`: the framework's own
    end-of-training line, the last step or epoch reached, the scheduler's Finished), or else
    `running`: the attempt is still going or its log was cut before the end."""
    base = dict(id=stable_id("diagnosis", view.job, view.attempt), job=view.job, attempt=view.attempt,
                namespace=view.job.split("/", 1)[0] if "/" in view.job else None, events=event_ids)  # fmt: skip
    end = job_end(view)
    if end is not None and end["outcome"] == "succeeded":  # the job completed: a stall it went on from was no hang
        return succeeded_by_job(view, base, end)
    stalls = unresumed_stalls(view)
    if stalls:
        first_stall = min(stalls, key=lambda s: s.time or "")
        stalled = sorted({s.rank for s in stalls if s.rank is not None})
        first = {"pod": first_stall.pod, "rank": first_stall.rank, "node": first_stall.node, "time": first_stall.time}
        where = _stalled_where(stalled, first)
        step = f" after step {first_stall.step}" if first_stall.step is not None else ""
        summary = f"progress of {where or 'the job '}stopped{step} with no error in the logs ({first_stall.message or 'stall'})"
        return DiagnosisRecord(
            **base, time=first_stall.time, outcome=outcome_of(end_reason, failed=False, default="running"),
            category="hang", first_failure=first, summary=summary,
            evidence=[record_evidence(s, s.message or f"stall at step {s.step}") for s in stalls[:4]],
            confidence=CONFIDENCE["stall"],
        )  # fmt: skip
    reports = stall_reports(view)
    if reports:
        return _reported_stall(view, reports, base, end_reason)
    if end is not None and end["outcome"] == "failed":
        return failed_by_job(view, base, end)
    if ended_badly(end_reason):
        return DiagnosisRecord(**base, outcome="failed", category="unknown", confidence=CONFIDENCE["unknown"],
                               summary=f"the attempt ended ({end_reason}) and the logs do not say why")  # fmt: skip
    if getattr(view.meta, "end", "x") is None and view.meta is not None:
        return DiagnosisRecord(**base, outcome="running", category="running", confidence=CONFIDENCE["no_error"],
                               summary="still running; no error in the logs so far")  # fmt: skip
    done = _clean_end(view)
    if done or re.search(r"succe", end_reason, re.I):
        return DiagnosisRecord(**base, outcome="succeeded", category="success", confidence=CONFIDENCE["clean_end"],
                               summary=f"finished cleanly{(': ' + done) if done else ''}")  # fmt: skip
    ends = [e for e in view.errors if rule_role(e.pattern) == END]
    if ends:
        last = max(ends, key=lambda e: (e.time or "", e.seq))
        return DiagnosisRecord(**base, outcome="succeeded", category="success", confidence=CONFIDENCE["end_line"],
                               time=last.time, evidence=[error_evidence(last)],
                               # [h34j] blanks squeezed: an end line can be a table row (kubeflow_job_row_succeeded's columns)
                               summary=f"finished cleanly: {' '.join((last.message or last.line or '').split())}")  # fmt: skip
    warned = warnings_at_the_end(view)
    if warned:
        first = warned[0]
        who_ = _first_failure(first)
        what = "NCCL warning" if first.category == "nccl_error" else "warning"
        # [h32d] a gang's waiting words (a PodGroup unschedulable, a child Job refused, a volume or Secret not there yet) say
        # what they stand for only in the category: the sentence says it (dev 1199, 1405)
        lead = "the gang never became ready: " if first.category == "pods_ready_timeout" else ""
        # [h34a] the BFC allocator's dump says what it stands for in none of its words (a byte count): the sentence says it
        # (dev 1596, 1598)
        if first.pattern in TF_BFC_DUMP:
            lead = "the GPU ran out of memory (its allocator's dump after a failed allocation): "
        return DiagnosisRecord(**base, outcome=outcome_of(end_reason, failed=False, default="running"),
                               category=first.category, first_failure=who_, time=first.time, confidence=CONFIDENCE["warnings_at_end"],
                               evidence=[error_evidence(e) for e in warned[:4]],
                               summary=f"{lead}the log ends in {len(warned)} {what}{'s' if len(warned) > 1 else ''} with no error "
                                       f"raised and no progress after them ({who(who_)}): {readable_message(first, view) or first.line}")  # fmt: skip
    cut = cut_traceback_at_the_end(view)
    if cut:
        first = cut[0]
        who_ = _first_failure(first)
        named = announced_by(view, first)  # [h20a] the warning just before it that says which exception it is
        inside = None if named else raised_inside(first)  # [h22c] else the operation its frames show it was raised in
        printed = frame_as_printed(first, inside[2]) if inside else None  # [h34i] that frame as the log printed it
        return DiagnosisRecord(**base, outcome=outcome_of(end_reason, failed=True),
                               category=named.category if named else (inside[1] if inside else "unknown"),
                               first_failure=who_, time=first.time, confidence=CONFIDENCE["cut_traceback"],
                               evidence=([error_evidence(named)] if named else [])
                               + [record_evidence(t, _head_and_last_lines(t.text, shown=printed)) if t.kind == "trace"
                                  else error_evidence(t) for t in cut[:4]],
                               summary=f"the log ends inside a Python traceback cut before its exception line ({who(who_)}): "
                                       + (f"the line before it names the failure ({named.category}): {named.message or named.line}"
                                          if named else f"an exception was raised inside {inside[0]} ({inside[1]}), the text does not "
                                          f"say which: {_frame_words(printed) if printed else inside[2]}" if inside else "an exception was raised, the text does not say which")
                                       + ("" if named or inside else _last_line_words(first)))  # fmt: skip
    teardown = teardown_at_the_end(view)
    if teardown:
        first = teardown[0]
        who_ = _first_failure(first)
        return DiagnosisRecord(**base, outcome=outcome_of(end_reason, failed=True), category="unknown",
                               first_failure=who_, time=first.time, confidence=CONFIDENCE["teardown_at_end"],
                               evidence=[error_evidence(e) for e in teardown[:4]],
                               summary=f"the log ends with the launcher's word that its workers stopped or failed ({len(teardown)} line"
                                       f"{'s' if len(teardown) > 1 else ''}, nothing after them, {who(who_)}): the attempt failed and "
                                       f"the logs do not say why: {first.message or first.line}")  # fmt: skip
    failed = failed_at_the_end(view)
    if failed:
        # [h16r] SPEC rev. 2: "a failure with no cause in the logs is `unknown`": the log's last word is a logger's
        # error-level line (parsers/errors.py LAST_WORD_FAILURES), the category its message names if any.
        first = failed[0]
        who_ = _first_failure(first)
        named = next((e for e in failed if e.category != "unknown"), first)
        return DiagnosisRecord(**base, outcome=outcome_of(end_reason, failed=True), category=named.category,
                               first_failure=who_, time=first.time, confidence=CONFIDENCE["teardown_at_end"],
                               evidence=[error_evidence(e) for e in failed[:4]],
                               summary=f"the log ends in {len(failed)} error-level line{'s' if len(failed) > 1 else ''} with no "
                                       f"error raised and nothing after {'them' if len(failed) > 1 else 'it'} ({who(who_)}): a "
                                       f"process failed{'' if named.category == 'unknown' else ' (' + named.category + ')'}: "
                                       f"{readable_message(named, view) or named.line}")  # fmt: skip
    short = _short_of_the_end(view)
    if short:
        # The run said how long it is and its log stops before that with no error: progress
        # stopped (a job killed while hung leaves exactly this; fixtures/runs/hang).
        return DiagnosisRecord(**base, outcome="running", category="hang", confidence=CONFIDENCE["short_of_end"],
                               summary=f"progress stopped at {short} and the log ends there with no error: "
                                       "the job hung, or is still running")  # fmt: skip
    return DiagnosisRecord(**base, outcome="running", category="running", confidence=CONFIDENCE["running"],
                           summary="no failure and no end of training in the logs: the job is still running, "
                                   "or its log was cut before the end")  # fmt: skip


def _short_of_the_end(view: AttemptView) -> str | None:
    """Where the run stopped, when its own totals show it stopped short of the end, in a log a container
    runtime or a collector kept whole (CRI, docker, fluent-bit envelopes). A plain text file is an excerpt
    as often as not, and an excerpt ends where its poster stopped copying (SPEC rev. 2: `running`, "its
    log was cut before the end"); its stop shows only by a stall report or a gap the times prove."""
    latest: dict[tuple, Any] = {}
    for e in view.epochs:
        if e.progress is not None and e.source not in EXCERPT_SOURCES:
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


def unresumed_stalls(view: AttemptView) -> list:
    """The stalls after which their rank logged no later step: where its progress ended. A rank
    that stopped for a while and went on (a slow checkpoint, a data source that paused) did not
    hang; its stall stays a signal, not the attempt's diagnosis."""
    stalls = [s for s in view.signals if s.signal == "stall"]
    if not stalls:
        return stalls
    last: dict[tuple, int] = {}
    for r in view.steps:
        if r.step is not None and r.step > last.get((r.pod, r.rank), -1):
            last[(r.pod, r.rank)] = r.step
    return [s for s in stalls if s.step is None or last.get((s.pod, s.rank), -1) <= s.step]


def _position(record: Any) -> tuple[str, int]:
    """Where a record sits in its stream: its time, then its line (records of a stream without times
    are ordered by `seq` alone)."""
    return (record.time or "", record.seq or 0)


def _last_positions(records: Any) -> dict[str | None, tuple[str, int]]:
    """Each pod's last record among `records`, by position (one pass)."""
    last: dict[str | None, tuple[str, int]] = {}
    for r in records:
        at = _position(r)
        if r.pod not in last or at > last[r.pod]:
            last[r.pod] = at
    return last


def stall_reports(view: AttemptView) -> list[ErrorRecord]:
    """The lines in which a library reported that progress stopped (rules of category `hang` and role
    `warning` in parsers/errors.py: horovod's stall check, a py-spy dump) with no step of their pod after
    them: a stall that resumed (a long validation on one rank) is no hang."""
    found = [e for e in view.errors if e.category == "hang" and rule_role(e.pattern) == WARNING]
    if not found:
        return []
    last = _last_positions(view.steps)  # (a pass over the steps per report was reports x steps: a stall warned every minute for hours)
    for e in found:  # a library's word that the stall is over (rules.STALL_RESOLVED) is progress, as a step is
        if e.pattern in STALL_RESOLVED and (e.pod not in last or _position(e) > last[e.pod]):
            last[e.pod] = _position(e)
    found = sorted((e for e in found if e.pattern not in STALL_RESOLVED and not (e.pod in last and last[e.pod] > _position(e))),
                   key=_position)
    # h25a: a report printed again every interval while the library waits (rules.STALL_REPEATS) is a stall only when its pod
    # printed it that many times with no progress after them (one or two are a late peer)
    repeats: dict[tuple[str, str | None], int] = {}
    for e in found:
        if e.pattern in STALL_REPEATS:
            repeats[(e.pattern, e.pod)] = repeats.get((e.pattern, e.pod), 0) + 1
    return [e for e in found if e.pattern not in STALL_REPEATS or repeats[(e.pattern, e.pod)] >= STALL_REPEATS[e.pattern]]


def _reported_stall(view: AttemptView, reports: list[ErrorRecord], base: dict, end_reason: str) -> DiagnosisRecord:
    """A hang from the library's own stall report: the stalled rank where the report names one."""
    named = [e for e in reports if groups_of(e).get("stalled")]
    anchor = named[0] if named else reports[0]
    rank = int(groups_of(anchor)["stalled"]) if named else anchor.rank
    first = {"pod": anchor.pod, "rank": rank, "node": anchor.node, "time": reports[0].time}
    stalled = sorted({int(groups_of(e)["stalled"]) for e in named})
    where = _stalled_where(stalled, first)
    head = reports[0]
    return DiagnosisRecord(
        **base, time=head.time, outcome=outcome_of(end_reason, failed=False, default="running"), category="hang",
        first_failure=first, confidence=CONFIDENCE["stall"],
        summary=f"progress of {where or 'the job '}stopped with no error in the logs; the stall was reported: "
                f"{' '.join((head.message or head.line or '').split())[:160]}",
        evidence=[error_evidence(e) for e in ([head, *(e for e in named if e is not head)])[:4]],
    )  # fmt: skip


def warnings_at_the_end(view: AttemptView) -> list[ErrorRecord]:
    """The NCCL warnings (rule `nccl_warn` and the other warnings of category nccl_error) a log ends in:
    the attempt's last records, with no step, trace or other line a parser read after them. NCCL warns and
    goes on where it can (a transport it falls back from at init); warnings that nothing follows are the
    last word of a job whose communication broke (SPEC rev. 2: a NCCL WARN trail without an exception).
    So are the warnings of rules.LAST_WORD_WARNINGS (one category a tail). [h28d] A warning of a step NCCL falls back from
    and goes on (rules.FALLBACK_NCCL_WARNINGS) is read past: neither part of the run nor the end of it."""
    return _last_records(view, lambda r, tail: (
        r.kind == "error" and (r.category == "nccl_error" or r.pattern in LAST_WORD_WARNINGS) and rule_role(r.pattern) == WARNING
        and (not tail or r.category == tail[0].category)), skip=_fallback_warning)


def _fallback_warning(record: Any) -> bool:
    """[h28d] A NCCL warning of a step NCCL falls back from at init (rules.FALLBACK_NCCL_WARNINGS)."""
    return record.kind == "error" and record.category == "nccl_error" and bool(FALLBACK_NCCL_WARNINGS.search(record.line or ""))


def _last_records(view: AttemptView, belongs: Any, skip: Any = None) -> list:
    """The run of records an attempt ends in (its errors, steps and traces in the order they were read) for which
    `belongs(record, the run so far from the end)` holds, oldest first: nothing a parser read comes after them. Records
    for which `skip(record)` holds are left out before the run is read."""
    records = sorted([*view.errors, *view.steps, *view.traces], key=_position)
    if skip is not None:
        records = [r for r in records if not skip(r)]
    tail: list = []
    for r in reversed(records):
        if not belongs(r, tail):
            break
        tail.append(r)
    return tail[::-1]


def teardown_at_the_end(view: AttemptView) -> list[ErrorRecord]:
    """The launcher teardown and restart lines (rules.TEARDOWN_AT_THE_END) a log ends in: the attempt's last records, with
    no step, trace or other line a parser read after them (a group restarted after a membership change logs on)."""
    return _last_records(view, lambda r, _tail: r.kind == "error" and r.pattern in TEARDOWN_AT_THE_END)


def failed_at_the_end(view: AttemptView) -> list[ErrorRecord]:
    """[h16r] The error-level lines of Python loggers (parsers/errors.py LAST_WORD_FAILURES: ERROR/CRITICAL in logging's
    and its usual recipes' formats) a log ends in: the attempt's last records, with no step, trace or other line a parser
    read after them. A run that logged an error and went on shows it by what it logged next."""
    return _last_records(view, lambda r, _tail: r.kind == "error" and r.pattern in LAST_WORD_FAILURES)


def cut_traceback_at_the_end(view: AttemptView) -> list:
    """The traces cut before their exception line (rules.CUT_TRACEBACK_FORMS, no exception type, `truncated`),
    and the lines of tracebacks other renderers print (rules.RENDERED_TRACEBACK_LINES: IPython's, rich's), that
    are their pod's last record: no step, error or other trace of that pod was read after them. A trace cut by
    another process's lines and followed by more of its pod's output is not one (it is interleaving, not the end
    of the text)."""
    cut = [t for t in view.traces if t.form in CUT_TRACEBACK_FORMS and not t.exception_type and t.truncated]
    cut += [e for e in view.errors if e.pattern in RENDERED_TRACEBACK_LINES]
    if not cut:
        return []
    last = _last_positions((*view.errors, *view.steps, *view.traces))
    return sorted((t for t in cut if last.get(t.pod) == _position(t)), key=_position)


def announced_by(view: AttemptView, trace: Any) -> ErrorRecord | None:
    """[h20a] The warning (parsers/errors.py ANNOUNCES_THE_TRACEBACK, with its words naming the exception) read just before `trace` in its pod, with nothing between
    them, that names the exception the traceback prints: torch elastic's "has failed to shutdown the rendezvous ... due to an
    error of type RendezvousConnectionError." before torchrun's handler prints it. None when there is no such line."""
    before = [r for r in [*view.errors, *view.steps, *view.traces] if r.pod == trace.pod and _position(r) < _position(trace)]
    if not before:
        return None
    last = max(before, key=_position)
    words = ANNOUNCES_THE_TRACEBACK.get(last.pattern) if last.kind == "error" else None
    return last if words and words in (last.line or "") and last.category != "unknown" else None


#: An IPython frame location line (rule ultratb_location): its path and the function after ", in " (args dropped).
_ULTRATB_FRAME = re.compile(r"^File \[?(?P<file>[^\n\]]*?):\d+(?:\]\([^)\s]*\))?, in (?P<function>[\w.<>]+)")


def raised_inside(cut: Any) -> tuple[str, str, str] | None:
    """[h22c] (what failed, category, frame) for a traceback cut before its exception line: the first of its frames,
    innermost first (or an IPython location line's one frame), that rules.CUT_TRACEBACK_FRAMES names an operation of.
    None when no frame shown is one."""
    if getattr(cut, "kind", None) == "trace":
        keys = [frame_key(f.file, f.function) for f in reversed(cut.frames or [])]
    else:
        m = _ULTRATB_FRAME.search(cut.line or "")
        keys = [frame_key(m["file"], m["function"])] if m else []
    for key in keys:
        for _name, category, what, frame, _source in CUT_TRACEBACK_FRAMES:
            if frame.search(key):
                return what, category, key
    return None


def _stalled_where(stalled: list[int], first: dict) -> str:
    """[h31f] Whose progress stopped: the stalled ranks, with the first one's pod ("rank 3 in pod P", "ranks 0-3 (first rank 0
    in pod P)"), or the job and the pod of the first stall report ("the job (a worker in pod P)"); "" where nothing is known."""
    if not first.get("pod"):
        return f"{ranks_text(stalled)} " if stalled else ""
    if not stalled:
        return f"the job ({who(first)}) "
    if len(stalled) == 1 and first.get("rank") == stalled[0]:
        return f"{who(first)} "
    return f"{ranks_text(stalled)} (first {who(first)}) "


def _head_lines(text: str | None, count: int = 3) -> str:
    """A cut trace's first lines (its header and where it was raised from)."""
    return "\n".join((text or "").splitlines()[:count])


def _head_and_last_lines(text: str | None, count: int = 3, last: int = 3, shown: str | None = None) -> str:
    """[h31f] A cut trace's first lines and its last ones (where the log cut it: the proof the summary quotes); [h34i] and the
    line `shown` (the frame the summary quotes) between them where neither shows it."""
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    if len(lines) <= count + last:
        return "\n".join(lines)
    if shown is not None and shown in lines[count:-last]:
        return "\n".join([*lines[:count], "  ...", shown, "  ...", *lines[-last:]])
    return "\n".join([*lines[:count], "  ...", *lines[-last:]])


def frame_as_printed(cut: Any, key: str) -> str | None:
    """[h34i] The line of a cut trace (or of an IPython location line) that printed the frame `key` (frame_key's
    `path/with/slashes:function`, read from the parsed frames): the summary quotes the frame as the log shows it (a Windows
    path with its backslashes), innermost first as raised_inside reads them. None where no line shows it."""
    text = cut.text if getattr(cut, "kind", None) == "trace" else (cut.line or "")
    for line in reversed((text or "").splitlines()):
        m = _FRAME_LINE.match(line.strip()) or _ULTRATB_FRAME.match(line.strip())
        if m and frame_key(m["file"], m["function"]) == key:
            return line
    return None


def _frame_words(line: str) -> str:
    """[h34i] A frame line quoted in a summary: its words, the path cut to its tail, an IPython frame's link target
    ("[path:N](file:///...)", IPython/core/ultratb.py) left out."""
    line = re.sub(r"\]\([^)\s]*\)", "]", " ".join(line.split()))
    m = _FRAME_LINE.match(line) or _ULTRATB_FRAME.match(line)
    if m and len(m["file"]) > 80:
        return line.replace(m["file"], "..." + m["file"][-77:], 1)
    return cut_message(line, 160)


def _last_line_words(record: Any) -> str:
    """[h31f] The proof of a traceback cut before its exception line is where it was cut: "; the last frame it shows: File
    "P", line N, in F" (its path's tail), else "; the last line it shows: X", or "; nothing of it follows its header"."""
    text = record.text if getattr(record, "kind", "") == "trace" else (record.line or record.message or "")
    lines = [" ".join(ln.split()) for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return ""
    if _TRACEBACK_HEADER.search(lines[-1]):
        return "; nothing of it follows its header"
    for line in reversed(lines[-3:]):  # the frame before the cut: the last line, or above its code line and a cut one
        m = _FRAME_LINE.match(line)
        if m:
            path = m["file"] if len(m["file"]) <= 80 else "..." + m["file"][-77:]
            return f'; the last frame it shows: File "{path}", line {m["line"]}' + (f", in {m['function']}" if m["function"] else "")
    # [h34i] the line quoted as the log shows it: a line the cut left inside a quoted string (loguru's `File "/home/u/c`)
    # keeps its opening quote, the quote closed after the cut's "..."; a last line too short to prove anything (PROOF_CHARS:
    # "102 balan", a rich box's "│") is quoted with the nearest line above it that has words (of the two the evidence's
    # excerpt shows above it: _head_and_last_lines)
    shown = cut_message(lines[-1], 120)
    opened = shown.count('"') % 2 == 1
    if opened:
        shown = (shown if shown.endswith("...") else shown + "...") + '"'
    words = f"; the last line it shows{' is cut' if opened else ''}: {shown}"
    above = next((ln for ln in reversed(lines[-3:-1]) if re.search(r"\w", ln) and ln.count('"') % 2 == 0
                  and not _TRACEBACK_HEADER.search(ln)), "")  # fmt: skip
    if len(lines[-1]) < PROOF_CHARS and above:
        words += f" (above it: {cut_message(above, 100)})"
    return words


#: [h34i] The fewest characters of a log's line a summary quotes as its proof (bench/summary_audit.py PROOF_CHARS): a shorter
#: last line is quoted with the line before it.
PROOF_CHARS = 16


_TRACEBACK_HEADER = re.compile(r"Traceback \(most recent call last\)")
_FRAME_LINE = re.compile(r'^File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<function>\S.*))?$')


def _clean_end(view: AttemptView) -> str | None:
    moving = {(s.pod, s.total_steps) for s in view.steps
              if s.dialect in BARS_NEEDING_PROGRESS and s.step and s.total_steps and 0 < s.step < s.total_steps}
    unseen = set()  # bars seen only at their end (rules.BARS_NEEDING_PROGRESS): (pod, total)
    for s in sorted(view.steps, key=lambda s: s.time or "", reverse=True):
        if s.step is not None and s.total_steps and s.step >= s.total_steps:
            if s.dialect in BARS_NEEDING_PROGRESS and (s.pod, s.total_steps) not in moving:
                unseen.add((s.pod, s.total_steps))
                continue
            return f"step {s.step}/{s.total_steps} reached"
    for e in view.epochs:
        if e.epoch is None and (e.pod, e.total_steps) in unseen:
            continue  # the progress of such a bar, no epoch of a plan
        if e.progress is not None and e.progress >= 0.999:
            return f"epoch {e.epoch:g} of {e.total_epochs}" if e.epoch is not None and e.total_epochs else "progress 100%"
    return None


def ended_badly(end_reason: str) -> bool:
    """Whether the scheduler's end reason says the attempt failed, was evicted, deactivated or killed."""
    return bool(end_reason) and (re.search(r"fail|evict|error|deactivat|killed", end_reason, re.I) is not None
                                 or end_reason in FAILED_END_REASONS)


def outcome_of(end_reason: str, failed: bool, default: str | None = None) -> str:
    """The outcome (evicted, succeeded, failed) an end reason means; `default`, else by `failed`, when it says none."""
    if end_reason:
        if re.search(r"evict|preempt|podsready|deactivat", end_reason, re.I):
            return "evicted"
        if re.search(r"succe", end_reason, re.I) and not failed:
            return "succeeded"
        if re.search(r"fail", end_reason, re.I) or end_reason in FAILED_END_REASONS:
            return "failed"
    return default or ("failed" if failed else "succeeded")
