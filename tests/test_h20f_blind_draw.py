"""Batch h20f of issue 16 (fixtures/eval README, "Batch h20f"): a blind draw of the whole judged mix, shaped like
../shared/eval/diagnosis-dev.

The class of mistake it showed that real samples support, read from the source that raises it (cited in parsers/errors.py,
the block "h20f (issue 16, session 20)"): torch's DistBackendError named by its class alone (Ray's wrapper prints
`RayTaskError(DistBackendError): ray::Actor.method` and the remote traceback may be cut) is the communication backend's
failure (c10d raises it for NCCL's errors): nccl_error, not a child that failed for no known reason. Its message, when
printed, still decides (a watchdog's timeout stays nccl_timeout). Values in the texts are ours."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from gangscope.parsers.errors import exception_category
from rule_reference import category_of


@pytest.mark.parametrize(
    "exc_type, message, category",
    [
        ("DistBackendError", "", "nccl_error"),
        ("torch.distributed.DistBackendError", "", "nccl_error"),
        # its message decides where it is printed
        ("torch.distributed.DistBackendError", "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled "
         "system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3", "nccl_error"),
        ("torch.distributed.DistBackendError", "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, "
         "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.", "nccl_timeout"),
        # near misses: other c10d classes keep theirs; a class that only ends alike is no DistBackendError
        ("torch.distributed.DistStoreError", "", "rendezvous_error"),
        ("MyDistBackendErrorWrapper", "", "python_exception"),
        ("RuntimeError", "", "python_exception"),
    ],
)  # fmt: skip
def test_the_class_alone(exc_type, message, category):
    assert exception_category(exc_type, message) == category


@pytest.mark.parametrize(
    "line, category",
    [
        ("ray.exceptions.RayTaskError(DistBackendError): ray::ReferenceModelActor.init_model_fro", "nccl_error"),
        ("ray.exceptions.RayTaskError(DistBackendError): ray::PolicyModelActor.fit() (pid=48211, ip=10.31.4.17, "
         "actor_id=9f0c2a7b61e84d3c5a1b0e9d01000000, repr=<openrlhf.trainer.ray.PolicyModelActor object at 0x7f3a1c2e4d90>)",
         "nccl_error"),
        # near miss: a generic class in the same wrapper says only that a task failed
        ("ray.exceptions.RayTaskError(RuntimeError): ray::PolicyModelActor.fit() (pid=48211, ip=10.31.4.17)", "unknown"),
    ],
)  # fmt: skip
def test_the_ray_wrapper_line(line, category):
    assert category_of(line) == category


RAY_CUT = ("Traceback (most recent call last):\n"
           '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
           '  File "<frozen runpy>", line 88, in _run_code\n'
           '  File "/opt/envs/rl/lib/python3.11/site-packages/openrlhf/cli/train_ppo_ray.py", line 541, in <module>\n'
           "    train(args)\n"
           '  File "/opt/envs/rl/lib/python3.11/site-packages/openrlhf/cli/train_ppo_ray.py", line 171, in train\n'
           "    ray.get(refs)\n"
           '  File "/opt/envs/rl/lib/python3.11/site-packages/ray/_private/worker.py", line 919, in get_objects\n'
           "    raise value.as_instanceof_cause()\n"
           "ray.exceptions.RayTaskError(DistBackendError): ray::ReferenceModelActor.init_model_fro\n")  # fmt: skip
RAY_GENERIC = RAY_CUT.replace("RayTaskError(DistBackendError)", "RayTaskError(RuntimeError)")


@pytest.mark.parametrize("text, category", [(RAY_CUT, "nccl_error"), (RAY_GENERIC, "unknown")])
def test_the_log_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
