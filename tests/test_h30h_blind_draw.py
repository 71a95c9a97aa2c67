"""Batch h30h of issue 16 (fixtures/eval README, "Batch h30h"): a blind draw of the categories the symptom-only draws
never reached (host_oom, rendezvous_error, gpu_hardware, preempted, node_failure, pods_ready_timeout, success), each
query a symptom plus a long-tail research project. Its six logs (dev 1256-1261) were all answered right as they came,
so no rule was written; these tests pin the readings the batch relies on and their near misses, so that a later rule
cannot turn them:
- Python's builtin `MemoryError` closing a traceback, bare or with numpy's message (parsers/errors.py memory_error,
  python/cpython Objects/exceptions.c; numpy_array_memory_error, numpy/_core/_exceptions.py `_ArrayMemoryError`,
  numpy/core/ before 2.0) is host_oom; the word inside a log line that is no exception line is not a failure, and a
  DataLoader worker's `Caught MemoryError in DataLoader worker process N` (torch/_utils.py ExceptionWrapper.reraise)
  stays dataloader_error;
- the shell's `Aborted` / `Aborted (core dumped)` (SIGABRT) with no line that says why is unknown (Silent stops rule 2);
- PaddlePaddle's TCP store client retrying (`tcp_utils.cc:107] Retry to connect to <addr>:<port> while the server is
  not yet listening.`, paddle/phi/core/distributed/store/tcp_utils.cc), a UserWarning followed by printed counts, and
  DeepSpeed's config dump cut mid-line (deepspeed/runtime/config.py print) only stop: running (Silent stops rule 3).
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

FRAMES = 'Traceback (most recent call last):\n  File "/srv/seg/train.py", line 78, in main\n    y = (y > 0).astype(int)\n'
STEPS = "".join(f"epoch 1 step {s}/400 loss 0.{60 - s // 10:02d}\n" for s in (100, 120, 140))
SHAPE = "for an array with shape (91000, 91000) and data type float64"

CASES = [
    pytest.param(STEPS + FRAMES + "MemoryError\n", "host_oom", id="bare-MemoryError"),
    pytest.param(FRAMES + "MemoryError: Unable to allocate array with shape (91000, 91000) and data type float64\n",
                 "host_oom", id="numpy-1.17-MemoryError"),
    pytest.param(FRAMES + f"numpy.core._exceptions._ArrayMemoryError: Unable to allocate 61.7 GiB {SHAPE}\n",
                 "host_oom", id="numpy-1.x-ArrayMemoryError"),
    pytest.param(FRAMES + f"numpy._core._exceptions._ArrayMemoryError: Unable to allocate 61.7 GiB {SHAPE}\n",
                 "host_oom", id="numpy-2-ArrayMemoryError"),
    # near misses
    pytest.param(STEPS + "INFO prefetch: caught MemoryError, retrying with a smaller chunk\n" + STEPS, "running",
                 id="MemoryError-in-a-log-line"),
    pytest.param(FRAMES.replace("y = (y > 0).astype(int)", "for batch in loader:")
                 + "RuntimeError: Caught MemoryError in DataLoader worker process 0.\n", "dataloader_error",
                 id="DataLoader-worker-MemoryError"),
    pytest.param("Generated 32 train batches of size 48 in 5.117 sec\nGenerated 48 test batches of size 48 in 9.804 sec\n"
                 "Aborted\n", "unknown", id="shell-Aborted"),
    pytest.param(STEPS + "Aborted (core dumped)\n", "unknown", id="shell-Aborted-core-dumped"),
    pytest.param("".join(f"I0611 02:14:{7 + 3 * i:02d}.402916 2207341 tcp_utils.cc:107] Retry to connect to "
                         "10.31.7.22:48213 while the server is not yet listening.\n" for i in range(6)),
                 "running", id="paddle-store-retries"),
    pytest.param('train_zsd.py:367: UserWarning: Output "nms" missing from loss dictionary. We assume this was done '
                 'on purpose, and we will not be expecting any data to be passed to "nms" during training.\n'
                 "  optimizer=keras.optimizers.adam(lr=1e-5, clipnorm=0.001)\n311\n318\n", "running",
                 id="UserWarning-then-counts"),
    pytest.param("".join(f"[2024-11-13 09:27:41,208] [INFO] [config.py:964:print]   {k} {'.' * (29 - len(k))} {v}\n"
                         for k, v in (("optimizer_name", "adamw"), ("pld_enabled", "False"),
                                      ("prescale_gradients", "False"), ("scheduler_name", "WarmupLR")))
                 + "[2024-11-13 09:27:41,208] [INFO] [config.py:964:print]   sp\n", "running",
                 id="deepspeed-config-dump-cut"),
]


@pytest.mark.parametrize("text, category", CASES)
def test_h30h_readings(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
