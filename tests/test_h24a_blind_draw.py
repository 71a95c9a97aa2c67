"""Rules from batch h24a of issue 16 (fixtures/eval README, "Batch h24a"): a blind draw of the communication, start-up,
hardware and lifecycle slice.

Two classes of its misses show their cause in the log. mpirun (Open MPI's orterun, PRRTE's prterun) prints a box when the
head node's daemon loses its channel to a remote node's daemon and terminates the job: the node was lost under the job
(parsers/errors.py mpirun_daemon_lost). And Kubeflow Arena's `arena get` prints one row per pod with the pod's phase in
capitals: a pod still PENDING when the job is 5 minutes old is a gang that did not become ready in time
(arena_instance_pending_row). The lines below are rebuilt from the sources' format strings with our values, not copied
from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of


@pytest.mark.parametrize(
    "line, category",
    [
        # Open MPI 4, PRRTE (Open MPI 5), Open MPI <= 3
        ("ORTE has lost communication with a remote daemon.", "node_failure"),
        ("PRTE has lost communication with a remote daemon.", "node_failure"),
        (" ORTE has lost communication with its daemon located on node:", "node_failure"),
        # near misses: the box's other lines, the start-up boxes of the same help file, prose about the message
        ("  Remote daemon: [[40211,0],2] on node gpu-node-07", None),
        ("This is usually due to either a failure of the TCP network", None),
        # the start-up boxes of the same help file: no rule here; since batch h32d (dev 1411, an MPIJob launcher whose
        # workers' names did not resolve) rule mpirun_daemon_launch_failed reads them as a start-up failure
        ("ORTE was unable to reliably start one or more daemons.", "rendezvous_error"),
        ("An ORTE daemon has unexpectedly failed after launch and before", "rendezvous_error"),
        ("the launcher lost communication with a remote daemon, retrying", None),
    ],
)  # fmt: skip
def test_the_daemon_lost_line_and_its_near_misses(line, category):
    assert category_of(line) == category


@pytest.mark.parametrize(
    "line, category",
    [
        ("resnet-dist  PENDING  TFJOB    12m  resnet-dist-tfjob-worker-0  N/A", "pods_ready_timeout"),
        ("llm-ft  PENDING  PYTORCHJOB  2h  llm-ft-master-0  N/A", "pods_ready_timeout"),
        # scheduled on a host, its containers not yet running
        ("bert-mpi  PENDING  MPIJOB  7m3s  bert-mpi-mpijob-worker-1  10.20.3.14", "pods_ready_timeout"),
        # a younger pending pod is no failure yet
        ("resnet-dist  PENDING  TFJOB    3m  resnet-dist-tfjob-worker-0  N/A", None),
        # near misses: a running row, `arena list`'s job row (no instance column), a table header, a log line
        ("resnet-dist  RUNNING  TFJOB    12m  resnet-dist-tfjob-worker-0  10.20.3.14", None),
        ("resnet-dist  PENDING  TFJOB    12m  N/A", None),
        ("NAME         STATUS   TRAINER  AGE  INSTANCE                   NODE", None),
        ("INFO 12:01:07 job state PENDING TFJOB 12m waiting for worker-0 N/A", None),
    ],
)  # fmt: skip
def test_the_arena_row_and_its_near_misses(line, category):
    assert category_of(line) == category


STEPS = "".join(f"[1,0]<stdout>:step {n}: loss {3.1 - n / 50:.3f}, 412.7 img/sec\n" for n in range(40, 46))
LOST = ("--------------------------------------------------------------------------\n"
        "ORTE has lost communication with a remote daemon.\n\n"
        "  HNP daemon   : [[40211,0],0] on node trainer-launcher\n"
        "  Remote daemon: [[40211,0],2] on node gpu-node-07\n\n"
        "This is usually due to either a failure of the TCP network\n"
        "connection to the node, or possibly an internal failure of\n"
        "the daemon itself. We cannot recover from this failure, and\n"
        "therefore will terminate the job.\n"
        "--------------------------------------------------------------------------\n")  # fmt: skip
OOM_FIRST = ("[1,2]<stderr>:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 2; 39.39 GiB total "
             "capacity; 36.12 GiB already allocated; 1.02 GiB free; 37.40 GiB reserved in total by PyTorch)\n")  # fmt: skip
ARENA = ("# arena get resnet-dist\n"
         "NAME         STATUS   TRAINER  AGE  INSTANCE                   NODE\n"
         "resnet-dist  RUNNING  TFJOB    31m  resnet-dist-tfjob-ps-0     10.20.3.14\n"
         "resnet-dist  PENDING  TFJOB    31m  resnet-dist-tfjob-worker-0  N/A\n"
         "resnet-dist  PENDING  TFJOB    31m  resnet-dist-tfjob-worker-1  N/A\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        (STEPS + LOST, "node_failure"),
        # a failure the box follows is the cause (a rank's OOM, then its node's daemon gone)
        (STEPS + OOM_FIRST + LOST, "cuda_oom"),
        (ARENA, "pods_ready_timeout"),
        # the same rows all RUNNING: nothing failed
        (ARENA.replace("PENDING", "RUNNING"), "running"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
