"""The pipeline error a finished trace stands for (its category from classify_trace), linked by `trace_id`."""

from __future__ import annotations


from gangscope.parsers.errors import WRAPPER_SUMMARY, child_failure_wrapper, classify_trace, is_spawn_wrapper, spawned_process
from gangscope.parsers.records import ErrorRecord, TraceRecord, stable_id


def error_of_trace(trace: TraceRecord) -> ErrorRecord | None:
    """The pipeline error a finished trace stands for, linked to it by `trace_id`."""
    verdict = classify_trace(trace)
    if not verdict:
        return None
    category, message = verdict
    error = ErrorRecord(
        category=category,
        message=message,
        line=_exception_line(trace),
        trace_id=trace.id,
        pattern="trace",
    )
    if category == "unknown" and (is_spawn_wrapper(trace.exception_type or "", trace.message or "")
                                  or child_failure_wrapper(trace.exception_type or "", trace.message or "")):
        error.pattern = WRAPPER_SUMMARY  # says only that a worker failed (errors.classify_trace)
    for name in ("job", "attempt", "namespace", "pod", "container", "node", "rank", "local_rank", "time", "source", "stream", "seq"):
        setattr(error, name, getattr(trace, name))
    if error.rank is None and error.local_rank is None:
        error.local_rank = _spawned_process(trace)
    error.id = stable_id("error", trace.id)
    return error


def _spawned_process(trace: TraceRecord) -> int | None:
    """The child named by torch.multiprocessing.spawn's "-- Process N terminated with the
    following error:" (its process index, i.e. its local rank), for an error the parent printed."""
    for remote in (trace.details or {}).get("remote") or ():
        if isinstance(remote, dict) and isinstance(remote.get("process"), int):
            return remote["process"]
    return spawned_process(trace.message or "")


def _exception_line(trace: TraceRecord) -> str:
    if trace.exception_type:
        return f"{trace.exception_type}: {trace.message}" if trace.message else trace.exception_type
    return trace.text.splitlines()[0] if trace.text else ""
