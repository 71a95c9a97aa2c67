"""The rules written from batch h27c's build half (fixtures/formats/failure_lines.json, `"batch": "h27c"`), with near misses.

Batch h27c is the failure lines of programs' own bugs and of the frameworks around training: DDP's reducer, TORCH_DISTRIBUTED_DEBUG,
FSDP, torch.distributed.checkpoint, glibc's malloc aborts, libstdc++'s terminate handler, HF datasets, accelerate, orbax,
Megatron-Core's dist_checkpointing, DeepSpeed, jax.distributed, Rust panics, wandb. Each rule cites its source beside it in
gangscope/parsers/errors.py (blocks marked h27c). The lines below are written with our own values in the printers' wordings;
the near misses are lines that must not match.
"""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import read_line
from gangscope.parsers.errors import GLIBC_MALLOC_ABORTS, LINE_RULES, PREFILTER, detect, first_trace_rule
from gangscope.parsers.tool_exits import TOOL_EXIT_PREFILTER

RULES = {r.name: r for r in LINE_RULES}


read = read_line  # (tests/rule_reference.py: the one copy)


@pytest.mark.parametrize("text", GLIBC_MALLOC_ABORTS)
def test_every_malloc_printerr_text_is_read_behind_the_anchored_prefilter(text):
    assert read(text) == ("glibc_malloc_abort", "unknown")
    assert read(text + "\n") == ("glibc_malloc_abort", "unknown")


@pytest.mark.parametrize(
    "line, expected",
    [
        ("*** Error in `/opt/conda/bin/python': free(): invalid pointer: 0x00007f3a2c0011e0 ***", ("glibc_malloc_abort_old", "unknown")),
        ("*** Error in `python3': corrupted double-linked list: 0x000055d1c0a3e2f0 ***", ("glibc_malloc_abort_old", "unknown")),
        ("terminate called without an active exception", ("cxx_terminate_no_exception", "unknown")),
        ("terminate called recursively", ("cxx_terminate_no_exception", "unknown")),
        ("pure virtual method called", ("cxx_terminate_no_exception", "unknown")),
        ("deleted virtual method called", ("cxx_terminate_no_exception", "unknown")),
        ("thread '<unnamed>' panicked at /root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tokenizers-0.20.3/src/models/"
         "bpe/word.rs:72:9:", ("rust_panic", "python_exception")),
        ("thread 'tokio-runtime-worker' panicked at src/lib.rs:88:14:", ("rust_panic", "python_exception")),
        ("ERROR:datasets.packaged_modules.csv.csv:Failed to read file '/data/p/part-3.csv' with error <class 'UnicodeDecodeError'>: "
         "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte", ("datasets_file_read_failed", "dataloader_error")),
        ("Failed to convert pandas DataFrame to Arrow Table from file '/data/sft/a.json' with error <class 'pyarrow.lib.ArrowInvalid'>: "
         "Could not convert 'x' with type str: tried to convert to int64", ("datasets_file_read_failed", "dataloader_error")),
        ("[2026-12-04 03:41:07,552] [ERROR] [engine.py:3364:_create_checkpoint_file] Failed saving model checkpoint to /ckpt/r9 with "
         "tag global_step6000", ("deepspeed_checkpoint_save_failed", "checkpoint_error")),
    ],
)
def test_the_h27c_line_rules(line, expected):
    assert read(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "fixed: free(): invalid pointer when the tokenizer is freed twice",  # a sentence, not the abort
        "  double free or corruption (out) is printed by glibc when ...",  # indented prose
        "free(): invalid pointer seen in 3 of 8 workers",
        "corrupted size vs. prev_size: see the valgrind output below",
        "invalid value for --lr: 'abc'",  # passes the anchored prefilter, no rule reads it
        "double the batch size after warmup",
        "terminate called after throwing an instance of 'std::runtime_error'",  # the exception's what() follows: other rules
        "the job will terminate called workers at the end",
        "thread 'main' panicked at 'explicit panic', src/main.rs:2:5",  # Rust < 1.73's wording, not the one read here
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        "Failed to read file '/data/x.csv', retrying",  # no `with error <class '`
        "INFO:datasets.builder:Generating train split: 120000 examples",
        "[2026-12-04 03:41:07,552] [INFO] [engine.py:3354:_save_checkpoint] Saving model checkpoint: /ckpt/r9/global_step6000/mp_rank_00_model_states.pt",
        "wandb: Network error (ConnectionError), entering retry loop.",  # wandb retries: no failure
    ],
)
def test_near_misses_are_not_read_by_the_h27c_rules(line):
    found = read(line)
    assert found is None or found[0] not in ("glibc_malloc_abort", "glibc_malloc_abort_old", "cxx_terminate_no_exception",
                                             "rust_panic", "datasets_file_read_failed", "deepspeed_checkpoint_save_failed")


@pytest.mark.parametrize(
    "exc_type, message, rule, category",
    [
        ("datasets.exceptions.DatasetGenerationError", "An error occurred while generating the dataset", "datasets_build_error",
         "dataloader_error"),
        ("datasets.exceptions.NonMatchingSplitsSizesError", "[{'expected': SplitInfo(name='train', num_bytes=1, num_examples=2)}]",
         "datasets_build_error", "dataloader_error"),
        ("datasets.utils.info_utils.ExpectedMoreSplitsError", "{'validation'}", "datasets_build_error", "dataloader_error"),
        ("datasets.builder.DatasetGenerationCastError", "An error occurred while generating the dataset", "datasets_build_error",
         "dataloader_error"),
        ("RuntimeError", "One of the subprocesses has abruptly died during map operation.To debug the error, disable "
         "multiprocessing.", "datasets_map_worker_died", "dataloader_error"),
        ("megatron.core.dist_checkpointing.core.CheckpointingException", "Common file /c/iter_0000100/common.pt does not exist",
         "mcore_checkpointing_exception", "checkpoint_error"),
        ("CheckpointingException", "/c/iter_0000100 is not a distributed checkpoint", "mcore_checkpointing_exception",
         "checkpoint_error"),
        ("ValueError", "Tried to find /ckpt/run/checkpoint_3 but folder does not exist", "framework_checkpoint_restore",
         "checkpoint_error"),
        ("orbax.checkpoint.checkpoint_manager.StepAlreadyExistsError", "Checkpoint for step 100 already exists.",
         "framework_checkpoint_restore", "checkpoint_error"),
        ("FileNotFoundError", "Requested directory for restore does not exist at gs://b/run/100/default",
         "framework_checkpoint_restore", "checkpoint_error"),
    ],
)
def test_the_h27c_trace_rules(exc_type, message, rule, category):
    found = first_trace_rule(exc_type, message)
    assert found is not None and (found.name, found.category) == (rule, category)


@pytest.mark.parametrize(
    "exc_type, message",
    [
        ("datasets.exceptions.DatasetNotFoundError", "Dataset 'org/x' doesn't exist on the Hub or cannot be accessed."),
        ("datasets.exceptions.DataFilesNotFoundError", "No (supported) data files found in org/x"),
        ("ValueError", "Tried to find a learning rate but the range does not exist"),
        ("ValueError", "Checkpoint for step 100 is being written"),
        ("FileNotFoundError", "[Errno 2] No such file or directory: '/ckpt/run/100/default'"),
        ("mylib.errors.CheckpointingExceptionHandler", "x"),
        ("RuntimeError", "One of the subprocesses is slow during map operation."),
    ],
)
def test_near_misses_of_the_h27c_trace_rules(exc_type, message):
    found = first_trace_rule(exc_type, message)
    assert found is None or found.name not in ("datasets_build_error", "datasets_map_worker_died", "mcore_checkpointing_exception",
                                               "framework_checkpoint_restore")


STEP = "step 4120 | loss 2.3817 | lr 2.94e-04 | 412.6 samples/s\n"


def test_a_malloc_abort_alone_is_a_failure_of_unknown_cause_not_a_run_still_going(tmp_path):
    d = the_diagnosis(tmp_path, STEP + "free(): invalid pointer\n")
    assert (d.outcome, d.category) == ("failed", "unknown")


def test_a_cuda_error_before_a_malloc_abort_at_teardown_is_the_cause(tmp_path):
    text = (STEP + "Traceback (most recent call last):\n  File \"/workspace/train.py\", line 318, in <module>\n    main()\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered\n"
            "double free or corruption (out)\n/job/run.sh: line 12: 40213 Aborted                 (core dumped) python train.py\n")
    assert the_diagnosis(tmp_path, text).category == "cuda_error"


def test_terminate_without_an_exception_alone_is_a_failure_of_unknown_cause(tmp_path):
    d = the_diagnosis(tmp_path, STEP + "[rank3]: terminate called without an active exception\n")
    assert (d.outcome, d.category) == ("failed", "unknown")


def test_a_rust_panic_in_a_tokenizer_is_a_python_exception(tmp_path):
    d = the_diagnosis(tmp_path, STEP + "\nthread '<unnamed>' panicked at src/models/bpe/word.rs:72:9:\nattempt to subtract with "
                                       "overflow\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
    assert (d.outcome, d.category) == ("failed", "python_exception")
