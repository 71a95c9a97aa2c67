"""Rules from batch h32b of issue 16 (fixtures/eval README, "Batch h32b"): a fourth blind draw with no project named, the
queries worded as the user's situation.

Two classes of its misses show their cause in the log:

1. The tail of ProcessGroupNCCL::broadcastUniqueNCCLID's error after the C++ frames. The function wraps the store's error as
   "[r] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '...', but
   store->get('...') got error: " + e.what() + ". This may indicate a possible application crash on rank 0 or a network set
   up issue." (pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp); the what() of a c10::Error carries its
   backtrace, so the tail stands alone on the line after the last frame, and a copy cut above the frames holds only it: the
   NCCL id exchange through the store failed, rendezvous_error (parsers/errors.py nccl_unique_id_store_tail).
2. DeepSpeed's launcher teardown (deepspeedai/DeepSpeed deepspeed/launcher/launch.py sigkill_handler): "Killing subprocess N"
   for each worker, printed only when a worker exited non-zero or the launcher got SIGINT / SIGTERM. Alone (a copy cut before
   the launcher's next line) it is a failure with no cause (unknown, rule deepspeed_launcher_killing), and only where nothing
   else failed (pipeline/diagnose/rules.py TEARDOWN_ONLY): its "exits with return code = N" and a worker's own error say
   more. "Main process received SIGTERM, exiting" (printed only when no worker had failed) is a stop from outside:
   preempted (rule deepspeed_launcher_signal).

The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import detected, found

TAIL = ". This may indicate a possible application crash on rank 0 or a network set up issue."
PY = "/opt/venv/bin/python3.11"


def frames(rank: int, first: int = 40) -> str:
    """The last C++ frames of a c10::Error's backtrace as torch 2.2+'s error handler prints them, behind "[rankN]: "."""
    names = ("_PyObject_MakeTpCall", "_PyEval_EvalFrameDefault", "PyEval_EvalCode", "_PyRun_SimpleFileObject", "Py_RunMain",
             "Py_BytesMain")
    out = [f"[rank{rank}]: frame #{first + i}: {name} + 0x{0x51 + 7 * i:x} (0x{0x4f3a10 + 0x100 * i:x} in {PY})"
           for i, name in enumerate(names)]
    out.append(f"[rank{rank}]: frame #{first + len(names)}: __libc_start_main + 0x80 (0x7f0c2219be40 in /lib/x86_64-linux-gnu/libc.so.6)")
    return "".join(line + "\n" for line in out)


def steps(n: int = 6) -> str:
    return "".join(f"{{'loss': {2.31 - 0.07 * i:.4f}, 'grad_norm': 1.{40 + i}, 'learning_rate': 1e-05, 'epoch': 0.0{i + 1}}}\n"
                   for i in range(n))


def cut_traceback(rank: int) -> str:
    return (f"[rank{rank}]: Traceback (most recent call last):\n"
            f"[rank{rank}]:   File \"/srv/work/finetune/train.py\", line 88, in <module>\n"
            f"[rank{rank}]:     main()\n"
            f"[rank{rank}]:   File \"/srv/work/finetune/train.py\", line 71, in main\n"
            f"[rank{rank}]:     trainer.train()\n"
            f"[rank{rank}]:   File \"/opt/venv/lib/python3.11/site-packages/transformers/tra\n")


@pytest.mark.parametrize(
    "line, hit",
    [
        (f"[rank2]: {TAIL}", ("nccl_unique_id_store_tail", "rendezvous_error")),
        (f"[rank13]:{TAIL}", ("nccl_unique_id_store_tail", "rendezvous_error")),
        (TAIL, ("nccl_unique_id_store_tail", "rendezvous_error")),
        # torchrun's --tee prefix before torch's
        (f"[default5]:[rank5]: {TAIL}", ("nccl_unique_id_store_tail", "rendezvous_error")),
        # near misses: the frames alone, and other words of a rank-0 crash
        (f"[rank2]: frame #46: __libc_start_main + 0x80 (0x7f0c2219be40 in /lib/x86_64-linux-gnu/libc.so.6)", None),
        ("[rank2]: Rank 0 may have crashed; waiting for the network to come back", None),
        ("INFO: a network set up issue was fixed on rank 0 (cable replaced)", None),
    ],
)  # fmt: skip
def test_the_tail_line(line, hit):
    assert found(line) == hit


def test_the_tail_passes_the_detectors_prefilter():
    assert detected(f"[rank2]: {TAIL}") == ("nccl_unique_id_store_tail", "rendezvous_error")


def test_frames_then_the_tail_then_another_ranks_cut_traceback(tmp_path):
    d = the_diagnosis(tmp_path, frames(5) + f"[rank5]: {TAIL}\n" + cut_traceback(6))
    assert d.category == "rendezvous_error", d.summary
    assert d.first_failure and d.first_failure.get("rank") == 5, d.first_failure


def test_the_tail_after_a_run_of_steps(tmp_path):
    d = the_diagnosis(tmp_path, steps() + frames(1) + f"[rank1]: {TAIL}\n")
    assert d.category == "rendezvous_error", d.summary


def test_the_whole_message_on_one_line(tmp_path):
    # the catch (...) branch: no what() in the middle, the head and the tail on one line
    line = ("[rank3]: torch.distributed.DistBackendError: Unknown exception while [3] is setting up NCCL communicator and "
            "retrieving ncclUniqueId from [0] via c10d key-value store by key '0:1'" + TAIL)
    d = the_diagnosis(tmp_path, steps(2) + line + "\n")
    assert d.category == "rendezvous_error", d.summary


def test_rank_zeros_own_crash_before_the_tail_is_the_cause(tmp_path):
    # rank 0 ran out of GPU memory before it published the id: the others' tail is its effect
    oom = ("[rank0]: Traceback (most recent call last):\n"
           "[rank0]:   File \"/srv/work/finetune/train.py\", line 64, in main\n"
           "[rank0]:     model = model.to(device)\n"
           "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of "
           "23.64 GiB of which 1.02 GiB is free.\n")
    d = the_diagnosis(tmp_path, oom + frames(1) + f"[rank1]: {TAIL}\n")
    assert d.category == "cuda_oom", d.summary



def ds(time: str, message: str, level: str = "INFO", line: int = 319) -> str:
    """A line of DeepSpeed's launcher logger ("[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s")."""
    return f"[2025-02-14 07:21:{time}] [{level}] [launch.py:{line}:sigkill_handler] {message}\n"


def ds_steps(n: int = 5) -> str:
    return "".join(f"[2025-02-14 07:20:{10 + i:02d},{100 + i:03d}] [INFO] [logging.py:128:log_dist] [Rank 0] step={40 + i}, "
                   f"skipped=0, lr=[2.9e-05], mom=[(0.9, 0.95)]\n" for i in range(n))


KILLS = ds("33,402", "Killing subprocess 71220") + ds("33,403", "Killing subprocess 71221") + ds("33,405", "Killing subprocess 71222")


@pytest.mark.parametrize(
    "line, hit",
    [
        (ds("33,402", "Killing subprocess 71220").rstrip("\n"), ("deepspeed_launcher_killing", "unknown")),
        ("worker-7: " + ds("33,402", "Killing subprocess 71220", line=428).rstrip("\n"), ("deepspeed_launcher_killing", "unknown")),
        (ds("33,410", "Main process received SIGTERM, exiting").rstrip("\n"), ("deepspeed_launcher_signal", "preempted")),
        (ds("33,410", "Main process received SIGINT, exiting", line=434).rstrip("\n"), ("deepspeed_launcher_signal", "preempted")),
        # near misses: Composer's launcher (its own words, after a failure it reports itself), the words without the
        # launcher's logger, a signal the handler does not name
        ("Killing subprocess 48211 with SIGTERM", None),
        ("Killing subprocess 71220", None),
        (ds("33,410", "Main process received SIGHUP, exiting").rstrip("\n"), None),
    ],
)  # fmt: skip
def test_the_launchers_teardown_lines(line, hit):
    assert found(line) == hit


def test_the_teardown_passes_the_detectors_prefilter():
    assert detected(ds("33,402", "Killing subprocess 71220").rstrip("\n")) == ("deepspeed_launcher_killing", "unknown")
    assert detected(ds("33,410", "Main process received SIGTERM, exiting").rstrip("\n")) == ("deepspeed_launcher_signal", "preempted")


def test_the_teardown_alone_is_a_failure_with_no_cause(tmp_path):
    d = the_diagnosis(tmp_path, ds_steps() + KILLS)
    assert d.category == "unknown", d.summary
    assert "launcher's teardown" in d.summary, d.summary


def test_the_teardown_then_the_exit_code_names_the_cause(tmp_path):
    cmd = "['/opt/venv/bin/python3.11', '-u', 'train.py', '--local_rank=2', '--deepspeed', 'ds_config.json']"
    d = the_diagnosis(tmp_path, ds_steps() + KILLS + ds("33,690", f"{cmd} exits with return code = -9", "ERROR", 325))
    assert d.category == "host_oom", d.summary
    d = the_diagnosis(tmp_path, ds_steps() + KILLS + ds("33,690", f"{cmd} exits with return code = 1", "ERROR", 325))
    assert d.category == "unknown", d.summary
    assert "exits with return code = 1" in d.summary, d.summary


def test_a_workers_own_error_before_the_teardown_is_the_cause(tmp_path):
    trace = ("Traceback (most recent call last):\n  File \"/srv/work/train.py\", line 140, in <module>\n    batch = next(it)\n"
             "ValueError: too many values to unpack (expected 2)\n")
    d = the_diagnosis(tmp_path, ds_steps() + trace + KILLS)
    assert d.category == "python_exception", d.summary


def test_the_launcher_signalled_is_a_stop_from_outside(tmp_path):
    d = the_diagnosis(tmp_path, ds_steps() + KILLS + ds("33,410", "Main process received SIGTERM, exiting"))
    assert d.category == "preempted", d.summary


def test_composers_kill_lines_stay_what_they_were(tmp_path):
    text = ds_steps() + "".join(f"Killing subprocess {71220 + i} with SIGTERM\n" for i in range(3))
    d = the_diagnosis(tmp_path, text)
    assert d.category == "running", d.summary
