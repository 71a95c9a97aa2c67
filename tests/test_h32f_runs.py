"""Real runs of failure scenarios no run held (h32f; fixtures/runs/<scenario>_torch2_1 / _torch2_4, issue 16).

Nine scenarios of fixtures/generate/failures.py, each run for real on the CPU (gloo) under torch 2.1.2 (Lightning 2.1.4,
transformers 4.36.2; pytorch_lightning 1.9.5 for the ptl_ ones) and, where it makes sense, torch 2.4.1 (Lightning 2.4.0,
transformers 4.44.2): 16 runs. Each diagnosis is checked against the label its manifest carries (the generator's truth),
then the two rules the batch brought, each beside a near miss: parsers/errors.py TRACE_RULES hf_trainer_resume_missing and
MESSAGE_RANK's pytorch_lightning deadlock alternative.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gangscope.parsers.errors import rank_in_text
from diagnose_in_process import cli_diagnoses, cli_diagnosis

RUNS = Path(__file__).resolve().parent.parent / "fixtures" / "runs"
SCENARIOS = {"master_port_mismatch": ("2_1", "2_4"), "nnodes_wrong": ("2_1", "2_4"), "persistent_worker_killed": ("2_1", "2_4"),
             "dcp_read_only": ("2_1", "2_4"), "lightning_torchrun_tee": ("2_1", "2_4"), "hf_resume_truncated": ("2_1", "2_4"),
             "hf_resume_missing": ("2_1", "2_4"), "ptl_step_raises": ("2_1",), "ptl_sigterm": ("2_1",)}
BATCH = sorted(f"{s}_torch{r}" for s, rels in SCENARIOS.items() for r in rels)
# The SIGTERM to pytorch_lightning 1.9's main process (rank 0) leaves no line: 1.9 installs no SIGTERM handler outside
# SLURM / fault-tolerant training (trainer/connectors/signal_connector.py), rank 0 dies of the signal, and what the log
# shows is rank 1's gloo peer reset. The label (preempted, rank 0) is the generator's knowledge; the log cannot say it.
NOT_IN_THE_LOGS = {"ptl_sigterm_torch2_1"}


def manifest(run: str) -> dict:
    return json.loads((RUNS / run / "manifest.json").read_text())


def test_the_batch_is_there_each_run_made_by_its_release_in_a_namespace_of_its_own():
    assert len(BATCH) == 16
    namespaces = {}
    for run in BATCH:
        m = manifest(run)
        assert m["scenario_of"] == run.rsplit("_torch", 1)[0]
        assert m["versions"]["torch"].startswith(run.rsplit("_torch", 1)[1].replace("_", ".") + "."), run
        namespaces.setdefault(m["job"], []).append(run)
        label = m["label"]
        assert {"exception_type", "first_failing_rank", "root_line"} <= set(label), run
        if run not in NOT_IN_THE_LOGS:
            logs = "".join(p.read_text(errors="replace") for p in (RUNS / run / "pods").rglob("*.log"))
            assert label["root_line"] and label["root_line"] in logs, run
    assert all(len(runs) == 1 for runs in namespaces.values()), namespaces  # no two runs share a job (namespace/name)
    assert manifest("ptl_step_raises_torch2_1")["versions"]["pytorch_lightning"] == "1.9.5"


@pytest.mark.parametrize("run", BATCH)
def test_each_run_gets_its_label(run, capsys):
    label = manifest(run)["label"]
    (d,) = cli_diagnoses(RUNS / run, capsys)
    if run in NOT_IN_THE_LOGS:
        assert d["outcome"] == "failed", d["summary"]
        return
    assert (d["outcome"], d["category"]) == (label["outcome"], label["category"]), d["summary"]
    rank = (d["first_failure"] or {}).get("rank")
    if label.get("any_rank_ok"):
        assert rank is not None, d["summary"]
    else:
        assert rank == (label["first_failure"] or {}).get("rank"), d["summary"]


# ---------------------------------------------------------------- what the runs showed, per release (facts of the logs)

def _log(run: str, pod_part: str) -> str:
    (log,) = [p for p in (RUNS / run / "pods").rglob("*.log") if pod_part in str(p)]
    return log.read_text(errors="replace")


def test_a_master_port_mismatch_is_told_by_the_pod_with_the_wrong_port_and_under_2_4_by_the_store_host_too():
    # static rendezvous: the pod with the wrong --master-port times out connecting (2.1 TimeoutError, 2.4
    # DistNetworkError); the store host waits in the agent's store barrier (300 s) under 2.1, under 2.4 its TCPStore waits
    # for its clients and gives up after the store timeout
    assert "TimeoutError: The client socket has timed out after 15s" in _log("master_port_mismatch_torch2_1", "worker-1")
    assert "Traceback" not in _log("master_port_mismatch_torch2_1", "worker-0")
    assert manifest("master_port_mismatch_torch2_1")["pods"]["master-port-mismatch-worker-0"]["exit_code"] is None
    assert "torch.distributed.DistNetworkError: The client socket has timed out" in _log("master_port_mismatch_torch2_4", "worker-1")
    assert ("torch.distributed.DistStoreError: Timed out after 16 seconds waiting for clients. 1/2 clients joined."
            in _log("master_port_mismatch_torch2_4", "worker-0"))


def test_a_persistent_worker_killed_between_epochs_is_reported_by_the_next_epochs_first_fetch():
    for run in ("persistent_worker_killed_torch2_1", "persistent_worker_killed_torch2_4"):
        text = _log(run, "worker-1")
        assert "is killed by signal: Killed." in text and ") exited unexpectedly" in text, run


def test_lightning_names_each_ranks_global_rank_behind_torchruns_local_prefix():
    # under torchrun --tee, Lightning's "Initializing distributed: GLOBAL_RANK: N, MEMBER: M/W" (lightning/fabric/utilities/
    # distributed.py _init_dist_connection) carries the worker's `[default<local>]:` prefix; torch 2.1 prints no [rankN]:
    text = _log("lightning_torchrun_tee_torch2_1", "worker-1")
    assert "[default1]:Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4" in text
    assert "[default1]:KeyError: 'num_features'" in text and "[rank3]" not in text


# ---------------------------------------------------------------- rule 1: the HF Trainer cannot find the checkpoint to resume

def _trace(exc_line: str, prefix: str = "") -> str:
    lines = ["Traceback (most recent call last):", '  File "/workspace/train.py", line 91, in <module>',
             "    trainer.train(resume_from_checkpoint=args.resume)",
             '  File "/opt/conda/lib/python3.11/site-packages/transformers/trainer.py", line 2061, in _load_from_checkpoint',
             '    raise ValueError(f"Can\'t find a valid checkpoint at {resume_from_checkpoint}")', exc_line]
    return "".join(f"{prefix}{line}\n" for line in lines)


@pytest.mark.parametrize("exc_line", [
    "ValueError: Can't find a valid checkpoint at /mnt/ckpt/run-7/checkpoint-1500",
    "ValueError: No valid checkpoint found in output directory (/mnt/ckpt/run-7)",
])
@pytest.mark.parametrize("prefix", ["", "[rank1]: "])
def test_the_trainer_finding_no_checkpoint_to_resume_is_a_checkpoint_error(exc_line, prefix, tmp_path, capsys):
    d = cli_diagnosis(tmp_path, _trace(exc_line, prefix), capsys)
    assert (d["outcome"], d["category"]) == ("failed", "checkpoint_error"), d["summary"]


@pytest.mark.parametrize("exc_line", [
    # the same ValueError and frames, other words: a user's own check stays a bug of the user's code
    "ValueError: Can't find a valid config at /mnt/ckpt/run-7/config.yaml",
    # the words quoted inside another message, not the Trainer's own
    "ValueError: expected 'Can't find a valid checkpoint at' to be handled by the caller",
])
def test_other_value_errors_stay_python_exceptions(exc_line, tmp_path, capsys):
    d = cli_diagnosis(tmp_path, _trace(exc_line), capsys)
    assert d["category"] == "python_exception", d["summary"]


# ---------------------------------------------------------------- rule 2: pytorch_lightning 1.x's deadlock report names its rank

DEADLOCK = ("Traceback (most recent call last):\n"
            '  File "/workspace/train.py", line 40, in training_step\n'
            "    n = cfg['num_features']\n"
            "KeyError: 'num_features'\n"
            "\n"
            "During handling of the above exception, another exception occurred:\n"
            "\n"
            "Traceback (most recent call last):\n"
            '  File "/opt/conda/lib/python3.10/site-packages/pytorch_lightning/trainer/call.py", line 42, in _call_and_handle_interrupt\n'
            "    trainer.strategy.reconciliate_processes(traceback.format_exc())\n"
            '  File "/opt/conda/lib/python3.10/site-packages/pytorch_lightning/strategies/ddp.py", line 460, in reconciliate_processes\n'
            '    raise DeadlockDetectedException(f"DeadLock detected from rank: {self.global_rank} \\n {trace}")\n'
            "pytorch_lightning.utilities.exceptions.DeadlockDetectedException: DeadLock detected from rank: {rank} \n"
            " Traceback (most recent call last):\n"
            '  File "/workspace/train.py", line 40, in training_step\n'
            "    n = cfg['num_features']\n"
            "KeyError: 'num_features'\n")


def test_lightning_s_deadlock_report_names_the_rank_that_failed(tmp_path, capsys):
    d = cli_diagnosis(tmp_path, DEADLOCK.replace("{rank}", "3"), capsys)
    assert (d["category"], (d["first_failure"] or {}).get("rank")) == ("python_exception", 3), d["summary"]


def test_rank_in_text_reads_the_deadlock_report_and_nothing_like_it():
    assert rank_in_text("DeadLock detected from rank: 5 \n Traceback (most recent call last):") == 5
    assert rank_in_text("received a tensor from rank: 5") is None
    assert rank_in_text("DeadLock detected from rank: ") is None
    assert rank_in_text("[Rank 2] Watchdog caught collective operation timeout") == 2  # the older alternatives stand
