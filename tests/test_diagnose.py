"""Diagnosis as a specification: the root cause and the first failing rank, not the loudest symptom."""

from __future__ import annotations

from dataclasses import dataclass, field

from gangscope.parsers.records import ErrorRecord, SignalRecord, StepRecord, TraceRecord, from_dict, to_dict
from gangscope.pipeline.diagnose.attempt import diagnose

JOB = "team-a/llama"


def ts(seconds: float) -> str:
    minutes, sec = divmod(seconds, 60)
    return f"2026-11-30T04:{int(minutes):02d}:{sec:09.6f}Z"


def error(rank, t, category, line, pattern, pod=None, trace_id=None, message=None, **kw) -> ErrorRecord:
    return ErrorRecord(id=f"e-{rank}-{t}-{pattern}", job=JOB, attempt=1, namespace="team-a",
                       pod=pod or f"llama-worker-{(rank or 0) // 8}", node=f"ip-10-1-2-{(rank or 0) // 8}",
                       rank=rank, time=ts(t), category=category, line=line, message=message or line,
                       pattern=pattern, trace_id=trace_id, **kw)  # fmt: skip


def watchdog(rank, t):
    line = (f"[E1130 04:20:00.000000 ProcessGroupNCCL.cpp:629] [Rank {rank}] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=4711, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600081 milliseconds "
            "before timing out.")  # fmt: skip
    return error(rank, t, "nccl_timeout", line, "nccl_watchdog")


def step(rank, n, t, loss=1.5, total=None):
    return StepRecord(id=f"s-{rank}-{n}", job=JOB, attempt=1, namespace="team-a", pod=f"llama-worker-{rank // 8}",
                      rank=rank, time=ts(t), step=n, loss=loss, total_steps=total)  # fmt: skip


def oom_on_rank_3_then_511_timeouts():
    oom_line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB"
    trace = TraceRecord(id="t-3", job=JOB, attempt=1, namespace="team-a", pod="llama-worker-0", rank=3, time=ts(10),
                        exception_type="torch.OutOfMemoryError", message=oom_line.split(": ", 1)[1],
                        text="Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n" + oom_line)  # fmt: skip
    oom = error(3, 10, "cuda_oom", oom_line, "trace", trace_id="t-3")
    steps = [step(r, 1200, 5) for r in range(512)]
    timeouts = [watchdog(r, 610 + r / 100) for r in range(512) if r != 3]
    return [trace, oom, *steps, *timeouts]


def test_oom_on_one_rank_is_the_root_and_the_timeouts_are_symptoms():
    [d] = diagnose(oom_on_rank_3_then_511_timeouts())
    assert (d.outcome, d.category, d.exception_type) == ("failed", "cuda_oom", "torch.OutOfMemoryError")
    assert d.first_failure["rank"] == 3
    assert d.symptoms[0]["category"] == "nccl_timeout" and len(d.symptoms[0]["ranks"]) == 511
    assert "rank 3" in d.summary and "out of GPU memory at step 1200" in d.summary and "2.00 GiB" in d.summary
    assert "511 ranks then" in d.summary


def test_evidence_quotes_the_root_line_with_its_record_id():
    [d] = diagnose(oom_on_rank_3_then_511_timeouts())
    assert d.evidence[0]["record_id"] == "e-3-10-trace"
    assert d.evidence[0]["text"].startswith("torch.OutOfMemoryError: CUDA out of memory")
    assert {"record_id", "kind", "pod", "rank", "time", "text"} <= set(d.evidence[0])


def test_records_decoded_from_json_give_the_same_diagnosis():
    records = oom_on_rank_3_then_511_timeouts()
    from_memory = diagnose(records)
    from_json = diagnose([to_dict(r) for r in records])
    assert [to_dict(d) for d in from_json] == [to_dict(d) for d in from_memory]
    assert from_dict(to_dict(from_json[0])).category == "cuda_oom"


def test_an_effect_printed_before_its_cause_does_not_win():
    # The killed rank prints nothing; peers see the closed socket before its launcher reports the SIGKILL.
    peer = error(2, 57.571, "nccl_error", "RuntimeError: [gloo/transport/tcp/pair.cc:545] Read error [127.0.0.1]:32647: "
                 "Connection reset by peer.", "trace", pod="w-1")  # fmt: skip
    agent = error(None, 57.745, "host_oom", "E1130 04:13:57.744000 16791 torch/distributed/elastic/multiprocessing/"
                  "api.py:1002] failed (exitcode: -9) local_rank: 1 (pid: 16901) of binary: /usr/bin/python3",
                  "agent_failed", pod="w-0")  # fmt: skip
    steps = [step(0, 4, 50), step(1, 4, 50)]
    steps[0].pod = steps[1].pod = "w-0"
    steps[0].local_rank, steps[1].local_rank = 0, 1
    [d] = diagnose([peer, agent, *steps])
    assert d.category == "host_oom"
    assert d.first_failure["rank"] == 1
    assert d.symptoms == [{"category": "nccl_error", "ranks": [2], "pods": ["w-1"], "count": 1}]


def test_silent_rank_is_the_suspect_of_a_collective_timeout():
    records = [step(r, 99, 5) for r in range(8)] + [watchdog(r, 610 + r) for r in range(8) if r != 5]
    [d] = diagnose(records)
    assert d.category == "nccl_timeout"
    assert d.first_failure["rank"] == 5
    assert "rank 5" in d.summary and "suspect" in d.summary and "ALLREDUCE" in d.summary


def test_timeouts_on_every_rank_name_no_suspect():
    records = [step(r, 99, 5) for r in range(4)] + [watchdog(r, 610 + r) for r in range(4)]
    [d] = diagnose(records)
    assert d.category == "nccl_timeout"
    assert d.first_failure["rank"] == 0
    assert "suspect" not in d.summary


def test_sigterm_to_siblings_after_a_failure_is_a_symptom():
    boom = error(1, 10, "python_exception", "KeyError: 'target_column'", "trace", pod="w-0")
    term = error(0, 11, "preempted", "torch.distributed.elastic.multiprocessing.api.SignalException: Process 1 got signal: 15",
                 "trace", pod="w-0")  # fmt: skip
    [d] = diagnose([boom, term])
    assert (d.category, d.first_failure["rank"]) == ("python_exception", 1)
    assert d.symptoms[0]["category"] == "preempted"


def test_sigterm_received_by_a_launcher_explains_its_peers_lost_connection():
    agent = error(None, 38.859, "preempted", "W1130 04:17:38.859000 21760 torch/distributed/elastic/agent/server/api.py:752] "
                  "Received 15 death signal, shutting down workers", "agent_death_signal", pod="w-1")  # fmt: skip
    peer = error(0, 38.9, "nccl_error", "RuntimeError: [gloo/transport/tcp/pair.cc:561] Connection closed by peer [10.0.0.2]:1765.",
                 "trace", pod="w-0")  # fmt: skip
    [d] = diagnose([peer, agent])
    assert (d.category, d.first_failure["pod"], d.first_failure["rank"]) == ("preempted", "w-1", None)
    assert d.symptoms[0]["category"] == "nccl_error"


def test_warnings_alone_are_not_a_failure():
    warn = error(0, 10, "nccl_error", "node-1:1:2 [0] transport/net_socket.cc:46 NCCL WARN Call to bind failed", "nccl_warn")
    [d] = diagnose([warn, step(0, 10, 20, total=10)])
    assert (d.outcome, d.category) == ("succeeded", "success")


def test_clean_end_is_success():
    [d] = diagnose([step(r, n, n, total=100) for r in range(2) for n in (50, 100)])
    assert (d.outcome, d.category, d.first_failure) == ("succeeded", "success", None)
    assert "100/100" in d.summary
    assert d.confidence >= 0.9


def test_stall_without_error_is_a_hang():
    stall = SignalRecord(id="sig", job=JOB, attempt=1, namespace="team-a", pod="llama-worker-0", rank=2, time=ts(300),
                         signal="stall", step=41, message="no step for 240 s")  # fmt: skip
    [d] = diagnose([step(2, 41, 60), stall])
    assert d.category == "hang"
    assert d.first_failure["rank"] == 2
    assert "no error" in d.summary


def test_a_stall_the_rank_recovered_from_is_no_hang():
    # fixtures/runs/straggler: every rank waits 35 s at step 14, then goes on to step 30 of 30
    stall = SignalRecord(id="sig", job=JOB, attempt=1, namespace="team-a", pod="llama-worker-0", rank=2, time=ts(300),
                         signal="stall", step=41, message="no new step for 240 s after step 41 before step 42")  # fmt: skip
    [d] = diagnose([step(2, 41, 60), stall, step(2, 42, 300), step(2, 100, 400, total=100)])
    assert (d.outcome, d.category) == ("succeeded", "success")


@dataclass
class Attempt:  # the shape of pipeline/correlate/model.py's Attempt, duck-typed by diagnose
    job: str
    number: int
    start: str | None = None
    end: str | None = None
    end_reason: str | None = None
    event_ids: list[str] = field(default_factory=list)


def test_failed_attempt_without_evidence_is_unknown():
    attempts = [Attempt(JOB, 1, ts(0), ts(100), "Failed", ["ev-1"])]
    [d] = diagnose([step(0, 3, 5)], attempts)
    assert (d.outcome, d.category, d.first_failure) == ("failed", "unknown", None)
    assert d.events == ["ev-1"]
    assert d.confidence <= 0.3


def test_attempt_evicted_before_pods_ready_is_pods_ready_timeout():
    attempts = [Attempt(JOB, 2, ts(0), ts(600), "Evicted: PodsReadyTimeout", ["ev-7"])]
    [d] = diagnose([], attempts)
    assert (d.attempt, d.outcome, d.category) == (2, "evicted", "pods_ready_timeout")


def test_each_attempt_gets_its_own_diagnosis():
    first = error(1, 10, "cuda_oom", "torch.OutOfMemoryError: CUDA out of memory.", "trace")
    second = step(0, 100, 900, total=100)
    second.attempt = 2
    ds = diagnose([first, second])
    assert [(d.attempt, d.category) for d in ds] == [(1, "cuda_oom"), (2, "success")]


def test_a_child_of_torch_multiprocessing_spawn_is_named_by_its_process_index():
    from pathlib import Path

    from gangscope.pipeline.run import replay

    run = Path(__file__).parent.parent / "fixtures" / "runs" / "mp_spawn"
    result = replay.run(replay.ReplayOptions(paths=[str(run)]), lambda batch: None)
    (diagnosis,) = result.diagnoses
    assert (diagnosis.category, diagnosis.first_failure["rank"]) == ("python_exception", 1)
