"""Rules from batch h22c of issue 16 (fixtures/eval README, "Batch h22c"): a third blind draw of the judged mix.

Two classes of its misses show their cause in the log. The deformable-convolution and deformable-attention ops (mmcv,
Deformable-DETR, DCNv2) printf "error in <kernel launcher>: <cudaGetErrorString>" after a failed launch and go on, so the
traceback that follows is often cut before its exception line (parsers/errors.py deformable_op_cuda_error). And a
traceback cut before its exception line still shows where it was raised: inside a checkpoint's save, or inside
the DataLoader's iteration (pipeline/diagnose/rules.py CUT_TRACEBACK_FRAMES). The lines below are rebuilt from the
sources' format strings and CPython's frame format with our values, not copied from the fixtures."""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of


@pytest.mark.parametrize(
    "line, category",
    [
        ("error in ms_deformable_im2col_cuda: too many resources requested for launch", "cuda_error"),
        ("  error in ms_deformable_col2im_cuda: an illegal memory access was encountered", "cuda_error"),
        ("Error in ms_deformable_col2im_cuda: invalid configuration argument", "cuda_error"),
        ("error in deformable_im2col: out of memory", "cuda_oom"),
        ("error in deformable_col2im_coord: an illegal instruction was encountered", "cuda_error"),
        ("error in modulated_deformable_im2col_cuda: no kernel image is available for execution on the device", "cuda_error"),
        # near misses: another kernel's printf, a config key, the op's name in a healthy line
        ("error in roi_align_forward_cuda: an illegal memory access was encountered", None),
        ("deformable_groups: 4, im2col_step: 64", None),
        ("load ms_deformable_im2col_cuda kernels: ok", None),
    ],
)  # fmt: skip
def test_the_deformable_ops_line_and_its_near_misses(line, category):
    assert category_of(line) == category


SITE = "/opt/conda/envs/det/lib/python3.10/site-packages"
STEP = ("2026-02-03 10:41:07,552 - mmdet - INFO - Epoch [3][400/1833]\tlr: 2.000e-04, eta: 6:02:11, time: 0.612, "
        "data_time: 0.011, memory: 9120, loss_cls: 0.4121, loss_bbox: 0.2210, loss: 0.6331\n")  # fmt: skip
TRAIN_FRAMES = ('Traceback (most recent call last):\n'
                '  File "tools/train.py", line 244, in <module>\n'
                '    main()\n'
                '  File "tools/train.py", line 233, in main\n'
                '    train_model(model, datasets, cfg)\n')  # fmt: skip
SAVE = (TRAIN_FRAMES
        + f'  File "{SITE}/mmcv/runner/epoch_based_runner.py", line 171, in save_checkpoint\n'
        "    save_checkpoint(self.model, filepath, optimizer=optimizer, meta=meta)\n"
        f'  File "{SITE}/torch/serialization.py", line 618, in save\n'
        "    with _open_zipfile_writer(f) as opened_zipfile:\n"
        f'  File "{SITE}/torch/serialization.py", line 492, in _open_zipfile_writer\n'
        "    return container(name_or_buffer)\n")  # fmt: skip
LOAD_STATE = (TRAIN_FRAMES
              + f'  File "{SITE}/accelerate/accelerator.py", line 3061, in load_state\n'
              "    load_accelerator_state(\n")  # fmt: skip
NEXT_BATCH = (TRAIN_FRAMES
              + f'  File "{SITE}/torch/utils/data/dataloader.py", line 631, in __next__\n'
              "    data = self._next_data()\n"
              f'  File "{SITE}/torch/utils/data/dataloader.py", line 1346, in _next_data\n'
              "    return self._process_data(data)\n")  # fmt: skip
# num_workers=0: the dataset's own code under the fetcher, cut inside it
IN_DATASET = (TRAIN_FRAMES
              + f'  File "{SITE}/torch/utils/data/_utils/fetch.py", line 51, in fetch\n'
              "    data = [self.dataset[idx] for idx in possibly_batched_index]\n"
              '  File "/srv/det/datasets/coco_crops.py", line 88, in __getitem__\n'
              "    img = self.load_image(self.files[idx])\n")  # fmt: skip
USER_ONLY = TRAIN_FRAMES + '  File "/srv/det/models/head.py", line 140, in forward\n    x = self.cls(x)\n'
IPYTHON = (f"File [c:\\Users\\lab\\miniconda3\\envs\\seg\\lib\\site-packages\\torch\\utils\\data\\dataloader.py:633]"
           f"(file:///C:/Users/lab/miniconda3/envs/seg/lib/site-packages/torch/utils/data/dataloader.py:633), "
           f"in _BaseDataLoaderIter.__next__(self)\n"
           "    [631](file:///C:/Users/lab/miniconda3/envs/seg/lib/site-packages/torch/utils/data/dataloader.py:631)"
           "     self._reset()  # type: ignore[call-arg]\n")  # fmt: skip
DEFORMABLE = ("error in ms_deformable_im2col_cuda: an illegal memory access was encountered\n" + TRAIN_FRAMES
              + f'  File "{SITE}/mmcv/ops/multi_scale_deform_attn.py", line 356, in forward\n'
              "    output = MultiScaleDeformableAttnFunction.apply(\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        (STEP + SAVE, "checkpoint_error"),
        # a load cut the same way says nothing more: a missing file, a download, a mismatch look alike
        (STEP + LOAD_STATE, "unknown"),
        (STEP + NEXT_BATCH, "dataloader_error"),
        (STEP + IN_DATASET, "dataloader_error"),
        (STEP + IPYTHON, "dataloader_error"),
        (STEP + DEFORMABLE, "cuda_error"),
        # a cut traceback whose frames are the user's own says nothing more than that it failed
        (STEP + USER_ONLY, "unknown"),
        # the exception line present: it decides, not the frames (a Ctrl-C while saving)
        (STEP + SAVE + "KeyboardInterrupt\n", "preempted"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


def test_a_cut_traceback_says_where_it_was_raised(tmp_path):
    d = the_diagnosis(tmp_path, STEP + SAVE)
    assert d.outcome == "failed"
    assert "inside a checkpoint's save" in d.summary
    # [h34i] the frame quoted as the log printed it (was the key "torch/serialization.py:_open_zipfile_writer")
    assert re.search(r'File "[^"]*/torch/serialization\.py", line \d+, in _open_zipfile_writer', d.summary)
