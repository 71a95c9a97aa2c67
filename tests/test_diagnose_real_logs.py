"""Diagnosis on real logs nobody here wrote (issue 16): one diagnosis per attempt, whatever the input.

The logs are the real failure logs of fixtures/eval/ (ours, rebuilt from public threads) and,
where the checkout has it, ../shared/eval/diagnosis-dev/. Each is diagnosed as a user would
(`replay` of a plain text file: one pod of one job); then random splices of them (cut, joined,
interleaved line by line) must give exactly one diagnosis and no failure caught by isolation.
GANGSCOPE_SPLICES sets how many splices (default 400; the issue's 10,000 with
GANGSCOPE_SPLICES=10000).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangscope.parsers.errors import detect
from gangscope.parsers.records import ErrorRecord
from gangscope.pipeline.diagnose.attempt import diagnose
from diagnose_in_process import replayed

ROOT = Path(__file__).resolve().parent.parent
LOG_DIRS = [ROOT / "fixtures" / "eval" / "dev", ROOT / "fixtures" / "eval" / "heldout",
            ROOT.parent / "shared" / "eval" / "diagnosis-dev"]  # fmt: skip
REAL_LOGS = sorted(p for d in LOG_DIRS if d.is_dir() for p in d.glob("*.log"))
LINES = {p: p.read_text(errors="replace").splitlines() for p in REAL_LOGS}
SPLICES = settings(max_examples=int(os.environ.get("GANGSCOPE_SPLICES", "400")), deadline=None, derandomize=True,
                   suppress_health_check=list(HealthCheck))  # fmt: skip


def diagnose_text(tmp_path: Path, text: str, name: str = "spliced"):
    """`gangscope diagnose FILE` in process: the diagnoses and what isolation caught (job default/<name>)."""
    return replayed(tmp_path, text, name)


def test_real_logs_are_here():
    assert len(REAL_LOGS) >= 36


@pytest.mark.parametrize("path", REAL_LOGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_real_log_gets_exactly_one_diagnosis(tmp_path, path):
    diagnoses, caught = diagnose_text(tmp_path, path.read_text(errors="replace"), path.stem)
    assert caught == []
    assert len(diagnoses) == 1
    assert diagnoses[0].category and not diagnoses[0].summary.startswith("gangscope could not diagnose")


def test_a_log_with_no_failure_and_no_end_is_running(tmp_path):
    diagnoses, _ = diagnose_text(tmp_path, "epoch: 0 | loss : 0.59021\nepoch: 1 | loss : 0.57861\n")
    assert [(d.category, d.outcome) for d in diagnoses] == [("running", "running")]


def test_a_log_with_nothing_to_curate_still_gets_its_diagnosis(tmp_path):
    diagnoses, _ = diagnose_text(tmp_path, "NAME     STATUS   ROLES    AGE   VERSION\nnode-3   Ready    <none>   2d    v1.29.4\n")
    assert [(d.job, d.category) for d in diagnoses] == [("default/spliced", "running")]


def test_the_framework_s_own_end_line_is_a_success(tmp_path):
    text = "Epoch 0: 100%|██████████| 100/100 [00:00<00:00, 264.50it/s, loss=0.0792]\n`Trainer.fit` stopped: `max_epochs=1` reached.\n"
    diagnoses, _ = diagnose_text(tmp_path, text)
    assert [(d.category, d.outcome) for d in diagnoses] == [("success", "succeeded")]


def test_a_failure_after_the_end_line_is_the_diagnosis(tmp_path):
    text = ("`Trainer.fit` stopped: `max_steps=100` reached.\n"
            "pytorch_lightning.utilities.exceptions.MisconfigurationException: No `test_dataloader()` method defined\n")  # fmt: skip
    diagnoses, _ = diagnose_text(tmp_path, text)
    assert diagnoses[0].category == "python_exception"
    assert diagnoses[0].exception_type == "pytorch_lightning.utilities.exceptions.MisconfigurationException"


def _timeless(category: str, pattern: str, seq: int, line: str, rank: int | None = None) -> ErrorRecord:
    return ErrorRecord(id=f"e{seq}", job="default/x", pod="x", category=category, pattern=pattern, seq=seq, line=line,
                       message=line, rank=rank)  # fmt: skip


def test_root_cause_by_order_of_appearance_when_every_failure_is_an_effect_and_no_line_has_a_time():
    # The crash of issue 16: min() over an empty sequence (inf - inf is nan, never "close").
    errors = [
        _timeless("nccl_timeout", "nccl_watchdog", 3, "[Rank 4] Watchdog caught collective operation timeout", rank=4),
        _timeless("nccl_timeout", "nccl_watchdog", 1, "[Rank 0] Watchdog caught collective operation timeout", rank=0),
        _timeless("nccl_timeout", "nccl_watchdog", 2, "[Rank 2] Watchdog caught collective operation timeout", rank=2),
    ]
    [d] = diagnose(errors)
    assert d.category == "nccl_timeout"
    assert not math.isnan(d.confidence) and d.confidence > 0


def test_without_times_a_cause_beats_an_effect_printed_before_it():
    errors = [
        _timeless("nccl_error", "gloo_closed", 1, "Connection closed by peer [10.0.0.2]:29500", rank=1),
        _timeless("cuda_oom", "cuda_oom", 2, "torch.OutOfMemoryError: CUDA out of memory.", rank=3),
    ]
    [d] = diagnose(errors)
    assert (d.category, d.first_failure["rank"]) == ("cuda_oom", 3)


def test_without_times_the_earlier_of_two_causes_is_the_root():
    errors = [
        _timeless("python_exception", "exception_line", 7, "KeyError: 'lr'", rank=1),
        _timeless("cuda_oom", "cuda_oom", 4, "torch.OutOfMemoryError: CUDA out of memory.", rank=2),
    ]
    [d] = diagnose(errors)
    assert (d.category, d.first_failure["rank"]) == ("cuda_oom", 2)


@st.composite
def splices(draw):
    """Cut, joined and interleaved real logs: pieces of 1-3 logs, each cut at random lines (and
    maybe mid-line), joined end to end or interleaved line by line."""
    paths = draw(st.lists(st.sampled_from(REAL_LOGS), min_size=1, max_size=3))
    pieces = []
    for p in paths:
        lines = LINES[p]
        start = draw(st.integers(0, max(0, len(lines) - 1)))
        end = draw(st.integers(start, len(lines)))
        piece = lines[start:end]
        if piece and draw(st.booleans()):  # an excerpt cut mid-line
            piece[-1] = piece[-1][: draw(st.integers(0, len(piece[-1])))]
        pieces.append(piece)
    if draw(st.booleans()):
        out = [line for piece in pieces for line in piece]
    else:
        out, rest = [], [list(piece) for piece in pieces]
        while any(rest):
            live = [r for r in rest if r]
            out.append(live[draw(st.integers(0, len(live) - 1))].pop(0))
    if out and draw(st.booleans()):  # two processes' lines joined by a carriage return
        i = draw(st.integers(0, len(out) - 1))
        j = draw(st.integers(0, len(out) - 1))
        out[i] = out[i] + "\r" + out[j]
    return "\n".join(out)


@SPLICES
@given(text=splices().filter(bool))  # an empty file has no attempt (the CLI says so: tests/test_cli.py)
def test_random_splices_of_real_logs_get_exactly_one_diagnosis_and_no_caught_failure(tmp_path_factory, text):
    diagnoses, caught = diagnose_text(tmp_path_factory.mktemp("splice"), text)
    assert caught == []
    assert len(diagnoses) == 1
    assert diagnoses[0].category


@pytest.mark.parametrize(
    "line, text, rank",
    [
        ("[1,0]<stderr>:[1,0]<stderr>:Traceback (most recent call last):", "Traceback (most recent call last):", 0),
        ("  7: Traceback (most recent call last):", "Traceback (most recent call last):", 7),
        ("[rank: 3] Child process with PID 212 terminated with code 1.", "Child process with PID 212 terminated with code 1.", 3),
        ("[89251] [rank0]:[E411 14:08:37.210222004 ProcessGroupNCCL.cpp:607] x", "[E411 14:08:37.210222004 ProcessGroupNCCL.cpp:607] x", 0),
        (" 1%|▏| 24/1752 [00:57<1:09:42,  2.42s/it][rank5]:[E728 01:39:17] Watchdog", "[E728 01:39:17] Watchdog", 5),
        ("(RayTrainWorker pid=1942, ip=10.0.0.7) Traceback (most recent call last):", "Traceback (most recent call last):", None),
        ("2024-05-01 10:00:00,123 INFO step 3", "2024-05-01 10:00:00,123 INFO step 3", None),
        # Determined's trial logs (the master's trial_logs query: "[time] <container[:8]> [rank=N] || LEVEL: ")
        ("[2022-06-09T09:22:31.405187Z] 3f07b1e9 ||   rank      : 0 (local_rank: 0)", "  rank      : 0 (local_rank: 0)", None),
        ("[2022-06-09T09:22:31Z] 3f07b1e9 [rank=3] || ERROR: Traceback (most recent call last):",
         "Traceback (most recent call last):", 3),
        # ParlAI's workers: 'rank:{:3d} |' (parlai/utils/distributed.py distributed_context)
        ("rank:  5 | 2023-02-11 08:14:02,771 CRITICAL | Traceback (most recent call last):",
         "2023-02-11 08:14:02,771 CRITICAL | Traceback (most recent call last):", 5),
        ("rank: 12 | epoch 2 step 40 loss 3.1", "epoch 2 step 40 loss 3.1", 12),
        ("rank: 3 of 8 joined", "rank: 3 of 8 joined", None),
    ],
)  # fmt: skip
def test_launcher_prefixes_come_off_wherever_they_sit(line, text, rank):
    from gangscope.parsers.lines import strip_rank_prefixes

    assert strip_rank_prefixes(line)[:2] == (text, rank)


@pytest.mark.parametrize(
    "line, category",
    [
        ("slurmstepd: error: *** JOB 611204 ON gpu-a12 CANCELLED AT 2025-03-02T17:41:09 DUE TO TIME LIMIT ***", "time_limit"),
        ("slurmstepd: error: *** JOB 4471023 ON n-21 CANCELLED AT 2026-08-20T13:55:02 DUE TO PREEMPTION ***", "preempted"),
        ("submitit WARNING (2025-05-19 08:54:03,880) - Caught signal SIGUSR2 on n-7: this job is timed-out.", "time_limit"),
        ("[2026-01-02 10:00:00] [ERROR] [launch.py:325:sigkill_handler] ['python', '-u', 't.py', '--local_rank=0'] "
         "exits with return code = -9", "host_oom"),
        ("[rank0]:[E109 06:11:43.825909127 ProcessGroupNCCL.cpp:1484] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
         "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress", "hang"),
        ("Warning  FailedScheduling  2m7s  volcano  10/6 tasks in gang unschedulable: job is not ready", "pods_ready_timeout"),
        ("[2021-10-10 06:32:44,173] [INFO] [logging.py:69:log_dist] [Rank 0] step=2000, skipped=1999, lr=[0.0]", "nan_loss"),
        ("KeyError: 'dense_wh_mask'", "python_exception"),
        ("RuntimeError: cuda runtime error (39) : uncorrectable ECC error encountered at THCCachingHostAllocator.cpp:305",
         "gpu_hardware"),
        ("`Trainer.fit` stopped: `max_epochs=1` reached.", "success"),
    ],
)  # fmt: skip
def test_families_of_real_lines_map_to_their_category(line, category):
    from gangscope.parsers.errors import detect

    found = detect(line)
    assert found is not None and found[1] == category


def test_a_healthy_deepspeed_step_line_is_no_failure():
    from gangscope.parsers.errors import detect

    assert detect("[2021-11-25 09:52:02,815] [INFO] [logging.py:68:log_dist] [Rank 0] step=2500, skipped=0, lr=[0.05]") is None


def test_a_replica_wrapper_line_is_not_the_diagnosis(tmp_path):
    text = ("KeyError: Caught KeyError in replica 0 on device 0.\nOriginal Traceback (most recent call last):\n"
            '  File "/w/model.py", line 49, in forward\n    mask = batch["dense_wh_mask"]\nKeyError: \'dense_wh_mask\'\n')  # fmt: skip
    diagnoses, _ = diagnose_text(tmp_path, text)
    assert "dense_wh_mask" in diagnoses[0].summary


@pytest.mark.parametrize(
    "line, category",
    [
        # composer's launcher, Ray's raylet, Horovod: a worker died, the cause is elsewhere (or unknown)
        ("ERROR:composer.cli.launcher:Rank 2 crashed with exit code -11.", "unknown"),
        ("ERROR:composer.cli.launcher:Rank 5 crashed with exit code -9.", "host_oom"),
        ("2025-03-04 11:20:35,472\tWARNING worker.py:1829 -- A worker died or was killed while executing a task by an "
         "unexpected system error. To troubleshoot the problem, check the logs for the dead worker. Worker PID: 8812 "
         "Worker exit type: SYSTEM_ERROR", "unknown"),
        ("[1,3]<stderr>:Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt "
         "to allreduce, allgather or broadcast a tensor after one of the ranks finished execution.", "unknown"),
        # a model or data set that cannot be fetched is storage_io (SPEC rev. 2)
        ("ConnectionError: Couldn't reach 'org/corpus-7b' on the Hub (ConnectTimeout)", "storage_io"),
        ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files",
         "storage_io"),
        # UCX's fatal-signal handler: the process died of a signal (SIGBUS in NCCL's setup), it is not running
        ("[gpu-node-3:8030 :0:8451] Caught signal 7 (Bus error: nonexistent physical address)", "unknown"),
        # the lines of a state_dict shape mismatch, without their header
        ("[rank3]:        size mismatch for model.layers.4.mlp.up_proj.weight: copying a param with shape "
         "torch.Size([2816, 1024]) from checkpoint, the shape in current model is torch.Size([11008, 4096]).",
         "checkpoint_error"),
    ],
)  # fmt: skip
def test_more_families_of_real_lines_map_to_their_category(line, category):
    from gangscope.parsers.errors import detect
    from gangscope.parsers.lines import strip_rank_prefixes

    found = detect(strip_rank_prefixes(line)[0])
    assert found is not None and found[1] == category


def test_composer_s_launcher_names_the_global_rank():
    from gangscope.parsers.errors import rank_in_text

    assert rank_in_text("ERROR:composer.cli.launcher:Rank 6 crashed with exit code -11.") == 6


def test_the_watchdog_s_follow_up_line_does_not_outrank_its_timeout(tmp_path):
    """handleException's 'Some NCCL operations have failed or timed out' comes before the rank's own
    'Watchdog caught collective operation timeout' in a real paste: the timeout is the diagnosis."""
    text = ("[rank2]:[E602 13:18:52.531176265 ProcessGroupNCCL.cpp:684] [Rank 2] Some NCCL operations have failed or "
            "timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/"
            "incomplete data.\n"
            "[rank2]:[E602 13:18:52.536602063 ProcessGroupNCCL.cpp:1896] [PG ID 1 PG GUID 1 Rank 2] Process group watchdog "
            "thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=77, "
            "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.\n")  # fmt: skip
    diagnoses, _ = diagnose_text(tmp_path, text)
    assert (diagnoses[0].category, diagnoses[0].first_failure["rank"]) == ("nccl_timeout", 2)


def test_alone_the_watchdog_s_follow_up_line_is_still_a_communication_failure(tmp_path):
    diagnoses, _ = diagnose_text(tmp_path, "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. "
                                           "Due to the asynchronous nature of CUDA kernels\n")  # fmt: skip
    assert diagnoses[0].category == "nccl_error"


def test_a_fetch_that_times_out_inside_the_http_client_is_storage_io(tmp_path):
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.10/site-packages/urllib3/util/connection.py", line 73, in create_connection\n'
            "    sock.connect(sa)\n"
            "socket.timeout: timed out\n")  # fmt: skip
    diagnoses, _ = diagnose_text(tmp_path, text)
    assert diagnoses[0].category == "storage_io"


def test_a_dead_ray_actor_is_a_crash_not_a_bug_in_user_code(tmp_path):
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.11/site-packages/ray/_private/worker.py", line 931, in get_objects\n'
            "    raise value\n"
            "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n")  # fmt: skip
    diagnoses, _ = diagnose_text(tmp_path, text)
    assert diagnoses[0].category == "unknown"


@pytest.mark.parametrize(
    "line, category",
    [
        # Megatron's iteration line (training.py training_log): a NaN grad norm is printed only for
        # an update that was applied; a NaN loss prints as NAN ({:.6E})
        (" iteration     5426/  250000 | consumed samples:        43408 | learning rate: 2.999E-04 | "
         "global batch size:     8 | loss scale: 1.0 | grad norm: nan | number of skipped iterations:   0 |", "nan_loss"),
        ("loss scale: 1.0 | grad norm: nan |", "nan_loss"),
        (" iteration       12/    5000 | lm loss: NAN | loss scale: 1.0 | grad norm: 3.140 |", "nan_loss"),
        # torch 2.2+ watchdog's first word on a timed-out work
        ("[rank3]:[E909 09:55:46.996672294 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank 3] Timeout at NCCL work: "
         "2070, last enqueued NCCL work: 2082, last completed NCCL work: 2069.", "nccl_timeout"),
        # OpenMPI / PRRTE launchers
        ("mpirun noticed that process rank 4 with PID 0 on node localhost exited on signal 9 (Killed).", "host_oom"),
        ("prterun noticed that process rank 2 with PID 4711 on node n-3 exited on signal 11 (Segmentation fault).", "unknown"),
        ("Primary job  terminated normally, but 1 process returned", "unknown"),
        ("  Process name: [[4115,1],1]", "unknown"),
        # SLURM: srun's OOM report, and a cancel with no reason (scancel)
        ("srun: error: gn-0719: task 0: Out Of Memory", "host_oom"),
        ("slurmstepd: error: *** JOB 81233 ON gpu-07 CANCELLED AT 2025-02-01T10:00:00 ***", "preempted"),
    ],
)  # fmt: skip
def test_launcher_and_framework_lines_from_their_sources(line, category):
    from gangscope.parsers.errors import detect
    from gangscope.parsers.lines import strip_rank_prefixes

    found = detect(strip_rank_prefixes(line)[0])
    assert found is not None and found[1] == category


def test_a_healthy_megatron_iteration_line_is_no_failure():
    from gangscope.parsers.errors import detect

    assert detect(" iteration       12/    5000 | lm loss: 2.342100E+00 | loss scale: 65536.0 | grad norm: 3.140 |") is None


@pytest.mark.parametrize(
    "line, rank",
    [
        ("mpirun noticed that process rank 4 with PID 0 on node localhost exited on signal 9 (Killed).", 4),
        ("  Process name: [[29973,1],3]", 3),
        ("srun: error: gn-0719: tasks 2-3: Out Of Memory", 2),
    ],
)
def test_launchers_name_the_rank_that_failed(line, rank):
    from gangscope.parsers.errors import ErrorDetector
    from gangscope.parsers.lines import Line

    _, [record] = ErrorDetector().feed(Line(text=line, seq=1, time=None))
    assert record.rank == rank


BOX_TAIL = """  host      : node-a.internal
  rank      : 2 (local_rank: 2)
  exitcode  : 1 (pid: 4402)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : {time}
  host      : node-a.internal
  rank      : {rank} (local_rank: {local})
  exitcode  : {code} (pid: 4401)
  error_file: <N/A>
  traceback : {tb}
============================================================
"""


def test_the_tail_of_a_box_without_its_title_is_read_from_its_root_cause_section(tmp_path):
    text = BOX_TAIL.format(time="2025-01-02_03:04:05", rank=0, local=0, code=1,
                           tb="To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")  # fmt: skip
    [d] = diagnose_text(tmp_path, text)[0]
    assert (d.category, d.first_failure["rank"]) == ("unknown", 0)
    text = BOX_TAIL.format(time="2025-01-02_03:04:05", rank=5, local=1, code=-9, tb="Signal 9 (SIGKILL) received by PID 4401")
    [d] = diagnose_text(tmp_path, text, "killed")[0]
    assert (d.category, d.first_failure["rank"]) == ("host_oom", 5)


def test_two_agents_boxes_are_ordered_by_their_own_time_fields(tmp_path):
    later = BOX_TAIL.format(time="2025-01-02_03:04:55", rank=0, local=0, code=1, tb="To enable traceback see: x")
    earlier = BOX_TAIL.format(time="2025-01-02_03:04:05", rank=4, local=0, code=1, tb="To enable traceback see: x")
    [d] = diagnose_text(tmp_path, later + earlier)[0]
    assert d.first_failure["rank"] == 4


def test_a_silent_rank_only_inferred_is_a_suspect_not_the_first_failure():
    # The log shows rank 1 only (its timeout); rank 0 is inferred (ranks are dense from 0).
    errors = [_timeless("nccl_timeout", "nccl_watchdog", 1, "[Rank 1] Watchdog caught collective operation timeout: "
                        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600014 "
                        "milliseconds before timing out.", rank=1)]  # fmt: skip
    [d] = diagnose(errors)
    assert (d.category, d.first_failure["rank"]) == ("nccl_timeout", 1)
    assert "rank 0" in d.summary and "suspect" in d.summary and not d.summary.startswith("0 ranks")


def test_a_crash_whose_backtrace_is_inside_nccl_is_a_communication_failure(tmp_path):
    text = ("gpu-a:8030:8446 [7] NCCL INFO 24 coll channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer\n"
            "[gpu-a:8030 :0:8451] Caught signal 7 (Bus error: nonexistent physical address)\n"
            "==== backtrace (tid:   8451) ====\n"
            " 0 0x0000000000043090 killpg()  ???:0\n"
            " 1 0x000000000008170d ncclGroupEnd()  ???:0\n"
            " 2 0x0000000000008609 start_thread()  ???:0\n"
            "=================================\n")  # fmt: skip
    [d] = diagnose_text(tmp_path, text)[0]
    assert d.category == "nccl_error" and "ncclGroupEnd" in d.summary


def test_a_crash_whose_backtrace_is_elsewhere_stays_a_crash(tmp_path):
    text = ("[gpu-a:8030 :0:8451] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x8)\n"
            "==== backtrace (tid:   8451) ====\n"
            " 0 0x0000000000043090 killpg()  ???:0\n"
            " 1 0x00000000000a1b2c my_kernel_launch()  ???:0\n"
            "=================================\n")  # fmt: skip
    [d] = diagnose_text(tmp_path, text)[0]
    assert d.category == "unknown"


def test_a_full_disk_while_saving_a_checkpoint_is_storage_io_naming_the_checkpoint(tmp_path):
    """SPEC rev. 2: an OSError errno 28 while writing a checkpoint is storage_io, the checkpoint named
    in the summary: by the path the message gives, else by the traceback's saving frames."""
    frames = ('  File "/opt/venv/lib/python3.11/site-packages/transformers/trainer.py", line 3212, in _save_checkpoint\n'
              "    self.save_model(output_dir, _internal_call=True)\n"
              '  File "/opt/venv/lib/python3.11/site-packages/torch/serialization.py", line 943, in save\n'
              "    _save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)\n")
    named = ("Traceback (most recent call last):\n" + frames +
             "OSError: [Errno 28] No space left on device: '/mnt/out/run-7/checkpoint-1500/optimizer.pt'\n")
    diagnoses, _ = diagnose_text(tmp_path, named, "named")
    assert diagnoses[0].category == "storage_io"
    assert "while saving checkpoint /mnt/out/run-7/checkpoint-1500/optimizer.pt" in diagnoses[0].summary
    unnamed = "Traceback (most recent call last):\n" + frames + "OSError: [Errno 28] No space left on device\n"
    diagnoses, _ = diagnose_text(tmp_path, unnamed, "unnamed")
    assert diagnoses[0].category == "storage_io"
    assert "while saving a checkpoint" in diagnoses[0].summary
    reading = ("Traceback (most recent call last):\n"
               '  File "/opt/venv/lib/python3.11/site-packages/datasets/arrow_reader.py", line 210, in read_table\n'
               "    return pa.ipc.open_stream(source).read_all()\n"
               "OSError: [Errno 5] Input/output error\n")
    diagnoses, _ = diagnose_text(tmp_path, reading, "reading")
    assert diagnoses[0].category == "storage_io"
    assert "checkpoint" not in diagnoses[0].summary


@pytest.mark.parametrize(
    "line",
    [
        "epoch: 812 loss: nan",
        "Epoch:[1/3](200/40960) loss:nan lr:0.0001000 epoch_Time:151.0min:",
        "Epoch: 2/5, train loss: nan, train accuracy: 0.10311, valid loss: nan, valid accuracy: 0.09980",
        "Epoch: 9 mask_loss:  nan size_loss:  nan offset_loss:  nan",
        "[epoch 3/10, episode 20/60] => loss:inf",
        "Time: 0.2231 Epoch: 004 Iter: 400/ 700 LR: 0.0001000000 Loss content: nan Loss fft: nan",
    ],
)  # fmt: skip
def test_a_plain_loop_s_loss_printed_as_nan_is_a_nan_loss_warning(line):
    found = detect(line)
    assert found is not None
    rule, category, _ = found
    assert (rule.name, category, rule.role) == ("loss_printed_nonfinite", "nan_loss", "warning")


@pytest.mark.parametrize(
    "line",
    ["epoch: 3 val_loss: nan", "Epoch 2: valid loss: nan", "step 40 | loss scale: inf | lr 1e-4",
     "epoch: 3 loss: 0.4213", "loss: nanoGPT config loaded", "eval_loss=nan"],
)  # fmt: skip
def test_an_eval_loss_a_loss_scale_or_a_finite_loss_is_no_printed_nan(line):
    found = detect(line)
    assert found is None or found[0].name != "loss_printed_nonfinite"


def test_a_loss_printed_nan_three_times_or_twice_at_the_end_is_a_divergence_and_once_is_not(tmp_path):
    """Printed NaN losses count like non-finite step records (rules.NONFINITE_STEPS): one can be a
    skipped fp16 step; three, one and a failed end, or the last two of the log (rules.NONFINITE_TAIL:
    the loss stayed NaN to the end) are a divergence."""
    head = "".join(f"epoch: {e} loss: 0.{400 - e}\n" for e in range(1, 6))
    three = head + "epoch: 6 loss: nan\nepoch: 7 loss: nan\nepoch: 8 loss: nan\n"
    [d] = diagnose_text(tmp_path, three, "three")[0]
    assert d.category == "nan_loss"
    assert d.summary.startswith("the training loss was printed as nan 3 times (a worker in pod three)")
    assert d.summary.endswith("first: epoch: 6 loss: nan.")  # [h31f] one sentence ends with its period
    two = head + "epoch: 6 loss: nan\nepoch: 7 loss: nan\n"
    [d] = diagnose_text(tmp_path, two, "two")[0]
    assert d.category == "nan_loss"
    assert d.summary.startswith("the training loss was printed as nan 2 times (a worker in pod two)")
    one = head + "epoch: 6 loss: nan\n"
    [d] = diagnose_text(tmp_path, one, "one")[0]
    assert d.category == "running"


def test_a_command_line_argparse_rejected_is_a_configuration_error_of_its_rank(tmp_path):
    """argparse prints the usage, then '<prog>: error: <message>' and exits 2 (CPython Lib/argparse.py):
    the script's own report, before the launcher's exit-code line."""
    text = ("usage: train.py [-h] -cfg CFG [--launcher {none,pytorch,slurm}] [--local_rank LOCAL_RANK]\n"
            "train.py: error: unrecognized arguments: --local-rank=0\n"
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 2) local_rank: 0 (pid: 52210) of "
            "binary: /opt/venv/bin/python\n")  # fmt: skip
    [d] = diagnose_text(tmp_path, text)[0]
    assert (d.category, d.first_failure["rank"]) == ("python_exception", 0)
    assert "train.py: error: unrecognized arguments: --local-rank=0" in d.summary


@pytest.mark.parametrize(
    "line",
    ["srun: error: node-3: task 0: Exited with exit code 1", "sbatch: error: Batch job submission failed: Invalid account",
     "train.py: error: something of its own"],
)  # fmt: skip
def test_other_prog_error_lines_are_not_argparse(line):
    found = detect(line)
    assert found is None or found[0].name != "argparse_error"
