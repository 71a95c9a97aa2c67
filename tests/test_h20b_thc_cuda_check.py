"""Rules from batch h20b of issue 16 (fixtures/eval README, "Batch h20b"): THC's failed CUDA check, as PyTorch up to 1.x and
Lua torch's cutorch print it (pytorch/pytorch aten/src/THC/THCGeneral.cpp __THCudaCheck: "THCudaCheck FAIL file=%s line=%i
error=%i : %s" to stderr once per process, then _THError "cuda runtime error (%d) : %s" with " at <file>:<line>"). The message
is cudaGetErrorString's, so its category is the one c10's "CUDA error: <same text>" has. Values in the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect, exception_category
from diagnose_in_process import the_diagnosis


@pytest.mark.parametrize("line, category", [
    ("THCudaCheck FAIL file=/srv/torch/extra/cutorch/lib/THC/generic/THCStorage.c line=147 error=77 : an illegal memory access "
     "was encountered", "cuda_error"),
    ("THCudaCheck FAIL file=/pytorch/torch/lib/THD/base/data_channels/DataChannelNccl.cpp line=195 error=77 : an illegal memory "
     "access was encountered", "cuda_error"),
    ("THCudaCheck FAIL file=/home/u/fairseq-lm/THC/generic/THCStorage.cu line=58 error=2 : out of memory", "cuda_oom"),
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=265 error=39 : uncorrectable ECC error "
     "encountered", "gpu_hardware"),
    ("THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCTensorMath.cu line=26 error=59 : device-side assert triggered",
     "cuda_error"),
])
def test_thc_check_line(line, category):
    rule, found, _ = detect(line)
    assert (rule.name, found) == ("thc_cuda_check_fail", category)


def test_thc_check_warn_is_no_failure():
    # __THCudaCheckWarn: printed, the run goes on
    assert detect("THCudaCheckWarn FAIL file=/pytorch/aten/src/THC/THCStream.cpp line=50 error=77 : an illegal memory access "
                  "was encountered") is None


@pytest.mark.parametrize("message, category", [
    ("cuda runtime error (2) : out of memory at /opt/conda/conda-bld/pytorch_1524584710464/work/aten/src/THC/generic/THCStorage.cu:58",
     "cuda_oom"),
    ("cuda runtime error (77) : an illegal memory access was encountered at /opt/conda/conda-bld/pytorch_1512386481460/work/torch/"
     "lib/THC/generic/THCTensorCopy.c:70", "cuda_error"),
    ("cuda runtime error (59) : device-side assert triggered at /pytorch/aten/src/THC/generic/THCTensorMath.cu:26", "cuda_error"),
    ("cuda runtime error (39) : uncorrectable ECC error encountered at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265",
     "gpu_hardware"),
])
def test_thc_raised_form(message, category):
    assert exception_category("RuntimeError", message) == category
    assert detect("RuntimeError: " + message)[1] == category  # the bare exception line of a cut excerpt


def test_lua_torch_run_is_a_cuda_error(tmp_path):
    # dev 626's shape: Lua torch prints the check and luajit's error, no Python traceback; it was read as `running`
    text = ("creating a neural network with random initialization\n"
            "initialing weights..  \n"
            "THCudaCheck FAIL file=/srv/torch/extra/cutorch/lib/THC/generic/THCStorage.c line=147 error=77 : an illegal memory "
            "access was encountered\n"
            "/srv/torch/install/bin/luajit: cuda runtime error (77) : an illegal memory access was encountered at "
            "/srv/torch/extra/cutorch/lib/THC/generic/THCStorage.c:147\n")
    d = the_diagnosis(tmp_path, text)
    assert (d.outcome, d.category) == ("failed", "cuda_error")


def test_old_pytorch_oom_traceback(tmp_path):
    text = ("Traceback (most recent call last):\n"
            '  File "train.py", line 88, in <module>\n'
            "    loss.backward()\n"
            '  File "/usr/lib/python3.6/site-packages/torch/autograd/__init__.py", line 99, in backward\n'
            "    variables, grad_variables, retain_graph)\n"
            "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:58\n")
    d = the_diagnosis(tmp_path, text)
    assert (d.outcome, d.category) == ("failed", "cuda_oom")


def test_printed_nan_summary_cut_at_a_word(tmp_path):
    # dev 633's shape (ColossalAI-Examples#37): a tqdm line past 160 characters quoted as the first printed NaN loss; the quote
    # was cut mid-word with no mark (tests/test_diagnose_summary_text.py "cut mid-word"), now at a word with "..."
    bar = "[Epoch 0 / Train]:   0%|" + " " * 90
    text = "".join(f"{bar}| {i}/8614 [00:0{i}<55:32,  2.58it/s, loss=nan, lr=2.5e-05, throughput=5.3257][deepscale] OVERFLOW! "
                   f"Rank 0 Skipping step. Attempted loss scale: {2 ** (40 - i)}, reducing to {2 ** (39 - i)}\n" for i in range(2, 7))
    d = the_diagnosis(tmp_path, text)
    assert d.category == "nan_loss"
    quote = d.summary.split(", first: ", 1)[1]
    assert quote.endswith("...") and len(quote) <= 163
