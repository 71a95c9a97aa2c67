"""Real runs of failure scenarios no run held (h34d; fixtures/runs/<scenario>_torch2_1 / _torch2_4, issue 16).

Six scenarios of fixtures/generate/failures.py, each run for real on the CPU (gloo) under torch 2.1.2 and torch 2.4.1: DDP's
unused parameters (with and without TORCH_DISTRIBUTED_DEBUG=DETAIL), one collective called with tensors of different shapes
(with and without DETAIL), DDP built over models that differ between ranks, and torchrun's master port taken by another
process: 12 runs. Each diagnosis is checked against the label its manifest carries (the generator's truth), then what the runs
showed (facts of the logs), then the rule the batch brought (root_cause._odd_rank_named_by_peers, rules.PEER_NAMING_CHECKS)
beside its near misses.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnose_in_process import cli_diagnoses as diagnose
from diagnose_in_process import cli_diagnosis as diagnose_text

RUNS = Path(__file__).resolve().parent.parent / "fixtures" / "runs"
SCENARIOS = ("unused_param", "unused_param_detail", "collective_mismatch", "coll_mismatch_detail",
             "ddp_model_mismatch", "master_port_in_use")
BATCH = sorted(f"{s}_torch{r}" for s in SCENARIOS for r in ("2_1", "2_4"))
# The rank the logs cannot name (the label keeps the generator's): without DETAIL every rank of a shape mismatch times out in
# gloo; only the odd rank's stack ends in its own all_reduce, the others' in DDP's backward (no rule reads a stack's frames
# for a rank). Under 2.1 the box order happened to put rank 3 first.
RANK_NOT_IN_THE_LOGS = {"collective_mismatch_torch2_4", "tf_worker_raises"}
# TensorFlow (tensorflow-cpu 2.21.0, Keras 3.15.1, in a venv of their own): MultiWorkerMirroredStrategy's worker 1 raises,
# worker 0's collective is aborted; Keras 3's TerminateOnNaN stops a diverging fit. The failing worker's index ("rank" 1 in
# the label: its TF task index) is named only in the peer's gRPC error text ("/job:worker/replica:0/task:1").
TF_RUNS = ("tf_worker_raises", "keras_nan")


def run_dir(run: str) -> Path:
    return RUNS / run


def manifest(run: str) -> dict:
    return json.loads((run_dir(run) / "manifest.json").read_text())


def _log(run: str, pod_part: str) -> str:
    (log,) = [p for p in (run_dir(run) / "pods").rglob("*.log") if pod_part in p.parent.parent.name]
    return log.read_text(errors="replace")


def test_the_batch_is_there_each_run_made_by_its_release_in_a_namespace_of_its_own():
    assert len(BATCH) == 12
    jobs = {}
    for run in BATCH:
        m = manifest(run)
        assert m["scenario_of"] == run.rsplit("_torch", 1)[0]
        assert m["versions"]["torch"].startswith(run.rsplit("_torch", 1)[1].replace("_", ".") + "."), run
        assert m["job"].startswith("team-a-torch" + run.rsplit("_torch", 1)[1].replace("_", "-") + "/"), run
        jobs.setdefault(m["job"], []).append(run)
        label = m["label"]
        assert {"exception_type", "first_failing_rank", "root_line"} <= set(label), run
        logs = "".join(p.read_text(errors="replace") for p in (run_dir(run) / "pods").rglob("*.log"))
        assert label["root_line"] and label["root_line"] in logs, run
        assert sum(1 for _ in logs.splitlines()) < 600, run  # small runs: the suite replays them
    assert all(len(runs) == 1 for runs in jobs.values()), jobs


@pytest.mark.parametrize("run", BATCH + list(TF_RUNS))
def test_each_run_gets_its_label(run, capsys):
    label = manifest(run)["label"]
    (d,) = diagnose(run_dir(run), capsys)
    assert (d["outcome"], d["category"]) == (label["outcome"], label["category"]), d["summary"]
    rank = (d["first_failure"] or {}).get("rank")
    if run in RANK_NOT_IN_THE_LOGS:
        return
    if label.get("any_rank_ok"):
        assert rank in (0, 1, 2, 3), d["summary"]
    else:
        assert rank == label["first_failing_rank"], d["summary"]


# ---------------------------------------------------------------- what the runs showed, per release (facts of the logs)

def test_unused_parameters_are_named_only_under_detail():
    for rel in ("2_1", "2_4"):
        plain, detail = _log(f"unused_param_torch{rel}", "worker-0"), _log(f"unused_param_detail_torch{rel}", "worker-0")
        for text in (plain, detail):
            assert "Expected to have finished reduction in the prior iteration before starting a new one." in text
            assert "which did not receive grad for rank 0: 6 7" in text  # the indices, both ways
        assert "Parameters which did not receive grad for rank 0: aux.bias, aux.weight" in detail
        assert "aux.weight" not in plain


def test_a_collective_shape_mismatch_without_detail_is_gloo_timeouts_everywhere():
    for rel in ("2_1", "2_4"):
        text = _log(f"collective_mismatch_torch{rel}", "worker-1") + _log(f"collective_mismatch_torch{rel}", "worker-0")
        assert "Timed out waiting 5000ms for recv operation to complete" in text
        assert "Detected mismatch" not in text
        detail = _log(f"coll_mismatch_detail_torch{rel}", "worker-1")
        assert "but Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=8, OpType=ALLREDUCE, TensorShape=[4]" in detail
        assert "Tensor Tensor shapes: 5vs 4" in detail


def test_the_master_port_taken_is_the_store_servers_bind_failure_by_release():
    t21 = _log("master_port_in_use_torch2_1", "worker-0")
    assert "[W socket.cpp:436] [c10d] The server socket has failed to bind to 0.0.0.0:" in t21
    assert "RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed to bind to [::]:" in t21
    t24 = _log("master_port_in_use_torch2_4", "worker-0")  # 2.4: the libuv TCPStore server
    assert "RuntimeError: The server socket has failed to listen on any local network address. useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use" in t24
    # 2.4's c10d rendezvous: the second agent on the endpoint's host tries to serve the store too, logs the bind failure and
    # goes on as a client, in a run that rendezvoused fine
    ok = _log("ddp_model_mismatch_torch2_4", "worker-1")
    assert "(errno: 98 - Address already in use)." in ok and "[c10d] The server socket has failed to listen on any local network address." in ok


def test_tensorflow_runs_their_release_and_what_the_surviving_worker_says():
    for run in TF_RUNS:
        m = manifest(run)
        assert m["versions"]["tensorflow"] == "2.21.0" and "torch" not in m["versions"], run
        assert m["label"]["root_line"] in "".join(p.read_text() for p in (run_dir(run) / "pods").rglob("*.log")), run
    text = _log("tf_worker_raises", "worker-0")
    assert "tensorflow.python.framework.errors_impl.UnavailableError: Graph execution error:" in text
    assert "Collective ops is aborted by: Socket closed" in text
    assert "Additional GRPC error information from remote target /job:worker/replica:0/task:1" in text
    assert "KeyError: 'class_weights'" in _log("tf_worker_raises", "worker-1")
    nan = _log("keras_nan", "worker-0")
    assert "Batch 5: Invalid loss, terminating training" in nan and "training finished" in nan
    assert manifest("keras_nan")["pods"]["keras-nan-worker-0"]["exit_code"] == 0


# ---------------------------------------------------------------- the rule: the rank every other rank names

FP = ("CollectiveFingerPrint(SequenceNumber=12, OpType=ALLREDUCE, TensorShape=[{n}], TensorDtypes=Float, "
      "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda:{d}, layout=Strided (default), requires_grad=false "
      "(default), pinned_memory=false (default), memory_format=(nullopt)))")


def _raise(rank: int, message: str, prefix: bool = True) -> str:
    p = f"[rank{rank}]: " if prefix else ""
    return (f"{p}Traceback (most recent call last):\n"
            f'{p}  File "/workspace/train.py", line 88, in <module>\n'
            f"{p}    dist.all_reduce(counts)\n"
            f"{p}RuntimeError: {message}\n")


def _mismatch(own: int, other: int, n_own: int, n_other: int) -> str:
    return (f"Detected mismatch between collectives on ranks. Rank {own} is running collective: {FP.format(n=n_own, d=own)}, "
            f"but Rank {other} is running collective: {FP.format(n=n_other, d=other)}.Collectives differ in the following "
            f"aspects: \t Tensor Tensor shapes: {n_own}vs {n_other}")


def _count(own: int, other: int, n_own: int, n_other: int) -> str:
    return (f"DDP expects same model across all ranks, but Rank {own} has {n_own} params, while rank {other} has "
            f"inconsistent {n_other} params.")


@pytest.mark.parametrize("form", [_mismatch, _count])
def test_the_rank_every_other_rank_names_is_the_first_failure(form, tmp_path, capsys):
    # six ranks, rank 5 the odd one out: each names the first rank that differs from it (5 by the others, 0 by rank 5)
    text = "".join(_raise(r, form(r, 5, 4, 5)) for r in range(5)) + _raise(5, form(5, 0, 5, 4))
    d = diagnose_text(tmp_path, text, capsys)
    assert (d["category"], (d["first_failure"] or {}).get("rank")) == ("python_exception", 5), d["summary"]


def test_unprefixed_reports_are_read_by_the_rank_each_names_itself(tmp_path, capsys):
    text = "".join(_raise(r, _mismatch(r, 3, 4, 5), False) for r in range(3)) + _raise(3, _mismatch(3, 0, 5, 4), False)
    d = diagnose_text(tmp_path, text, capsys)
    assert (d["first_failure"] or {}).get("rank") == 3, d["summary"]


def test_two_ranks_naming_each_other_say_nothing_of_which_differs(tmp_path, capsys):
    text = _raise(0, _mismatch(0, 1, 4, 5)) + _raise(1, _mismatch(1, 0, 5, 4))
    d = diagnose_text(tmp_path, text, capsys)
    assert (d["first_failure"] or {}).get("rank") == 0, d["summary"]  # the first report, as without the rule


def test_a_rank_named_whose_own_report_is_not_in_the_paste_is_not_placed(tmp_path, capsys):
    # one pod's log only: ranks 0 and 1 name rank 3, which prints in another pod's log
    text = _raise(0, _mismatch(0, 3, 4, 5)) + _raise(1, _mismatch(1, 3, 4, 5))
    d = diagnose_text(tmp_path, text, capsys)
    assert (d["first_failure"] or {}).get("rank") == 0, d["summary"]


def test_the_size_form_compares_with_rank_0_and_is_not_read(tmp_path, capsys):
    # reducer.cpp's shape check: every rank compares with process 0, so "process 0" is named by all: no odd one out
    size = "[{r}]: params[0] in this process with sizes [64, 16] appears not to match sizes of the same param in process 0."
    text = _raise(2, size.format(r=2)) + _raise(3, size.format(r=3)) + _raise(1, size.format(r=1))
    d = diagnose_text(tmp_path, text, capsys)
    assert (d["first_failure"] or {}).get("rank") == 2, d["summary"]


def test_a_split_vote_is_not_read(tmp_path, capsys):
    # ranks 1 and 2 name rank 0, rank 3 names rank 1: no rank is named by every other
    text = _raise(1, _count(1, 0, 8, 6)) + _raise(2, _count(2, 0, 8, 6)) + _raise(3, _count(3, 1, 6, 8)) + _raise(0, _count(0, 1, 6, 8))
    d = diagnose_text(tmp_path, text, capsys)
    assert (d["first_failure"] or {}).get("rank") == 1, d["summary"]
