"""Rules from batch h21c of issue 16 (fixtures/eval README, "Batch h21c"): a second blind draw of the judged mix.

Three classes of its misses show their cause in the log, each printed by a library whose source is cited in
parsers/errors.py (the blocks marked h21c): Ray's memory monitor's detail line ("Memory on the node (IP: ...) where the
task (...) was running was ...", host memory), the pre-1.10 Kubernetes scheduler's FailedScheduling row ("No nodes are
available that match all of the following predicates:: ...", a gang never scheduled) and PaddlePaddle's legacy CUDA check
("Check failed: cudaSuccess == cudaStat (0 vs. N) Cuda Error: <cudaGetErrorString>"). The lines below are rebuilt from
the sources' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of

RAY_TASK = ("Memory on the node (IP: 10.31.4.17, ID: 7c0e2a91d4b8f6035e1a9c27b4d60f8e3a5c1b9d7e2f40a6c8b13d52) where the "
            "task (task ID: 5d1e8a0c7b3f92e6a4c0d81b5f7e3a9c2d6b4e0f01000000, name=train_worker, pid=40417, memory used="
            "61.03GB) was running was 121.77GB / 128.00GB (0.951328), which exceeds the memory usage threshold of 0.95. "
            "Ray killed this worker (ID: 93b0c5e1f7a2d84c6e0b3f91a5d7c2e8b4f6a0d3c9e1b5f7a2d8c4e6) because it was the "
            "most recently scheduled task")  # fmt: skip
RAY_LEASE = ("(raylet) Memory on the node (IP: 10.31.4.17, ID: 7c0e2a91d4b8f6035e1a9c27b4d60f8e3a5c1b9d7e2f40a6c8b13d52) "
             "where the lease (lease ID: 0c4e8a2f6b1d9e3c7a5f0b2d4e6a8c1f3b5d7e9a0c2e4f6a8b1d3c5e7f9a0b2c, name=WorkerDict."
             "__init__, pid=40417, memory used=61.03GB) was running was 121.77GB / 128.00GB (0.951328)")  # fmt: skip
RAY_POLICY = ("1 worker(s) were killed due to the node running low on memory. Memory on the node (IP: 10.31.4.17, ID: "
              "7c0e2a91d4b8f6035e1a9c27b4d60f8e3a5c1b9d7e2f40a6c8b13d52) was 121.77GB / 128.00GB (0.951328), which exceeds "
              "the memory usage threshold of 0.950000")  # fmt: skip
RAY_OLD = ("Memory on the node (IP: 10.31.4.17, ID: 7c0e2a91d4b8f6035e1a9c27b4d60f8e3a5c1b9d7e2f40a6c8b13d52) where the "
           "task was running was 32.40GB / 33.28GB (0.973558), which exceeds the memory usage threshold of 0.95.")  # fmt: skip

K8S_17 = ("  4m\t\t9s\t\t31\tdefault-scheduler\t\t\tWarning\t\tFailedScheduling\tNo nodes are available that match all of "
          "the following predicates:: Insufficient nvidia.com/gpu (4).")  # fmt: skip
K8S_19 = ("  Warning  FailedScheduling  12s (x25 over 6m)  default-scheduler  No nodes are available that match all of the "
          "predicates: Insufficient cpu (2), Insufficient memory (1).")  # fmt: skip

PADDLE_F = ("F0611 04:17:52.381904 22615 hl_cuda_device.cc:646] Check failed: cudaSuccess == cudaStat (0 vs. 77) Cuda "
            "Error: an illegal memory access was encountered")  # fmt: skip


@pytest.mark.parametrize(
    "line, category",
    [
        (RAY_TASK, "host_oom"),
        (RAY_LEASE, "host_oom"),
        (RAY_POLICY, "host_oom"),
        (RAY_OLD, "host_oom"),
        # a copy cut inside the task's parenthesis (as the batch's sample)
        ("Memory on the node (IP: 10.31.4.17, ID: 7c0e2a91d4b8) where the task (task ID: 5d1e8a0c, name=head, pid=40417, "
         "memory used", "host_oom"),
        (K8S_17, "pods_ready_timeout"),
        (K8S_19, "pods_ready_timeout"),
        (PADDLE_F, "cuda_error"),
        ("F0611 04:17:52.381904 22615 hl_cuda_device.cc:646] Check failed: cudaSuccess == cudaStat (0 vs. 2) Cuda Error: "
         "out of memory", "cuda_oom"),
        # near misses: a node's memory in prose or a metrics line, a scheduler line that is no failure, other CHECKs
        ("Memory on the node is fine; usage 41%", None),
        ("node memory: 121.77GB / 128.00GB", None),
        ("Successfully assigned default/trainer-0 to node-7", None),
        ("Check failed: cudaSuccess == cudaStat (0 vs. 0)", None),
    ],
)  # fmt: skip
def test_the_lines_and_their_near_misses(line, category):
    assert category_of(line) == category


TRAINED = ("{'train_runtime': 20112.4071, 'train_samples_per_second': 0.402, 'train_steps_per_second': 0.006, "
           "'train_loss': 0.6518, 'epoch': 1.0}\n"
           "100%|██████████| 131/131 [5:35:12<00:00, 153.53s/it]\n")  # fmt: skip
EVENTS = ("Events:\n"
          "  FirstSeen\tLastSeen\tCount\tFrom\t\t\tSubObjectPath\tType\t\tReason\t\t\tMessage\n"
          "  ---------\t--------\t-----\t----\t\t\t-------------\t--------\t------\t\t\t-------\n" + K8S_17 + "\n")  # fmt: skip
PADDLE_RUN = ("I0611 04:17:49.027310 22604 TrainerInternal.cpp:165]  Batch=200 samples=12800 AvgCost=0.4117 "
              "CurrentCost=0.3902 Eval: classification_error_evaluator=0.171\n"
              "....................\n" + PADDLE_F + "\n*** Check failure stack trace: ***\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        # the kill after the run's end line is a failure, not success
        (TRAINED + "...\n" + RAY_TASK + "\n", "host_oom"),
        (TRAINED, "success"),
        (EVENTS, "pods_ready_timeout"),
        (PADDLE_RUN, "cuda_error"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
