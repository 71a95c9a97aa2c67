"""Batch h16n-2 (issue 16, session 19): communication and shared-memory failures whose cause sits behind the line read.

- NCCL's segment in /dev/shm that could not be created or sized (NVIDIA/nccl src/misc/shmutils.cc ncclShmOpen, <= 2.11
  src/include/shm.h) is the cause of the "unhandled system error" after it: storage_io (SPEC: "a full /dev/shm too"), by its
  WARN lines or by torch's "Last error:" under the DistBackendError. Attaching to a peer's segment that is not there stays
  NCCL's own failure.
- The TCPStore client's words for a store that is gone or answers out of protocol (torch/csrc/distributed/c10d/TCPStore.cpp
  doWait / check, torch/lib/c10d Utils.cpp <= 1.10 connect) are the rendezvous failing, with or without frames; so is the
  store's lost connection raised through rendezvous frames at start-up.
- A crash of no category of its own (an abort) after the same process reported an NCCL or gloo failure is that failure.
Values are ours."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gangscope.parsers.errors import PREFILTER, WARNING, exception_category, rule_role
from diagnose_in_process import the_diagnosis
from rule_reference import found

DEV = Path(__file__).resolve().parent.parent / "fixtures" / "eval" / "dev"


@pytest.mark.parametrize("line, expected", [
    ("ci-w3:48113:48331 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-Hx2pLe to 9637892 bytes, error: "
     "No space left on device (28)", ("nccl_shm_create", "storage_io")),
    ("n7:771:902 [1] misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-aB3dEf to 9637892 bytes", ("nccl_shm_create", "storage_io")),
    ("n7:771:902 [1] misc/shmutils.cc:113 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-aB3dEf (size 9637888)",
     ("nccl_shm_create", "storage_io")),
    ("pod-a:97:183 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-5d1e0a77c3b29f41-1-1-0 "
     "(size 9637888)", ("nccl_shm_create", "storage_io")),
    ("[rank1]: Error while creating shared memory segment /dev/shm/nccl-LeXlEJ (size 9637888)", ("nccl_shm_create", "storage_io")),
    ("h2:51:60 [0] misc/shmutils.cc:60 NCCL WARN Error: failed to create shared memory file /dev/shm/nccl-XXXXXX, error Permission "
     "denied (13)", ("nccl_shm_create", "storage_io")),
    ("gpu2-r7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
     ("nccl_shm_fallocate", "storage_io")),
    # a peer's segment not there: NCCL's own failure, a warning with its return trail
    ("k217:30582:71946 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-Qd7rWm "
     "(size 14156128), error: No such file or directory (2)", ("nccl_warn", "nccl_error")),
])
def test_lines(line, expected):
    assert re.search(PREFILTER, line)
    assert found(line) == expected


def test_shm_lines_are_causes():
    assert rule_role("nccl_shm_create") != WARNING and rule_role("nccl_shm_fallocate") != WARNING


@pytest.mark.parametrize("exc_type, message, expected", [
    ("torch.distributed.DistBackendError", "NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, unhandled system "
     "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\nncclSystemError: System call (e.g. socket, malloc) or "
     "external library call failed or device error. \nLast error:\nError while creating shared memory segment /dev/shm/nccl-1YsMbG "
     "(size 7340384)", "storage_io"),
    ("torch.distributed.DistBackendError", "NCCL error in: x.cpp:1, unhandled system error, NCCL version 2.21.5\nLast error:\n"
     "Error while attaching to shared memory segment /dev/shm/nccl- (size 0)", "nccl_error"),
    ("RuntimeError", "Socket Timeout", "rendezvous_error"),
    ("RuntimeError", "Stop_waiting response is expected", "rendezvous_error"),
    ("RuntimeError", "wait_canceled response is expected", "rendezvous_error"),
    ("RuntimeError", "ready or not_ready response expected", "rendezvous_error"),
    ("RuntimeError", "connect() timed out. Original timeout was 60000 ms.", "rendezvous_error"),
    ("torch.distributed.DistBackendError", "[3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d "
     "key-value store by key '0', but store->get('0') got error: Socket Timeout", "rendezvous_error"),
    ("RuntimeError", "Connection reset by peer", "nccl_error"),  # without its frames: a peer gone
    ("ValueError", "Socket Timeout while reading the config server", "python_exception"),
])
def test_exceptions(exc_type, message, expected):
    assert exception_category(exc_type, message) == expected


def test_the_store_lost_at_start_up_is_the_rendezvous(tmp_path):
    text = ("Traceback (most recent call last):\n"
            '  File "/w/train.py", line 40, in <module>\n'
            "    dist.init_process_group(backend='nccl')\n"
            '  File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1177, in init_process_group\n'
            "    store, rank, world_size = next(rendezvous_iterator)\n"
            '  File "/usr/lib/python3.10/site-packages/torch/distributed/rendezvous.py", line 246, in _env_rendezvous_handler\n'
            "    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)\n"
            '  File "/usr/lib/python3.10/site-packages/torch/distributed/rendezvous.py", line 174, in _create_c10d_store\n'
            "    return TCPStore(\n"
            "torch.distributed.DistNetworkError: Connection reset by peer\n")
    assert the_diagnosis(tmp_path, text).category == "rendezvous_error"


SHM = ("w-0:97:183 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-5d1e0a77c3b29f41-1-1-0 "
       "(size 9637888)\n"
       "w-0:97:183 [0] NCCL INFO transport/shm.cc:101 -> 2\n"
       "w-0:97:183 [0] NCCL INFO init.cc:766 -> 2\n")


def test_a_timed_nccl_error_after_an_untimed_shm_warn_is_storage(tmp_path):
    text = SHM + ("2024-05-10 10:56:59 ERROR    __main__   NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:784, unhandled "
                  "system error, NCCL version 2.7.8\n")
    assert the_diagnosis(tmp_path, text).category == "storage_io"


def test_last_error_under_the_backend_error_is_storage(tmp_path):
    text = ("[rank1]: torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
            "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
            "[rank1]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
            "[rank1]: Last error:\n"
            "[rank1]: Error while creating shared memory segment /dev/shm/nccl-LeXlEJ (size 9637888)\n")
    assert the_diagnosis(tmp_path, text).category == "storage_io"


CLOSED = "[1]<stderr>:worker-1:212:290 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer 10.1.0.2<44127>\n"
ABORT = "[1]<stderr>:Fatal Python error: Aborted\n"


def test_an_abort_after_its_own_lost_connection_is_the_connection(tmp_path):
    assert the_diagnosis(tmp_path, CLOSED + ABORT).category == "nccl_error"


def test_an_abort_before_any_lost_connection_stays_a_crash(tmp_path):
    assert the_diagnosis(tmp_path, ABORT + CLOSED).category == "unknown"


@pytest.mark.parametrize("fixture, category", [("544", "nccl_error"), ("545", "storage_io"), ("547", "dataloader_error"),
                                               ("548", "rendezvous_error"), ("550", "running"), ("430", "nccl_error")])
def test_dev_batch(tmp_path, fixture, category):
    assert the_diagnosis(tmp_path, (DEV / f"{fixture}.log").read_text(encoding="utf-8")).category == category
