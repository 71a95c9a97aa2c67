"""The rules written from batch h28c's build half (fixtures/formats/failure_lines.json, `"batch": "h28c"`), with near misses.

Batch h28c is the failure lines of the layers under the training process: the kernel (the OOM killer's older words and its
summary, the hung-task watchdog, the SunRPC client of an NFS mount), systemd-oomd, the batch schedulers (PBS / Torque, LSF),
the kubelet and NVIDIA's device plugin, the NVIDIA container hook, the coordination services of TF and XLA, CPython's fatal
stack overflow, the NVSwitch driver. Each rule cites its source beside it in gangscope/parsers/errors.py (blocks marked h28c).
The lines below are written with our own values in the printers' wordings; the near misses are lines that must not match, and
the whole-log cases show the conditions a job may outlive (a server that answers again, a volume mounted on a retry) read as
failures only where the log ends in them.
"""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import read_line
from gangscope.parsers.errors import PREFILTER, detect, first_trace_rule
from gangscope.parsers.tool_exits import TOOL_EXIT_PREFILTER

H28C_LINE_RULES = ("kernel_oom_kill_old", "systemd_oomd_kill", "kernel_hung_task", "sunrpc_server_not_responding", "pbs_job_killed",
                   "lsf_term_reason", "k8s_volume_mount_failed", "kubelet_device_admission", "device_plugin_xid_unhealthy",
                   "k8s_secret_not_found", "k8s_liveness_restart", "nvidia_container_cli_driver", "xla_missing_heartbeats",
                   "cpython_stack_overflow", "nvswitch_sxid_fatal")
H28C_TRACE_RULES = ("jax_distributed_initialize", "coordination_heartbeat_timeout", "host_enomem")


read = read_line  # (tests/rule_reference.py: the one copy)


@pytest.mark.parametrize(
    "line, expected",
    [
        # the kernel's OOM killer, 4.6-4.19, and its summary line (4.19+), with and without a timestamp or a journal prefix
        ("Out of memory: Kill process 9921 (pt_main_thread) score 988 or sacrifice child", ("kernel_oom_kill_old", "host_oom")),
        ("[  412.005113] Memory cgroup out of memory: Kill process 77 (python) score 2000 or sacrifice child",
         ("kernel_oom_kill_old", "host_oom")),
        ("Killed process 9921 (pt_main_thread) total-vm:81234567kB, anon-rss:60123456kB, file-rss:0kB, shmem-rss:0kB",
         ("kernel_oom_kill_old", "host_oom")),
        ("Dec 05 01:02:03 node-4 kernel: Killed process 77 (python) total-vm:1234kB, anon-rss:1000kB, file-rss:0kB",
         ("kernel_oom_kill_old", "host_oom")),
        ("[  412.004000] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/slurm/uid_1000/job_77,"
         "task_memcg=/slurm/uid_1000/job_77/step_0,task=python,pid=77,uid=1000", ("kernel_oom_kill_old", "host_oom")),
        ("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-3,global_oom,task_memcg=/,task=torchrun,pid=  412,"
         "uid=    0", ("kernel_oom_kill_old", "host_oom")),
        # systemd-oomd, both wordings
        ("systemd-oomd[600]: Killed /user.slice/user-1001.slice/session-3.scope due to memory pressure for /user.slice being 64.10% > "
         "60.00% for > 30s with reclaim activity", ("systemd_oomd_kill", "host_oom")),
        ("Marked /system.slice/train.service for killing due to memory pressure for /system.slice being 90.00% > 80.00% for > 20s with "
         "reclaim activity", ("systemd_oomd_kill", "host_oom")),
        # the hung-task watchdog: a task name with a colon, slashes and spaces in it
        ("INFO: task kworker/u512:7:2231 blocked for more than 483 seconds.", ("kernel_hung_task", "hang")),
        ("[ 1.2] INFO: task python3 -m x:4 blocked for more than 120 seconds.", ("kernel_hung_task", "hang")),
        # SunRPC's client: NFS, NFSv4 and NLM, hard and soft
        ("nfs: server 192.168.7.3 not responding, still trying", ("sunrpc_server_not_responding", "storage_io")),
        ("[ 5.5] nfs4: server home.example not responding, timed out", ("sunrpc_server_not_responding", "storage_io")),
        ("kernel: lockd: server 192.168.7.3 not responding, timed out", ("sunrpc_server_not_responding", "storage_io")),
        # PBS / Torque: every memory limit's wording, the wall-clock limit
        ("=>> PBS: job killed: walltime 3605 exceeded limit 3600", ("pbs_job_killed", "time_limit")),
        ("=>> PBS: job killed: pmem 17179869184 exceeded limit 16106127360", ("pbs_job_killed", "host_oom")),
        ("=>> PBS: job killed: pvmem 17179869184 exceeded limit 16106127360", ("pbs_job_killed", "host_oom")),
        ("=>> PBS: job killed: mem 9000000kb exceeded limit 8000000kb", ("pbs_job_killed", "host_oom")),
        ("=>> PBS: job killed: vmem job total 1 kb exceeded limit 10 kb", ("pbs_job_killed", "host_oom")),
        # LSF's report and bhist
        ("TERM_RUNLIMIT: job killed after reaching LSF run time limit.", ("lsf_term_reason", "time_limit")),
        ("Mon Nov 23 14:00:39: Completed <exit>; TERM_OWNER: job killed by owner.", ("lsf_term_reason", "preempted")),
        ("TERM_PREEMPT: job killed after preemption.", ("lsf_term_reason", "preempted")),
        # the kubelet, the attach-detach controller, the device plugin, the container hook
        ('Warning  FailedMount  1s  kubelet  MountVolume.SetUp failed for volume "ckpt" : hostPath type check failed: /ckpt is not a '
         'directory', ("k8s_volume_mount_failed", "pods_ready_timeout")),
        ('MountVolume.MountDevice failed for volume "pvc-1" : rpc error: code = Aborted desc = an operation with the given Volume ID '
         'already exists', ("k8s_volume_mount_failed", "pods_ready_timeout")),
        ('Multi-Attach error for volume "pvc-1" Volume is already exclusively attached to one node and can\'t be attached to another',
         ("k8s_volume_mount_failed", "pods_ready_timeout")),
        ("Allocate failed due to requested number of devices unavailable for amd.com/gpu. Requested: 2, Available: 0, which is "
         "unexpected", ("kubelet_device_admission", "pods_ready_timeout")),
        ("Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, which "
         "is unexpected", ("kubelet_device_admission", "gpu_hardware")),
        ("I1205 01:02:03.000000       1 health.go:152] XidCriticalError: Xid=48 on Device=GPU-0a1b; marking device as unhealthy.",
         ("device_plugin_xid_unhealthy", "gpu_hardware")),
        ('Warning  Failed  3s (x2 over 9s)  kubelet  Error: secret "wandb-api" not found', ("k8s_secret_not_found", "pods_ready_timeout")),
        ("Normal   Killing    5s   kubelet  Container worker failed liveness probe, will be restarted", ("k8s_liveness_restart", "hang")),
        ("nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown",
         ("nvidia_container_cli_driver", "gpu_hardware")),
        # XLA's exit when the coordination service saw a task's heartbeats stop; CPython's fatal stack overflow (3.8 and 3.9+)
        ("F1205 01:02:03.000000   77 client.h:77] Terminating process because the coordinator detected missing heartbeats. This most "
         "likely indicates that another task died; see the other task logs for more details. Status: UNAVAILABLE: x",
         ("glog_fatal", "nccl_error")),  # glog's header first: glog_fatal reads the message by the trace rules (coordination_heartbeat_timeout)
        ("Terminating process because the coordinator detected missing heartbeats. This most likely indicates that another task died; "
         "see the other task logs for more details. Status: DEADLINE_EXCEEDED: x", ("xla_missing_heartbeats", "nccl_error")),
        ("Fatal Python error: Cannot recover from stack overflow.", ("cpython_stack_overflow", "python_exception")),
        ("Fatal Python error: _Py_CheckRecursiveCall: Cannot recover from stack overflow.", ("cpython_stack_overflow", "python_exception")),
        # NVSwitch's fatal SXid
        ("nvidia-nvswitch5: SXid (PCI:0000:a4:00.0): 22013, Fatal, Link 44 MINION Link DLREQ interrupt",
         ("nvswitch_sxid_fatal", "gpu_hardware")),
    ],
)
def test_the_h28c_line_rules(line, expected):
    assert read(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "Out of memory: Kill process group 77",  # not the kernel's words
        "Killed process group of the job",
        "oom-kill:constraint=CONSTRAINT_NONE",  # the summary cut before its task
        "Killed the child due to memory pressure",
        "INFO: task 3 of 8 finished in 12.1 seconds.",
        "INFO: task python:77 blocked for 3 seconds.",
        "nfs: server 192.168.7.3 OK",  # the server answered again
        "ceph: server 10.0.0.1 not responding, still trying",  # another client's words
        "=>> PBS: job killed: node 1 (n7) requested job terminate, 'EOF' (code 1099)",  # not a limit (measure half: no rule)
        "=>> PBS: job killed: ncpus 18.35 exceeded limit 16 (sum)",
        "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.",  # not among the rule's reasons (measure half)
        "TERM_PROGRAM=vscode",
        "TERM_RUNLIMIT",
        'MountVolume.SetUp succeeded for volume "dataset"',
        'Unable to attach or mount volumes: unmounted volumes=[x], unattached volumes=[x]: timed out waiting for the condition',
        "Allocate succeeded for nvidia.com/gpu",
        "'nvidia.com/gpu' device marked unhealthy: GPU-0a1b",  # server.go's line (measure half: no rule)
        "XidCriticalError: Xid=48 on Device=GPU-0a1b; skipping",
        'Error: configmap "train-config" not found',  # measure half: no rule
        'Error: secret "x" is malformed',
        "Container worker failed startup probe, will be restarted",
        "Container worker passed liveness probe",
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file",
        "Terminating process because of missing heartbeat response from the coordinator.",  # measure half: no rule
        "Fatal Python error: Segmentation fault",
        "nvidia-nvswitch5: SXid (PCI:0000:a4:00.0): 20009, Non-fatal, Link 28 RX Short Error Rate",
    ],
)
def test_near_misses_are_not_read_by_the_h28c_rules(line):
    found = read(line)
    assert found is None or found[0] not in H28C_LINE_RULES, found


def test_the_h28c_line_rules_are_behind_the_prefilter():
    # each rule's key or prefilter pattern lets its lines through (kernel and kubelet lines carry their prefixes)
    for line in ("[ 1.1] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/,task=a,"
                 "pid=1,uid=0", "Dec 05 kernel: nfs: server h not responding, still trying",
                 "Marked /a.scope for killing due to memory pressure for /b being 9.00% > 1.00% for > 1s with reclaim activity",
                 "  Normal Killing 1s kubelet Container c failed liveness probe, will be restarted"):
        assert re.search(PREFILTER, line), line


@pytest.mark.parametrize(
    "exc_type, message, frames, rule, category",
    [
        ("jaxlib.xla_extension.XlaRuntimeError", "UNAVAILABLE: failed to connect to all addresses; last error: UNKNOWN: ipv4:10.0.0.2:1234: "
         "Failed to connect to remote host: Connection refused", ["/x/jax/_src/distributed.py:initialize"], "jax_distributed_initialize",
         "rendezvous_error"),
        ("XlaRuntimeError", "DEADLINE_EXCEEDED: Barrier timed out. Barrier_id: PjRT_Client_Connect", ["/x/jax/_src/distributed.py:initialize"],
         "jax_distributed_initialize", "rendezvous_error"),
        ("tensorflow.python.framework.errors_impl.UnavailableError", "Task /job:worker/replica:0/task:7 heartbeat timeout. This indicates "
         "that the remote task has failed, got preempted, or crashed unexpectedly. Check the task logs for an earlier error to debug "
         "further.", [], "coordination_heartbeat_timeout", "nccl_error"),
        ("OSError", "[Errno 12] Cannot allocate memory", ["/usr/lib/python3.10/subprocess.py:_execute_child"], "host_enomem", "host_oom"),
    ],
)
def test_the_h28c_trace_rules(exc_type, message, frames, rule, category):
    found = first_trace_rule(exc_type, message, frames)
    assert found is not None and (found.name, found.category) == (rule, category)


@pytest.mark.parametrize(
    "exc_type, message, frames",
    [
        # a configuration error raised in jax.distributed.initialize before any connection (a ValueError, not XlaRuntimeError)
        ("ValueError", "coordinator_address should be defined.", ["/x/jax/_src/distributed.py:initialize"]),
        # gRPC's words elsewhere than initialize are tf_peer_unavailable's (a peer lost mid-run)
        ("XlaRuntimeError", "UNAVAILABLE: failed to connect to all addresses", ["/x/jax/_src/interpreters/pxla.py:__call__"]),
        ("RuntimeError", "heartbeat timeout of the progress bar", []),
        ("OSError", "[Errno 28] No space left on device: '/ckpt/x'", []),
        ("OSError", "[Errno 12] Cannot allocate memory for the pinned buffer of 4096 bytes", []),
        ("MemoryError", "Cannot allocate memory", []),
    ],
)
def test_near_misses_of_the_h28c_trace_rules(exc_type, message, frames):
    found = first_trace_rule(exc_type, message, frames)
    assert found is None or found.name not in H28C_TRACE_RULES, found


STEP = "step 4120 | loss 2.3817 | lr 2.94e-04\n"
STEP2 = "step 4130 | loss 2.3790 | lr 2.94e-04\n"


def test_an_nfs_server_that_answers_again_is_no_failure(tmp_path):
    text = STEP + "[ 9120.4] nfs: server fs01 not responding, still trying\n[ 9131.0] nfs: server fs01 OK\n" + STEP2
    assert the_diagnosis(tmp_path, text).category == "running"


def test_a_log_that_ends_in_an_nfs_server_not_responding_is_a_storage_failure(tmp_path):
    assert the_diagnosis(tmp_path, STEP + "[ 9120.4] nfs: server fs01 not responding, still trying\n").category == "storage_io"


def test_a_volume_mounted_on_a_retry_is_no_failure(tmp_path):
    text = ('  Warning  FailedMount  2m  kubelet  MountVolume.SetUp failed for volume "kube-api-access-7xk2p" : object "team-a"/'
            '"kube-root-ca.crt" not registered\n' + STEP + STEP2)
    assert the_diagnosis(tmp_path, text).category == "running"


def test_a_hung_task_the_run_outlived_is_no_hang(tmp_path):
    text = STEP + "[ 7265.2] INFO: task python3:48213 blocked for more than 122 seconds.\n" + STEP2
    assert the_diagnosis(tmp_path, text).category == "running"


def test_a_hung_task_with_no_step_after_it_is_a_hang(tmp_path):
    assert the_diagnosis(tmp_path, STEP + "[ 7265.2] INFO: task python3:48213 blocked for more than 122 seconds.\n").category == "hang"


def test_a_walltime_kill_after_steps_is_the_time_limit(tmp_path):
    d = the_diagnosis(tmp_path, STEP + "=>> PBS: job killed: walltime 86437 exceeded limit 86400\n")
    assert (d.outcome, d.category) == ("failed", "time_limit")


def test_the_old_oom_killer_lines_are_host_memory(tmp_path):
    text = (STEP + "[3456789.1] Out of memory: Kill process 48213 (python) score 912 or sacrifice child\n"
            "[3456789.2] Killed process 48213 (python) total-vm:98765432kB, anon-rss:61234567kB, file-rss:8123kB, shmem-rss:0kB\n")
    d = the_diagnosis(tmp_path, text)
    assert (d.outcome, d.category) == ("failed", "host_oom")


def test_cpythons_stack_overflow_dump_is_the_programs_bug(tmp_path):
    text = (STEP + "Fatal Python error: _Py_CheckRecursiveCall: Cannot recover from stack overflow.\nPython runtime state: initialized\n\n"
            "Current thread 0x00007f3a2c1b4740 (most recent call first):\n  File \"/workspace/model/tree.py\", line 41 in flatten\n"
            "  File \"/workspace/model/tree.py\", line 41 in flatten\n")
    assert the_diagnosis(tmp_path, text).category == "python_exception"


def test_a_segfault_dump_stays_a_crash_of_unknown_cause(tmp_path):
    text = (STEP + "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f3a2c1b4740 (most recent call first):\n"
            "  File \"/workspace/model/ops.py\", line 12 in forward\n")
    assert the_diagnosis(tmp_path, text).category == "unknown"
