"""Rules from batch h29e of issue 16 (fixtures/eval README, "Batch h29e"): a blind draw of logs from launchers other than
torchrun (HPC launchers and framework launchers).

Four classes of its misses show their cause in the log:
- Open MPI's own lines when an MPI call comes before MPI_Init or after MPI_Finalize (ompi/errhandler/
  errhandler_predefined.c): a bug in the program's code (parsers/errors.py ompi_call_outside_init);
- Ray's autoscaler when a resource request fits no node type ("No available node types can fulfill resource request"):
  the job's workers are never placed, pods_ready_timeout (ray_infeasible_request);
- a child's traceback carried in a wrapper's message (mp.spawn's "-- Process N terminated with the following error:"):
  the trace rules that read frames now read the child's frames (parsers/errors.py classify_trace, _remote_links);
- CPython's frames with their indents lost and no header kept (a launcher front-end logging a child's stderr line by
  line): the stackprinter shape took them and read the first source line as an exception; now read as CPython's frames
  (parsers/traces.py TraceParser._cpython_source_at_margin).
The lines below are rebuilt from the printers' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import found

from gangscope.parsers import errors

PREFILTER = re.compile(errors.PREFILTER)


# --- Open MPI: an MPI call outside MPI_Init .. MPI_Finalize


@pytest.mark.parametrize(
    "line, category",
    [
        ("*** The MPI_Comm_rank() function was called before MPI_INIT was invoked.", "python_exception"),
        ("*** The MPI_Query_thread() function was called before MPI_INIT was invoked.", "python_exception"),
        ("*** An MPI function was called before MPI_INIT was invoked.", "python_exception"),
        ("*** The MPI_Barrier() function was called after MPI_FINALIZE was invoked.", "python_exception"),
        # the init itself failing (orte_init's box above says why): a failure this line does not explain
        ("*** The MPI_Init_thread() function was called before MPI_INIT was invoked.", "unknown"),
        ("*** The MPI_Init() function was called before MPI_INIT was invoked.", "unknown"),
    ],
)  # fmt: skip
def test_open_mpi_call_outside_init(line, category):
    assert found(line) == ("ompi_call_outside_init", category)
    assert PREFILTER.search(line) is not None


@pytest.mark.parametrize(
    "line",
    [
        # the handler's lines after MPI_Init (another form of the same function), and its other lines
        "*** An error occurred in MPI_Allreduce",
        "*** This is disallowed by the MPI standard.",
        "*** Your MPI job will now abort.",
        # prose about the same mistake
        "I think MPI_Comm_rank() was called before MPI_Init in the data loader",
    ],
)  # fmt: skip
def test_open_mpi_call_outside_init_near_misses(line):
    assert (found(line) or ("",))[0] != "ompi_call_outside_init"


def test_an_mpi_call_before_init_in_a_log_is_the_programs_bug(tmp_path):
    text = ("Loading the DQN agent for env CartPole-v0 ...\n"
            "*** The MPI_Comm_size() function was called before MPI_INIT was invoked.\n"
            "*** This is disallowed by the MPI standard.\n"
            "*** Your MPI job will now abort.\n"
            "[b03n11:20417] Local abort before MPI_INIT completed completed successfully, but am not able to aggregate error "
            "messages, and not able to guarantee that all other processes were killed!\n")  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "python_exception", d.summary


# --- Ray: a resource request no node type can fulfil


@pytest.mark.parametrize(
    "line",
    [
        "(autoscaler +41s) Error: No available node types can fulfill resource request {'CPU': 1.0, 'GPU': 1.0}. Add suitable "
        "node types to this cluster to resolve this issue.",
        "(scheduler +12m3s) Error: No available node types can fulfill resource request defaultdict(<class 'float'>, {'GPU': 8.0, "
        "'CPU': 16.0}). Add suitable node types to this cluster to resolve this issue.",
        # the v2 autoscaler's event logger
        "(autoscaler) No available node types can fulfill resource requests {'CPU': 1.0, 'accelerator_type:H100': 0.001}*4",
        "(autoscaler) No available node types can fulfill placement group requests (detail: {'GPU': 8.0}: STRICT_PACK)",
    ],
)  # fmt: skip
def test_ray_infeasible_request(line):
    assert found(line) == ("ray_infeasible_request", "pods_ready_timeout")
    assert PREFILTER.search(line) is not None


@pytest.mark.parametrize(
    "line",
    [
        # a feasible request waiting for busy nodes
        "(autoscaler +1m2s) Warning: The following resource request cannot be scheduled right now: {'CPU': 1.0}. This is "
        "likely due to all cluster resources being claimed by actors. Consider creating fewer actors or adding more nodes to "
        "this Ray cluster.",
        # the autoscaler adding nodes
        "(autoscaler +15m42s) Adding 2 node(s) of type worker.",
        # prose
        "it says no node types can fulfill my request, but the GPUs are there",
    ],
)  # fmt: skip
def test_ray_infeasible_request_near_misses(line):
    assert (found(line) or ("",))[0] != "ray_infeasible_request"


def test_an_infeasible_request_in_a_driver_log_is_a_gang_that_never_became_ready(tmp_path):
    text = ("2024-04-24 10:29:31,204\tINFO worker.py:1621 -- Started a local Ray instance.\n"
            "(autoscaler +32s) Tip: use `ray status` to view detailed cluster status. To disable these messages, set "
            "RAY_SCHEDULER_EVENTS=0.\n"
            "(autoscaler +32s) Error: No available node types can fulfill resource request {'CPU': 1.0, 'GPU': 1.0}. Add "
            "suitable node types to this cluster to resolve this issue.\n")  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "pods_ready_timeout", d.summary


# --- mp.spawn: the child's traceback in the wrapper's message, its frames read

CHILD = ("Traceback (most recent call last):\n"
         '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 19, in _wrap\n'
         "    fn(i, *args)\n"
         '  File "/work/gan/train_ddp.py", line 88, in worker\n'
         "    dist.init_process_group(backend='nccl', init_method='env://', world_size=ws, rank=rank)\n"
         '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 406, in init_process_group\n'
         "    store, rank, world_size = next(rendezvous(url))\n"
         '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/rendezvous.py", line 143, in _env_rendezvous_handler\n'
         "    store = TCPStore(master_addr, master_port, world_size, start_daemon)\n"
         "RuntimeError: {}\n")  # fmt: skip
PARENT = ("Traceback (most recent call last):\n"
          '  File "/work/gan/train_ddp.py", line 140, in <module>\n'
          "    mp.spawn(worker, nprocs=4, args=(args,))\n"
          '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 114, in join\n'
          "    raise Exception(msg)\n"
          "{}: \n"
          "\n"
          "-- Process 2 terminated with the following error:\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        # torch <= 1.7's bare Exception, and 1.8+'s ProcessRaisedException: an error raised in the rendezvous
        (PARENT.format("Exception") + CHILD.format("Connection timed out"), "rendezvous_error"),
        (PARENT.format("torch.multiprocessing.spawn.ProcessRaisedException") + CHILD.format("Connection refused"),
         "rendezvous_error"),
        # near misses: the child's error raised in its own code (no rendezvous frame) stays the program's exception ...
        (PARENT.format("Exception") + CHILD.replace("distributed/rendezvous.py", "distributed/launch_helpers.py")
         .format("Connection timed out"), "python_exception"),
        # ... a message rule still reads the child's error first (a CUDA OOM raised at the same place is an OOM) ...
        (PARENT.format("Exception") + CHILD.replace("RuntimeError: {}", "RuntimeError: CUDA error: out of memory"), "cuda_oom"),
        # ... and the wrapper whose child traceback is cut is a worker that failed (as before)
        (PARENT.format("Exception") + "Traceback (most recent call last):\n"
         '  File "/opt/conda/lib/python3.7/site-packages/torch/multiprocessing/spawn.py", line 19, in _wrap\n', "unknown"),
    ],
)  # fmt: skip
def test_the_child_traceback_a_spawn_wrapper_carries_is_read_with_its_frames(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


# --- CPython's frames with their indents lost, no header kept

FRAMES = ['File "C:\\apps\\trainer\\sd-scripts\\flux_train_network.py", line 583, in <module>',
          "trainer.train(args)",
          'File "C:\\apps\\trainer\\sd-scripts\\train_network.py", line 1251, in train',
          "accelerator.backward(loss)",
          'File "C:\\apps\\trainer\\env\\lib\\site-packages\\torch\\autograd\\graph.py", line 825, in _engine_run_backward',
          "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"]  # fmt: skip


@pytest.mark.parametrize(
    "text, category, exception_type",
    [
        # a front-end's stamp on each line, the copy cut in the frames: an exception was raised, the text does not say which
        ("".join(f"[2025-09-23 14:17:52] [INFO] {t}\n" for t in FRAMES), "unknown", None),
        # the same lines bare
        ("\n".join(FRAMES) + "\n", "unknown", None),
        # ... and with the exception line at their end: its category
        ("\n".join(FRAMES) + "\nRuntimeError: CUDA error: an illegal memory access was encountered\n", "cuda_error", "RuntimeError"),
        # near misses, stackprinter's own shape: a File line at the margin, then the exception at the margin ...
        ('File "/srv/app/job.py", line 12, in <module>\nValueError: batch size must be positive\n', "python_exception",
         "ValueError"),
        # ... or its indented source lines and "-->" under the frame, then the exception
        ('File "/srv/app/job.py", line 12, in <module>\n    10       def run(cfg):\n--> 12           raise KeyError(cfg.name)\n'
         "\nKeyError: 'resnet'\n", "python_exception", "KeyError"),
    ],
)  # fmt: skip
def test_frames_without_their_indents_and_header_read_as_cpython_frames(tmp_path, text, category, exception_type):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
    if exception_type is not None:
        assert (d.exception_type or "").endswith(exception_type), d.summary


# --- pdsh (the DeepSpeed launcher's multi-node runner): a node's ssh that ended non-zero


@pytest.mark.parametrize(
    "line, category",
    [
        ("pdsh@gpu-a01: gpu-a02: ssh exited with exit code 1", "unknown"),
        ("pdsh@gpu-a01: 10.1.4.22: ssh exited with exit code 255", "unknown"),
        # the remote command killed by SIGKILL (128 + 9), and the ssh or the remote process killed by a signal
        ("pdsh@gpu-a01: gpu-a02: ssh exited with exit code 137", "host_oom"),
        ("pdsh@gpu-a01: gpu-a02: ssh killed by signal 15", "preempted"),
        ("pdsh@gpu-a01: process on host gpu-a03 killed by signal 6", "unknown"),
    ],
)  # fmt: skip
def test_pdsh_remote_exit(line, category):
    assert found(line) == ("pdsh_remote_exit", category)
    assert PREFILTER.search(line) is not None


@pytest.mark.parametrize(
    "line",
    [
        # exit code 0 is no failure; pdsh's other words; a node's own line behind pdsh's label
        "pdsh@gpu-a01: gpu-a02: ssh exited with exit code 0",
        "pdsh@gpu-a01: interrupt (one more within 1 sec to abort)",
        "gpu-a02: ssh exited with exit code 1 is what I see on the other node",
    ],
)  # fmt: skip
def test_pdsh_remote_exit_near_misses(line):
    assert (found(line) or ("",))[0] != "pdsh_remote_exit"


def test_a_node_that_failed_under_pdsh_with_its_own_error_is_answered_by_that_error(tmp_path):
    text = ("gpu-a02: [2024-03-01 04:51:13,576] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 40411\n"
            'gpu-a02: [2024-03-01 04:51:13,577] [ERROR] [launch.py:321:sigkill_handler] ["/usr/bin/python3", "-u", "train.py", '
            '"--local_rank=3"] exits with return code = -9\n'
            "pdsh@gpu-a01: gpu-a02: ssh exited with exit code 247\n")  # fmt: skip
    d = the_diagnosis(tmp_path, text)
    assert d.category == "host_oom", d.summary
    (tmp_path / "alone").mkdir()
    alone = the_diagnosis(tmp_path / "alone", "pdsh@gpu-a01: gpu-a02: ssh exited with exit code 1\n")
    assert alone.category == "unknown", alone.summary


# --- Flux: flux-job's report of the job shell's wait status


@pytest.mark.parametrize(
    "line, category",
    [
        ("flux-job: task(s) exited with exit code 1", "unknown"),
        ("flux-job: task(s) Killed", "host_oom"),
        ("flux-job: task(s) Terminated", "preempted"),
        ("flux-job: task(s) Segmentation fault", "unknown"),
        ("flux-job: job shell Killed", "host_oom"),
    ],
)  # fmt: skip
def test_flux_job_tasks_failed(line, category):
    assert found(line) == ("flux_job_tasks_failed", category)
    assert PREFILTER.search(line) is not None


@pytest.mark.parametrize(
    "line",
    [
        "flux-job: task(s) exited with exit code 0",
        # a shell plugin's own line about one task (no rule of this one), and prose
        "0.085s: flux-shell[0]: exit-monitor: task 0 exited with code 1",
        "all task(s) exited with exit code 1 after the update",
    ],
)  # fmt: skip
def test_flux_job_tasks_failed_near_misses(line):
    assert (found(line) or ("",))[0] != "flux_job_tasks_failed"
