"""Rules from batch h30b of issue 16 (fixtures/eval README, "Batch h30b"): a second blind draw with no project named, the
queries only a symptom as a user titles a thread.

Two classes of its misses show their cause in the log:
- glibc's __fortify_fail line ("*** stack smashing detected ***: terminated", "*** buffer overflow detected ***: ...",
  debug/fortify_fail.c, stack_chk_fail.c, chk_fail.c): the process aborted on a corrupted stack or an overrun buffer, a
  crash that says what broke and not why (unknown, like malloc_printerr's texts; parsers/errors.py glibc_fortify_abort);
- a DataLoader worker's exception the DataLoader re-raises in the main process (torch < 1.2's `raise
  batch.exc_type(batch.exc_msg)`, later ExceptionWrapper's "Caught X in DataLoader worker process N." with the worker's
  "Original Traceback"), when the worker's own exception is a storage failure (EIO, ESTALE, ENOSPC): the file system under
  the dataset is the cause (storage_io), the DataLoader only carried it (parsers/errors.py CARRIED_CAUSES).
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import found

STEPS = "".join(f"[train] epoch 4 iter {s}/2400 loss 0.{60 - s // 100:02d} lr 2.0e-04\n" for s in range(600, 1000, 100))


@pytest.mark.parametrize(
    "line, hit",
    [
        # glibc >= 2.31's form, and 2.26-2.30's with the program name ("<unknown>" for the stack check)
        ("*** stack smashing detected ***: terminated", ("glibc_fortify_abort", "unknown")),
        ("*** stack smashing detected ***: <unknown> terminated", ("glibc_fortify_abort", "unknown")),
        ("*** buffer overflow detected ***: /opt/conda/bin/python3.10 terminated", ("glibc_fortify_abort", "unknown")),
        ("*** longjmp causes uninitialized stack frame ***: terminated", ("glibc_fortify_abort", "unknown")),
        # near misses: a script's banners in stars are no abort
        ("*** Starting training ***", None),
        ("*** epoch 3 finished ***", None),
        ("**** stack smashing detected ***: terminated in the unit test's expected output, see below", None),
    ],
)  # fmt: skip
def test_glibcs_fortify_line(line, hit):
    assert found(line) == hit


@pytest.mark.parametrize(
    "text, category",
    [
        # the log's last word is the abort: the process crashed, the text does not say why
        (STEPS + "*** stack smashing detected ***: terminated\n", "unknown"),
        (STEPS + "*** stack smashing detected ***: <unknown> terminated\n", "unknown"),
        ("Sanity Checking DataLoader 0: 100%|██████████| 2/2 [00:01<00:00,  1.52it/s]\n"
         "*** buffer overflow detected ***: terminated\nAborted (core dumped)\n", "unknown"),
        # near misses: a cause printed before the abort is the answer (the abort is its effect)
        (STEPS + "Traceback (most recent call last):\n  File \"train.py\", line 141, in <module>\n    loss.backward()\n"
         "RuntimeError: CUDA error: an illegal memory access was encountered\n*** stack smashing detected ***: terminated\n",
         "cuda_error"),
        # starred banners and the run goes on: no failure
        ("*** Starting training ***\n" + STEPS + "*** epoch 4 finished ***\n", "running"),
    ],
)  # fmt: skip
def test_a_fortify_abort_is_a_crash(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


PY = "/opt/conda/lib/python3.10/site-packages"
NEW_HEAD = (
    "Traceback (most recent call last):\n"
    '  File "/srv/jobs/seg/train.py", line 88, in <module>\n    for batch in loader:\n'
    f'  File "{PY}/torch/utils/data/dataloader.py", line 633, in __next__\n    data = self._next_data()\n'
    f'  File "{PY}/torch/utils/data/dataloader.py", line 1345, in _next_data\n    return self._process_data(data)\n'
    f'  File "{PY}/torch/utils/data/dataloader.py", line 1371, in _process_data\n    data.reraise()\n'
    f'  File "{PY}/torch/_utils.py", line 644, in reraise\n    raise exception\n'
)


def caught(exc: str, last_frame: str, message: str) -> str:
    """torch >= 1.2's re-raise: ExceptionWrapper's head line, then the worker's "Original Traceback"."""
    return (
        NEW_HEAD + f"{exc}: Caught {exc} in DataLoader worker process 2.\nOriginal Traceback (most recent call last):\n"
        f'  File "{PY}/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n    data = fetcher.fetch(index)\n'
        f'  File "{PY}/torch/utils/data/_utils/fetch.py", line 51, in fetch\n'
        "    data = [self.dataset[idx] for idx in possibly_batched_index]\n"
        f'  File "/srv/jobs/seg/data.py", line 40, in __getitem__\n    {last_frame}\n'
        f"{exc}: {message}\n"
    )


OLD = (
    "Traceback (most recent call last):\n"
    '  File "main.py", line 212, in <module>\n    for i, (x, y) in enumerate(train_loader):\n'
    "  File \"/usr/lib/python3.6/site-packages/torch/utils/data/dataloader.py\", line 623, in __next__\n"
    "    return self._process_next_batch(batch)\n"
    "  File \"/usr/lib/python3.6/site-packages/torch/utils/data/dataloader.py\", line 658, in _process_next_batch\n"
    "    raise batch.exc_type(batch.exc_msg)\n"
    "{exc}: Traceback (most recent call last):\n"
    "  File \"/usr/lib/python3.6/site-packages/torch/utils/data/dataloader.py\", line 138, in _worker_loop\n"
    "    samples = collate_fn([dataset[i] for i in batch_indices])\n"
    "  File \"/data/work/loader.py\", line 77, in __getitem__\n    {last_frame}\n"
    "{exc}: {message}\n"
)


@pytest.mark.parametrize(
    "text, category",
    [
        # the worker's read failed under it: the storage, not the DataLoader (torch < 1.2 and later forms)
        (STEPS + OLD.format(exc="OSError", last_frame="img = np.load(self.files[idx])", message="[Errno 5] Input/output error"),
         "storage_io"),
        (STEPS + caught("OSError", "arr = np.load(self.paths[i])", "[Errno 5] Input/output error: '/mnt/nfs/ds/shard_0192.npy'"),
         "storage_io"),
        (STEPS + caught("OSError", "with open(self.paths[i], 'rb') as f:", "[Errno 116] Stale file handle: '/lustre/ds/a/0007.jpg'"),
         "storage_io"),
        (STEPS + caught("OSError", "torch.save(sample, self.cache / name)", "[Errno 28] No space left on device"), "storage_io"),
        # near misses: the worker's own error is the dataset's, the DataLoader's category stands (as before)
        (STEPS + caught("KeyError", "label = self.labels[name]", "'frame_000731'"), "dataloader_error"),
        (STEPS + caught("OSError", "img = Image.open(path).convert('RGB')", "image file is truncated (7 bytes not processed)"),
         "dataloader_error"),
        (STEPS + caught("FileNotFoundError", "with open(self.paths[i], 'rb') as f:",
                        "[Errno 2] No such file or directory: '/data/ds/0007.jpg'"), "dataloader_error"),
        (STEPS + OLD.format(exc="ValueError", last_frame="x = x.reshape(8, -1, 8)", message="cannot reshape array of size 24 into "
                            "shape (8,newaxis,8)"), "dataloader_error"),
        # the same storage error outside any DataLoader: storage_io (as before)
        (STEPS + "Traceback (most recent call last):\n  File \"main.py\", line 90, in <module>\n    arr = np.load(path)\n"
         "OSError: [Errno 5] Input/output error\n", "storage_io"),
    ],
)  # fmt: skip
def test_a_workers_storage_error_is_the_storages(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
