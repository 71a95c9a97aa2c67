"""Rules from batch h26a of issue 16 (fixtures/eval README, "Batch h26a"): a blind draw shaped like the judged set.

Four classes of its misses show their cause in the log:
- c10d's TCPStore client that waited for the store's reply past its deadline: socket.cpp's "waitForInput: socket ...
  timed out after Nms" (parsers/errors.py c10d_store_wait_timeout, rendezvous_error);
- Windows' commit limit, "[WinError 1455] The paging file is too small for this operation to complete", raised by
  torch's DLL loader in spawned DataLoader workers (errors.py windows_commit_limit, line and trace rules, host_oom);
- a gloo exception whose message was cut inside gloo's "[<file>:<line>] " head, in gloo/transport/ (errors.py
  gloo_transport_cut, nccl_error);
- a CPython traceback pasted with its indents lost (no head before the lines): its 'File "..."' lines at the margin are
  frames and the line after each its source line (parsers/traces.py TraceParser._reindent).
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import assert_found_past_the_prefilter, category_of
from trace_feed import feed_traces

from gangscope.parsers import errors


SOCK = "SocketImpl(fd=9, addr=[trainer-1.cluster.local]:50214, remote=[::ffff:10.31.4.7]:29400)"


@pytest.mark.parametrize(
    "line, rule, category",
    [
        # torch 2.2+: glog's header, c10d's "[c10d] " (logging.h), the socket's description
        (f"[W1104 07:12:38.405120846 socket.cpp:487] [c10d] waitForInput: socket {SOCK} timed out after 900000ms",
         "c10d_store_wait_timeout", "rendezvous_error"),
        # behind torch's [rankN]: prefix, as a rank's stderr prints it
        (f"[rank3]:[W410 21:36:52.177160212 socket.cpp:485] [c10d] waitForInput: socket {SOCK} timed out after 300000ms",
         "c10d_store_wait_timeout", "rendezvous_error"),
        # a build whose C10D_WARNING wrote no "[c10d] "
        (f"[W socket.cpp:487] waitForInput: socket {SOCK} timed out after 600000ms", "c10d_store_wait_timeout", "rendezvous_error"),
        # Windows' commit limit, as torch's DLL loader raises it and as a Rust loader prints it
        ('OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
         '"C:\\venvs\\det\\Lib\\site-packages\\torch\\lib\\cudnn_adv_infer64_8.dll" or one of its dependencies.',
         "windows_commit_limit", "host_oom"),
        ("Error: The paging file is too small for this operation to complete. (os error 1455)", "windows_commit_limit", "host_oom"),
    ],
)  # fmt: skip
def test_the_lines_and_the_prefilter(line, rule, category):
    assert_found_past_the_prefilter(line, rule, category)


@pytest.mark.parametrize(
    "line, category",
    [
        # the poll's own warning: another poll follows it until the deadline, no timeout yet
        (f"[W1104 07:12:38.402913557 socket.cpp:462] [c10d] waitForInput: poll for socket {SOCK} returned 0, likely a timeout", None),
        (f"[W1104 07:12:38.402913557 socket.cpp:474] [c10d] waitForInput: poll for socket {SOCK} returned operation_in_progress "
         "before a timeout", None),
        # prose and a question about it
        ("why does waitForInput time out on the second node?", None),
        # the connect timeout is another rule's (store_connect), the same category
        ("[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to (10.31.4.7, 29400).",
         "rendezvous_error"),
        # another Windows error through the same loader: a DLL that is missing, no memory
        ('OSError: [WinError 126] The specified module could not be found. Error loading "C:\\venvs\\det\\Lib\\site-packages\\torch'
         '\\lib\\shm.dll" or one of its dependencies.', "python_exception"),
        # advice about the page file
        ("Tip: increase the paging file size if Windows runs low on virtual memory", None),
    ],
)  # fmt: skip
def test_near_misses(line, category):
    assert category_of(line) == category


def gloo_trace(message: str, indent: bool = True) -> str:
    pad2, pad4 = ("  ", "    ") if indent else ("", "")
    return ("Traceback (most recent call last):\n"
            f'{pad2}File "wenet/bin/train.py", line 310, in main\n'
            f"{pad4}model = torch.nn.parallel.DistributedDataParallel(\n"
            f'{pad2}File "/opt/venv/lib/python3.8/site-packages/torch/distributed/utils.py", line 112, in _verify_param_shape_across_processes\n'
            f"{pad4}return dist._verify_params_across_processes(process_group, tensors, logger)\n"
            f"RuntimeError: {message}\n")  # fmt: skip


@pytest.mark.parametrize(
    "message, category",
    [
        # the head cut inside gloo's transport path (a paste's cut): a communication failure
        ("[../third_party/gloo/gloo/transport/tcp/p", "nccl_error"),
        ("[/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:598]", "nccl_error"),
        # complete messages keep their own rules
        ("[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.31.4.8]:47490", "nccl_error"),
        ("[../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete",
         "nccl_timeout"),
        # near misses: gloo's other files, another library's enforce head, a message that only names the path
        ("[../third_party/gloo/gloo/common/linux.cc:8] Unable to find address for: ib0", "python_exception"),
        ("[enforce fail at ../caffe2/serialize/inline_container.cc:133] . PytorchStreamReader failed", "checkpoint_error"),
        ("could not open [../third_party/gloo/gloo/transport/tcp/] for the log", "python_exception"),
    ],
)  # fmt: skip
def test_a_gloo_head_cut_in_the_transport(tmp_path, message, category):
    d = the_diagnosis(tmp_path, gloo_trace(message))
    assert d.category == category, d.summary


FLAT = ["Traceback (most recent call last):",
        'File "/opt/conda/lib/python3.10/runpy.py", line 196, in _run_module_as_main',
        "return _run_code(code, main_globals, None,",
        'File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 919, in main',
        "run(args)",
        'File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 910, in run',
        "elastic_launch("]  # fmt: skip


def test_a_traceback_that_lost_its_indents_reads_as_frames():
    [cut] = feed_traces(FLAT)  # cut after the last frame's source line: no exception line
    assert [f.function for f in cut.frames] == ["_run_module_as_main", "main", "run"]
    assert cut.exception_type is None
    [whole] = feed_traces([*FLAT, "torch.distributed.DistStoreError: Socket Timeout"])
    assert [f.function for f in whole.frames] == ["_run_module_as_main", "main", "run"]
    assert (whole.exception_type, whole.message) == ("torch.distributed.DistStoreError", "Socket Timeout")


def test_the_indented_traceback_and_a_line_after_it_are_as_before():
    lines = gloo_trace("[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.31.4.8]:47490").splitlines()
    [t] = feed_traces([*lines, "epoch 3 done"])
    assert t.exception_type == "RuntimeError" and len(t.frames) == 2
    # the same traceback with its indents lost reads the same
    [flat] = feed_traces(gloo_trace("[../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer", indent=False).splitlines())
    assert flat.exception_type == "RuntimeError" and [f.function for f in flat.frames] == [f.function for f in t.frames]


STORE = ("*****************************************\n"
         "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, "
         "please further tune the variable for optimal performance in your application as needed.\n"
         "*****************************************\n"
         f"[W1104 07:12:38.402913557 socket.cpp:462] [c10d] waitForInput: poll for socket {SOCK} returned 0, likely a timeout\n"
         f"[W1104 07:12:38.405120846 socket.cpp:487] [c10d] waitForInput: socket {SOCK} timed out after 900000ms\n")  # fmt: skip
WORKERS = ("Closing dataloader mosaic\n"
           "Traceback (most recent call last):\n"
           '  File "<string>", line 1, in <module>\n'
           '  File "C:\\envs\\det\\Lib\\multiprocessing\\spawn.py", line 122, in spawn_main\n'
           "    exitcode = _main(fd, parent_sentinel)\n"
           '  File "C:\\envs\\det\\Lib\\multiprocessing\\spawn.py", line 132, in _main\n'
           "    self = reduction.pickle.load(from_parent)\n"
           '  File "C:\\envs\\det\\Lib\\site-packages\\torch\\__init__.py", line 130, in <module>\n'
           "    raise err\n"
           'OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading '
           '"C:\\envs\\det\\Lib\\site-packages\\torch\\lib\\torch_python.dll" or one of its dependencies.\n')  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        # the store's reply never came, then torchrun's own traceback pasted with its indents lost and cut
        (STORE + "\n".join(FLAT) + "\n", "rendezvous_error"),
        (STORE, "rendezvous_error"),
        # the per-poll warning alone: a poll that will be followed by another, the log cut there
        (STORE.rsplit("[W1104", 1)[0], "running"),
        # the spawned workers' DLL load at the commit limit
        (WORKERS, "host_oom"),
        # the loader's other error: a DLL that is missing is no memory
        (WORKERS.replace("[WinError 1455] The paging file is too small for this operation to complete.",
                         "[WinError 126] The specified module could not be found."), "python_exception"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
