"""A process's own last word that it died, naming no cause (issue 16, helper h16s, session 18; batch h16s-2 of
fixtures/eval/README.md): CPython's "Extension modules:" list after a fatal error, the notebook's kernel-died
dialog and jupyter_client's restarter, libtpu's coredump hook, a glibc backtrace_symbols frame. Each is `unknown`
alone, gives way to a cause printed beside it, and never matches a healthy line. Values in the texts are ours;
the CPython lines are what CPython 3.11.7 printed for Py_FatalError with yaml loaded."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect
from diagnose_in_process import the_diagnosis


def rule_and_category(line: str) -> tuple[str, str] | None:
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


@pytest.mark.parametrize(
    "line, rule",
    [
        ("Extension modules: yaml._yaml (total: 1)", "cpython_fatal_extension_modules"),
        ("Extension modules: numpy.core._multiarray_umath, numpy.linalg._umath_linalg, torch._C, torch._C._fft, C",
         "cpython_fatal_extension_modules"),
        ("2026-02-28 17:01:34.877003621  Extension modules: numpy.core._multiarray_umath, numpy.random._common",
         "cpython_fatal_extension_modules"),
        ("The kernel appears to have died. It will restart automatically.", "jupyter_kernel_died"),
        ("The kernel for notebooks/train_lora.ipynb appears to have died. It will restart automatically.", "jupyter_kernel_died"),
        ("The kernel has died, and the automatic restart has failed. It is possible the kernel cannot be restarted.",
         "jupyter_kernel_died"),
        ("[I 2026-03-02 10:41:07.112 ServerApp] AsyncIOLoopKernelRestarter: restarting kernel (1/5), keep random ports",
         "jupyter_kernel_restarting"),
        ("E0611 01:47:19.402816   11873 coredump_hook.cc:250] RAW: Remote crash gathering disabled for SIGTERM.", "tpu_coredump_hook"),
        ("E0531 07:47:31.003927   10044 coredump_hook.cc:470] RAW: Remote crash data gathering hook invoked.", "tpu_coredump_hook"),
        ("E0531 07:47:31.003936   10044 coredump_hook.cc:509] RAW: Skipping coredump since rlimit was 0 at process start.",
         "tpu_coredump_hook"),
        ("ray::WorkerDict(PyEval_EvalCode+0xae) [0x5f450e] PyEval_EvalCode", "native_backtrace_frame"),
        ("ray::WorkerDict() [0x6198b7] run_eval_code_obj", "native_backtrace_frame"),
        ("/usr/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0x8b) [0x7f3a1c81e28b] __libc_start_main", "native_backtrace_frame"),
        ("/opt/envs/rl/lib/python3.10/site-packages/ray/_raylet.so(+0xd0cd38) [0x147f23263d38] EventTracker::RecordExecution()",
         "native_backtrace_frame"),
        ("./train_bin(main+0x3c) [0x446e3c]", "native_backtrace_frame"),
    ],
)  # fmt: skip
def test_a_process_s_last_word_is_a_crash(line, rule):
    assert rule_and_category(line) == (rule, "unknown")


@pytest.mark.parametrize(
    "line",
    [
        "Python C extension modules: none found",
        "From a python standpoint ... compiled into extension modules: python classes and functions",
        "Plus optional extension modules: `mcp`, `acp`, `skill`.",
        "The kernel size is 3 and the stride 2",
        "The kernel ran 12.4 ms",
        "[I 2026-03-02 10:41:07.112 ServerApp] Kernel started: 8c0e1f3a-7d11-4b2e-9a3f-0d6c2b1e5a77",
        "I0611 01:47:19.402816   11873 main.cc:12] RAW: starting",
        "addr (0x7f3a) [0x1000] mapped",
        "{'loss': 3.8846, 'grad_norm': 91.30518290427155, 'learning_rate': 6.5869016254112e-06, 'epoch': 0.01}",
    ],
)
def test_healthy_lines_are_no_failure(line):
    found = rule_and_category(line)
    assert found is None or found[0] not in {"cpython_fatal_extension_modules", "jupyter_kernel_died", "jupyter_kernel_restarting",
                                             "tpu_coredump_hook", "native_backtrace_frame"}  # fmt: skip


def test_a_notebook_run_whose_kernel_died_is_no_run_still_going(tmp_path):
    text = ("Epoch 1/20\n"
            "120/120 [==============================] - 41s 330ms/step - loss: 0.6012 - accuracy: 0.7113\n"
            "Epoch 2/20\n"
            " 37/120 [========>.....................] - ETA: 27s - loss: 0.5120 - accuracy: 0.7561\n"
            "The kernel appears to have died. It will restart automatically.\n")  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.outcome) == ("unknown", "failed")


def test_frames_of_a_ray_worker_s_stack_are_a_crash(tmp_path):
    text = "".join(f"(WorkerDict pid=51022) {frame}\n" for frame in (
        "ray::WorkerDict(PyObject_Vectorcall+0x51) [0x543141] PyObject_Vectorcall",
        "ray::WorkerDict(_PyEval_EvalFrameDefault+0x57a) [0x5295ba] _PyEval_EvalFrameDefault",
        "ray::WorkerDict(Py_BytesMain+0x39) [0x5dfbb9] Py_BytesMain",
        "/usr/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0x8b) [0x7f1c2e01e28b] __libc_start_main"))  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "unknown"


def test_the_extension_list_gives_way_to_the_cause_printed_beside_it(tmp_path):
    text = ("terminate called after throwing an instance of 'c10::Error'\n"
            "  what():  CUDA error: an illegal memory access was encountered\n"
            "Fatal Python error: Aborted\n"
            "\n"
            "Extension modules: numpy.core._multiarray_umath, torch._C, torch._C._fft, yaml._yaml (total: 4)\n")  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "cuda_error"


def test_a_healthy_cut_log_stays_running(tmp_path):
    text = ("{'loss': 4.2183, 'grad_norm': 163.5025811970144, 'learning_rate': 5.9471958951168165e-06, 'epoch': 0.0}\n"
            "{'loss': 3.8846, 'grad_norm': 91.30518290427155, 'learning_rate': 6.5869016254112e-06, 'epoch': 0.01}\n"
            "[I 2026-03-02 10:41:07.112 ServerApp] Saving file at /train.ipynb\n")  # fmt: skip
    assert the_diagnosis(tmp_path, text).category == "running"
