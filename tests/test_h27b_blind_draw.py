"""Rules from batch h27b of issue 16 (fixtures/eval README, "Batch h27b"): a blind draw of logs from Kubernetes-native
training launchers (training-operator, Volcano, KubeRay, Katib, SkyPilot on Kubernetes, ...).

Six classes of its misses show their cause (or that the attempt failed) in the log:
- Volcano's job controller taking a request from its queue, "Try to handle request <Queue: , Job: ns/name, Task:t,
  Event:PodEvicted, ExitCode:0, ...>" (parsers/errors.py volcano_job_request: PodEvicted preempted, PodFailed by its
  exit code, TaskFailed unknown, the other events none);
- `kubectl describe pod`'s phase line "Status:  Failed" at the margin (kubectl_describe_pod_failed, unknown, a summary
  outranked by the describe's own reason);
- the training-operator's verdict in the TFJob's / MSJob's wording, "TFJob <name> has failed because N Worker
  replica(s) failed." (training_operator_job_failed, which read only "is failed because");
- cuRAND's statuses in a glog CHECK (Caffe's CURAND_CHECK: "Check failed: status == CURAND_STATUS_SUCCESS (201 vs. 0)
  CURAND_STATUS_LAUNCH_FAILURE"; trace rules curand_error, curand_alloc_failed);
- dmlc-core's stack trace, "[bt] (N) <frame>" (XGBoost, MXNet: dmlc_stack_trace, unknown, a summary);
- vLLM's generation bars ("Processed prompts", "Adding requests") that RL trainers print between training steps: no
  training progress, so a batch of prompts at N/N is no end of training (parsers/dialects.py _NOT_TRAIN_DESC).
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import assert_found_past_the_prefilter, category_of

from gangscope.parsers import errors


REQ = "I0511 03:27:45.118902       1 job_controller.go:356] Try to handle request <Queue: research, Job: ml/bert-pt-4n, "


@pytest.mark.parametrize(
    "line, rule, category",
    [
        # Volcano's request as Request.String prints it, and with the pod's name some builds add
        (REQ + "Task:worker, Event:PodEvicted, ExitCode:0, Action:, JobVersion: 2>", "volcano_job_request", "preempted"),
        (REQ + "Task:worker, Pod:bert-pt-4n-worker-3, Event:PodEvicted, ExitCode:0, Action:, JobVersion: 0>",
         "volcano_job_request", "preempted"),
        # a copy cut after the event
        (REQ + "Task:worker, Pod:bert-pt-4n-worker-0, Event:PodEvicted, ExitC", "volcano_job_request", "preempted"),
        # a pod that failed: by its container's exit code
        (REQ + "Task:worker, Event:PodFailed, ExitCode:137, Action:, JobVersion: 0>", "volcano_job_request", "host_oom"),
        (REQ + "Task:master, Event:PodFailed, ExitCode:1, Action:, JobVersion: 0>", "volcano_job_request", "unknown"),
        (REQ + "Task:worker, Event:TaskFailed, ExitCode:0, Action:, JobVersion: 1>", "volcano_job_request", "unknown"),
        # kubectl describe pod's phase line (tabwriter's padding, or a tab as a raw copy keeps it)
        ("Status:             Failed", "kubectl_describe_pod_failed", "unknown"),
        ("Status:\tFailed", "kubectl_describe_pod_failed", "unknown"),
        # the TFJob's verdict, as the condition's message in `kubectl describe tfjob` and as its event
        ("  Message:               TFJob wide-deep-2 has failed because 1 Worker replica(s) failed.",
         "training_operator_job_failed", "unknown"),
        ("  Normal   TFJobFailed  3m   tf-operator  TFJob ml/wide-deep-2 has failed because 2 PS replica(s) failed.",
         "training_operator_job_failed", "unknown"),
        # the other operators' wording, as before
        ("PyTorchJob ml/llama-ft is failed because 1 Worker replica(s) failed.", "training_operator_job_failed", "unknown"),
        # cuRAND's statuses in Caffe's CHECK, read by glog_fatal through the trace rules
        ("F0511 03:27:45.118902  4431 math_functions.cu:422] Check failed: status == CURAND_STATUS_SUCCESS (201 vs. 0)  "
         "CURAND_STATUS_LAUNCH_FAILURE", "glog_fatal", "cuda_error"),
        ("F0511 03:27:45.118902  4431 common.cpp:91] Check failed: status == CURAND_STATUS_SUCCESS (203 vs. 0)  "
         "CURAND_STATUS_INITIALIZATION_FAILED", "glog_fatal", "cuda_error"),
        ("F0511 03:27:45.118902  4431 common.cpp:91] Check failed: status == CURAND_STATUS_SUCCESS (102 vs. 0)  "
         "CURAND_STATUS_ALLOCATION_FAILED", "glog_fatal", "cuda_oom"),
        # dmlc's stack trace, both forms of its frames
        ("  [bt] (3) /opt/conda/lib/python3.10/site-packages/xgboost/lib/libxgboost.so(+0x3edbeb) [0x7f4365c85beb]",
         "dmlc_stack_trace", "unknown"),
        ("[bt] (0) /usr/local/lib/python3.8/dist-packages/mxnet/libmxnet.so(dmlc::StackTrace[abi:cxx11]()+0x54) [0x7f0b2c1]",
         "dmlc_stack_trace", "unknown"),
    ],
)  # fmt: skip
def test_the_lines_and_the_prefilter(line, rule, category):
    assert_found_past_the_prefilter(line, rule, category)


@pytest.mark.parametrize(
    "line, category",
    [
        # Volcano's requests for events that are no failure
        (REQ + "Task:, Event:OutOfSync, ExitCode:0, Action:, JobVersion: 1>", None),
        (REQ + "Task:worker, Event:TaskCompleted, ExitCode:0, Action:, JobVersion: 0>", None),
        (REQ + "Task:, Event:CommandIssued, ExitCode:0, Action:AbortJob, JobVersion: 0>", None),
        # the controller's next line names the action, not the event
        ("I0511 03:27:45.119001       1 job_controller.go:385] Execute <RestartJob> on Job <ml/bert-pt-4n> in <Running> by "
         "<*state.runningState>.", None),
        # describe's other phases, a condition's status, an indented field, prose
        ("Status:             Running", None),
        ("Status:             Succeeded", None),
        ("    Status:                True", None),
        ("  Status:  Failed", None),
        ("Status: Failed to pull image, retrying", None),
        # the operator restarting the job: training goes on
        ("TFJob ml/wide-deep-2 is restarting because 1 Worker replica(s) failed.", None),
        ("TFJob ml/wide-deep-2 continues regardless 1 Worker replica(s) failed as enableDynamicWorker is set true.", None),
        # cuRAND named without a failure
        ("I0511 03:27:45.118902  4431 rng.cpp:40] curandCreateGenerator returned CURAND_STATUS_SUCCESS", None),
        # a backtrace word in prose
        ("see the [bt] (0) frame in the trace above", None),
        ("[bt] stack traces disabled at compile time", None),
    ],
)  # fmt: skip
def test_near_misses(line, category):
    assert category_of(line) == category


VLLM = ("Processed prompts:  94%|█████████▍| 30/32 [07:00<02:12, 66.17s/it, est. speed input: 30.97 toks/s, output: 224.72 toks/s]\n"
        "Processed prompts: 100%|██████████| 32/32 [09:11<00:00, 17.24s/it, est. speed input: 27.35 toks/s, output: 234.41 toks/s]\n"
        "Adding requests: 100%|██████████| 64/64 [00:00<00:00, 1834.12it/s]\n"
        "(ActorModelRayActor pid=5121, ip=10.40.3.8) trn-a100-7:5121:5340 [0] NCCL INFO Channel 12/0 : 3[3] -> 4[4] via P2P/IPC\n"
        "(ActorModelRayActor pid=5121, ip=10.40.3.8) trn-a100-7:5121:5340 [0] NCCL INFO Connected all rings\n")  # fmt: skip
TRAINING_BAR = ("Training:  50%|█████     | 16/32 [01:02<01:02,  3.90s/it, loss=1.92]\n"
                "Training: 100%|██████████| 32/32 [02:05<00:00,  3.90s/it, loss=1.71]\n")  # fmt: skip
VOLCANO_FAILED = (REQ + "Task:worker, Event:PodFailed, ExitCode:137, Action:, JobVersion: 0>\n"
                  "I0511 03:27:45.119001       1 job_controller.go:385] Execute <RestartJob> on Job <ml/bert-pt-4n> in <Running> by "
                  "<*state.runningState>.\n"
                  + REQ.replace("45.118902", "45.342117") + "Task:worker, Event:PodEvicted, ExitCode:0, Action:, JobVersion: 0>\n"
                  + REQ.replace("45.118902", "45.342980") + "Task:master, Event:PodEvicted, ExitCode:0, Action:, JobVersion: 0>\n")  # fmt: skip
VOLCANO_EVICTED = (REQ + "Task:worker, Pod:bert-pt-4n-worker-1, Event:PodEvicted, ExitCode:0, Action:, JobVersion: 0>\n"
                   "I0511 03:27:45.119001       1 job_controller.go:385] Execute <RestartTask> on Job <ml/bert-pt-4n> in <Running> by "
                   "<*state.runningState>.\n"
                   "I0511 03:27:45.119113       1 job_controller_actions.go:69] Killing task <worker> of Job <ml/bert-pt-4n>, current "
                   "version 0\n")  # fmt: skip
DESCRIBE = ("Name:               trial-7x2kq-master-0\n"
            "Namespace:          hpo\n"
            "Start Time:         Tue, 11 May 2027 03:20:11 +0000\n"
            "Status:             Failed\n"
            "IP:                 10.40.3.9\n"
            "Controlled By:      Job/trial-7x2kq\n"
            "Containers:\n"
            "  training-container:\n"
            "    Image:         registry.local/hpo/mnist:3\n")  # fmt: skip
DESCRIBE_EVICTED = DESCRIBE.replace("Status:             Failed\n",
                                    "Status:             Failed\n"
                                    "Reason:             Evicted\n"
                                    "Message:            The node was low on resource: memory. Threshold quantity: 100Mi, "
                                    "available: 81Mi. Container training-container was using 15182612Ki, request is 8Gi, has "
                                    "larger consumption of memory.\n")  # fmt: skip
TFJOB = ("Status:\n"
         "  Conditions:\n"
         "    Message:               TFJob wide-deep-2 has failed because 1 Worker replica(s) failed.\n"
         "    Reason:                TFJobFailed\n"
         "    Status:                True\n"
         "    Type:                  Failed\n"
         "  Replica Statuses:\n"
         "    Worker:\n"
         "      Active:  3\n"
         "      Failed:  1\n")  # fmt: skip
CAFFE = ("I0511 03:27:40.002113  4431 solver.cpp:228] Iteration 1200, loss = 0.8721\n"
         "F0511 03:27:45.118902  4431 math_functions.cu:422] Check failed: status == CURAND_STATUS_SUCCESS (201 vs. 0)  "
         "CURAND_STATUS_LAUNCH_FAILURE\n"
         "*** Check failure stack trace: ***\n"
         "    @     0x7f4e3e0b35cd  google::LogMessage::Fail()\n"
         "    @     0x7f4e3e80703a  caffe::caffe_gpu_rng_uniform()\n"
         "Aborted (core dumped)\n")  # fmt: skip
DMLC = ("  [bt] (1) /opt/conda/lib/python3.10/site-packages/xgboost/lib/libxgboost.so(+0x3a9bab) [0x7f4365c41bab]\n"
        "  [bt] (2) /opt/conda/lib/python3.10/site-packages/xgboost/lib/libxgboost.so(+0x8dc49) [0x7f4365925c49]\n"
        "  [bt] (3) /opt/conda/lib/python3.10/site-packages/xgboost/lib/libxgboost.so(+0x3edbeb) [0x7f4365c85beb]\n")  # fmt: skip
DMLC_RAISED = ("Traceback (most recent call last):\n"
               '  File "/srv/train.py", line 41, in <module>\n'
               "    booster = xgb.train(params, dtrain, num_boost_round=400)\n"
               '  File "/opt/conda/lib/python3.10/site-packages/xgboost/core.py", line 282, in _check_call\n'
               "    raise XGBoostError(py_str(_LIB.XGBGetLastError()))\n"
               "xgboost.core.XGBoostError: [03:27:45] /workspace/src/learner.cc:742: Invalid parameter \"max_depht\" contains "
               "whitespace.\n"
               "Stack trace:\n" + DMLC)  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        # vLLM's generation bars of a rollout at N/N, then NCCL set-up cut: no end of training
        (VLLM, "running"),
        # a training bar that moved to N/N is still the end of training
        (TRAINING_BAR, "success"),
        # a pod failed for memory, then the controller's own deletions of the job's pods: the failure, not an eviction
        (VOLCANO_FAILED, "host_oom"),
        (VOLCANO_EVICTED, "preempted"),
        # a describe whose only word is the phase, and one with the kubelet's reason
        (DESCRIBE, "unknown"),
        (DESCRIBE_EVICTED, "host_oom"),
        (TFJOB, "unknown"),
        (CAFFE, "cuda_error"),
        # dmlc's frames alone, and under the error they belong to (its own line says more)
        (DMLC, "unknown"),
        (DMLC_RAISED, "python_exception"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
