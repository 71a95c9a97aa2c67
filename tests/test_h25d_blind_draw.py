"""Rules from batch h25d of issue 16 (fixtures/eval README, "Batch h25d"): a blind draw of frameworks the sets hold few of.

Two misses of the batch had a prefix on every line that no reader took off, so the traceback under it was never read:
- dev 865 (tensorflow/tensorflow#53098): a log viewer's table pasted into a GitHub comment, which GitHub's paste handler
  writes as a Markdown table ("\u00a0 | \u00a0 | \u00a0 | <time> | <line>"; github/paste-markdown
  src/paste-markdown-table.ts), parsers/lines.py `_PASTED_TABLE_ROW`;
- dev 869 (NVIDIA-NeMo/Speech#12473): torchx's and NeMo-Run's "<role>/<replica> " before torchrun's "[default1]:"
  (pytorch/torchx torchx/util/log_tee_helpers.py, NVIDIA/NeMo-Run src/nemo_run/run/logs.py), parsers/lines.py `_TORCHX`.
The lines below are rebuilt from the sources' format strings and CPython's frame format with our values, not copied
from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from gangscope.parsers.lines import may_be_prefixed, strip_rank_prefixes

NBSP = "\u00a0"


@pytest.mark.parametrize(
    "line, stripped, rank, local_rank",
    [
        # torchx / NeMo-Run: "<role>/<replica> " then torchrun's --tee prefix "[<role><local rank>]:"
        ("nemo.collections.llm.api.pretrain/0 [default1]:Traceback (most recent call last):",
         "Traceback (most recent call last):", None, 1),
        ("trainer/2 [default0]:  File \"/workspace/train.py\", line 40, in <module>",
         "  File \"/workspace/train.py\", line 40, in <module>", None, 0),
        # a copy cut at the left, as the search copies show it, and both prefixes of torch stacked after it
        ("i.pretrain/0 [default3]:[rank3]: RuntimeError: boom", "RuntimeError: boom", 3, 3),
        # green on a tty (cmd_log's GREEN / ENDC), with and without the ESC byte
        ("\x1b[32mtrainer/0\x1b[0m [default0]:epoch 1 done", "epoch 1 done", None, 0),
        ("[32mtrainer/1[0m [default1]:epoch 1 done", "epoch 1 done", None, 1),
        # near misses: no torchrun prefix after it, a fraction, a path, a date, a bar, a bracket that is no prefix
        ("trainer/0 epoch 1 done", "trainer/0 epoch 1 done", None, None),
        ("step 10/100 [00:01<00:09, 9.8it/s]", "step 10/100 [00:01<00:09, 9.8it/s]", None, None),
        ("10/100 [00:01<00:09]: done", "10/100 [00:01<00:09]: done", None, None),
        ("data/0 [INFO]: loaded 3 shards", "data/0 [INFO]: loaded 3 shards", None, None),
        ("checkpoints/12 [saved]: ok", "checkpoints/12 [saved]: ok", None, None),
        ("08/07/2021 02:16:27 - INFO - [main]: start", "08/07/2021 02:16:27 - INFO - [main]: start", None, None),
    ],
)  # fmt: skip
def test_torchx_prefix_and_its_near_misses(line, stripped, rank, local_rank):
    assert strip_rank_prefixes(line) == (stripped, rank, local_rank)


@pytest.mark.parametrize(
    "line, stripped, rank",
    [
        # GitHub's paste of a viewer's table: empty cells (a no-break space each), the time, the line
        (f"{NBSP} | {NBSP} | {NBSP} | 2026-03-08 09:14:52 | File \"/usr/lib/python3/dist-packages/keras/engine/training.py\", line 267, in f",
         "File \"/usr/lib/python3/dist-packages/keras/engine/training.py\", line 267, in f", None),
        # the same as a rendered copy shows it (the no-break spaces as blanks)
        ("  |   |   | 2026-03-08 09:14:52 | INFO:tensorflow:Cluster is ready.", "INFO:tensorflow:Cluster is ready.", None),
        (f"{NBSP} | 2026-03-08T09:14:52.118Z | [rank2]: Traceback (most recent call last):", "Traceback (most recent call last):", 2),
        ("  |   | 2026-03-08 09:14:52,311 | ", "", None),
        # near misses: loguru's own record (no empty cell first), Lightning's summary table, nvidia-smi's box,
        # a Markdown table of numbers, a row with no time cell
        ("2026-07-26 04:37:11.717 | INFO     | utils.train:start:110 - Epoch: 3",
         "2026-07-26 04:37:11.717 | INFO     | utils.train:start:110 - Epoch: 3", None),
        ("  | Name  | Type       | Params", "  | Name  | Type       | Params", None),
        ("|   0  NVIDIA A100-SXM4-80GB  On   | 00000000:07:00.0 Off |                    0 |",
         "|   0  NVIDIA A100-SXM4-80GB  On   | 00000000:07:00.0 Off |                    0 |", None),
        ("  |   | 0.5213 | 0.4981 |", "  |   | 0.5213 | 0.4981 |", None),
        ("  |   | worker-1 | Traceback (most recent call last):", "  |   | worker-1 | Traceback (most recent call last):", None),
    ],
)  # fmt: skip
def test_pasted_table_row_and_its_near_misses(line, stripped, rank):
    assert strip_rank_prefixes(line)[:2] == (stripped, rank)


def test_both_go_to_the_prefix_reader():
    assert may_be_prefixed("i.pretrain/0 [default1]:Traceback (most recent call last):")
    assert may_be_prefixed(f"{NBSP} | {NBSP} | 2026-03-08 09:14:52 | Traceback (most recent call last):")


SITE = "/usr/local/lib/python3.12/dist-packages"
# Both copies start inside the traceback (its header above the copy) and stop before its exception line.
NEMO_CUT = (f'  File "{SITE}/nemo_run/core/runners/fdl_runner.py", line 62, in fdl_direct_run\n'
            "    fdl_fn()\n"
            '  File "/opt/NeMo/nemo/collections/llm/api.py", line 98, in train\n'
            "    app_state = _setup(\n"
            '  File "/opt/NeMo/nemo/lightning/resume.py", line 44, in _try_restore_tokenizer\n'
            '    tokenizer = load_context(ckpt_path, "model.tokenizer")\n')  # fmt: skip
TF_CUT = ('File "/workspace/train.py", line 88, in <module>\n'
          "model = build_model()\n"
          'File "/usr/local/lib/python3.8/dist-packages/keras/engine/training.py", line 267, in _init_batch_counters\n'
          "self._train_counter = tf.Variable(0, dtype='int64', aggregation=agg)\n")  # fmt: skip


def torchx(text: str, role: str = "nemo.collections.llm.api.pretrain", local_rank: int = 1) -> str:
    return "".join(f"{role}/0 [default{local_rank}]:{line}\n" for line in text.splitlines())


def pasted(text: str) -> str:
    return "".join(f"{NBSP} | {NBSP} | {NBSP} | 2026-03-08 09:14:52 | {line.strip()}\n" for line in text.splitlines())


@pytest.mark.parametrize(
    "text, category",
    [
        # a traceback cut before its exception line under either prefix: a failure whose cause the text does not give
        (torchx(NEMO_CUT), "unknown"),
        (pasted(TF_CUT), "unknown"),
        # with the exception line, it decides under either prefix
        (torchx(NEMO_CUT + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
                "GPU 1 has a total capacity of 79.15 GiB of which 1.02 GiB is free.\n"), "cuda_oom"),
        (pasted(TF_CUT + "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor "
                "with shape[4096,4096] and type float on /job:worker/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"),
         "cuda_oom"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
