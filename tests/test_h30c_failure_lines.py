"""The rules written from batch h30c's build half (fixtures/formats/failure_lines.json, `"batch": "h30c"`), with near misses.

Batch h30c is, in part, the same printers as batch h29c's measure misses in the same shapes (a pod's status as `kubectl get
pod -o yaml|json` prints it: a ConfigMap, a Secret or a key not found, a name containerd still reserves, the kubelet's
admission rejecting a pod; TF's gRPC statuses with grpc's debug strings of three versions), and in part families new to the
table (dask's nanny and scheduler, torch.distributed.rpc over TensorPipe, NVIDIA DALI, CUDA graph capture, Intel Gaudi,
pyxis/enroot, Apptainer, Hydra's short report, Open MPI's launcher). Each rule cites its source beside it in
gangscope/parsers/errors.py (blocks marked h30c). The lines below are written with our own values in the printers' wordings;
the near misses are lines that must not match; the whole-log cases show the conditions a job may outlive read as failures only
where the log ends in them, and a summary outranked by the cause under it.
"""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import read_line
from gangscope.parsers.errors import PREFILTER, detect, first_trace_rule
from gangscope.parsers.tool_exits import TOOL_EXIT_PREFILTER

H30C_LINE_RULES = ("k8s_container_waiting_message", "k8s_pod_rejected_no_resource", "dask_nanny_memory_restart",
                   "tensorpipe_connection_lost", "hpu_devmem_oom", "pyxis_container_failed", "apptainer_container_creation_failed",
                   "exception_repr_line")
H30C_TRACE_RULES = ("tf_peer_unavailable_grpc_details", "dask_killed_worker", "torch_rpc_timeout", "tensorpipe_connection_lost",
                    "dali_pipeline_error", "hpu_devmem_oom")
STEP = "[2026-01-07 11:02:01,118] [INFO] [trainer.py:233] step 120 | loss 2.4017 | lr 1.90e-04\n"
STEP2 = "[2026-01-07 11:04:01,118] [INFO] [trainer.py:233] step 140 | loss 2.3871 | lr 1.90e-04\n"


read = read_line  # (tests/rule_reference.py: the one copy)


@pytest.mark.parametrize(
    "line, expected",
    [
        # a container's waiting message in the pod's status: YAML (plain and quoted), JSON (quotes escaped); containerd's
        # reserved name in YAML is read by h29c's containerd_name_reserved (its prefilter keys kept it out before), in JSON by
        # the h30c rule
        ('        message: configmap "train-env" not found', ("k8s_container_waiting_message", "pods_ready_timeout")),
        ("        message: 'secret \"hf-token\" not found'", ("k8s_container_waiting_message", "pods_ready_timeout")),
        ('                        "message": "configmap \\"train-env\\" not found",', ("k8s_container_waiting_message", "pods_ready_timeout")),
        ('"message": "secret \\"s3-creds\\" not found"', ("k8s_container_waiting_message", "pods_ready_timeout")),
        ("        message: couldn't find key HF_TOKEN in Secret ns-a/creds", ("k8s_container_waiting_message", "pods_ready_timeout")),
        ('   "message": "couldn\'t find key MASTER_PORT in ConfigMap ns-a/dist-env",', ("k8s_container_waiting_message", "pods_ready_timeout")),
        ("        message: 'failed to reserve container name \"trainer_p-0_ns-a_1_0\": name \"trainer_p-0_ns-a_1_0\" is reserved for \"ab12\"'",
         ("containerd_name_reserved", "pods_ready_timeout")),
        ('  "message": "failed to reserve container name \\"trainer_p-0_ns-a_1_0\\": name \\"trainer_p-0_ns-a_1_0\\" is reserved for \\"ab\\"",',
         ("k8s_container_waiting_message", "pods_ready_timeout")),
        # the kubelet's admission for a resource the node lacks: status (JSON / YAML / describe) and event
        ('        "message": "Pod was rejected: Node didn\'t have enough resource: nvidia.com/gpu, requested: 8, used: 8, capacity: 8",',
         ("k8s_pod_rejected_no_resource", "pods_ready_timeout")),
        ("  Warning  OutOfnvidia.com/gpu  12s  kubelet  Node didn't have enough resource: nvidia.com/gpu, requested: 4, used: 6, "
         "capacity: 8", ("k8s_pod_rejected_no_resource", "pods_ready_timeout")),
        # dask's nanny, 2022+ and before
        ("2026-01-07 11:02:03,118 - distributed.nanny.memory - WARNING - Worker tcp://10.0.0.7:38211 (pid=771) exceeded 95% memory "
         "budget. Restarting...", ("dask_nanny_memory_restart", "host_oom")),
        ("distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting", ("dask_nanny_memory_restart", "host_oom")),
        ("WARNING:distributed.nanny.memory:Worker ucx://10.0.0.9:41001 (pid=12) exceeded 80% memory budget. Restarting...",
         ("dask_nanny_memory_restart", "host_oom")),
        # TensorPipe's transport errors as the RPC agent logs them
        ("[W tensorpipe_agent.cpp:726] RPC agent for w1 encountered error when reading incoming request from ps: EOF: end of file "
         "(this error originated at tensorpipe/transport/uv/connection_impl.cc:132)", ("tensorpipe_connection_lost", "nccl_error")),
        ("[W tensorpipe_agent.cpp:940] RPC agent for ps encountered error when sending outgoing request #12 to w3: ECONNRESET: "
         "connection reset by peer (this error originated at tensorpipe/transport/uv/connection_impl.cc:132)",
         ("tensorpipe_connection_lost", "nccl_error")),
        # Gaudi's device memory, SW 1.10+ and 1.x
        ("RuntimeError: [Rank:3] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::536870912 (512)MB", ("hpu_devmem_oom", "cuda_oom")),
        ("FATAL ERROR :: MODULE:DEVMEM Allocation failed for size::40960000 (39.0625)MB", ("hpu_devmem_oom", "cuda_oom")),
        # pyxis's reports (a summary) and Apptainer's FATAL
        ("slurmstepd: error: pyxis: container start failed with error code: 1", ("pyxis_container_failed", "pods_ready_timeout")),
        ("3: slurmstepd: error: pyxis: couldn't start container", ("pyxis_container_failed", "pods_ready_timeout")),
        ("slurmstepd: error: pyxis: failed to import docker image", ("pyxis_container_failed", "pods_ready_timeout")),
        ("FATAL:   container creation failed: mount /data->/data error: while mounting /data: destination /data doesn't exist in container",
         ("apptainer_container_creation_failed", "pods_ready_timeout")),
        ("0: FATAL:   container creation failed: failed to resolve session directory /tmp/x/mnt/session: lstat /tmp/x: no such file",
         ("apptainer_container_creation_failed", "pods_ready_timeout")),
        # an exception's repr alone on a line (Hydra's short report): its class and message say the category
        ("TypeError(\"Model.__init__() got an unexpected keyword argument 'lr_sched'\")", ("exception_repr_line", "python_exception")),
        ("KeyError('meta')", ("exception_repr_line", "python_exception")),
        ("OutOfMemoryError('CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.12 GiB "
         "is free.')", ("cuda_oom", "cuda_oom")),
    ],
)
def test_the_h30c_line_rules(line, expected):
    assert read(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        # a status's healthy waiting message, another object not found, the event's form (read by the h29c rules), a log line
        "        message: Back-off pulling image \"registry.example.com/a:b\"",
        '        message: configmap "train-env" created',
        "message: the configmap train-env was not found in the cache, retrying",
        "  fetching configmap \"train-env\" not found yet",
        # the scheduler's filter (another printer; its own rules), a resource that was enough
        "0/8 nodes are available: 8 Insufficient nvidia.com/gpu.",
        "Node had enough resource: nvidia.com/gpu, requested: 8, used: 0, capacity: 8",
        # dask's pause and spill warnings (a worker slowed, not killed)
        "distributed.worker.memory - WARNING - Worker is at 81% memory usage. Pausing worker.  Process memory: 12.9 GiB -- Worker "
        "memory limit: 16.0 GiB",
        "distributed.nanny - WARNING - Restarting worker",
        # TensorPipe's other errors (not a peer's connection ended) and the words without TensorPipe's origin
        "RuntimeError: pipe closed",
        "EOF: end of file",
        "eof (this error originated at mylib/transport.cc:12)",
        # Gaudi's other modules, an allocation the bridge logs at INFO
        "[Rank:0] FATAL ERROR :: MODULE:PT_BRIDGE Exception in Lowering thread...",
        "PT_DEVMEM allocation of 536870912 bytes done",
        # pyxis's progress and version lines, an unrelated "container start"
        "pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.05-py3",
        "slurmstepd: pyxis: version v0.20.0",
        "docker: container start failed with error code: 1",
        # Apptainer's INFO / WARNING lines
        "INFO:    Converting SIF file to temporary sandbox...",
        "WARNING: container creation failed to bind /etc/localtime, skipped",
        # repr-looking lines that are not one exception's repr
        "raise TypeError('bad value')",
        "errors = [KeyError('a'), KeyError('b')]",
        "ValueError",
        "SomeClass('meta')",
    ],
)
def test_near_misses_are_not_read_by_the_h30c_rules(line):
    found = read(line)
    assert found is None or found[0] not in H30C_LINE_RULES, found


GRPC_JSON = ('{"created":"@1767783723.118903210","description":"Error received from peer ipv4:10.0.0.3:2222","file":'
             '"external/com_github_grpc_grpc/src/core/lib/surface/call.cc","file_line":1056,"grpc_message":"Socket closed","grpc_status":14}')


@pytest.mark.parametrize(
    "exc_type, message, rule, category",
    [
        ("tensorflow.python.framework.errors_impl.UnavailableError",
         "Socket closed\nAdditional GRPC error information from remote target /job:worker/replica:0/task:3:\n:" + GRPC_JSON,
         "tf_peer_unavailable_grpc_details", "nccl_error"),
        ("tensorflow.python.framework.errors_impl.UnavailableError",
         "OS Error\nAdditional GRPC error information from remote target /job:ps/replica:0/task:0 while calling "
         "/tensorflow.WorkerService/RecvTensor:\n:UNKNOWN:Error received from peer ipv4:10.0.0.3:2222 {grpc_message:\"OS Error\", "
         "grpc_status:14, created_time:\"2026-01-07T11:02:03.1+00:00\"}", "tf_peer_unavailable_grpc_details", "nccl_error"),
        ("distributed.scheduler.KilledWorker", "Attempted to run task 'f-1' on 4 different workers, but all those workers died while "
         "running it. The last worker that attempt to run the task was tcp://10.0.0.7:38211.", "dask_killed_worker", "unknown"),
        ("KilledWorker", "('f-1', <WorkerState 'tcp://10.0.0.7:38211', name: 0, status: closed, memory: 0, processing: 1>)",
         "dask_killed_worker", "unknown"),
        ("RuntimeError", "RPC ran for more than set timeout (60000 ms) and will now be marked with an error", "torch_rpc_timeout", "nccl_timeout"),
        ("RuntimeError", "RPC ran for more than set timeout and will now be marked with an error", "torch_rpc_timeout", "nccl_timeout"),
        ("RuntimeError", "eof (this error originated at tensorpipe/transport/shm/connection_impl.cc:259)", "tensorpipe_connection_lost",
         "nccl_error"),
        ("RuntimeError", "ECONNRESET: connection reset by peer (this error originated at tensorpipe/transport/uv/connection_impl.cc:132)",
         "tensorpipe_connection_lost", "nccl_error"),
        ("RuntimeError", "Critical error in pipeline:\nError when executing CPU operator readers__File, instance name: \"r\", encountered:\n"
         "Could not open file /data/a.jpg", "dali_pipeline_error", "dataloader_error"),
        ("RuntimeError", "Critical error in pipeline:", "dali_pipeline_error", "dataloader_error"),
        ("RuntimeError", "[Rank:0] FATAL ERROR :: MODULE:PT_DEVMEM Allocation failed for size::939524096 (896)MB", "hpu_devmem_oom", "cuda_oom"),
    ],
)
def test_the_h30c_trace_rules(exc_type, message, rule, category):
    found = first_trace_rule(exc_type, message)
    assert (found.name, found.category) == (rule, category)


@pytest.mark.parametrize(
    "exc_type, message",
    [
        # gRPC's words inside a longer first line, another TF status, a message that only quotes the block
        ("tensorflow.python.framework.errors_impl.UnavailableError", "Socket closed by the client before the handshake"),
        ("tensorflow.python.framework.errors_impl.InternalError", "Additional GRPC error information from remote target /job:w/task:0:"),
        # any RuntimeError (a rule's type and message are alternatives: the DALI rule reads the message alone)
        ("RuntimeError", "expected scalar type Float but found Half"),
        ("RuntimeError", "[Rank:0] FATAL ERROR :: MODULE:PT_BRIDGE Exception in Lowering thread..."),
        ("RuntimeError", "A critical error in pipeline stage 3 of the model"),
        ("RuntimeError", "RPC failed: the timeout was set to 60 s"),
        ("RuntimeError", "eof"),
        ("ValueError", "KilledWorker count must be positive"),
    ],
)
def test_near_misses_of_the_h30c_trace_rules(exc_type, message):
    found = first_trace_rule(exc_type, message)
    assert found is None or found.name not in H30C_TRACE_RULES, found.name


def test_a_config_the_kubelet_found_on_a_retry_is_no_failure(tmp_path):
    # the status read while the ConfigMap was missing, then the pod started (its steps follow)
    text = ('        message: configmap "train-env" not found\n        reason: CreateContainerConfigError\n' + STEP + STEP2)
    assert the_diagnosis(tmp_path, text).category == "running"


def test_a_status_that_ends_in_a_missing_secret_is_a_pod_that_never_started(tmp_path):
    text = ("status:\n  containerStatuses:\n  - name: trainer\n    state:\n      waiting:\n"
            "        message: 'secret \"hf-token\" not found'\n        reason: CreateContainerConfigError\n  phase: Pending\n")
    assert the_diagnosis(tmp_path, text).category == "pods_ready_timeout"


def test_a_tensorpipe_eof_the_job_outlived_is_no_failure(tmp_path):
    text = ("[W tensorpipe_agent.cpp:726] RPC agent for w1 encountered error when reading incoming request from w2: eof (this error "
            "originated at tensorpipe/transport/shm/connection_impl.cc:259)\n" + STEP + STEP2)
    assert the_diagnosis(tmp_path, text).category == "running"


def test_a_pyxis_failure_is_read_by_the_enroot_log_under_it(tmp_path):
    # pyxis_container_failed is a summary: the enroot log's full disk is the cause (dev 231)
    text = ("slurmstepd: error: pyxis: failed to import docker image\nslurmstepd: error: pyxis: printing enroot log file:\n"
            "slurmstepd: error: pyxis:     Write failed because No space left on device\nslurmstepd: error: pyxis: couldn't start container\n")
    assert the_diagnosis(tmp_path, text).category == "storage_io"


def test_a_pyxis_failure_alone_is_a_step_that_never_started(tmp_path):
    text = ("slurmstepd: error: pyxis: container start failed with error code: 1\nslurmstepd: error: pyxis: couldn't start container\n"
            "srun: error: node-3: task 0: Exited with exit code 1\n")
    assert the_diagnosis(tmp_path, text).category == "pods_ready_timeout"


def test_dask_workers_killed_after_the_nannys_memory_restart_are_host_memory(tmp_path):
    text = ("distributed.nanny.memory - WARNING - Worker tcp://10.0.0.7:38211 (pid=771) exceeded 95% memory budget. Restarting...\n"
            'Traceback (most recent call last):\n  File "/w/prep.py", line 40, in <module>\n    out = client.gather(futs)\n'
            "distributed.scheduler.KilledWorker: Attempted to run task 'f-1' on 4 different workers, but all those workers died while "
            "running it. The last worker that attempt to run the task was tcp://10.0.0.7:38211.\n")
    assert the_diagnosis(tmp_path, text).category == "host_oom"


def test_hydras_short_report_is_read_by_the_wrapped_exception(tmp_path):
    text = ("Error executing job with overrides: ['model=a']\nError in call to target 'm.Model':\n"
            "TypeError(\"Model.__init__() got an unexpected keyword argument 'x'\")\nfull_key: model\n\n"
            "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n")
    assert the_diagnosis(tmp_path, text).category == "python_exception"


def test_an_apptainer_failure_before_the_program_is_a_container_that_never_started(tmp_path):
    text = ("FATAL:   container creation failed: mount /proc/self/fd/3->/var/lib/apptainer/mnt/session/rootfs error: while mounting "
            "image /proc/self/fd/3: failed to find loop device: could not attach image file to loop device: no loop devices available\n"
            "srun: error: node-9: task 2: Exited with exit code 255\n")
    assert the_diagnosis(tmp_path, text).category == "pods_ready_timeout"
