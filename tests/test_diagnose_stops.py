"""Rules from batch h16g of issue 16 (fixtures/eval README): logs that stop with no failure line.
A library's own stall report with no progress after it is a hang (horovod's stall check in its three
wordings, a py-spy dump of a live rank); a log that ends in NCCL warnings is an nccl_error; NCCL's
IB completion error before 2.19 ("with error N") is read as the newer one is; NCCL WARN lines are
heads of their own for the joiner of wrapped rows. Negatives: a stall that resumed, warnings that
progress followed, a healthy run cut mid-line. Values in the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect
from gangscope.parsers.wraps import HEAD
from diagnose_in_process import the_diagnosis


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


STALL = ("One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting "
         "for remainder of ranks for more than 60 seconds. This may indicate that different ranks are trying to submit "
         "different tensors or that only subset of ranks is submitting tensors, which will cause deadlock.")  # fmt: skip


# --- the lines (horovod stall_inspector.cc / operations.cc; py-spy src/dump.rs; NCCL net_ib.cc)


@pytest.mark.parametrize(
    "line, rule",
    [
        (f"[1,0]<stderr>:[2021-06-03 10:11:12.345678: W horovod/common/stall_inspector.cc:105] {STALL}", "horovod_stall"),
        (f"WARNING: {STALL} Stalled ops: HorovodAllreduce_loss_0 [ready ranks: 3]", "horovod_stall"),
        ("[2021-06-03 10:11:12.3: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be reduced, "
         "gathered or broadcasted by subset of ranks and are waiting for remaind", "horovod_stall"),  # wrapped by the paste
        ("HorovodBroadcast_conv2d_bias_0 [missing ranks: 2]", "horovod_missing_ranks"),
        ("5: [horovod_allreduce.0, horovod_allreduce.1, horovod_allreduce.10 ...]", "horovod_stalled_rank"),
        ("0!: [DistributedSGD_Allreduce/cond/HorovodAllreduce_grads_0]", "horovod_stalled_rank"),
        ('Thread 8812 (idle): "MainThread"', "pyspy_thread"),
        ("Thread 8815 (active)", "pyspy_thread"),
        ('Thread 0x7F1C2A3B4700 (active+gil): "Thread-2"', "pyspy_thread"),
    ],
)  # fmt: skip
def test_stall_reports_are_hang_warnings(line, rule):
    assert rule_and_category(line) == (rule, "hang")


@pytest.mark.parametrize(
    "line",
    [
        "0: [1, 2, 3]",  # a list printed by a config dump
        '  "layers": [4, 4]',
        "Thread 0x00007f2b8c1ff700 (most recent call first):",  # faulthandler, not py-spy
        "Thread 3 (idle) finished its queue",
    ],
)  # fmt: skip
def test_lines_like_stall_reports_are_not(line):
    found = rule_and_category(line)
    assert found is None or found[1] != "hang"


def test_nccl_ib_completion_error_before_2_19_is_an_nccl_error():
    line = ("node7:881:902 [0] transport/net_ib.cc:881 NCCL WARN NET/IB : Got completion from peer 10.8.1.2<40112> "
            "with error 12, opcode 1, len 0, vendor err 129")  # fmt: skip
    assert rule_and_category(line) == ("nccl_ib_completion", "nccl_error")


def test_nccl_warn_lines_are_heads_for_the_wrap_joiner():
    assert HEAD.match("gpu-node07:48213:48877 [0] ibvwrap.c:102 NCCL WARN Call to ibv_get_async_event failed")
    assert HEAD.match("gpu-node07:48213:48877 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>")


# --- diagnoses of whole logs


STEPS = "".join(f"epoch 1/3 step {i}/400 loss {2.5 - i / 100:.4f}\n" for i in range(1, 9))
# Steps with no total: a log of them that stops is a run cut or still going (no `_short_of_the_end`).
OPEN_STEPS = "".join(f"step {i} loss {2.5 - i / 100:.4f}\n" for i in range(1, 9))


def test_horovod_stall_report_after_the_last_step_is_a_hang_of_the_stalled_rank(tmp_path):
    text = STEPS + (
        f"[1,0]<stderr>:[2021-06-03 10:11:12.345678: W horovod/common/stall_inspector.cc:105] {STALL}\n"
        "[1,0]<stderr>:Stalled ranks:\n"
        "[1,0]<stderr>:2: [horovod_allreduce.0, horovod_allreduce.1 ...]\n"
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "hang"
    assert d.first_failure["rank"] == 2


def test_old_horovod_stall_with_missing_ranks_is_a_hang_of_the_missing_rank(tmp_path):
    text = (f"[1,0]<stderr>:WARNING: {STALL}\n[1,0]<stderr>:Stalled ops:\n"
            "[1,0]<stderr>:HorovodBroadcast_dense_kernel_0 [missing ranks: 1]\n")  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.first_failure["rank"]) == ("hang", 1)


def test_a_stall_that_training_went_on_from_is_not_a_hang(tmp_path):
    text = (f"[1,0]<stderr>:WARNING: {STALL}\n[1,0]<stderr>:HorovodAllreduce_grads_0 [missing ranks: 1]\n"
            + OPEN_STEPS)  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "running"


def test_a_py_spy_dump_is_a_hang(tmp_path):
    text = (
        "Process 8812: /usr/bin/python3 -u train.py --config big.yaml\n"
        "Python v3.11.9 (/usr/bin/python3.11)\n\n"
        'Thread 8812 (idle): "MainThread"\n'
        "    all_reduce (torch/distributed/distributed_c10d.py:2501)\n"
        "    train_step (train.py:212)\n"
        "    <module> (train.py:300)\n"
        'Thread 8990 (idle): "Thread-1"\n'
        "    wait (threading.py:324)\n"
    )  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "hang"


def test_a_log_that_ends_in_nccl_warnings_is_an_nccl_error(tmp_path):
    text = STEPS + "".join(
        f"gpu-node07:4821{i}:4887{i} [0] ibvwrap.c:102 NCCL WARN Call to ibv_get_async_event failed\n" for i in range(4)
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "nccl_error"
    assert "4 NCCL warnings" in d.summary


def test_nccl_warnings_that_training_went_on_after_are_no_failure(tmp_path):
    text = ("gpu-node07:48213:48213 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
            "gpu-node07:48213:48213 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.2.3<0>\n" + OPEN_STEPS)  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "running"


def test_a_text_excerpt_cut_short_of_the_run_s_total_is_running(tmp_path):
    # Megatron's iteration lines (training.py training_log) of a healthy run, pasted and cut mid-line: the
    # copy stopped, not the run (SPEC rev. 2 `running`); endings._short_of_the_end reads container logs only.
    text = "".join(
        f" iteration      {i}/  120000 | consumed samples:       {i * 1024} | elapsed time per iteration (ms): 118204.6 | "
        f"learning rate: 1.811E-05 | global batch size:  1024 | lm loss: 2.291407E+00 | loss scale: 1.0 | grad norm: 0.241 | "
        "number of skipped iterations:   0 | number of nan iterations:   0 |\n" for i in range(412, 416)
    ) + " iteration      416/  120000 | consumed samples:       425984 | elapsed time per iteration (ms): 118977.0 | lm lo"
    assert the_diagnosis(tmp_path, text).category == "running"


# --- the shell's word that the trainer died of a signal (GNU bash jobs.c notify_of_job_status)


@pytest.mark.parametrize(
    "line, category",
    [
        ("./train.sh: line 1: 18203 Killed                  python3 train.py --name=D1", "host_oom"),
        ("run.sh: line 66: 904418 Killed                  CUDA_VISIBLE_DEVICES=$gpu python train.py", "host_oom"),
        ("Killed", "host_oom"),
        ("Terminated", "preempted"),
        ("/work/run/pretrain.sh: line 184: 2210387 Aborted                 (core dumped) litgpt pretrain cfg", "unknown"),
        ("Segmentation fault (core dumped)", "unknown"),
    ],
)  # fmt: skip
def test_the_shell_s_job_note_is_a_summary_of_the_death(line, category):
    assert rule_and_category(line) == ("shell_job_signal", category)


@pytest.mark.parametrize("line", ["Killed by user request", "epoch 3 Killed", "Killed process 1234 (python)"])
def test_words_that_only_start_like_the_shell_s_note_are_not_it(line):
    found = rule_and_category(line)
    assert found is None or found[0] != "shell_job_signal"


def test_a_run_whose_shell_says_killed_is_host_oom_not_running(tmp_path):
    text = OPEN_STEPS + "run.sh: line 12: 55120 Killed                  python train.py --cfg big.yaml\n"
    assert the_diagnosis(tmp_path, text).category == "host_oom"


def test_a_traceback_outranks_the_shell_s_note_of_the_crash(tmp_path):
    text = OPEN_STEPS + (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 40, in <module>\n'
        "    main()\n"
        "ValueError: bad batch shape (3, 224)\n"
        "./run.sh: line 4: 55120 Aborted                 (core dumped) python train.py\n"
    )  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "python_exception"
