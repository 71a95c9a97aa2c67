"""Rules from batch h16k of issue 16 (fixtures/eval README): a launcher's or a runner's exception for a
child process that failed is a symptom, not the cause.

accelerate's simple_launcher, DeepSpeed's launch.py sigkill_handler, torch.distributed.launch before 1.9
and any `subprocess.run(..., check=True)` raise `subprocess.CalledProcessError` ("Command '[...]'
returned non-zero exit status N.", CPython Lib/subprocess.py) when their child exits non-zero; Ray's
`ray.get` raises `RayTaskError(X)` for a remote task's exception and Tune its `TuneError("Trial raised an
exception. Traceback: ...")`. The child's own error, printed above them, is the answer; alone they say
only that the attempt failed (`unknown`). A build step's or a tool's command (ninja, the compiler) is
the error itself and keeps its category. Values in the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import child_failure_wrapper
from diagnose_in_process import the_diagnosis


@pytest.mark.parametrize(
    "exc_type, message, expected",
    [
        ("subprocess.CalledProcessError", "Command '['/opt/venv/bin/python', '-u', 'train.py', '--local_rank=0']' returned non-zero exit status 1.",
         "subprocess_child_failed"),
        ("CalledProcessError", "Command '['C:\\\\venv\\\\Scripts\\\\python.exe', './train_network.py']' returned non-zero exit status 2.",
         "subprocess_child_failed"),
        ("subprocess.CalledProcessError", "Command '['runner_env', 'task-exec', '--inputs', 's3://b/in.pb']' died with <Signals.SIGSEGV: 11>.",
         "subprocess_child_failed"),
        # a paste cut inside the command
        ("subprocess.CalledProcessError", "Command '['/opt/venv/bin/python', '-u', 'run_clm.py', '--local_rank=0', '--eval_steps', '2",
         "subprocess_child_failed"),
        ("ray.exceptions.RayTaskError(RuntimeError)", "ray::TorchTrainable.train_buffered() (pid=4127, ip=10.42.7.19)", "ray_task_error"),
        ("RayTaskError(ValueError)", "ray::TrainTrainable.train() (pid=77, ip=10.0.0.2)", "ray_task_error"),
        ("ray.tune.error.TuneError", "Trial raised an exception. Traceback:", "tune_trial_error"),
        # not these: a build step or a tool, Tune's other errors, an ordinary exception
        ("subprocess.CalledProcessError", "Command '['ninja', '-v']' returned non-zero exit status 1.", None),
        ("subprocess.CalledProcessError", "Command '['where', 'cl']' returned non-zero exit status 1.", None),
        ("subprocess.CalledProcessError", "Command '['/usr/local/cuda/bin/nvcc', '--version']' returned non-zero exit status 1.", None),
        ("ray.tune.error.TuneError", "('Trials did not complete', [TorchTrainer_1a2b3_00000])", None),
        ("RuntimeError", "Command '['python', 'x.py']' returned non-zero exit status 1.", None),
    ],
)
def test_which_exceptions_report_a_childs_failure(exc_type, message, expected):
    assert child_failure_wrapper(exc_type, message) == expected


ACCELERATE = (
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/bin/accelerate", line 8, in <module>\n'
    "    sys.exit(main())\n"
    '  File "/opt/venv/lib/python3.10/site-packages/accelerate/commands/launch.py", line 1199, in launch_command\n'
    "    simple_launcher(args)\n"
    '  File "/opt/venv/lib/python3.10/site-packages/accelerate/commands/launch.py", line 778, in simple_launcher\n'
    "    raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)\n"
    "subprocess.CalledProcessError: Command '['/opt/venv/bin/python3.10', 'finetune.py', '--epochs', '3']' returned non-zero exit status 1.\n"
)
DEEPSPEED = (
    "[2024-05-02 10:11:12,001] [INFO] [launch.py:131:sigkill_handler] Killing subprocess 5182\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.8/site-packages/deepspeed/launcher/launch.py", line 156, in main\n'
    "    sigkill_handler(signal.SIGTERM, None)  # not coming back\n"
    '  File "/opt/venv/lib/python3.8/site-packages/deepspeed/launcher/launch.py", line 137, in sigkill_handler\n'
    "    raise subprocess.CalledProcessError(returncode=last_return_code, cmd=cmd)\n"
    "subprocess.CalledProcessError: Command '['/opt/venv/bin/python', '-u', 'pretrain.py', '--local_rank=0']' returned non-zero exit status 1.\n"
)


def child_trace(last: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "pretrain.py", line 40, in <module>\n'
            "    main()\n"
            '  File "pretrain.py", line 31, in main\n'
            "    batch = shards[step]\n"
            f"{last}\n")


def test_the_launchers_error_alone_is_unknown(tmp_path):
    for text in (ACCELERATE, DEEPSPEED):
        d = the_diagnosis(tmp_path, text)
        assert (d.outcome, d.category) == ("failed", "unknown"), text
        assert "CalledProcessError" in d.summary


def test_the_childs_error_above_the_launchers_is_the_answer(tmp_path):
    d = the_diagnosis(tmp_path, child_trace("IndexError: list index out of range") + DEEPSPEED)
    assert d.category == "python_exception"
    assert "IndexError" in d.summary
    d = the_diagnosis(tmp_path, child_trace("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB") + ACCELERATE)
    assert d.category == "cuda_oom"


def test_a_child_killed_by_sigkill_stays_host_oom(tmp_path):
    text = ACCELERATE.replace("returned non-zero exit status 1.", "died with <Signals.SIGKILL: 9>.")
    assert the_diagnosis(tmp_path, text).category == "host_oom"


def test_a_build_steps_failure_keeps_its_category(tmp_path):
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.10/site-packages/torch/utils/cpp_extension.py", line 2100, in _run_ninja_build\n'
            "    subprocess.run(command, stdout=stdout_fileno, stderr=subprocess.STDOUT, cwd=build_directory, check=True, env=env)\n"
            "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n")
    assert the_diagnosis(tmp_path, text).category == "python_exception"


def test_mpirun_tagged_runner_error_is_unknown_on_its_rank(tmp_path):
    text = "".join(f"[1,0]<stderr>:{line}\n" for line in DEEPSPEED.splitlines()[1:])
    d = the_diagnosis(tmp_path, text)
    assert d.category == "unknown"
    assert d.first_failure["rank"] == 0


def test_tunes_trial_error_with_its_traceback_cut_is_unknown(tmp_path):
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.6/site-packages/ray/worker.py", line 2121, in get\n'
            "    raise value.as_instanceof_cause()\n"
            "ray.exceptions.RayTaskError(TuneError): ray_WrappedTrackFunc:train() (pid=2740, ip=10.1.2.3)\n"
            '  File "/opt/venv/lib/python3.6/site-packages/ray/tune/function_runner.py", line 242, in _report_thread_runner_error\n'
            "    .format(err_tb_str)))\n"
            "ray.tune.error.TuneError: Trial raised an exception. Traceback:\n"
            "ray_WrappedTrackFunc:train() (pid=2740, ip=10.1.2.3)\n"
            '  File "/opt/venv/lib/python3.6/site-packages/ray/tune/function_runner.py", line 97, in run\n'
            "    self._entrypoint()\n"
            '  File "/opt/venv\n')
    d = the_diagnosis(tmp_path, text)
    assert (d.outcome, d.category) == ("failed", "unknown")


def test_the_launchers_exception_line_alone_is_unknown_and_the_childs_line_wins(tmp_path):
    wrapper = "subprocess.CalledProcessError: Command '['/usr/bin/python', 'train.py']' returned non-zero exit status 1.\n"
    steps = "epoch 0 step 3 loss 2.1\n"
    assert the_diagnosis(tmp_path, steps + wrapper).category == "unknown"
    d = the_diagnosis(tmp_path, steps + wrapper + "[rank1]: IndexError: list index out of range\n")
    assert d.category == "python_exception" and "IndexError" in d.summary
