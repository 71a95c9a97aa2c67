"""Error detectors: real lines (from the sources cited in parsers/errors.py and FORMATS.md
section 4, or from the fixture runs) map to their taxonomy category; near-misses do not."""

from __future__ import annotations

import re

import pytest

from gangscope.parsers.errors import CATEGORIES, LINE_RULES, PREFILTER, ErrorDetector, classify_trace, rule_role
from gangscope.parsers.lines import Line
from gangscope.parsers.records import ChainLink, Frame, TraceRecord

T = "2026-11-30T04:13:57.745803541Z"


def detect(text: str):
    if not re.search(PREFILTER, text):
        return None
    consumed, records = ErrorDetector().feed(Line(T, 0, text))
    assert consumed is False
    return records[0] if records else None


@pytest.mark.parametrize(
    "line, category, pattern",
    [
        ("[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: "
         "WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 "
         "milliseconds before timing out.", "nccl_timeout", "nccl_watchdog"),
        ("[PG ID 0 PG GUID 0(default_pg) Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=57, "
         "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.",
         "nccl_timeout", "nccl_watchdog"),
        ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting "
         "5000ms for recv operation to complete", "nccl_timeout", "gloo_timeout"),
        ("E1130 04:13:57.744000 16791 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -9) "
         "local_rank: 1 (pid: 16901) of binary: /opt/venv/bin/python3", "host_oom", "agent_failed"),
        ("E1130 04:13:44.468000 16516 torch/distributed/elastic/multiprocessing/api.py:1002] failed (exitcode: -11) "
         "local_rank: 0 (pid: 16565) of binary: /opt/venv/bin/python3", "unknown", "agent_failed"),
        ("  traceback : Signal 9 (SIGKILL) received by PID 16901", "host_oom", "box_signal"),
        ("W1130 04:17:38.859000 21760 torch/distributed/elastic/agent/server/api.py:752] Received 15 death signal, "
         "shutting down workers", "preempted", "agent_death_signal"),
        ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 21760 got signal: 15", "preempted",
         "signal_exception"),
        ("node-7:4021:4102 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.3.9<40123> "
         "with status=12 opcode=0 len=0 vendor err 129 (Recv)", "nccl_error", "nccl_ib_completion"),
        ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
         "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3", "nccl_error", "nccl_error"),
        ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:561] Connection closed by peer "
         "[127.0.0.1]:21380. This is typically caused by a remote worker crashing.", "nccl_error", "gloo_closed"),
        ("NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.", "gpu_hardware", "xid"),
        ("NVRM: Xid (PCI:0000:18:00): 13, pid=5678, name=python, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): "
         "Out Of Range Address", "cuda_error", "xid_application"),
        ("RuntimeError: CUDA error: uncorrectable ECC error encountered", "gpu_hardware", "cuda_ecc"),
        ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda_error", "cuda_error"),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB "
         "of which 1.21 GiB is free.", "cuda_oom", "cuda_oom"),
        ("Memory cgroup out of memory: Killed process 48122 (python) total-vm:92345672kB, anon-rss:61234560kB, "
         "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:123456kB oom_score_adj:0", "host_oom", "kernel_oom_kill"),
        ("Last State: Terminated  Reason: OOMKilled  Exit Code: 137", "host_oom", "oom_killed"),
        ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
         "dataloader_error", "dataloader_worker_signal"),
        ("OSError: [Errno 28] No space left on device: '/mnt/ckpt/step_1200/model.pt'", "storage_io", "errno_storage"),
        ("LustreError: 11-0: lustre-OST0004-osc-ffff9a0c: operation ost_write to node 10.2.0.14@tcp failed: rc = -107",
         "storage_io", "lustre"),
        ("botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the PutObject operation (reached max "
         "retries: 4): Please reduce your request rate.", "storage_io", "s3_client_error"),
        ("RuntimeError: [enforce fail at inline_container.cc:603] . PytorchStreamWriter failed writing file "
         "data/12: file write failed", "checkpoint_error", "stream_writer"),
        ("RuntimeError: Error(s) in loading state_dict for GPT:", "checkpoint_error", "state_dict"),
        ("safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge", "checkpoint_error",
         "safetensors"),
        ("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0", "nan_loss", "overflow_apex"),
        ("[2025-01-25 17:39:32,823] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
         "Attempted loss scale: 65536, reducing to 32768", "nan_loss", "overflow_deepspeed"),
        ("Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.", "nan_loss",
         "loss_scale_minimum"),
        ("Loss is NaN, stopping training", "nan_loss", "loss_is_nan"),
        ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/4 clients joined.",
         "rendezvous_error", "store_clients"),
        ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", "rendezvous_error", "rendezvous_exception"),
        ("Fatal Python error: Segmentation fault", "unknown", "fatal_signal"),
    ],
)  # fmt: skip
def test_real_line_maps_to_its_category(line, category, pattern):
    error = detect(line)
    assert error is not None
    assert (error.category, error.pattern) == (category, pattern)
    assert error.line == line
    assert error.time == T


@pytest.mark.parametrize(
    "line",
    [
        "epoch 1/2 step 7/10 loss 0.2345 lr 3e-4",
        "{'loss': 0.5514, 'grad_norm': 60.71231007728378, 'learning_rate': 4.366166304940326e-06, 'epoch': 0.09}",
        "node-1:12345:12345 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
        "W1130 04:13:47.283000 16791 torch/distributed/run.py:982] Setting OMP_NUM_THREADS environment variable",
        "iteration 100/5000 | lm loss: 7.01E+00 | loss scale: 65536.0 | number of nan iterations: 0 |",
        "Validating checkpoint /mnt/ckpt/step_1200: no error found",
        "CUDA available: True, device count: 8",
        "The node 'node-0_17_0' has joined round 0 of the rendezvous 'job' as rank 0 in a world of size 4.",
        "Process group initialized: world size 8",
    ],
)
def test_near_miss_is_not_an_error(line):
    assert detect(line) is None


def test_warning_rules_are_not_causes():
    assert rule_role("nccl_warn") == "warning"
    assert rule_role("agent_closing") == "warning"
    assert rule_role("agent_failed") == "summary"
    assert rule_role("trace") == "cause"


def test_every_rule_names_a_taxonomy_category_and_a_source():
    for rule in LINE_RULES:
        assert rule.category in CATEGORIES, rule.name
        assert rule.source.strip(), rule.name


def test_prefilter_keys_start_with_a_capital_or_a_rare_sign():
    # Lower-case first characters defeat re's first-character skip (a 30x slower hot path).
    # ("|" starts Megatron's "| grad norm: nan": a sign only table-like lines hold; ":" and "="
    # start a printed loss "loss: nan" / "loss=nan" and argparse's "prog: error: ": the re scan of
    # the fixtures' 14,440 lines went 0.034 -> 0.05 s CPU with them, a lower-case key costs 30x.
    # "{" starts the Trainer's final "{'train_runtime': ..." dict: once or twice a dict/JSON line,
    # ~0.3 us a line of such logs where a quote cost 1.5 us. "│", U+2502, starts rich's traceback box lines: a sign
    # only box-drawn lines hold.)
    keys = [k.replace("\\", "") for k in re.split(r"(?<!\\)\|", PREFILTER)]
    # [h24c] Or a letter of a script with no case (CJK, Hangul: shell_job_signal_l10n's "已杀死", "죽었음"): only text in
    # that script holds it, as only box-drawn lines hold "│".
    assert all(k[0].isupper() or k[0] in "([{|:=│" or (not k[0].isascii() and k[0].isalpha() and not k[0].islower())
               for k in keys)


def test_watchdog_message_keeps_the_operation():
    error = detect("[rank3]:[E1218 20:27:21.4 ProcessGroupNCCL.cpp:629] [Rank 3] Watchdog caught collective operation "
                   "timeout: WorkNCCL(SeqNum=64214, OpType=ALLGATHER, NumelIn=1, NumelOut=32, Timeout(ms)=600000)")
    assert error.message.startswith("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=64214, OpType=ALLGATHER")


def _trace(exc_type, message, frames=(), chain=None, **kw) -> TraceRecord:
    frames = [Frame(f, 1, fn) for f, fn in frames]
    return TraceRecord(exception_type=exc_type, message=message, frames=frames,
                       chain=chain or [ChainLink(exc_type, message, frames)], **kw)  # fmt: skip


def test_cuda_oom_trace_is_cuda_oom():
    verdict = classify_trace(_trace("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3"))
    assert verdict == ("cuda_oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3")


def test_historic_cuda_oom_wording_is_cuda_oom():
    msg = "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.21 GiB already allocated)"
    assert classify_trace(_trace("RuntimeError", msg))[0] == "cuda_oom"


def test_dataloader_worker_killed_is_host_oom():
    trace = _trace("RuntimeError", "DataLoader worker (pid 22366) is killed by signal: Killed. ")
    assert classify_trace(trace)[0] == "host_oom"


def test_dataloader_worker_segfault_is_dataloader_error():
    trace = _trace("RuntimeError", "DataLoader worker (pid 6303) is killed by signal: Segmentation fault. ")
    assert classify_trace(trace)[0] == "dataloader_error"


def test_key_error_in_user_code_is_python_exception():
    trace = _trace("KeyError", "'target_column'", frames=[("/workspace/train.py", "lookup_target_column")])
    assert classify_trace(trace) == ("python_exception", "KeyError: 'target_column'")


def test_missing_checkpoint_directory_is_checkpoint_error():
    trace = _trace("RuntimeError", "Parent directory /mnt/checkpoints/run-17 does not exist.",
                   frames=[("/workspace/train.py", "save"), ("/venv/lib/python3.11/site-packages/torch/serialization.py", "save")])  # fmt: skip
    assert classify_trace(trace)[0] == "checkpoint_error"


def test_permission_error_inside_torch_save_is_checkpoint_error():
    trace = _trace("PermissionError", "[Errno 13] Permission denied: '/ckpt/model.pt'",
                   frames=[("/workspace/train.py", "main"), ("/venv/site-packages/torch/serialization.py", "_open_file")])  # fmt: skip
    assert classify_trace(trace)[0] == "checkpoint_error"


def test_disk_full_during_save_is_storage_io():
    trace = _trace("OSError", "[Errno 28] No space left on device",
                   frames=[("/venv/site-packages/torch/serialization.py", "save")])  # fmt: skip
    assert classify_trace(trace)[0] == "storage_io"


def test_nan_guard_is_nan_loss():
    trace = _trace("FloatingPointError", "loss is nan at epoch 1 step 7, stopping training")
    assert classify_trace(trace)[0] == "nan_loss"


def test_gloo_peer_loss_is_nccl_error():
    msg = "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:545] Read error [127.0.0.1]:32647: Connection reset by peer."
    assert classify_trace(_trace("RuntimeError", msg))[0] == "nccl_error"


def test_signal_exception_is_preempted():
    trace = _trace("torch.distributed.elastic.multiprocessing.api.SignalException", "Process 21760 got signal: 15")
    assert classify_trace(trace)[0] == "preempted"


def test_chained_python_exception_names_the_direct_cause():
    chain = [
        ChainLink("ValueError", "could not convert string to float: '3e-4 # warmup'", [], "context"),
        ChainLink("KeyError", "'fallback_lr'", [], "cause"),
        ChainLink("RuntimeError", "could not build the learning-rate schedule from the run config", [], None),
    ]
    trace = _trace("RuntimeError", chain[-1].message, chain=chain)
    assert classify_trace(trace) == ("python_exception", "KeyError: 'fallback_lr'")


BOX = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-30_04:13:57
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 16898)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 16898
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-30_04:13:57
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 16901)  (SIGKILL)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 16901
============================================================"""


def test_child_failed_box_takes_its_root_cause_entry():
    trace = TraceRecord(exception_type="torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
                        message="", text=BOX, form="child_failed")  # fmt: skip
    category, message = classify_trace(trace)
    assert category == "host_oom"
    assert "rank 1" in message


def test_faulthandler_dump_is_unknown_crash():
    trace = TraceRecord(exception_type="Segmentation fault", message="Segmentation fault", form="faulthandler")
    assert classify_trace(trace) == ("unknown", "Fatal Python error: Segmentation fault")


# Batch 4 of fixtures/eval (issue 16): lines whose sources are cited in LINE_RULES.
@pytest.mark.parametrize(
    ("text", "category", "rule", "rank"),
    [
        ("Process 3 exit with status code 137.", "host_oom", "horovod_exit", 3),
        ("Process 1 exit with status code 1.", "unknown", "horovod_exit", 1),
        ("(trainer pid=4411) cannot allocate memory for thread-local data: ABORT", "host_oom", "glibc_tls_oom", None),
        ("frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
         "std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f00aa in /opt/venv/lib/libtorch_cuda.so)", "nccl_timeout", "watchdog_timeout_frame", None),
    ],
)
def test_launcher_and_runtime_lines_of_batch_four(text, category, rule, rank):
    _, records = ErrorDetector().feed(Line(text=text, seq=0, time=None))
    assert [(r.category, r.pattern, r.rank) for r in records] == [(category, rule, rank)]
    assert rule_role(rule) == ("summary" if rule == "horovod_exit" else "cause")
