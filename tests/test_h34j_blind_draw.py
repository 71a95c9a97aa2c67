"""Rules from batch h34j of issue 16 (fixtures/eval README, "Batch h34j"): a fourth blind draw from the cluster side
(gang schedulers, operators and managed platforms).

Two classes of its misses show their answer in the log:
- DLRover's job master logs each pod status change it watches with the node's exit reason when the pod failed or was
  deleted: "<node> status change: <old> to <new> by the event <type>. Exit reason is <reason>", the reasons those of
  NodeExitReason ("Deleted": deleted from outside, "OOMKilled", "Error", "UnknownError"; the rest name no category here).
  A summary: a worker's own error in the same log is the cause where there is one.
- `kubectl get pytorchjobs` (tfjobs, mpijobs, ...): the CRDs' printer columns put the job's last condition type beside its
  age; a row whose state is Succeeded is the controller's verdict that the job ended well (role end).
The lines below are rebuilt from the programs' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import assert_found_past_the_prefilter, category_of


def dlrover(new: str, reason: str, event: str = "MODIFIED", node: str = "ft-lm-edljob-worker-3-1") -> str:
    """DLRover's master line (dist_job_manager.py _process_event) under its logger's prefix."""
    return (f"[2025-06-02 14:03:27,118] [INFO] [dist_job_manager.py:838:_process_event] {node} status change: Running to "
            f"{new} by the event {event}. Exit reason is {reason}")


@pytest.mark.parametrize(
    "line, rule, category",
    [
        (dlrover("Failed", "Deleted"), "dlrover_node_exit_reason", "preempted"),
        (dlrover("Deleted", "Deleted", event="DELETED"), "dlrover_node_exit_reason", "preempted"),
        # the kubelet's reason word is read first by oom_killed, with the same category
        (dlrover("Failed", "OOMKilled"), "oom_killed", "host_oom"),
        (dlrover("Failed", "Error"), "dlrover_node_exit_reason", "unknown"),
        (dlrover("Failed", "UnknownError", node="ft-lm-edljob-ps-0-0"), "dlrover_node_exit_reason", "unknown"),
        ("pytorch-simple-x9f2k   Succeeded   41s", "kubeflow_job_row_succeeded", "success"),
        ("bert-ft-4n              Succeeded   3d4h", "kubeflow_job_row_succeeded", "success"),
        ("hvd-resnet50   2h17m   Succeeded", "kubeflow_job_row_succeeded", "success"),
        ("tfjob-mnist-dist   Succeeded   7m3s", "kubeflow_job_row_succeeded", "success"),
    ],
)  # fmt: skip
def test_the_lines_and_the_prefilter(line, rule, category):
    assert_found_past_the_prefilter(line, rule, category)


@pytest.mark.parametrize(
    "line, category",
    [
        # reasons NodeExitReason has that this rule grounds no category for
        (dlrover("Failed", "HardwareError"), None),
        (dlrover("Failed", "NoHeartBeat"), None),
        (dlrover("Failed", "Relaunched"), None),
        # a change to another status carries no exit reason
        ("[2025-06-02 14:03:27,118] [INFO] [dist_job_manager.py:838:_process_event] ft-lm-edljob-worker-3-1 status change: "
         "Pending to Running by the event MODIFIED. ", None),
        # rows that are no finished job: a job still running or just created, a pod row (READY column), no age
        ("pytorch-simple-x9f2k   Running   41s", None),
        ("hvd-resnet50   2h17m   Created", None),
        ("pytorch-simple-x9f2k-master-0   0/1     Completed   0          2m44s", None),
        ("pytorch-simple-x9f2k   Succeeded", None),
        ("Status:  Succeeded", None),
        ("the job Succeeded 3 times", None),
    ],
)  # fmt: skip
def test_near_misses(line, category):
    assert category_of(line) == category


KUEUE_PASTE = """\
NAME                   STATE       AGE
pytorch-simple-x9f2k   Succeeded   41s

NAME                            READY   STATUS      RESTARTS   AGE     IP              NODE     NOMINATED NODE   READINESS GATES
pytorch-simple-x9f2k-master-0   0/1     Completed   0          2m44s   10.244.3.17     gpu-a    <none>           <none>
pytorch-simple-x9f2k-worker-0   1/1     Running     0          2m44s   10.244.3.18     gpu-a    <none>           <none>
"""
STILL_RUNNING = """\
NAME                   STATE     AGE
pytorch-simple-x9f2k   Running   41s
"""
DLROVER_DELETED = dlrover("Failed", "Deleted") + "\n"
DLROVER_OOM = dlrover("Failed", "OOMKilled") + "\n"
# a worker's own error before the master's summary line: the error is the cause
DLROVER_AFTER_CUDA_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of "
    "which 1.21 GiB is free.\n" + dlrover("Failed", "Error") + "\n"
)  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        (KUEUE_PASTE, "success"),
        (STILL_RUNNING, "running"),
        (DLROVER_DELETED, "preempted"),
        (DLROVER_OOM, "host_oom"),
        (DLROVER_AFTER_CUDA_OOM, "cuda_oom"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
