"""Rules from batch h16n of issue 16 (fixtures/eval README): a launcher's or orchestrator's own word that a
worker failed is a failure (`unknown`, or the category its exit code or signal names), never `running`.

The lines, each from the source that prints it (cited in parsers/errors.py): paddle.distributed.launch's
"Container rank N status failed cmd [...] code C log ..." after "Container failed !!!" (N is the container's
index in the launcher's pod: a local rank); Paddle's older launcher's "ABORT!!! Out of all N trainers, the
trainer process with rank=[...] was aborted" (global ranks); Paddle's DataLoader process killed by a signal
(SIGKILL: host memory, as torch's DataLoader worker); `colossalai run`'s "Error: failed to run <cmd> on <host>";
the Kubeflow training operator's own "Pod: <ns>.<pod> exited with code C"; mpirun / prterun's "has exited due
to process rank N with PID P on node X exiting improperly / calling "abort"". Negatives: exit code 0, the words
inside other sentences, a run that went on or ended well after them, a cause printed before them. Values in
the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect, exception_category
from diagnose_in_process import the_diagnosis


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


STEPS = "".join(f"epoch 3 step {i * 25} loss {2.1 - i / 40:.4f} lr 0.0003\n" for i in range(1, 7))
END = "Training completed. Do not forget to share your model on huggingface.co/models =)\n"
PADDLE = ("LAUNCH INFO 2024-03-02 08:11:40,512 Pod failed\nLAUNCH ERROR 2024-03-02 08:11:40,513 Container failed !!!\n"
          "Container rank {rank} status failed cmd ['/opt/py/bin/python', '-u', 'fit.py', '--cfg', 'a code 3 log b'] code {code} "
          "log out/workerlog.{rank}\n"
          "LAUNCH INFO 2024-03-02 08:11:40,513 ------------------------- ERROR LOG DETAIL -------------------------\n")  # fmt: skip


@pytest.mark.parametrize(
    "line, expected",
    [
        ("Container rank 2 status failed cmd ['/usr/bin/python3', '-u', 'train.py'] code 1 log log/workerlog.2",
         ("paddle_container_failed", "unknown")),
        ("Container rank 0 status failed cmd ['python', '-u', 'train.py'] code -9 log log/workerlog.0", ("paddle_container_failed", "host_oom")),
        ("Container rank 5 status failed cmd ['python', 'run.py'] code -15 log log/workerlog.5", ("paddle_container_failed", "preempted")),
        ("Container rank 1 status failed cmd ['python', 'run.py'] code -6 log None", ("paddle_container_failed", "unknown")),
        ("ERROR 2021-05-02 10:14:00,649 launch_utils.py:545] ABORT!!! Out of all 4 trainers, the trainer process with rank=[1, 2, 3] "
         "was aborted. Please check its log.", ("paddle_launch_abort", "unknown")),
        ("ABORT!!! Out of all 2 trainers, the trainer process with rank=[] was aborted. Please check its log.",
         ("paddle_launch_abort", "unknown")),
        ("SystemError: (Fatal) DataLoader process (pid 4410) exited is killed by signal: Killed. (at /paddle/paddle/fluid/imperative/"
         "data_loader.cc:181)", ("paddle_dataloader_killed", "host_oom")),
        ("  [Hint: DataLoader process (pid 4410) exited is killed by signal: Bus error.", ("paddle_dataloader_signal", "dataloader_error")),
        ("Error: failed to run torchrun --nproc_per_node=8 --nnodes=2 --node_rank=1 fit.py on 10.4.0.12, is localhost: False, "
         "exception: Encountered a bad command exit code!", ("colossalai_run_failed", "unknown")),
        ("Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 train.py --config config.py on 127.0.0.1",
         ("colossalai_run_failed", "unknown")),
        ('time="2024-05-07T10:02:11Z" level=info msg="Pod: team-b.gpt-ft-worker-3 exited with code 137" job=team-b.gpt-ft uid=77a1',
         ("training_operator_pod_exit", "host_oom")),
        ("INFO[0412] Pod: team-b.gpt-ft-master-0 exited with code 1  job=team-b.gpt-ft replica-type=master uid=77a1",
         ("training_operator_pod_exit", "unknown")),
        ("mpirun has exited due to process rank 3 with PID 0 on", ("mpirun_exited_early", "unknown")),
        ("prterun has exited due to process rank 12 with PID 8812 on", ("mpirun_exited_early", "unknown")),
    ],
)  # fmt: skip
def test_the_lines_that_say_a_worker_failed(line, expected):
    assert rule_and_category(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "Container rank 0 status completed cmd ['python', '-u', 'train.py'] code 0 log log/workerlog.0",
        'time="2024-05-07T10:02:11Z" level=info msg="Pod: team-b.gpt-ft-worker-0 exited with code 0" job=team-b.gpt-ft',
        "the container rank 3 failed to start, retrying",
        "the pod exited with code 1 during the dry run",
        "Error: failed to run the health probe, will retry",
    ],
)
def test_exit_code_0_and_the_same_words_elsewhere_are_not_those_lines(line):
    found = rule_and_category(line)
    assert found is None or found[0] not in {"paddle_container_failed", "training_operator_pod_exit", "colossalai_run_failed"}, found


def test_paddle_s_dataloader_process_killed_in_a_trace_is_host_memory():
    message = "(Fatal) DataLoader process (pid 2318) exited is killed by signal: Killed. (at /paddle/paddle/fluid/imperative/data_loader.cc:181)"
    assert exception_category("SystemError", message) == "host_oom"
    assert exception_category("SystemError", message.replace("Killed.", "Segmentation fault.")) == "python_exception"


# --- whole logs


@pytest.mark.parametrize(
    "tail, category, rank",
    [
        (PADDLE.format(rank=1, code=1), "unknown", 1),
        (PADDLE.format(rank=3, code=-9), "host_oom", 3),
        ("INFO 2021-05-02 10:14:00,648 launch_utils.py:307] terminate all the procs\n"
         "ERROR 2021-05-02 10:14:00,649 launch_utils.py:545] ABORT!!! Out of all 4 trainers, the trainer process with rank=[2, 3] was "
         "aborted. Please check its log.\n", "unknown", 2),
        ("Error: failed to run torchrun --nproc_per_node=4 --nnodes=1 --node_rank=0 fit.py on 127.0.0.1, is localhost: True, "
         "exception: Encountered a bad command exit code!\n", "unknown", None),
        ("--------------------------------------------------------------------------\n"
         "mpirun has exited due to process rank 6 with PID 0 on\nnode gpu-b07 exiting improperly. There are three reasons this could occur:\n",
         "unknown", 6),
    ],
)  # fmt: skip
def test_a_log_that_ends_in_such_a_line_failed(tmp_path, tail, category, rank):
    d = the_diagnosis(tmp_path, STEPS + tail)
    assert (d.category, d.outcome, d.first_failure["rank"]) == (category, "failed", rank), d.summary


def test_the_operator_s_log_of_a_replica_that_exited_is_a_failure(tmp_path):
    text = ('time="2024-05-07T10:01:50Z" level=info msg="PyTorchJob=gpt-ft, ReplicaType=Worker expected=4, running=4, succeeded=0, '
            'failed=0, Replicas=4" job=team-b.gpt-ft\n'
            'time="2024-05-07T10:02:11Z" level=info msg="Pod: team-b.gpt-ft-worker-3 exited with code 137" job=team-b.gpt-ft uid=77a1\n')  # fmt: skip
    assert (the_diagnosis(tmp_path, text).category) == "host_oom"


def test_a_cause_printed_before_the_launcher_s_word_is_the_answer(tmp_path):
    trace = ("Traceback (most recent call last):\n"
             '  File "fit.py", line 61, in <module>\n'
             "    out = model(x)\n"
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB\n")  # fmt: skip
    for tail in (PADDLE.format(rank=0, code=1),
                 "ABORT!!! Out of all 1 trainers, the trainer process with rank=[0] was aborted. Please check its log.\n",
                 "Error: failed to run torchrun --nproc_per_node=1 fit.py on 127.0.0.1, is localhost: True, exception: bad exit code\n"):
        assert the_diagnosis(tmp_path, STEPS + trace + tail).category == "cuda_oom", tail


def test_a_run_that_went_on_or_ended_well_after_such_words_is_not_flipped(tmp_path):
    words = (PADDLE.format(rank=0, code=0).replace("status failed", "status completed")
             + 'time="2024-05-07T10:02:11Z" level=info msg="Pod: team-b.gpt-ft-worker-0 exited with code 0" job=team-b.gpt-ft\n')  # fmt: skip
    assert the_diagnosis(tmp_path, STEPS + words + STEPS).category == "running"
    assert the_diagnosis(tmp_path, STEPS + words + STEPS + END).category == "success"
    # A replica that exited non-zero mid-run is a failure of the attempt even when training went on after it (a
    # restarted pod), as every launcher summary is (srun's task exit, mpirun's abort note).
    restarted = 'time="2024-05-07T10:02:11Z" level=info msg="Pod: team-b.gpt-ft-worker-2 exited with code 1" job=team-b.gpt-ft\n'
    srun = "srun: error: node3: task 2: Exited with exit code 1\n"
    assert the_diagnosis(tmp_path, STEPS + restarted + STEPS + END).category == the_diagnosis(tmp_path, STEPS + srun + STEPS + END).category


# --- the rank: Horovod's shut-down message is an echo of another rank's failure (batch h16n, dev 403)

HOROVOD_ECHO = ("[1,1]<stderr>:Traceback (most recent call last):\n"
                '[1,1]<stderr>:  File "fit.py", line 40, in <module>\n'
                "[1,1]<stderr>:    hvd.allreduce(t)\n"
                "[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks or an "
                "attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was "
                "caused by an exception, you should see the exception in the log before the first shutdown message.\n")  # fmt: skip
MPIRUN_FIRST = ("--------------------------------------------------------------------------\n"
                "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
                "the job to be terminated. The first process to do so was:\n\n"
                "  Process name: [[40112,1],0]\n  Exit code:    1\n"
                "--------------------------------------------------------------------------\n")  # fmt: skip


def test_the_first_process_mpirun_names_is_the_first_failure_not_the_rank_that_echoed_it(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + HOROVOD_ECHO + MPIRUN_FIRST)
    assert (d.category, d.first_failure["rank"]) == ("unknown", 0), d.summary
    # no launcher report: the echo is all the log has
    assert the_diagnosis(tmp_path, STEPS + HOROVOD_ECHO).first_failure["rank"] == 1
    # a cause printed by a rank is still the answer
    oom = "[1,2]<stderr>:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB\n"
    d = the_diagnosis(tmp_path, STEPS + oom + HOROVOD_ECHO + MPIRUN_FIRST)
    assert (d.category, d.first_failure["rank"]) == ("cuda_oom", 2), d.summary


def test_paddle_s_container_line_is_quoted_up_to_its_exit_code(tmp_path):
    # Paddle's default log dir is "log": its line ends "code C log log/workerlog.N", noise in a sentence
    d = the_diagnosis(tmp_path, STEPS + PADDLE.format(rank=0, code=-6).replace("out/workerlog", "log/workerlog"))
    assert d.summary.endswith("code -6."), d.summary  # [h31f] one sentence ends with its period
