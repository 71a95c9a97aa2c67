"""Three families of batch h16e of issue 16 (fixtures/eval README): lines a terminal hard-wrapped
at a fixed width, lines behind Ray's process prefixes, and Kueue's workload conditions pasted as
YAML / Go maps / dicts. Every log text here is ours, in the libraries' own wording."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect
from gangscope.parsers.lines import strip_rank_prefixes
from gangscope.parsers.wraps import join_wrapped, wrap_width
from diagnose_in_process import the_diagnosis


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


def hard_wrap(text: str, width: int, style: str = "") -> str:
    """`text` as a terminal of `width` columns shows it: "pad" pads every row of a wrapped line
    (tmux / screen copy), "trim" drops each row's trailing spaces, "" keeps the rows as they are."""
    rows = []
    for line in text.split("\n"):
        if len(line) <= width:
            rows.append(line)
            continue
        for i in range(0, len(line), width):
            row = line[i : i + width]
            rows.append(row.ljust(width) if style == "pad" else row.rstrip(" ") if style == "trim" else row)
    return "\n".join(rows)


STUCK = (
    "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
    "collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, "
    "and could be triggered by another thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), "
    "or other deadlock-prone behaviors.If you suspect the watchdog is not actually stuck and a longer timeout would "
    "help, you can either increase the timeout (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC) to a larger value or disable the "
    "heartbeat monitor (TORCH_NCCL_ENABLE_MONITORING=0).If either of aforementioned helps, feel free to file an issue "
    "to PyTorch about the short timeout or false positive abort; otherwise, please attempt to debug the hang."
)
WATCHDOG_LOG = (
    "{'loss': 0.4127, 'grad_norm': 2.0913, 'learning_rate': 8.2e-07, 'epoch': 0.37}\n"
    " 37%|███▋      | 311/842 [1:02:44<1:47:10, 12.11s/it]\n"
    f"[rank6]:[E304 11:48:02.551204318 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 6] {STUCK} \n"
    f"[rank2]:[E304 11:48:02.551377260 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 2] {STUCK} \n"
    "[rank6]:[E304 11:48:02.551496803 ProcessGroupNCCL.cpp:1533] [PG ID 0 PG GUID 0(default_pg) Rank 6] "
    "ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1\n"
)


# --- terminal-wrapped lines ------------------------------------------------------------------------


@pytest.mark.parametrize("width, style", [(116, "pad"), (80, ""), (120, ""), (160, "pad"), (200, "")])
def test_a_wrapped_watchdog_report_is_read_whole_with_its_rank(tmp_path, width, style):
    wrapped = hard_wrap(WATCHDOG_LOG, width, style)
    assert len(wrapped.split("\n")) > len(WATCHDOG_LOG.split("\n"))
    d = the_diagnosis(tmp_path, wrapped)
    assert (d.category, d.first_failure["rank"]) == ("hang", 6)


def test_the_rows_of_a_padded_copy_join_back_into_the_line():
    rows = hard_wrap(WATCHDOG_LOG, 116, "pad").split("\n")
    joined = join_wrapped(rows)
    assert len(joined) == len(WATCHDOG_LOG.split("\n"))
    assert joined[2].startswith("[rank6]:") and "watchdog got stuck for 480 seconds" in joined[2]
    assert joined[2].rstrip().endswith("please attempt to debug the hang.")
    assert joined[4].startswith("[rank6]:") and "Include stack trace: 1" in joined[4]  # padding ended the line before


def test_a_row_whose_trailing_space_a_copy_trimmed_is_left_alone():
    # a copy that trims leaves a row cut after a space one short of the width: it may as well be a
    # short line of its own, so it is not joined
    rows = ["a" * 99 + "b", "cd e", "f" * 99 + "g", "hi j", "k" * 98, "lm n", "o" * 100]
    assert wrap_width(rows) == 100
    assert join_wrapped(rows) == ["a" * 99 + "bcd e", "f" * 99 + "ghi j", "k" * 98, "lm n", "o" * 100]


def test_a_line_with_a_head_of_its_own_is_never_a_continuation():
    rows = [
        "x" * 90,
        "[rank1]: Traceback (most recent call last):",
        "y" * 89 + "a",
        "bcd continued",
        "z" * 89 + "e",
        "fgh continued",
        "w" * 89 + "k",
        "2025-03-04 11:48:02,551 INFO next record",
        "q" * 90,
    ]
    joined = join_wrapped(rows)
    assert joined == ["x" * 90, "[rank1]: Traceback (most recent call last):", "y" * 89 + "abcd continued",
                      "z" * 89 + "efgh continued", "w" * 89 + "k", "2025-03-04 11:48:02,551 INFO next record", "q" * 90]


@pytest.mark.parametrize(
    "rows",
    [
        # lines of one template, the longest of the file and of equal length, each followed by its own
        # next record: no break inside a word, no wrap
        ["Epoch: 1/3, train loss: nan, train accuracy: 0.09812, valid loss: nan, valid accuracy: 0.10328",
         "Epoch: 2/3, train loss: nan, train accuracy: 0.09911, valid loss: nan, valid accuracy: 0.10518",
         "Epoch: 3/3, train loss: nan, train accuracy: 0.10004, valid loss: nan, valid accuracy: 0.10411",
         "done"],
        ["04/17 09:41:12 - mmengine - INFO - Iter(train) [  50/9000]  lr: 2.0e-05  loss: 2.4418  grad_norm: 2.9132",
         "04/17 09:41:43 - mmengine - INFO - Iter(train) [ 100/9000]  lr: 2.0e-05  loss: 2.3907  grad_norm: 2.6051",
         "04/17 09:42:14 - mmengine - INFO - Iter(train) [ 150/9000]  lr: 2.0e-05  loss: 2.4731  grad_norm: 2.6051",
         "04/17 09:42:45 - mmengine - INFO - Iter(train) [ 200/9000]  lr: 2.0e-05  loss: 2.4011  grad_norm: 2.5520"],
    ],
)  # fmt: skip
def test_a_log_that_was_not_wrapped_is_left_as_it_is(rows):
    assert wrap_width(rows) is None
    assert join_wrapped(rows) is rows


def test_the_heartbeat_monitor_s_first_report_is_a_hang_with_its_rank():
    line = ("[rank0]:[E1107 16:52:18.730521448 ProcessGroupNCCL.cpp:1413] [PG 3 Rank 0] Heartbeat monitor timed out! "
            "Process will be terminated after dumping debug info. workMetaList_.size()=96")
    assert rule_and_category(line) == ("heartbeat_timed_out", "hang")


def test_the_first_rank_whose_heartbeat_monitor_fired_is_the_first_failure(tmp_path):
    text = (
        "[rank0]:[E1107 16:52:18.730521448 ProcessGroupNCCL.cpp:1413] [PG 3 Rank 0] Heartbeat monitor timed out! "
        "Process will be terminated after dumping debug info. workMetaList_.size()=96\n"
        "[rank7]:[E1107 16:52:18.731188054 ProcessGroupNCCL.cpp:1375] [PG 3 Rank 7] First PG on this rank that detected no heartbeat of its watchdog.\n"
        f"[rank2]:[F1107 17:02:18.730417761 ProcessGroupNCCL.cpp:1224] [PG 3 Rank 2] [PG 3 Rank 2] {STUCK}\n"
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.first_failure["rank"]) == ("hang", 0)


# --- Ray's process prefixes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, text",
    [
        ("(pid=41873) Reward function type: mix", "Reward function type: mix"),
        ("(pid=41873, ip=10.4.0.12) Traceback (most recent call last):", "Traceback (most recent call last):"),
        ("(main_task pid=41873) step:1 - actor/pg_loss:-0.000", "step:1 - actor/pg_loss:-0.000"),
        ("(raylet, ip=10.4.0.12) A worker died or was killed while executing a task", "A worker died or was killed while executing a task"),
        ("(autoscaler +1m3s) Tip: use `ray status` to view detailed cluster status.", "Tip: use `ray status` to view detailed cluster status."),
        ("(see above) not a Ray prefix", "(see above) not a Ray prefix"),
    ],
)  # fmt: skip
def test_ray_s_process_prefixes_come_off(line, text):
    assert strip_rank_prefixes(line) == (text, None, None)


@pytest.mark.parametrize(
    "line, category",
    [
        ("(LLMRayActor pid=502466) CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62", "cuda_oom"),
        ("CUDA Error: invalid argument at /workspace/csrc/cumem_allocator.cpp:95", "cuda_error"),
    ],
)
def test_vllm_s_sleep_mode_allocator_errors(line, category):
    assert rule_and_category(line) == ("vllm_cumem_error", category)


def test_an_rl_trainer_whose_rollout_engine_ran_out_of_gpu_memory_on_wake_up_is_cuda_oom(tmp_path):
    text = (
        "Train epoch [1/1]: 100%|██████████| 8/8 [02:07<00:00, 15.94s/it, pg=0.284, rm=0.191, act_lr=6.72e-9]\n"
        "(LLMRayActor pid=502466) CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62\n"
        "(ActorModelRayActor pid=503117) \n"
        "Episode [1/16]:   0%|          | 0/284 [04:11<?, ?it/s]\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main\n'
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "cuda_oom"


def test_an_actor_s_nccl_error_outranks_the_driver_s_channel_timeout(tmp_path):
    text = (
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.12/site-packages/ray/dag/compiled_dag_node.py", line 2541, in _execute_until\n'
        "    raise RayChannelTimeoutError(\n"
        "ray.exceptions.RayChannelTimeoutError: System error: If the execution is expected to take a long time, "
        "increase RAY_CGRAPH_get_timeout which is currently 10 seconds. Otherwise, this may indicate that the execution is hanging.\n"
        "(Actor pid=2291740) ERROR:root:Compiled DAG task exited with exception\n"
        "(Actor pid=2291740) Traceback (most recent call last):\n"
        '(Actor pid=2291740)   File "cupy_backends/cuda/libs/nccl.pyx", line 481, in cupy_backends.cuda.libs.nccl.NcclCommunicator.recv\n'
        '(Actor pid=2291740)   File "cupy_backends/cuda/libs/nccl.pyx", line 129, in cupy_backends.cuda.libs.nccl.check_status\n'
        "(Actor pid=2291740) cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_INTERNAL_ERROR: internal error - please report this issue to the NCCL developers\n"
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.exception_type) == ("nccl_error", "cupy_backends.cuda.libs.nccl.NcclError")


# --- Kueue's workload conditions --------------------------------------------------------------------


PREEMPTED_YAML = """status:
  conditions:
  - lastTransitionTime: "2025-02-18T09:41:07Z"
    message: 'couldn''t assign flavors to pod set main: insufficient unused quota
      for nvidia.com/gpu in flavor a100-40g, 4 more needed'
    reason: Pending
    status: "False"
    type: QuotaReserved
  - lastTransitionTime: "2025-02-18T09:41:06Z"
    message: 'Preempted to accommodate a workload (UID: 9b2f61d0-4c7e-4a18-b3d5-60e1f2a7c944,
      JobUID: 0e5d83a1-7f26-4b90-a1c3-d84b7e6f2015) due to prioritization in the
      ClusterQueue'
    reason: Preempted
    status: "True"
    type: Evicted
"""


@pytest.mark.parametrize(
    "line",
    [
        "    message: Preempted to accommodate a higher priority Workload",
        "    Message:               Preempted to accommodate a workload (UID: 9b2f61d0, JobUID: 0e5d83a1) due to reclamation within the cohort",
        "{'message': 'Previously: Preempted to accommodate a workload (UID: 3c1e7f20, JobUID: UNKNOWN) due to Fair Sharing within the cohort', 'reason': 'QuotaReserved'}",
        "  Normal  Preempted  12s  kueue-admission  Preempted to accommodate a workload (UID: 9b2f61d0, JobUID: 0e5d83a1) due to prioritization in the ClusterQueue; preemptor path: /ml; preemptee path: /ml",
    ],
)  # fmt: skip
def test_kueue_s_preemption_message_is_preempted(line):
    assert rule_and_category(line) == ("kueue_preempted", "preempted")


def test_a_workload_kueue_preempted_is_preempted(tmp_path):
    assert the_diagnosis(tmp_path, PREEMPTED_YAML).category == "preempted"


@pytest.mark.parametrize(
    "text",
    [
        # never admitted: a missing LocalQueue
        'status:\n  conditions:\n  - lastTransitionTime: "2025-04-03T16:22:48Z"\n    message: LocalQueue research-queue '
        "doesn't exist\n    reason: Inadmissible\n    status: \"False\"\n    type: QuotaReserved\n",
        # admitted, pods not ready yet
        "2025-01-22 14:37:12.209877 MODIFIED   job-bert-pretrain-4be71   true     [map[lastTransitionTime:2025-01-22T13:37:12Z "
        "message:Not all pods are ready or succeeded observedGeneration:1 reason:PodsReady status:False type:PodsReady]]\n",
    ],
)  # fmt: skip
def test_a_workload_waiting_for_admission_or_its_pods_is_no_failure(tmp_path, text):
    assert the_diagnosis(tmp_path, text).category == "running"


# --- NCCL's return trail ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "gx10-03:402117:428806 [0] NCCL INFO misc/socket.cc:564 -> 2",
        "n241-117-032:30218:30364 [7] NCCL INFO group.cc:65 -> 2 [Async thread]",
        "n241-117-032:30211:30362 [0] NCCL INFO misc/socket.cc:504 -> 2 (Operation now in progress)",
        "(train_ppo pid=3184402) 2024-09-02 08:31:17.614 g214:3184402:3185340 [0] NCCL INFO transport/net.cc:288 -> 3",
    ],
)  # fmt: skip
def test_nccl_s_return_trail_is_a_communication_failure(line):
    assert rule_and_category(line) == ("nccl_return_trail", "nccl_error")


@pytest.mark.parametrize(
    "line",
    [
        "ws02:811203:811254 [3] NCCL INFO Channel 00/0 : 11[3] -> 12[4] via P2P/IPC/read",
        "gpu-a24-117:61805:61837 [3] NCCL INFO Trees [0] 2/-1/-1->1->0 [1] 2/-1/-1->1->0",
    ],
)
def test_nccl_s_setup_lines_with_arrows_are_no_failure(line):
    assert rule_and_category(line) is None


def test_a_trail_alone_is_nccl_error(tmp_path):
    text = (
        "gpu-a24-117:61804:61838 [2] transport/nvls.cc:246 NCCL WARN Cuda failure 3 'initialization error'\n"
        "gpu-a24-117:61804:61838 [2] NCCL INFO init.cc:1010 -> 1\n"
        "gpu-a24-117:61804:61838 [2] NCCL INFO init.cc:1501 -> 1\n"
        "gpu-a24-117:61805:61837 [3] NCCL INFO Setting affinity for GPU 3 to ffffffff,00000000,ffffffff,00000000\n"
        "gpu-a24-117:61804:61838 [2] NCCL INFO group.cc:64 -> 1 [Async thread]\n"
    )  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "nccl_error"


def test_a_rank_s_own_failure_outranks_its_peers_nccl_trails(tmp_path):
    text = (
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.10 GiB\n"
        "node7:2201:2260 [0] NCCL INFO misc/socket.cc:749 -> 6\n"
        "node7:2201:2260 [0] NCCL INFO transport/net.cc:288 -> 3\n"
    )  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "cuda_oom"


def test_a_collective_timeout_outranks_the_trails_of_the_aborted_communicator(tmp_path):
    # ProcessGroupNCCL aborts the communicator after the watchdog's timeout; NCCL's threads then
    # return errors of their own: the trail says a call failed, the watchdog says why
    text = (
        "[rank13]:[E1203 04:12:55.402118830 ProcessGroupNCCL.cpp:616] [Rank 13] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=4471, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600047 milliseconds before timing out.\n"
        "node3:7731:7802 [5] NCCL INFO misc/socket.cc:47 -> 3\n"
        "node3:7731:7802 [5] NCCL INFO transport/net_socket.cc:432 -> 3\n"
    )  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "nccl_timeout"
