"""Rules from batch h24d of issue 16 (fixtures/eval README, "Batch h24d"): a blind draw of the data, storage,
checkpoint, numeric and Python-error slice.

One miss of the batch shows its cause in the log (dev 832, mosaicml/composer#1438): a training container's lines as
docker compose prints them, each behind its container's name and " | " (parsers/lines.py `_COMPOSE`), and under that
prefix a traceback cut inside boto3's S3 transfer manager (pipeline/diagnose/rules.py CUT_TRACEBACK_FRAMES
`object_store_transfer`). The lines below are rebuilt from the sources' format strings and CPython's frame format with
our values, not copied from the fixture."""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from gangscope.parsers.lines import may_be_prefixed, strip_rank_prefixes


@pytest.mark.parametrize(
    "line, stripped, rank",
    [
        # compose v2: the name padded to the widest + 1, " |", " ", the line (cmd/formatter/logs.go)
        ("trainer-1  | Traceback (most recent call last):", "Traceback (most recent call last):", None),
        ("vidrec-trainer-1     |   File \"/app/train.py\", line 12, in <module>", "  File \"/app/train.py\", line 12, in <module>", None),
        # docker-compose 1.x: the widest name gets no pad, then " | " (compose/cli/log_printer.py)
        ("algo-1-x7k2_1 | Uploaded hyperparameters.json to S3", "Uploaded hyperparameters.json to S3", None),
        # coloured on a tty, and the same copied from a terminal with its ESC bytes lost
        ("\x1b[36mtrainer-1  |\x1b[0m epoch 3 done", "epoch 3 done", None),
        ("[33mtrainer-2  |[0m [rank3]: Traceback (most recent call last):", "Traceback (most recent call last):", 3),
        ("trainer-1  |", "", None),
        # near misses: tables and records with a bar, a name with no replica index, no space before the bar
        ("  | Name  | Type       | Params", "  | Name  | Type       | Params", None),
        ("0 | model | GPT2Model  | 124 M", "0 | model | GPT2Model  | 124 M", None),
        ("| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |",
         "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |", None),
        ("trainer | epoch 3 done", "trainer | epoch 3 done", None),
        ("epoch 1 | loss 0.5213", "epoch 1 | loss 0.5213", None),
        ("step_100| loss 0.5213", "step_100| loss 0.5213", None),
    ],
)  # fmt: skip
def test_compose_prefix_and_its_near_misses(line, stripped, rank):
    assert strip_rank_prefixes(line)[:2] == (stripped, rank)


def test_a_compose_line_goes_to_the_prefix_reader():
    assert may_be_prefixed("trainer-1  | Traceback (most recent call last):")
    assert may_be_prefixed("algo-1-x7k2_1 | Killed")


SITE = "/opt/conda/envs/train/lib/python3.10/site-packages"
STEP = "[batch=120/4000]:\n\t Train time/batch: 119\n\t Train loss/train/total: 2.4113\n"
FRAMES = ('Traceback (most recent call last):\n'
          '  File "/workspace/train.py", line 88, in <module>\n'
          '    trainer.fit()\n'
          f'  File "{SITE}/composer/trainer/trainer.py", line 1766, in fit\n'
          '    self._train_loop()\n')  # fmt: skip
UPLOAD = (FRAMES
          + f'  File "{SITE}/boto3/s3/inject.py", line 143, in upload_file\n'
          "    return transfer.upload_file(\n"
          f'  File "{SITE}/boto3/s3/transfer.py", line 288, in upload_file\n'
          "    future.result()\n"
          f'  File "{SITE}/s3transfer/futures.py", line 103, in result\n'
          "    return self._coordinator.result()\n")  # fmt: skip
IN_PARTS = (FRAMES
            + f'  File "{SITE}/botocore/awsrequest.py", line 218, in send\n'
            "    return super().send(str)\n"
            f'  File "{SITE}/s3transfer/upload.py", line 90, in read\n'
            "    data = self._fileobj.read(amount_to_read)\n")  # fmt: skip
DOWNLOAD = (FRAMES
            + f'  File "{SITE}/boto3/s3/inject.py", line 190, in download_file\n'
            "    return transfer.download_file(\n")  # fmt: skip
# botocore alone is any AWS API call (credentials, a listing, a queue), not a transfer of an object
API_CALL = (FRAMES
            + f'  File "{SITE}/botocore/client.py", line 553, in _api_call\n'
            "    return self._make_api_call(operation_name, kwargs)\n")  # fmt: skip


def composed(text: str, name: str = "vidrec-trainer-1") -> str:
    return "".join(f"{name}  | {line}\n" for line in text.splitlines())


@pytest.mark.parametrize(
    "text, category",
    [
        (STEP + UPLOAD, "storage_io"),
        (STEP + IN_PARTS, "storage_io"),
        (STEP + DOWNLOAD, "storage_io"),
        (composed(STEP + IN_PARTS), "storage_io"),
        # near misses: an API call that is no transfer; the exception line present decides, not the frames
        (STEP + API_CALL, "unknown"),
        (STEP + UPLOAD + "KeyboardInterrupt\n", "preempted"),
        # under compose's prefix a finished traceback reads as one too
        (composed(STEP + FRAMES + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
                  "GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free.\n"), "cuda_oom"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


def test_a_cut_transfer_says_where_it_was_raised(tmp_path):
    d = the_diagnosis(tmp_path, composed(STEP + IN_PARTS))
    assert d.outcome == "failed"
    assert "inside an object store's transfer" in d.summary
    # [h34i] the frame quoted as the log printed it (was the key "s3transfer/upload.py:read")
    assert re.search(r'File "[^"]*/s3transfer/upload\.py", line \d+, in read\b', d.summary)
