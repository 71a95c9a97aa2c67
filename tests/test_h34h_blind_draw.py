"""Rule from batch h34h of issue 16 (fixtures/eval README, "Batch h34h"): a blind draw of last year's threads.

One class of its misses as they came, a table entry grounded in the printing source:
- ProcessGroupNCCL's heartbeat monitor reporting the watchdog thread stuck ("Heartbeat monitor timed out! ...", "...'s
  watchdog got stuck for N seconds ...": torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp heartbeatMonitor, torch 2.3+)
  AFTER the same rank's "Watchdog caught collective operation timeout": the watchdog blocked in the teardown of the
  timed-out work, the timeout is the root (pipeline/diagnose/rules.py EXPLAINED_WHEN_LATER; dev 1661). A stall with no
  timeout before it stays `hang`.
The lines below are rebuilt with our values, not copied from a fixture."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

BAR = "Epoch 3:  41%|████▏     | 2210/5390 [1:02:17<1:29:36,  1.69s/it, loss=0.731, v_num=4]\n"


def _timeout(rank: int, seq: int = 88412, op: str = "ALLREDUCE") -> str:
    return (f"[rank{rank}]:[E ProcessGroupNCCL.cpp:563] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=2097152, NumelOut=2097152, Timeout(ms)=600000) ran for 600043 "
            "milliseconds before timing out.\n")


def _heartbeat(rank: int) -> str:
    return (f"[rank{rank}]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank {rank}] Heartbeat monitor timed out! Process will be "
            "terminated after dumping debug info. workMetaList_.size()=1\n"
            f"[rank{rank}]:[E ProcessGroupNCCL.cpp:1153] [PG 0 Rank {rank}] ProcessGroupNCCL preparing to dump debug info.\n"
            f"[rank{rank}]:[F ProcessGroupNCCL.cpp:1169] [PG 0 Rank {rank}] [PG 0 Rank {rank}] ProcessGroupNCCL's watchdog got "
            "stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates a "
            "NCCL/CUDA API hang blocking the watchdog, and could be triggered by another thread holding the GIL inside a CUDA "
            "api, or other deadlock-prone behaviors.\n")


@pytest.mark.parametrize("rank, op", [(1, "BROADCAST"), (0, "ALLREDUCE"), (3, "_ALLGATHER_BASE")])
def test_a_stall_after_the_same_ranks_timeout_is_the_timeouts(tmp_path, rank, op):
    d = the_diagnosis(tmp_path, BAR + _timeout(rank, op=op) + _heartbeat(rank))
    assert d.category == "nccl_timeout", d.summary
    assert d.first_failure["rank"] == rank


def test_the_terminal_wrapped_copy_of_dev_1661_is_a_timeout(tmp_path):
    # the copy's own shape: the bar glued to the watchdog line, wrapped by the terminal after "[Rank " and "timin"
    text = ("Epoch 0:  52%|█████▏    | 41730/80251 [15:40:02<14:27:31,  1.35s/it, v_num=3][rank1]:[E ProcessGroupNCCL.cpp:563] "
            "[Rank \n1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=904417, OpType=BROADCAST, NumelIn=3211264, "
            "NumelOut=3211264, Timeout(ms)=1800000) ran for 1800031 milliseconds before timin\ng out.\n") + _heartbeat(1)
    d = the_diagnosis(tmp_path, text)
    assert d.category == "nccl_timeout", d.summary
    # the suspect sentence, the timeout's line and the stall after it, in one sentence of at most 400 characters
    assert len(d.summary) <= 400 and "Watchdog caught collective operation timeout" in d.summary, d.summary


def test_a_stall_with_no_timeout_stays_a_hang(tmp_path):
    d = the_diagnosis(tmp_path, BAR + _heartbeat(2))
    assert d.category == "hang", d.summary


def test_a_stall_before_the_timeout_stays_a_hang(tmp_path):
    # the monitor spoke first: nothing says the stall is the timeout's teardown
    d = the_diagnosis(tmp_path, BAR + _heartbeat(0) + _timeout(0))
    assert d.category == "hang", d.summary
