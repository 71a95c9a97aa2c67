"""Rules from batch h16l of issue 16 (fixtures/eval README): a log that ends in a launcher's, a shell's or a
runtime's word that the job failed is a failure (`unknown`, or the category its signal or exit code names),
never `running`.

The lines, each from the source that prints it (cited in parsers/errors.py): bash's job notes for every signal
glibc's strsignal names (SIGILL, SIGFPE, SIGTRAP as well), also glued onto a tqdm bar's last refresh; zsh's job
notes; srun's task reports of those signals; an IntelliJ-platform IDE's "Process finished with exit code N";
MPICH hydra's exit string; Ray Jobs' entrypoint exit code (127/126: the launch command is wrong); OpenMPI's
MPI_ABORT note; `conda run`'s failure; GNU make's failed recipe; the Kubeflow training-operator's JobFailed
message; JAX's distributed client terminating; Ray Tune's "Trials did not complete"; any "Fatal Python error";
Ray's older RayActorError / RayWorkerError; torch elastic's agent stopping its workers as the log's last word.
Negatives: the same words in other sentences, exit code 0, make's ignored errors, the operator's restart, a
teardown that training went on after, and a cause printed before the summary. Values in the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect, exception_category
from diagnose_in_process import the_diagnosis


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


STEPS = "".join(f"epoch 2 step {i * 20} loss {1.9 - i / 50:.4f} lr 0.0002\n" for i in range(1, 7))
END = "Training completed. Do not forget to share your model on huggingface.co/models =)\n"


@pytest.mark.parametrize(
    "line, expected",
    [
        ("Illegal instruction (core dumped)", ("shell_job_signal", "unknown")),
        ("Floating point exception (core dumped)", ("shell_job_signal", "unknown")),
        ("Trace/breakpoint trap (core dumped)", ("shell_job_signal", "unknown")),
        ("./prepare_and_fit.sh: line 33: 61207 Illegal instruction     python fit_model.py --cfg base", ("shell_job_signal", "unknown")),
        ("/bin/bash: line 1:   208 Floating point exception(core dumped) python -u main.py", None),  # no space: not bash's
        (" 41%|████▏     | 1220/2975 [07:02<10:07,  2.89it/s]Killed", ("shell_job_signal", "host_oom")),
        ("[Info: Device_0: train_Ep_3: loss: 2.1e+02]:  12%|| 7/56 [00:01<00:09,  5.10it/s]Segmentation fault (core dumped)",
         ("shell_job_signal", "unknown")),
        ("zsh: killed     python train.py --epochs 40", ("zsh_job_signal", "host_oom")),
        ("zsh: segmentation fault (core dumped)  python train.py", ("zsh_job_signal", "unknown")),
        ("zsh: illegal hardware instruction  python main.py", ("zsh_job_signal", "unknown")),
        ("srun: error: gpu-b12: task 5: Illegal instruction (core dumped)", ("srun_task_signal", "unknown")),
        ("Process finished with exit code 137 (interrupted by signal 9: SIGKILL)", ("ide_process_exit", "host_oom")),
        ("Process finished with exit code 143 (interrupted by signal 15: SIGTERM)", ("ide_process_exit", "preempted")),
        ("Process finished with exit code 1", ("ide_process_exit", "unknown")),
        ("Process finished with exit code -1073741819 (0xC0000005)", ("ide_process_exit", "unknown")),
        ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)", ("hydra_exit_string", "host_oom")),
        ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)", ("hydra_exit_string", "unknown")),
        ("YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Terminated (signal 15)", ("hydra_exit_string", "unknown")),
        ("Status message: Job entrypoint command failed with exit code 127, last available logs (truncated to 20,000 chars):",
         ("ray_job_entrypoint_failed", "python_exception")),
        ("Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):",
         ("ray_job_entrypoint_failed", "unknown")),
        ("Job entrypoint command failed with exit code -9. No logs available.", ("ray_job_entrypoint_failed", "host_oom")),
        ("MPI_ABORT was invoked on rank 6 in communicator MPI_COMM_WORLD", ("mpi_abort_invoked", "unknown")),
        ("ERROR conda.cli.main_run:execute(125): `conda run python fit.py --cfg a.yaml` failed. (See above for error)",
         ("conda_run_failed", "unknown")),
        ("ERROR conda.cli.main_run:execute(33): Subprocess for 'conda run ['python', 'fit.py']' command failed.  (See above for error)",
         ("conda_run_failed", "unknown")),
        ("make: *** [Makefile:21: train] Error 1", ("make_recipe_failed", "unknown")),
        ("make[2]: *** [finetune] Error 137", ("make_recipe_failed", "host_oom")),
        ("make: *** [Makefile:9: fit] Killed", ("make_recipe_failed", "host_oom")),
        ("TFJob mnist-dist is failed because 2 Worker replica(s) failed.", ("training_operator_job_failed", "unknown")),
        ("F0314 08:02:11.901224  40117 client.h:77] Terminating process because the JAX distributed service detected fatal "
         "errors. This most likely indicates that another task died; see the other task logs for more details.",
         ("jax_distributed_fatal", "unknown")),
        ("2025-03-02 11:20:04,118\tERROR tune.py:1035 -- Trials did not complete: [TorchTrainer_0a1b2_00000]",
         ("tune_trials_incomplete", "unknown")),
        ("Fatal Python error: _PyThreadState_Get: the function must be called with the GIL held", ("fatal_signal", "unknown")),
    ],
)  # fmt: skip
def test_the_lines_that_say_a_job_failed(line, expected):
    assert rule_and_category(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "epoch 3 Illegal instruction",
        "checking: Floating point exception handling enabled",
        "zsh: command not found: deepspeed",
        "Process finished with exit code 0",
        "make: [Makefile:21: lint] Error 1 (ignored)",
        "make: Nothing to be done for 'train'.",
        "PyTorchJob bert-ft is restarting because 1 Worker replica(s) failed.",
        "the Job entrypoint command failed before? no, it ran",
        "loss: killed 3 workers",
    ],
)
def test_the_same_words_elsewhere_are_not_those_lines(line):
    found = rule_and_category(line)
    assert found is None or found[0] in ("exception_line",), found


def test_ray_s_older_actor_and_worker_deaths_are_unknown_not_a_bug():
    assert exception_category("ray.exceptions.RayActorError", "The actor died unexpectedly before finishing this task.") == "unknown"
    assert exception_category("ray.exceptions.RayWorkerError", "The worker died unexpectedly while executing this task.") == "unknown"


# --- whole logs


@pytest.mark.parametrize(
    "tail, category",
    [
        ("Illegal instruction (core dumped)\n", "unknown"),
        ("Floating point exception (core dumped)\n", "unknown"),
        (" 23%|██▎       | 684/2975 [04:12<1:21:03,  2.12s/it]Killed\n", "host_oom"),
        ("\nProcess finished with exit code 137 (interrupted by signal 9: SIGKILL)\n", "host_oom"),
        ("Process finished with exit code -1073740791 (0xC0000409)\n", "unknown"),
        ("=" * 83 + "\n=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 24817 RUNNING AT box-2\n=   EXIT CODE: 9\n"
         "=   CLEANING UP REMAINING PROCESSES\n=   YOU CAN IGNORE THE BELOW CLEANUP MESSAGES\n" + "=" * 83 + "\n"
         "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n"
         "This typically refers to a problem with your application.\nPlease see the FAQ page for debugging suggestions\n", "host_oom"),
        ("-" * 39 + "\nJob 'raysubmit_Qm4TzLx8pRw2KfVa' failed\n" + "-" * 39 + "\n\n"
         "Status message: Job entrypoint command failed with exit code 127, last available logs (truncated to 20,000 chars):\n"
         "/bin/bash: /work/scripts/train_grpo.sh: No such file or directory\n", "python_exception"),
        ("zsh: killed     python train.py\n", "host_oom"),
        ("make: *** [Makefile:21: train] Error 1\n", "unknown"),
        ("ERROR conda.cli.main_run:execute(125): `conda run python fit.py` failed. (See above for error)\n", "unknown"),
        ("[2024-02-01 10:00:00,000] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 4411 closing signal SIGTERM\n"
         "[2024-02-01 10:00:00,001] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 4412 closing signal SIGTERM\n",
         "unknown"),
    ],
)  # fmt: skip
def test_a_log_that_ends_in_such_a_line_failed(tmp_path, tail, category):
    d = the_diagnosis(tmp_path, STEPS + tail)
    assert (d.category, d.outcome) == (category, "failed"), d.summary


def test_the_rank_that_called_mpi_abort_is_named(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + "MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD\nwith errorcode 1.\n")
    assert (d.category, d.first_failure["rank"]) == ("unknown", 3)


def test_a_cause_printed_before_the_launcher_s_word_is_the_answer(tmp_path):
    trace = ("Traceback (most recent call last):\n"
             '  File "fit.py", line 88, in <module>\n'
             "    loss = model(batch)\n"
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")  # fmt: skip
    for tail in ("\nProcess finished with exit code 1\n",
                 "ERROR conda.cli.main_run:execute(125): `conda run python fit.py` failed. (See above for error)\n",
                 "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):\n",
                 "make: *** [Makefile:21: train] Error 1\n"):  # fmt: skip
        assert the_diagnosis(tmp_path, STEPS + trace + tail).category == "cuda_oom", tail


def test_exit_code_0_of_a_finished_run_is_no_failure(tmp_path):
    assert the_diagnosis(tmp_path, STEPS + END + "\nProcess finished with exit code 0\n").category == "success"
    assert the_diagnosis(tmp_path, STEPS + "\nProcess finished with exit code 0\n").category == "running"


def test_the_same_words_in_a_run_that_went_on_or_ended_well_do_not_flip_it(tmp_path):
    words = ("note: Illegal instruction traps are caught by the sandbox\n"
             "status: killed 0 stale workers\n"
             "PyTorchJob bert-ft is restarting because 1 Worker replica(s) failed.\n")  # fmt: skip
    assert the_diagnosis(tmp_path, STEPS + words + STEPS).category == "running"
    assert the_diagnosis(tmp_path, STEPS + words + STEPS + END).category == "success"


def test_a_worker_group_restarted_after_the_teardown_is_not_a_failure(tmp_path):
    text = (STEPS + "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 4411 closing signal SIGTERM\n"
            + STEPS)  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "running"
    assert the_diagnosis(tmp_path, text + END).category == "success"
