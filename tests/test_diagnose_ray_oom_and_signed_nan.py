"""Two rules from batch h16d of issue 16 (fixtures/eval README): the raylet's summary of the workers
its memory monitor killed, and a loss that C/C++ prints as `-nan` (glibc shows a NaN's sign bit)."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect
from diagnose_in_process import the_diagnosis


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


RAYLET_SUMMARY = (
    "(raylet) [2025-03-02 11:04:51,218 E 40127 40127] (raylet) node_manager.cc:3069: 2 Workers (tasks / actors) "
    "killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 5e0c7d13a9b2f4e6, "
    "IP: 10.3.7.21) over the last time period. To see more information about the Workers killed on this node, "
    "use `ray logs raylet.out -ip 10.3.7.21`"
)


@pytest.mark.parametrize(
    "line",
    [
        RAYLET_SUMMARY,
        # without the driver's "(raylet)" head and glog stamp, as Ray's docs show it
        "node_manager.cc:3040: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 2c8262, IP: 172.31.18.17) over the last time period.",
    ],
)  # fmt: skip
def test_the_raylet_s_oom_kill_summary_is_host_memory(line):
    assert rule_and_category(line) == ("ray_oom_summary", "host_oom")


def test_a_summary_that_counts_no_oom_kill_is_no_oom():
    line = "node_manager.cc:3069: 0 Workers (tasks / actors) killed due to memory pressure (OOM), 3 Workers crashed due to other reasons at node (ID: 9f, IP: 10.0.0.5) over the last time period."
    assert rule_and_category(line) is None


def test_a_ray_job_whose_worker_the_memory_monitor_killed_is_host_oom(tmp_path):
    text = (
        "Compute log probs:  64%|██████▍   | 205/320 [07:12<04:02,  2.11s/it]\n"
        + RAYLET_SUMMARY + "\n"
        "(raylet) \n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main\n'
        "    return _run_code(code, main_globals, None,\n"
    )  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "host_oom"


@pytest.mark.parametrize(
    "line",
    [
        "I1107 16:02:51.306615 20417 solver.cpp:347] Iteration 1400 (2.29103 iter/s, 21.8242s/50 iter), loss = -nan",
        "I0219 09:49:22.771521  8841 solver.cpp:244]     Train net output #0: loss = -nan (* 1 = -nan loss)",
        "epoch 3 step 120 loss: -nan",
    ],
)  # fmt: skip
def test_a_loss_printed_as_minus_nan_is_a_non_finite_loss(line):
    assert rule_and_category(line) == ("loss_printed_nonfinite", "nan_loss")


@pytest.mark.parametrize("line", ["loss = -nano seconds", "val_loss: -nan", "loss = -nanosleep"])
def test_minus_nan_only_as_a_training_loss_s_whole_value(line):
    assert rule_and_category(line) is None


def test_a_solver_whose_loss_stays_minus_nan_diverged(tmp_path):
    lines = []
    for i, it in enumerate(range(600, 800, 50)):
        stamp = f"I0412 08:{10 + i:02d}:03.118204 7731"
        lines.append(f"{stamp} solver.cpp:347] Iteration {it} (2.1 iter/s, 23.8s/50 iter), loss = -nan")
        lines.append(f"{stamp} solver.cpp:371]     Train net output #0: mbox_loss = {640 + i}.5 (* 1 = {640 + i}.5 loss)")
    d = the_diagnosis(tmp_path, "\n".join(lines) + "\n")
    assert d.category == "nan_loss"
