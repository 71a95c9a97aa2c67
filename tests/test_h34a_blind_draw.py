"""Rules from batch h34a of issue 16 (fixtures/eval README, "Batch h34a"): a blind draw shaped like the judged set from
threads of frameworks other than PyTorch (TensorFlow / Keras / JAX / XLA, Horovod, BytePS).

Classes of its misses as it came, each read from the printing source (parsers/errors.py cites it):
- TF's BFC allocator dump, written only after an allocation failed (BFCAllocator::DumpMemoryLog): the per-size chunk
  summary's "Sum Total of in-use chunks: <size>" and AllocatorStats::DebugString's "MaxAllocSize:" line (dev 1596,
  1598) -> cuda_oom (tf_bfc_dump_in_use_total, tf_bfc_dump_stats);
- TF 1.x OpError's header naming the op whose run failed, "Caused by op 'save/RestoreV2', defined at:" / "Original stack
  trace for 'save/RestoreV2':", a copy cut inside the stack after it (dev 1609) -> checkpoint_error for the Saver's ops,
  dataloader_error for the iterator's (tf1_op_defined_at, tf_op_original_stack);
- tf.estimator's "Loss for final step: N." at the end of train() (dev 1599) -> success (tf_estimator_final_step);
- LLVM's "LLVM ERROR: ..." from report_fatal_error, which exits the process (dev 1608) -> unknown, a summary
  (llvm_fatal_error);
- bash's job note behind a job platform's time, "2020-11-24 20:22:28.106 /bin/bash: line 27: 318 Killed sh start.sh"
  (dev 1597) -> host_oom (shell_job_signal with _SHIPPER_TIME).
The lines below are rebuilt with our values, not copied from a fixture."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

from gangscope.parsers import errors


def _rule(line):
    found = errors.detect(line)
    return (found[0].name, found[1]) if found else (None, None)


KERAS = "".join(f"Epoch {i}/6\n - {20 + i}s - loss: {6.4 - i / 10:.4f}\n" for i in range(1, 4))
ESTIMATOR = "".join(f"INFO:tensorflow:loss = {24.1 - i / 3:.5f}, step = {i * 10} ({2.61 + i / 100:.3f} sec)\n"
                    f"INFO:tensorflow:global_step/sec: {3.71 + i / 50:.4f}\n" for i in range(1, 5))
TS = "2023-04-02 09:{:02d}:11.0{:02d} "


# --- the BFC allocator's dump ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "2021-06-03 10:14:09.220931: I tensorflow/core/common_runtime/bfc_allocator.cc:921] Sum Total of in-use chunks: 10.05GiB",
    "I0603 10:14:09.220931  4417 bfc_allocator.cc:1073] Sum Total of in-use chunks: 7.61GiB",
    "2024-01-19 22:01:55.412: I external/tsl/tsl/framework/bfc_allocator.cc:1110] Sum Total of in-use chunks: 512.0KiB",
    "Sum Total of in-use chunks: 3.20GiB",
    "MaxAllocSize:            370720768",
    "MaxAllocSize:          2147483648   ",
])
def test_the_allocator_dump_is_an_oom(line):
    assert _rule(line)[1] == "cuda_oom", (line, errors.detect(line))


@pytest.mark.parametrize("line", [
    "Sum Total of in-use chunks",                      # no size
    "the Sum Total of in-use chunks: unknown",
    "MaxAllocSize: 370720768 bytes",                   # not DebugString's form
    "  stats MaxAllocSize:   12",                      # not at the line's start
    "MaxAllocSize:",
    "Limit:                  3868721152",              # the block's other lines name no failure alone
    "InUse:                  3815226112",
])
def test_near_misses_of_the_dump_are_not_it(line):
    assert _rule(line)[0] not in ("tf_bfc_dump_in_use_total", "tf_bfc_dump_stats"), (line, errors.detect(line))


def test_a_copy_cut_in_the_chunk_summary(tmp_path):
    chunks = "".join(f"2021-06-03 10:14:09.2209{i}: I tensorflow/core/common_runtime/bfc_allocator.cc:917] {i} Chunks of size "
                     f"{131072 * i} totalling {i * 128}.0KiB\n" for i in range(1, 4))
    text = KERAS + chunks + ("2021-06-03 10:14:09.220990: I tensorflow/core/common_runtime/bfc_allocator.cc:921] Sum Total of "
                             "in-use chunks: 9.87GiB\n2021-06-03 10:14:09.221011: I tensorflow/core/common_runti\n")
    d = the_diagnosis(tmp_path, text)
    assert d.category == "cuda_oom", (d.category, d.summary)


def test_a_copy_of_the_stats_block_alone(tmp_path):
    text = "Stats:\n\nLimit:                  7912964096\nInUse:                  7880112384\nMaxInUse:               7890112000\n" \
           "NumAllocs:                   20417\nMaxAllocSize:           1073741824\n"
    d = the_diagnosis(tmp_path, KERAS + text)
    assert d.category == "cuda_oom", (d.category, d.summary)


# --- TF 1.x OpError's op header ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("line,category", [
    ("Caused by op 'save/RestoreV2', defined at:", "checkpoint_error"),
    ("Caused by op 'save_1/RestoreV2_3', defined at:", "checkpoint_error"),
    ("Caused by op 'save/SaveV2', defined at:", "checkpoint_error"),
    ("Caused by op 'model/save/MergeV2Checkpoints', defined at:", "checkpoint_error"),
    ("Caused by op 'save/restore_slice_12', defined at:", "checkpoint_error"),
    ("Caused by op 'IteratorGetNext', defined at:", "dataloader_error"),
    ("Original stack trace for 'save/RestoreV2':", "checkpoint_error"),
    ("Original stack trace for 'save_2/SaveV2':", "checkpoint_error"),
    ("Original stack trace for 'IteratorGetNext':", "dataloader_error"),
])
def test_the_op_header_names_the_part_that_failed(line, category):
    assert _rule(line)[1] == category, (line, errors.detect(line))


@pytest.mark.parametrize("line", [
    "Caused by op 'gradients/MatMul_grad/MatMul', defined at:",   # another op: no category from the header
    "Caused by op 'save/RestoreV2Something', defined at:",
    "Caused by op 'save/RestoreV2'",                              # not the header's form
    "Original stack trace for 'dense/MatMul':",
    "Original stack trace for 'save/RestoreV2': and more text",
])
def test_other_ops_and_near_misses_name_nothing(line):
    assert _rule(line)[0] not in ("tf1_op_defined_at", "tf_op_original_stack"), (line, errors.detect(line))


@pytest.mark.parametrize("header", ["Caused by op 'save/RestoreV2', defined at:", "Original stack trace for 'save_1/RestoreV2':"])
def test_a_copy_cut_inside_the_ops_stack(tmp_path, header):
    stack = (f"{header}\n  File \"run_pretraining.py\", line 494, in <module>\n    tf.app.run()\n"
             "  File \"/opt/conda/lib/python3.6/site-packages/tensorflow/python/platform/app.py\", line 125, in run\n"
             "    _sys.exit(main(argv))\n  File \"/opt/conda/lib/python3.6/site-packages/tensorflow/python/estimator/estim\n")
    d = the_diagnosis(tmp_path, ESTIMATOR + stack)
    assert d.category == "checkpoint_error", (d.category, d.summary)


# --- tf.estimator's end line ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", ["INFO:tensorflow:Loss for final step: 21.471064.",
                                  "I0412 08:41:13.559811 140012 estimator.py:371] Loss for final step: 0.0023871.",
                                  "INFO:tensorflow:Loss for final step: 3.1e-05.",
                                  "Loss for final step: 1.25."])
def test_the_final_step_line_is_the_end(line):
    assert _rule(line) == ("tf_estimator_final_step", "success"), (line, errors.detect(line))


@pytest.mark.parametrize("line", ["Loss for final step", "Loss for final step: 21.47 after 10 steps",
                                  "INFO:tensorflow:Loss for final step: 21.471064"])
def test_near_misses_of_the_end_line(line):
    assert _rule(line)[0] != "tf_estimator_final_step", (line, errors.detect(line))


def test_an_estimator_run_that_reached_its_last_step(tmp_path):
    text = ESTIMATOR + "INFO:tensorflow:Saving checkpoints for 40 into /tmp/model_dir/model.ckpt.\n" \
                       "INFO:tensorflow:Loss for final step: 22.918301.\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category == "success", (d.category, d.summary)


# --- LLVM's fatal error -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", ["LLVM ERROR: Cannot select: 0x55d0c8a1e2f0: i16,ch = AtomicCmpSwap<Volatile LDST2[%p]>",
                                  "LLVM ERROR: Failed to compute parent layout for slice layout.",
                                  "LLVM ERROR: out of memory"])
def test_llvm_fatal_error(line):
    assert _rule(line) == ("llvm_fatal_error", "unknown"), (line, errors.detect(line))


@pytest.mark.parametrize("line", ["LLVM ERROR:", "no LLVM ERROR: here", "llvm error: cannot select"])
def test_near_misses_of_llvm(line):
    assert _rule(line)[0] != "llvm_fatal_error", (line, errors.detect(line))


def test_a_run_that_ends_in_llvms_fatal_error_failed(tmp_path):
    text = KERAS + "LLVM ERROR: Cannot select: 0x7f11aa0c2e10: i16,ch = AtomicCmpSwap<Volatile LDST2[%x]> 0x7f11aa0a1c00\n" \
                   "  0x7f11aa0c3b28: i64,ch = CopyFromReg 0x7f11aa0a1c00, Register:i64 %vreg0\nIn function: _fusion\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category == "unknown" and d.outcome == "failed", (d.category, d.outcome, d.summary)


def test_a_cause_before_llvms_error_wins(tmp_path):
    text = KERAS + "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\nLLVM ERROR: out of memory\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category == "cuda_oom", (d.category, d.summary)


# --- bash's job note behind a platform's time ---------------------------------------------------------------------------

@pytest.mark.parametrize("ts", ["2020-11-24 20:22:28.106 ", "2020-11-24 20:22:28 ", "2020-11-24T20:22:28.106Z ",
                                "2020-11-24 20:22:28,106  ", "2020-11-24T20:22:28+08:00 "])
@pytest.mark.parametrize("note,category", [("/bin/bash: line 27:   318 Killed                  sh start.sh", "host_oom"),
                                           ("run.sh: line 9: 4711 Terminated              python train.py", "preempted"),
                                           ("Killed", "host_oom")])
def test_a_job_note_behind_a_time(ts, note, category):
    line = ts + note
    assert _rule(line) == ("shell_job_signal", category), (line, errors.detect(line))


@pytest.mark.parametrize("line", ["2020-11-24 20:22:28.106 the worker was Killed", "20-11-24 20:22:28 Killed sh start.sh",
                                  "2020-11-24 20:22 /bin/bash: line 27: 318 Killed sh start.sh",
                                  "2020-11-24 20:22:28.106 Killed by the user, restarting"])
def test_near_misses_of_the_timed_note(line):
    assert _rule(line)[0] != "shell_job_signal", (line, errors.detect(line))


def test_a_keras_run_killed_behind_a_platforms_time(tmp_path):
    text = "".join(TS.format(i, i) + row + "\n" for i, row in enumerate(KERAS.splitlines())) + \
        TS.format(9, 9) + "/bin/bash: line 31: 2290 Killed                  sh start.sh\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category == "host_oom", (d.category, d.summary)
