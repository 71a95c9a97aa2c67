"""Rules from batch h16h of issue 16 (fixtures/eval README): srun's task lines and bars at N/N.

slurmstepd killing a step over its memory limit is host memory; srun's "task N: Exited with exit code
C" names the failing task (the global rank) and no cause; the step cancel slurmstepd prints after srun
terminated the step itself (kill_on_bad_exit) or after its own memory kill is no stop from outside; the
other tasks' "Killed" that follows names no cause either. A bare tqdm bar seen only at N/N (a data or
loading bar looks the same) is no end of training; the Trainer's final train_runtime dict is. Values in
the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect
from diagnose_in_process import the_diagnosis


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


@pytest.mark.parametrize(
    "line, expected",
    [
        ("slurmstepd: error: Job 4411 exceeded memory limit (912004488 > 814400000), being killed", ("slurm_mem_limit", "host_oom")),
        ("slurmstepd-gpu07: error: StepId=4411.0 exceeded memory limit (912004488 > 814400000), being killed", ("slurm_mem_limit", "host_oom")),
        ("srun: error: node17: task 3: Exited with exit code 1", ("srun_task_exit", "unknown")),
        ("srun: error: node17: tasks 8-13,15: Exited with exit code 2", ("srun_task_exit", "unknown")),
        ("srun: error: node17: task 0: Exited with exit code 137", ("srun_task_exit", "host_oom")),
        ("srun: error: node17: tasks 0,2,6: Killed", ("srun_task_signal", "unknown")),
        ("srun: error: node17: task 4: Segmentation fault (core dumped)", ("srun_task_signal", "unknown")),
        ("{'train_runtime': 812.5, 'train_samples_per_second': 9.84, 'train_steps_per_second': 0.31, 'train_loss': 1.42, 'epoch': 3.0}",
         ("hf_train_metrics", "success")),
        # not these: an evaluation's metrics, a task that completed, a job's own sentence
        ("{'eval_runtime': 12.5, 'eval_samples_per_second': 80.1, 'eval_loss': 1.9, 'epoch': 1.0}", None),
        ("srun: node17: task 3: Completed", None),
    ],
)
def test_the_lines(line, expected):
    assert rule_and_category(line) == expected


STEPS = "".join(f"Epoch 0 |   Training | Elapsed Time: 0:00:{10 + i:02d} | Steps: {40 + i} | Loss: {30 - i}.1234\n" for i in range(4))


def test_a_step_killed_over_its_memory_limit_is_host_memory_not_a_cancel(tmp_path):
    text = (STEPS + "slurmstepd: error: Job 4411 exceeded memory limit (912004488 > 814400000), being killed\n"
            "slurmstepd: error: Exceeded job memory limit\n"
            "slurmstepd: error: *** JOB 4411 ON node17 CANCELLED AT 2024-05-02T10:11:12 ***\n")
    assert the_diagnosis(tmp_path, text).category == "host_oom"


SRUN_BAD_EXIT = ("srun: error: node17: task 6: Exited with exit code 1\n"
                 "srun: launch/slurm: _step_signal: Terminating StepId=5120.0\n"
                 "slurmstepd: error: *** STEP 5120.0 ON node17 CANCELLED AT 2024-05-02T10:11:12 ***\n"
                 "srun: error: node17: tasks 0-5,7: Killed\n"
                 "srun: error: node18: tasks 8-15: Killed\n"
                 "srun: Force Terminated StepId=5120.0\n")


def test_srun_terminating_the_step_after_a_bad_exit_is_no_preemption(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + SRUN_BAD_EXIT)
    assert d.category == "unknown"
    assert d.first_failure["rank"] == 6


def test_a_traceback_before_the_bad_exit_still_names_the_cause(tmp_path):
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    main()\n"
            "ValueError: bad shape for batch\n" + SRUN_BAD_EXIT)
    assert the_diagnosis(tmp_path, text).category == "python_exception"


def test_a_cancel_with_no_task_failure_before_it_is_still_a_stop_from_outside(tmp_path):
    text = (STEPS + "slurmstepd: error: *** STEP 5120.0 ON node17 CANCELLED AT 2024-05-02T10:11:12 ***\n"
            "srun: error: node17: tasks 0-7: Killed\n")
    assert the_diagnosis(tmp_path, text).category == "preempted"


def test_a_time_limit_after_a_bad_exit_keeps_its_reason(tmp_path):
    text = (STEPS + "srun: error: node17: task 2: Exited with exit code 1\n"
            "slurmstepd: error: *** STEP 5120.0 ON node17 CANCELLED AT 2024-05-02T10:11:12 DUE TO TIME LIMIT ***\n")
    assert the_diagnosis(tmp_path, text).category == "time_limit"


def test_killed_tasks_with_an_oom_kill_line_are_host_memory(tmp_path):
    text = (STEPS + "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=5120.0. Some of your processes may have been "
            "killed by the cgroup out-of-memory handler.\nsrun: error: node17: task 1: Killed\n")
    d = the_diagnosis(tmp_path, text)
    assert d.category == "host_oom"


def test_killed_tasks_alone_name_the_task_and_no_cause(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + "srun: error: node17: task 3: Killed\n")
    assert d.category == "unknown"
    assert d.first_failure["rank"] == 3


# --- bars at N/N


def test_a_bare_bar_seen_only_at_its_end_is_no_end_of_training(tmp_path):
    text = ("Loading checkpoint shards: 100%|██████████| 4/4 [00:03<00:00,  1.21it/s]\n"
            "100%|██████████| 1/1 [00:00<00:00, 64.10it/s]\n"
            "Loading cached split indices for dataset at /data/cache/spl\n")
    assert the_diagnosis(tmp_path, text).category == "running"


def test_a_bare_bar_seen_moving_to_its_end_is_the_end_of_training(tmp_path):
    text = "".join(f"{n * 2}%|██        | {n}/50 [00:{n:02d}<00:40,  1.21it/s]\n" for n in (10, 20, 30, 40)) + \
        "100%|██████████| 50/50 [00:50<00:00,  1.00it/s]\n"
    assert the_diagnosis(tmp_path, text).category == "success"


def test_the_trainer_metrics_dict_is_the_end_when_the_bar_was_seen_only_at_its_end(tmp_path):
    text = ("{'train_runtime': 812.5, 'train_samples_per_second': 9.84, 'train_steps_per_second': 0.31, 'train_loss': 1.42, 'epoch': 3.0}\n"
            "100%|██████████| 250/250 [13:32<00:00,  3.25s/it]\n"
            "model saved to /data/out/final\n")
    assert the_diagnosis(tmp_path, text).category == "success"
