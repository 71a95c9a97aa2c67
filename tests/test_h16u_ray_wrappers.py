"""Ray's wrapper of a remote task's exception, `RayTaskError(Cls)` (helper h16u, issue 16; fixtures/eval dev 341, 457).

ray.get re-raises a task's exception as an instance of both RayTaskError and the cause's class, named
f"RayTaskError({cause_cls.__name__})" (ray-project/ray python/ray/exceptions.py RayTaskError.as_instanceof_cause); its
message is the task's proctitle and pid, then the task's own traceback. The class in parentheses is the innermost real
exception: where its name alone says the category (DistStoreError: the c10d store failed, rendezvous_error) it decides,
also when Tune's "Trials did not complete" summary shares the line (a pasted copy, dev 341); a generic class whose own
line is cut (RayTaskError(RuntimeError), dev 457) says only that a task failed (unknown, never running); the cause's
own exception line, when printed, outranks the wrapper. Values are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import SUMMARY, detect, rule_role
from diagnose_in_process import the_diagnosis

STEPS = "".join(f"epoch 1 step {i * 20} loss {2.1 - i / 40:.4f} lr 0.0003\n" for i in range(1, 7))

DRIVER_HEAD = """\
Traceback (most recent call last):
  File "/srv/job/driver.py", line 21, in <module>
    ray.get(refs)
  File "/opt/venv/lib/python3.10/site-packages/ray/_private/worker.py", line 2667, in get
    raise value.as_instanceof_cause()
"""


@pytest.mark.parametrize("line, category", [
    ("ray.exceptions.RayTaskError(DistStoreError): ray::_Inner.train() (pid=52555, ip=10.118.2.17, actor_id=670b78, repr=TorchTrainer)",
     "rendezvous_error"),
    ("RayTaskError(OutOfMemoryError): ray::_RayTrainWorker__execute.get_next() (pid=9120, ip=10.0.3.4)", "cuda_oom"),
    ("ray.exceptions.RayTaskError(FloatingPointError): ray::train_fn() (pid=77, ip=10.0.3.4)", "nan_loss"),
    ("ray.exceptions.RayTaskError(RuntimeError): ray::_RayTrainWorker__execute._setup_torch_process_group() (pid=38634, ip=10.1.2.3",
     "unknown"),
    ("│ ray.exceptions.RayTaskError(ValueError): ray::load_shard() (pid=48213, ip=10.4.7.12)   │", "unknown"),
    ("2025-12-12 08:11:52,317\tERROR tune.py:1035 -- Trials did not complete: [TorchTrainer_7c2d1_00000] Training errored after 0 "
     "iterations Error file: /tmp/ray/x/error.txt ray.exceptions.RayTaskError(DistStoreError): ray::_Inner.train() (pid=52555, ip=10.1",
     "rendezvous_error"),
])
def test_the_class_a_ray_task_error_wraps_decides(line, category):
    found = detect(line)
    assert found is not None
    rule, got, _ = found
    assert (rule.name, got) == ("ray_task_error_line", category)
    assert rule_role(rule.name) == SUMMARY


@pytest.mark.parametrize("line", [
    "RayTaskError(ValueError)                  Traceback (most recent call last)",  # IPython's header: ultratb_header
    "class RayTaskError(RayError):",
    "    raise RayTaskError(function_name, traceback_str, cause)",
])
def test_near_misses_are_not_the_wrapper_line(line):
    found = detect(line)
    assert found is None or found[0].name != "ray_task_error_line"


def test_tunes_summary_line_holding_a_store_failure_is_a_rendezvous_error(tmp_path):
    text = STEPS + ("2025-12-12 08:11:52,317\tERROR tune.py:1035 -- Trials did not complete: [TorchTrainer_7c2d1_00000] "
                    "ray.exceptions.RayTaskError(DistStoreError): ray::_Inner.train() (pid=52555, ip=10.118.2.17, actor_id=670b7819195\n")
    assert the_diagnosis(tmp_path, text).category == "rendezvous_error"


def test_a_wrapper_line_cut_before_its_cause_is_unknown_not_running(tmp_path):
    text = STEPS + ("│     ray.get(setup_futures)                                              │\n"
                    "│ ray.exceptions.RayTaskError(RuntimeError): ray::_RayTrainWorker__execute._setup_torch_process_group() (pid=38634, "
                    "ip=10.1.2.3, actor_id=5e1b9a4\n")
    assert the_diagnosis(tmp_path, text).category == "unknown"


def test_the_cause_printed_after_the_wrapper_outranks_it(tmp_path):
    text = STEPS + DRIVER_HEAD + """\
ray.exceptions.RayTaskError(ValueError): ray::load_shard() (pid=48213, ip=10.4.7.12)
  File "/srv/job/driver.py", line 12, in load_shard
    raise ValueError(f"shard size must be positive, got {size}")
ValueError: shard size must be positive, got -1
"""
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.exception_type) == ("python_exception", "ValueError")


@pytest.mark.parametrize("inner, category", [
    ("OutOfMemoryError", "cuda_oom"),        # torch.cuda.OutOfMemoryError
    ("DistStoreError", "rendezvous_error"),
    ("RuntimeError", "unknown"),             # a generic class with its own line cut says only that a task failed
])
def test_a_traceback_ending_in_the_wrapper_reads_the_class_it_names(tmp_path, inner, category):
    # ray.get's traceback whose last line is the wrapper, the task's own traceback cut after its first frames (a paste
    # that stops there): the class in parentheses decides where its name alone says the category, as for the line alone
    text = STEPS + DRIVER_HEAD + f"""\
ray.exceptions.RayTaskError({inner}): ray::Runner.fit() (pid=30412, ip=10.7.1.9, actor_id=91ac03e5, repr=<job.Runner object at 0x7f31>)
  File "/srv/job/trainer.py", line 88, in fit
    out = ray.get(self.workers.update(batch))
"""
    assert the_diagnosis(tmp_path, text).category == category
