"""Batch h16c (issue 16): communication failures and which line is the cause.

- NCCL's CUDACHECK reports a failed CUDA call as `NCCL WARN Cuda failure '<cudaGetErrorString>'` and returns
  ncclUnhandledCudaError (NVIDIA/nccl src/include/checks.h): 'out of memory' is the GPU memory running out under NCCL,
  the cause of the "unhandled cuda error" that follows (cuda_oom); other CUDA failures stay NCCL warnings.
- Hydra writes "Error executing job with overrides: [...]" before it re-raises the task's exception
  (facebookresearch/hydra hydra/core/utils.py JobReturn.return_value): a failure whose why may be elsewhere.
- A binding that raises an NCCL call's result as "<call> failed: " + ncclGetErrorString (Horovod's
  NCCLContext::ErrorCheck) is an NCCL error, whatever class carries it.
- ProcessGroupNCCL aborts the communicators after a watchdog timeout: NCCL errors reported after the timeout are its
  effects (nccl_timeout); a lost peer before any timeout still explains the timeouts (nccl_error).
Values are ours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gangscope.parsers.errors import PREFILTER, SUMMARY, WARNING, exception_category, rule_role
from diagnose_in_process import the_diagnosis
from rule_reference import found

DEV = Path(__file__).resolve().parent.parent / "fixtures" / "eval" / "dev"




@pytest.mark.parametrize("line, expected", [
    ("node-3:81422:81422 [0] enqueue.cc:1085 NCCL WARN Cuda failure 'out of memory'", ("nccl_cuda_oom", "cuda_oom")),
    ("gpu-b07:7712:7790 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'", ("nccl_cuda_oom", "cuda_oom")),
    ("gpu-b07:7712:7790 [3] include/alloc.h:103 NCCL WARN Cuda failure 2 'out of memory'", ("nccl_cuda_oom", "cuda_oom")),
    ("Error executing job with overrides: ['trainer.nnodes=2', 'data.train_batch_size=64']", ("hydra_job_failed", "unknown")),
])
def test_lines(line, expected):
    assert re.search(PREFILTER, line)
    assert found(line) == expected


def test_a_cuda_oom_under_nccl_is_a_cause_and_hydra_a_summary():
    assert rule_role("nccl_cuda_oom") not in (WARNING, SUMMARY)
    assert rule_role("hydra_job_failed") == SUMMARY


@pytest.mark.parametrize("line", [
    "gpu-a1:61804:61838 [2] transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization error'",
    "g2:318:340 [0] include/alloc.h:102 NCCL WARN Cuda failure 1 'invalid argument'",
])
def test_other_cuda_failures_stay_nccl_warnings(line):
    assert found(line) == ("nccl_warn", "nccl_error")
    assert rule_role("nccl_warn") == WARNING


@pytest.mark.parametrize("exc_type, message, expected", [
    ("tensorflow.python.framework.errors_impl.UnknownError", " ncclCommInitRank failed: unhandled system error", "nccl_error"),
    ("RuntimeError", "ncclCommInitRank failed: unhandled cuda error (run with NCCL_DEBUG=INFO for details)", "nccl_error"),
    ("RuntimeError", "ncclAllReduce failed: remote process exited or there was a network error", "nccl_error"),
    ("RuntimeError", "Request failed: internal error", "python_exception"),
    ("ValueError", "lookup failed: invalid argument 'x'", "python_exception"),
    # start-up rendezvous failures with no rendezvous frame in the copy
    ("RuntimeError", "Could not find 'RANK' in the torch environment, visit https://www.colossalai.org/ for more information on "
                     "launching with torch", "rendezvous_error"),
    ("ValueError", "Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR expected, but "
                   "not set", "rendezvous_error"),
    ("RuntimeError", "Address already in use", "rendezvous_error"),
    ("OSError", "[Errno 98] Address already in use", "python_exception"),
])
def test_nccl_call_failed(exc_type, message, expected):
    assert exception_category(exc_type, message) == expected


TIMEOUT = ("[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=7753, OpType=ALLREDUCE, NumelIn=5449, NumelOut=5449, Timeout(ms)=600000) ran for 600061 milliseconds "
           "before timing out.\n")
DETECTED = ("[rank1]:[E1206 18:44:15.101234567 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 1] Exception (either an error or timeout) "
            "detected by watchdog at work: 7753, last enqueued NCCL work: 7755, last completed NCCL work: 7752.\n")
REMOTE = ("[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote "
          "process exited or there was a network error, NCCL version 2.21.5\n"
          "[rank1]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\n")
CLOSED = "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.4.0.3]:4312\n"


def test_nccl_errors_after_a_watchdog_timeout_are_its_effects(tmp_path):
    d = the_diagnosis(tmp_path, TIMEOUT + DETECTED + REMOTE)
    assert (d.category, d.first_failure["rank"]) == ("nccl_timeout", 0)


def test_a_lost_peer_before_the_timeout_still_explains_it(tmp_path):
    d = the_diagnosis(tmp_path, DETECTED + CLOSED + TIMEOUT)
    assert d.category == "nccl_error"


def test_the_ambiguous_watchdog_line_explains_nothing(tmp_path):
    # "either an error or timeout" before an NCCL error: the error is the report, as before
    d = the_diagnosis(tmp_path, DETECTED + REMOTE)
    assert d.category == "nccl_error"


def test_an_oom_under_nccl_is_cuda_oom(tmp_path):
    text = ("w-0:2210:2275 [1] NCCL INFO Channel 00 : 1[1b000] -> 0[1a000] via P2P/IPC\n"
            "w-0:2210:2275 [1] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'\n"
            "w-0:2210:2275 [1] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes\n"
            "w-0:2210:2275 [1] NCCL INFO transport/p2p.cc:204 -> 1\n"
            "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, "
            "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\n"
            "[rank1]: ncclUnhandledCudaError: Call to CUDA function failed.\n")
    assert the_diagnosis(tmp_path, text).category == "cuda_oom"


@pytest.mark.parametrize("fixture, category", [("535", "cuda_oom"), ("540", "unknown"), ("543", "cuda_oom")])
def test_dev_batch(tmp_path, fixture, category):
    assert the_diagnosis(tmp_path, (DEV / f"{fixture}.log").read_text(encoding="utf-8")).category == category
