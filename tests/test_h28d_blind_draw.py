"""Rules from batch h28d of issue 16 (fixtures/eval README, "Batch h28d"): a blind draw of threads that show older
framework versions (torch 1.x, NCCL 2.4-2.12, Horovod 0.9, fairseq 2018, apex amp, TF 1.x).

The draw came right 16/16; two classes it showed, and the neighbours of its logs, are older versions' wordings:
- NCCL 2.x up to 2.12 printed "Failed to open libibverbs.so[.1]" as a WARN (src/misc/ibvwrap.cc) and then fell back to
  its socket transport; later versions print the same words at INFO. A log that ends in NCCL warnings read the fallback
  as the last word of a broken job (dev 1009 came right for that wrong line). Now it is read past
  (pipeline/diagnose/rules.FALLBACK_NCCL_WARNINGS, endings.warnings_at_the_end);
- fairseq's notices that it caught a CUDA OOM and skips the batch ("| WARNING: ran out of memory, skipping batch", 2018;
  "attempting to recover from OOM in forward/backward pass", 0.8+; fairseq/trainer.py train_step): where a step or epoch
  record follows the notice with no other failure between, the run went on from that OOM (parsers/errors.py
  oom_batch_skipped / oom_recovery_attempt, warnings; rules.OOM_SKIP_NOTICES, root_cause.without_handled). Where
  something else fails first (dev 1004: the AttributeError of the skipped batch's None gradients) or nothing follows, the
  OOM stays the answer.
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of, found

from gangscope.parsers import errors

PREFILTER = re.compile(errors.PREFILTER)


# --- NCCL's fallback warning of its IB verbs library (NCCL 2.4-2.12)

IB_FALLBACK = ("trn-07:41207:41207 [0] NCCL INFO Bootstrap : Using [0]eno1:10.40.2.7<0>\n"
               "trn-07:41207:41207 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
               "\n"
               "trn-07:41207:41207 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
               "trn-07:41207:41207 [0] NCCL INFO NET/Socket : Using [0]eno1:10.40.2.7<0>\n"
               "trn-07:41207:41207 [0] NCCL INFO Using network Socket\n"
               "NCCL version 2.7.8+cuda10.2\n")  # fmt: skip
DUPLICATE = ("trn-07:41238:41262 [1] init.cc:573 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 3000\n"
             "trn-07:41207:41261 [0] init.cc:573 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 3000\n")
IB_ASYNC = "trn-07:41207:41290 [0] transport/net_ib.cc:113 NCCL WARN NET/IB : Got async event : port error\n"


def test_the_fallback_alone_is_no_failure(tmp_path):
    # NCCL fell back to sockets; the copy stops in its set-up (fixtures README "Silent stops", rule 3: running)
    d = the_diagnosis(tmp_path, IB_FALLBACK)
    assert d.category == "running", d.summary


def test_the_init_failure_after_the_fallback_is_the_one_named(tmp_path):
    d = the_diagnosis(tmp_path, IB_FALLBACK + DUPLICATE)
    assert d.category == "nccl_error", d.summary
    assert "Duplicate GPU detected" in d.summary and "libibverbs" not in d.summary
    assert "2 NCCL warnings" in d.summary


@pytest.mark.parametrize(
    "text, category, named",
    [
        # near misses: another warning at the end is the last word, as before ...
        (IB_FALLBACK + IB_ASYNC, "nccl_error", "Got async event"),
        # ... a fallback warning after it does not end the run of warnings ...
        (IB_ASYNC + IB_FALLBACK, "nccl_error", "Got async event"),
        # ... the same words at INFO (NCCL 2.13+) were never a warning ...
        (IB_FALLBACK.replace("misc/ibvwrap.cc:63 NCCL WARN", "NCCL INFO"), "running", None),
        # ... and a WARN whose words go on is not the fallback's
        (IB_FALLBACK.replace("libibverbs.so[.1]\n", "libibverbs.so[.1]: no such file, aborting\n"), "nccl_error", "libibverbs"),
    ],
)  # fmt: skip
def test_near_misses_of_the_fallback(tmp_path, text, category, named):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
    if named:
        assert named in d.summary


# --- fairseq's notice that it skipped a batch after a CUDA OOM

@pytest.mark.parametrize(
    "line, rule",
    [
        ("| WARNING: ran out of memory, skipping batch", "oom_batch_skipped"),
        ("| WARNING: ran out of memory, skipping batch. if this happens frequently, decrease batchsize or truncate the "
         "inputs to the model.", "oom_batch_skipped"),
        ("| WARNING: attempting to recover from OOM in forward/backward pass", "oom_recovery_attempt"),
        ("2021-06-02 11:40:12 | WARNING | fairseq.trainer | attempting to recover from OOM in forward/backward pass",
         "oom_recovery_attempt"),
    ],
)  # fmt: skip
def test_the_notices_are_warnings(line, rule):
    assert found(line) == (rule, "cuda_oom")
    assert errors.rule_role(rule) == errors.WARNING
    assert PREFILTER.search(line) is not None


@pytest.mark.parametrize(
    "line, category",
    [
        # prose, and a line that says it will skip nothing
        ("how do I stop fairseq from attempting to recover from OOM?", None),
        ("WARNING: ran out of memory while tokenizing", None),
        # fairseq's own OOM line stays the OOM it was
        ("2021-06-02 11:40:12 | WARNING | fairseq.trainer | OOM: Ran out of memory with exception: CUDA out of memory. "
         "Tried to allocate 2.00 GiB (GPU 0; 31.75 GiB total capacity; 28.1 GiB already allocated)", "cuda_oom"),
    ],
)  # fmt: skip
def test_near_misses_of_the_notices(line, category):
    assert category_of(line) == category


OOM_NEW = ("2021-06-02 11:40:12 | WARNING | fairseq.trainer | OOM: Ran out of memory with exception: CUDA out of memory. "
           "Tried to allocate 2.00 GiB (GPU 0; 31.75 GiB total capacity; 28.1 GiB already allocated; 1.2 GiB free)\n"
           "2021-06-02 11:40:12 | WARNING | fairseq.trainer | attempting to recover from OOM in forward/backward pass\n")
STEPS_NEW = "".join(
    f"2021-06-02 11:4{1 + i}:0{i} | INFO | train_inner | epoch 003:   {200 + 100 * i} / 5210 loss=6.41{i}, nll_loss=4.9, "
    f"ppl=29.9, wps=41210, ups=2.11, wpb=19500, bsz=610, num_updates={10600 + 100 * i}, lr=0.000431, gnorm=0.52, "
    "loss_scale=8, train_wall=47, gb_free=3.1, wall=5120\n" for i in range(2))  # fmt: skip
OOM_2018 = ("THCudaCheck FAIL file=/opt/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n"
            "| WARNING: ran out of memory, skipping batch\n")
STEPS_2018 = "".join(
    f"| epoch 002:    {300 + 50 * i} / 820 loss=9.1{i}, nll_loss=9.0, ppl=548.2, wps=4210, ups=1.3, wpb=3210, bsz=101, "
    f"num_updates={1120 + 50 * i}, lr=0.0005, gnorm=2.1, clip=0%, oom=1, wall=880, train_wall=790\n" for i in range(2))  # fmt: skip
SKIPPED_BATCH_ERROR = ("Traceback (most recent call last):\n"
                       '  File "train.py", line 29, in <module>\n'
                       "    main(args)\n"
                       '  File "/srv/fairseq/fairseq/trainer.py", line 189, in _backward_and_opt\n'
                       "    p.grad.data.div_(grad_denom)\n"
                       "AttributeError: 'NoneType' object has no attribute 'data'\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        # the OOM, the notice, then steps: the run went on (fairseq 0.10+, and fairseq of 2018)
        (STEPS_NEW[:STEPS_NEW.index("\n") + 1] + OOM_NEW + STEPS_NEW, "running"),
        (OOM_NEW + STEPS_NEW, "running"),
        (STEPS_2018 + OOM_2018 + STEPS_2018, "running"),
        # fairseq 0.8-0.9's print of the notice
        (OOM_NEW.replace("2021-06-02 11:40:12 | WARNING | fairseq.trainer | attempting", "| WARNING: attempting") + STEPS_NEW,
         "running"),
        # near misses: the skipped batch's next line fails (dev 1004): the OOM is the answer ...
        (OOM_2018 + SKIPPED_BATCH_ERROR, "cuda_oom"),
        # ... nothing after the notice: the copy does not show the run went on ...
        (STEPS_2018 + OOM_2018, "cuda_oom"),
        # ... no notice: the OOM is a failure even with steps after it (another rank's, a later attempt's) ...
        (OOM_2018.split("\n")[0] + "\n" + STEPS_2018, "cuda_oom"),
        # ... and an OOM after the steps that followed the notice is a new one
        (OOM_NEW + STEPS_NEW + OOM_NEW.split("\n")[0].replace("11:40:12", "11:49:30") + "\n", "cuda_oom"),
    ],
)  # fmt: skip
def test_an_oom_the_run_skipped_is_no_failure(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
