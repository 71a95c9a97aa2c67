"""Rules from batch h16g-2 of issue 16 (fixtures/eval README, "Batch h16g-2"): a blind draw shaped like the judged set.

The classes of mistake it showed, each read from the source that prints the text (cited in parsers/errors.py, the block
"h16g (issue 16, session 19)"):
- the CUDA runtime's NVLink fault (cudaGetErrorString(cudaErrorNvlinkUncorrectable)) is GPU hardware, not a CUDA error;
- kubelet's `Failed to pull image "<ref>": <err>` event (pkg/kubelet/images/image_manager.go) means the pod never started;
- insightface arcface_torch's progress line (utils/utils_callbacks.py CallBackLogging) with the fp16 grad scale printed 0
  is an endless loss-scale overflow; with `Loss nan` it is a warning like any printed NaN loss;
- whatever c10d's rendezvous backend raises inside its store call is a RendezvousConnectionError from it
  (c10d_rendezvous_backend.py _call_store), even when the copy keeps only the inner `RuntimeError: Broken pipe`.
Values in the texts are ours."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of


@pytest.mark.parametrize(
    "line, category",
    [
        ("RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution", "gpu_hardware"),
        ("[rank3]: RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution", "gpu_hardware"),
        ("E0821 04:06:44.462569 820 gpu_cudamallocasync_allocator.cc:414] cudaFreeAsync failed to free 0x7f2a00: INTERNAL: CUDA error: : "
         "CUDA_ERROR_NVLINK_UNCORRECTABLE: uncorrectable NVLink error detected during the execution", "gpu_hardware"),
        ('Failed to pull image "alpine:3.10": rpc error: code = Unknown desc = Error reading manifest 3.10 in 1234.dkr.ecr.eu-west-1.'
         "amazonaws.com/alpine: name unknown", "pods_ready_timeout"),
        ('  Warning  Failed     2m (x4 over 3m)  kubelet, node-7  Failed to pull image "registry.local/team/trainer:v3": rpc error: '
         "code = Canceled desc = context canceled", "pods_ready_timeout"),
        ("Training: 2024-05-21 16:42:15,046-Speed 2258.93 samples/sec   Loss nan   LearningRate 0.001000   Epoch: 0   Global Step: 30   "
         "Fp16 Grad Scale:  0   Required: 139 hours", "nan_loss"),
        ("Epoch: 0   Global Step: 20   Fp16 Grad Scale:  0   Required: 187 hours", "nan_loss"),
        ("Training: 2023-04-07 09:02:24,067-Speed 931.38 samples/sec   Loss 9.5353   LearningRate 0.066591   Epoch: 5   Global Step: "
         "440620   Fp16 Grad Scale:  0   Required: 187 hours", "nan_loss"),
        ("Training: 2021-06-01 16:25:51,183-Speed 218.82 samples/sec   Loss nan   Epoch: 0   Global Step: 14750   Required: 102 hours",
         "nan_loss"),
        # near misses: a healthy scale, a scale that is not 0, a healthy loss, a successful pull, other NVLink words
        ("Training: 2022-05-05 03:04:06,521-Speed 731.07 samples/sec   Loss 43.3935   LearningRate 0.1000   Epoch: 0   Global Step: 20   "
         "Fp16 Grad Scale: 16384   Required: 2244 hours", None),
        ("Fp16 Grad Scale: 0.5", None),
        ("Fp16 Grad Scale: 1024   Required: 3 hours", None),
        ('Successfully pulled image "alpine:3.10" in 1.2s', None),
        ("NVLink error counters: 0 replay, 0 recovery, 0 CRC", None),
    ],
)  # fmt: skip
def test_the_lines_and_their_near_misses(line, category):
    assert category_of(line) == category


NVLINK = ("/opt/sw/env/lib/python3.10/site-packages/nnunet/training/network_training/nnUNetTrainer.py:712: RuntimeWarning: "
          "invalid value encountered in double_scalars\n"
          "Traceback (most recent call last):\n"
          '  File "/opt/sw/env/bin/nnUNet_train", line 8, in <module>\n'
          "    sys.exit(main())\n"
          '  File "/opt/sw/env/lib/python3.10/site-packages/nnunet/training/network_training/network_trainer.py", line 456, in run_training\n'
          "    l = self.run_iteration(self.tr_gen, True)\n"
          "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution\n")  # fmt: skip
IMAGE_PULL = ('Failed to pull image "alpine:3.10": rpc error: code = Unknown desc = Error reading manifest 3.10 in '
              "5550001.dkr.ecr.eu-west-1.amazonaws.com/alpine: name unknown: The repository with name 'alpine' does not exist in "
              "the registry with id '5550001'\n")  # fmt: skip
INSIGHTFACE = ("Training: 2024-05-21 16:42:10,518-Speed 2261.07 samples/sec   Loss nan   LearningRate 0.001000   \n"
               "Epoch: 0   Global Step: 20   Fp16 Grad Scale:  0   Required: 187 hours\n"
               "Training: 2024-05-21 16:42:15,046-Speed 2258.93 samples/sec   Loss nan   LearningRate 0.001000   Epoch: 0   "
               "Global Step: 30   Fp16 Grad Scale:  0   Required: 139 hours\n")  # fmt: skip
STORE_CALL = ("WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node 'gpu3.local_1200_0' has failed to shutdown "
              "the rendezvous '0b5e' due to an error of type RendezvousConnectionError.\n"
              "Traceback (most recent call last):\n"
              '  File "/opt/env/lib/python3.9/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", line 113, '
              "in _call_store\n"
              "    return getattr(self._store, store_op)(*args, **kwargs)\n"
              "RuntimeError: Broken pipe\n"
              "\n"
              "The above exception was the direct cause of the following exception:\n"
              "\n"
              "Traceback (most recent call last):\n"
              '  File "/opt/env/bin/torchrun", line 33, in <module>\n'
              "    sys.exit(load_entry_point('torch==1.12.1', 'console_scripts', 'torchrun')())\n"
              '  File "/opt/env/lib/python3.9/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 345, '
              "in wrapper\n")  # fmt: skip
# near miss: a "Broken pipe" outside the rendezvous backend stays a communication failure
PEER_GONE = ("Traceback (most recent call last):\n"
             '  File "/opt/env/lib/python3.9/site-packages/torch/distributed/distributed_c10d.py", line 2050, in all_reduce\n'
             "    work = group.allreduce([tensor], opts)\n"
             "RuntimeError: Broken pipe\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [(NVLINK, "gpu_hardware"), (IMAGE_PULL, "pods_ready_timeout"), (INSIGHTFACE, "nan_loss"), (STORE_CALL, "rendezvous_error"),
     (PEER_GONE, "nccl_error")],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
