"""Rules from batch h20a of issue 16 (fixtures/eval README, "Batch h20a"): a blind draw of communication and start-up
failures shaped like the judged set. The classes of mistake it showed, each read from the source that prints the text
(cited in parsers/errors.py, the blocks "h20a", and in pipeline/diagnose/rules.py):
- torch's own NCCL bindings raise "NCCL Error <code>: <ncclGetErrorString>" (torch/csrc/cuda/nccl.cpp throw_nccl_error),
  as a RuntimeError or through terminate's "what():": an NCCL failure, not a bug of the program;
- init_process_group's store-based barrier timeout (distributed_c10d.py _store_based_barrier) is a start-up rendezvous;
- Ray's "The actor is dead because its node has died." (gcs_actor_manager.cc GenNodeDiedCause) is the node, before the
  RayActorError's type says only that a worker died;
- Ray's actor prefix pasted without its colour codes' ESC byte ("[36m(Worker pid=N)[0m ") is still Ray's prefix;
- torch elastic's "has failed to shutdown the rendezvous ... due to an error of type X" names the traceback printed next;
- a bare native stack of a rank is explained by that rank's own collective timeout, printed before or after it.
Values in the texts are ours."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from gangscope.parsers import errors
from gangscope.parsers.lines import strip_rank_prefixes


@pytest.mark.parametrize(
    "exc_type, message, category",
    [
        ("RuntimeError", "NCCL Error 2: unhandled system error", "nccl_error"),
        ("RuntimeError", "NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)", "nccl_error"),
        ("", "NCCL Error 1: unhandled cuda error", "nccl_error"),
        ("RuntimeError", "NCCL Error 3: internal error", "nccl_error"),
        ("RuntimeError", "Timed out initializing process group in store based barrier on rank: 3, for key: store_based_barrier_key:1 "
         "(world_size=8, worker_count=5, timeout=0:30:00)", "rendezvous_error"),
        ("torch.distributed.DistStoreError", "Timed out initializing process group in store based barrier on rank 2, for key: "
         "store_based_barrier_key:2 (world_size=4, num_workers_joined=3, timeout=0:10:00)", "rendezvous_error"),
        ("ray.exceptions.RayActorError", "The actor died unexpectedly before finishing this task.\n\tclass_name: RayTrainWorker\n"
         "The actor is dead because its node has died. Node Id: 5d0a", "node_failure"),
        # near misses: a worker that died for a reason Ray does not know, a node Ray knows was preempted, other words
        ("ray.exceptions.RayActorError", "The actor died unexpectedly before finishing this task.\n\tclass_name: RayTrainWorker\n"
         "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR", "unknown"),
        ("ray.exceptions.ActorDiedError", "The actor died unexpectedly before finishing this task.\nThe actor is dead because its node "
         "has died. Node Id: 9c1e\n\tthe actor's node was preempted: spot reclaim", "preempted"),  # not node_failure: rule ray_node_preempted
        ("RuntimeError", "NCCL Error count: 0", "python_exception"),
    ],
)  # fmt: skip
def test_exceptions_and_their_near_misses(exc_type, message, category):
    assert errors.exception_category(exc_type, message) == category


@pytest.mark.parametrize(
    "line, text, rank",
    [
        ("[36m(FSDPPolicyWorkerBase pid=5121)[0m frame #1: c10d::x", "frame #1: c10d::x", None),
        ("[36m(WorkerDict pid=77, ip=10.1.2.3)[0m [rank5]:[E1 x] y", "[E1 x] y", 5),
        ("\x1b[36m(WorkerDict pid=77)\x1b[0m hello", "hello", None),
        # near misses: brackets that are no colour code before a Ray prefix
        ("[2024-01-01 10:00:00] hello", "[2024-01-01 10:00:00] hello", None),
        ("[36] (pid=3) hello", "[36] (pid=3) hello", None),
    ],
)  # fmt: skip
def test_ray_prefix_without_its_escape_byte(line, text, rank):
    rest, r, _ = strip_rank_prefixes(line)
    assert (rest, r) == (text, rank)


RAY_FRAMES = "".join(f"[36m(FSDPPolicyWorkerBase pid=5121)[0m frame #{i}: {fn} (0x7b91c3a4{i:04x} in /opt/torch/lib/libtorch_cuda.so)\n"
                     for i, fn in [(1, "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
                                       "std::ratio<1l, 1000l> > >) + 0x247"), (2, "c10d::ProcessGroupNCCL::Watchdog::runLoop() + 0x1591")])
SHUTDOWN = ("INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group\n"
            "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'w-1_9_0' has failed to shutdown the rendezvous "
            "'none' due to an error of type RendezvousConnectionError.\n"
            "Traceback (most recent call last):\n"
            '  File "/opt/conda/lib/python3.10/site-packages/torch/distribute\n')  # fmt: skip
# near miss: a cut traceback with no such line before it stays unknown
CUT_ALONE = ("INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group\n"
             "Traceback (most recent call last):\n"
             '  File "/opt/conda/lib/python3.10/site-packages/torch/distribute\n')  # fmt: skip
W = "(WorkerDict pid=4410, ip=10.9.8.7) "
STACK_THEN_TIMEOUT = (W + "/usr/lib/x86_64-linux-gnu/libc.so.6(+0x94ac3) [0x7f1c2a6fdac3]\n"
                      + W + "/usr/lib/x86_64-linux-gnu/libc.so.6(+0x126850) [0x7f1c2a78f850]\n"
                      + W + "[rank12]:[E311 02:17:48.409152377 ProcessGroupNCCL.cpp:629] [Rank 12] Watchdog caught collective operation "
                      "timeout: WorkNCCL(SeqNum=913, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600041 "
                      "milliseconds before timing out.\n")  # fmt: skip
# near miss: a stack alone stays an unknown crash
STACK_ALONE = W + "/usr/lib/x86_64-linux-gnu/libc.so.6(+0x94ac3) [0x7f1c2a6fdac3]\n"


@pytest.mark.parametrize(
    "text, category",
    [(RAY_FRAMES, "nccl_timeout"), (SHUTDOWN, "rendezvous_error"), (CUT_ALONE, "unknown"), (STACK_THEN_TIMEOUT, "nccl_timeout"),
     (STACK_ALONE, "unknown"),
     ("Evaluating:   0%|          | 0/12 [00:00<?, ?it/s]terminate called after throwing an instance of 'std::runtime_error'\n"
      "  what():  NCCL Error 1: unhandled cuda error\n", "nccl_error")],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
