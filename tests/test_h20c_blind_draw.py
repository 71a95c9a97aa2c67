"""Rules from batch h20c-20 of issue 16 (fixtures/eval README, "Batch h20c-20"): a blind draw of the data, storage and
lifecycle slice shaped like the judged set.

The classes of mistake it showed that several real samples support, each read from the source that prints the text
(cited in parsers/errors.py, the blocks "h20c (issue 16, session 20)"):
- Ray's GCS marking a node dead for missed heartbeats (src/ray/gcs/gcs_server/gcs_node_manager.cc, printed by the driver's
  error listener) is a node lost under the job: node_failure, not a log with no failure;
- TensorFlow's checkpoint reader's "Checksum does not match: stored N vs. calculated on the restored bytes M"
  (core/util/tensor_bundle/tensor_bundle.cc BundleReader::GetValue) is a corrupt checkpoint, also when TF 1.x restates it
  as "DataLossError (see above for traceback): ..." without its node;
- a RuntimeError raised in the DataLoader's SIGCHLD handler (torch/utils/data/_utils/signal_handling.py handler ->
  _error_if_any_worker_fails) is a DataLoader worker's death even when the copy cuts its message; a death by SIGKILL
  there stays host_oom.
Values in the texts are ours."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of


@pytest.mark.parametrize(
    "line, category",
    [
        ("2022-02-17 09:41:08,512\tWARNING worker.py:1462 -- The node with node id: 3e91c07d5a1b42f6e8d0c2a9b7f61d04e2a58c37b19d6e0f4a2c8b15"
         " and ip: 10.142.0.17 has been marked dead because the detector has missed too many heartbeats from it. This can happen when"
         " a raylet crashes unexpectedly or has lagging heartbeats.", "node_failure"),
        ("2023-03-03 05:15:30,774 WARNING worker.py:1866 -- The node with node id: 9426f44574cce4866be798cfed308f2d3e21ba69487d422872cdd6e3"
         " and address: 10.130.0.113 and node name: 10.130.0.113 has been marked dead because the detector has missed too many heartbeats"
         " from it. This can happen when a       (1) raylet crashes unexpectedly (OOM, preempted node, etc.)", "node_failure"),
        ("The node with node id 5ad7fa5dd64fc1fec7a82cceecabed8e5eb247ec has been marked dead because the detector has missed too many"
         " heartbeats from it.", "node_failure"),
        ("DataLossError (see above for traceback): Checksum does not match: stored 1214729159 vs. calculated on the restored bytes"
         " 4272926173", "checkpoint_error"),
        ("tensorflow.python.framework.errors_impl.DataLossError: TensorBundle at /ckpt/model.ckpt-2000 shard 0 (4194304 bytes): Checksum"
         " does not match: stored 03858684 vs. calculated on the restored bytes 2123116135", "checkpoint_error"),
        # near misses: a node the user removed on purpose is not reported this way; other heartbeat words; TF's corrupt record
        ("2022-02-17 09:41:08,512\tINFO node_manager.py:520 -- The node with node id: 3e91c07d5a1b42f6 was removed by the autoscaler", None),
        ("Missed 3 heartbeats from worker 2, retrying", None),
        ("tensorflow.python.framework.errors_impl.DataLossError: corrupted record at 613204877", "dataloader_error"),
    ],
)  # fmt: skip
def test_the_lines_and_their_near_misses(line, category):
    assert category_of(line) == category


FRAMES = ("Traceback (most recent call last):\n"
          '  File "/usr/local/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1133, in _try_get_data\n'
          "    data = self._data_queue.get(timeout=timeout)\n"
          '  File "/usr/local/lib/python3.10/selectors.py", line 416, in select\n'
          "    fd_event_list = self._selector.poll(timeout)\n"
          '  File "/usr/local/lib/python3.10/site-packages/torch/utils/data/_utils/signal_handling.py", line 66, in handler\n'
          "    _error_if_any_worker_fails()\n")  # fmt: skip
WORKER_CUT = FRAMES + "RuntimeError: DataLoader wor\n"
WORKER_EXIT = FRAMES + ("RuntimeError: DataLoader worker (pid 29332) exited unexpectedly with exit code 1. Details are lost due to "
                        "multiprocessing. Rerunning with num_workers=0 may give better error trace.\n")  # fmt: skip
# a death by SIGKILL in the same handler stays host memory (dataloader_killed reads the message first)
WORKER_KILLED = FRAMES + "RuntimeError: DataLoader worker (pid 12851) is killed by signal: Killed. \n"
# near miss: a RuntimeError of the user's code beside the DataLoader is no worker's death
USER_ERROR = ("Traceback (most recent call last):\n"
              '  File "/home/u/train.py", line 88, in train\n'
              "    for batch in loader:\n"
              '  File "/home/u/train.py", line 51, in collate\n'
              "    raise RuntimeError('bad batch')\n"
              "RuntimeError: bad batch\n")  # fmt: skip
RAY_NODE = ("(BaseWorkerMixin pid=7731, ip=10.142.0.58) loss: 2.118204  [    0/30000]\n"
            "(BaseWorkerMixin pid=7702, ip=10.142.0.17) loss: 1.904411  [ 3200/30000]\n"
            "2022-02-17 09:41:08,512\tWARNING worker.py:1462 -- The node with node id: 3e91c07d5a1b42f6e8d0c2a9b7f61d04e2a58c37b19d6e0f"
            "4a2c8b15 and ip: 10.142.0.17 has been marked dead because the detector has missed too many heartbeats from it. This can "
            "happen when a raylet crashes unexpectedly or has lagging heartbeats.\n"
            "(BackendExecutor pid=7690, ip=10.142.0.58) 2022-02-17 09:41:08,513\tERROR utils.py:42 -- The actor died unexpectedly "
            "before finishing this task.\n")  # fmt: skip
TF_CHECKSUM = ('  File "/env/lib/python3.6/site-packages/tensorflow/python/framework/ops.py", line 1770, in __init__\n'
               "    self._traceback = tf_stack.extract_stack()\n"
               "\n"
               "DataLossError (see above for traceback): Checksum does not match: stored 3918274416 vs. calculated on the restored "
               "bytes 1187730925\n"
               "         [[node save/RestoreV2 (defined at expert_model.py:738)  = RestoreV2[dtypes=[DT_FLOAT, DT_INT64], "
               '_device="/job:localhost/replica:0/task:0/device:CPU:0"](_arg_save/Const_0_0, save/RestoreV2/tensor_names)]]\n')  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [(WORKER_CUT, "dataloader_error"), (WORKER_EXIT, "dataloader_error"), (WORKER_KILLED, "host_oom"),
     (USER_ERROR, "python_exception"), (RAY_NODE, "node_failure"), (TF_CHECKSUM, "checkpoint_error")],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
