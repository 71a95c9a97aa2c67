"""Real runs under OLDER releases (h31d; fixtures/runs/<scenario>_torch<major>_<minor>, fixtures/generate/failures.py, issue 16).

Scenarios of fixtures/runs run again for real under torch 2.1.2 (Lightning 2.1.4, transformers 4.36.2), torch 2.2.2 and
torch 2.4.1 (Lightning 2.4.0, transformers 4.44.2), CPU / gloo, and store_get_timeout (new) under the three: each diagnosis is checked against the label its manifest carries
(outcome, category, and the first failing rank where the logs can tell it). Then near misses of the three rules the batch
brought: parsers/errors.py store_listen_logged, pipeline/diagnose/root_cause.py box_outside_kills and
pipeline/diagnose/ranks.py _rank_by_exception_line, each beside a case the rule must leave alone.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gangscope.pipeline.run.cli import main
from diagnose_in_process import cli_diagnoses, cli_diagnosis

RUNS = Path(__file__).resolve().parent.parent / "fixtures" / "runs"
# h32f's runs of new scenarios are named the same way (<scenario>_torch2_1 / _torch2_4) and have their own test
# (tests/test_h32f_runs.py): this batch is h31d's scenarios under the older releases
H32F_SCENARIOS = {"master_port_mismatch", "nnodes_wrong", "persistent_worker_killed", "dcp_read_only", "lightning_torchrun_tee",
                  "hf_resume_truncated", "hf_resume_missing", "ptl_step_raises", "ptl_sigterm"}
# and h33d's (tests/test_h33d_runs.py)
H33D_SCENARIOS = {"barrier_raise", "early_exit", "worker_sigterm", "compile_metric", "accelerate_raises", "lightning_amp_nan"}
H34D_SCENARIOS = {"unused_param", "unused_param_detail", "collective_mismatch", "coll_mismatch_detail", "ddp_model_mismatch",
                  "master_port_in_use"}  # [h34d] named the same way: tests/test_h34d_runs.py reads them
OLDER = {p.parent.name: p.parent for p in RUNS.glob("*_torch*_*/manifest.json")
         if p.parent.name.rsplit("_torch", 1)[0] not in H32F_SCENARIOS | H33D_SCENARIOS | H34D_SCENARIOS}
OLDER_RUNS = sorted(OLDER)
# runs whose last stdout line is a P chunk no F line ends (see test_a_bar_left_unfinished_...)
DANGLING_BAR = ["lightning_sigterm_torch2_1", "lightning_step_raises_torch2_1"]
# Runs whose logs do not say which rank failed first (the label's rank is the generator's knowledge):
NO_RANK_IN_THE_LOGS = {
    # torch <= 2.4's box lists no worker the agent SIGTERMed (torch 2.15's does, `exitcode : -15`): the silent rank 3 is
    # named nowhere, its pod's agent only says "Sending process N closing signal SIGTERM" for a pid no line maps to a rank
    "collective_timeout_torch2_1", "collective_timeout_torch2_4",
    # no [rankN]: prefix (torch 2.1), no torchrun box (Lightning's own launcher): the KeyError's traceback has no owner
    "lightning_step_raises_torch2_1",
    # no [rankN]: prefix; hf_train.py has no @record, so the box's entries say "To enable traceback see ..." for both ranks
    "hf_collator_ragged_torch2_1",
}


def test_the_batch_is_there_and_made_by_older_releases():
    assert len(OLDER_RUNS) == 24
    for run in OLDER_RUNS:
        manifest = json.loads((OLDER[run] / "manifest.json").read_text())
        want = run.rsplit("_torch", 1)[1].replace("_", ".") + "."
        assert manifest["versions"]["torch"].startswith(want), run
        assert manifest["scenario_of"] == run.rsplit("_torch", 1)[0]


@pytest.mark.parametrize("run", OLDER_RUNS)
def test_each_run_under_an_older_release_gets_its_label(run, capsys):
    label = json.loads((OLDER[run] / "manifest.json").read_text())["label"]
    (d,) = cli_diagnoses(OLDER[run], capsys)
    assert (d["outcome"], d["category"]) == (label["outcome"], label["category"]), d["summary"]
    if run not in NO_RANK_IN_THE_LOGS:
        assert (d["first_failure"] or {}).get("rank") == (label["first_failure"] or {}).get("rank"), d["summary"]


@pytest.mark.parametrize("run", DANGLING_BAR)
def test_a_bar_left_unfinished_is_read_whole_and_its_cut_character_too(run, tmp_path):
    # Under Lightning 2.1 the tqdm bar's last state had no newline when the rank died (lightning_step_raises) or the pod
    # was SIGTERMed (lightning_sigterm): containerd writes a container's last line without its newline with the P tag
    # (capture.py, as internal/cri/io/logger.go redirectLogs does), a dangling partial: read whole, counted, exit 0 (it
    # was an exit 1 before, which kept these runs out of fixtures/runs for a while, in fixtures/known_gaps).
    # lightning_sigterm_torch2_1's bar was also cut by the runtime at 16384 bytes inside a multi-byte character ('█'):
    # the curation joins the chunks' bytes (pipeline/curate/container.py _cri_text), so no invalid UTF-8 is counted
    # (2 before). (Under their first names the older runs shared the torch 2.15 runs' namespace, pods and uids, so a
    # replay of fixtures/runs joined two runs' logs: each now has its release's namespace, failures.py namespace_of.)
    out = tmp_path / "out"
    assert main(["replay", str(OLDER[run]), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["invalid_utf8_lines"], summary["dangling_partials"], summary["unreadable_lines"]) == (0, 1, 0)
    assert OLDER[run].parent == RUNS


def test_the_manifests_name_their_root_line_as_the_log_prints_it():
    for run in OLDER_RUNS:
        label = json.loads((OLDER[run] / "manifest.json").read_text())["label"]
        assert {"exception_type", "first_failing_rank", "root_line"} <= set(label), run
        logs = "".join(p.read_text(errors="replace") for p in (OLDER[run] / "pods").rglob("*.log"))
        assert label["root_line"] and label["root_line"] in logs, run


# ---------------------------------------------------------------- c10d's logged listen failure (store_listen_logged)

LOGGED = {
    "torch 2.1": "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29400 (errno: 98 - Address already in use).\n"
                 "[W socket.cpp:436] [c10d] The server socket has failed to bind to 0.0.0.0:29400 (errno: 98 - Address already in use).\n"
                 "[E socket.cpp:472] [c10d] The server socket has failed to listen on any local network address.\n",
    "torch 2.4": "[W1205 09:27:16.777429896 socket.cpp:461] [c10d] The server socket has failed to bind to [::]:29400 (errno: 98 - "
                 "Address already in use).\n"
                 "[E1205 09:27:16.778441030 socket.cpp:497] [c10d] The server socket has failed to listen on any local network address.\n",
}
TRAIN = "".join(f"epoch 1/1 step {n}/20 loss 1.{n:04d}\n" for n in range(1, 6))


def trace(exc_line: str) -> str:
    return ('Traceback (most recent call last):\n  File "/workspace/train.py", line 81, in main\n    x = f()\n'
            f"{exc_line}\n")


@pytest.mark.parametrize("form", sorted(LOGGED))
def test_the_logged_listen_failure_of_an_agent_that_then_trains_is_no_failure(form, tmp_path, capsys):
    # c10d's rendezvous backend tried to host the store, another agent held the port, it joined as a client and trained;
    # then a collective timed out (an effect, as a lost store is: the earlier of the two was the answer before h31d)
    exc = ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 5000ms for recv "
           "operation to complete")
    d = cli_diagnosis(tmp_path, LOGGED[form] + TRAIN + trace(exc), capsys)
    assert (d["outcome"], d["category"]) == ("failed", "nccl_timeout"), d["summary"]


@pytest.mark.parametrize("form", sorted(LOGGED))
def test_the_listen_failure_that_was_thrown_is_still_a_rendezvous_error(form, tmp_path, capsys):
    # the same logged line, then SocketListenOp's throw, uncaught: the exception says it (store_listen)
    exc = ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The "
           "server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).")
    d = cli_diagnosis(tmp_path, LOGGED[form] + trace(exc), capsys)
    assert (d["outcome"], d["category"]) == ("failed", "rendezvous_error"), d["summary"]


def test_a_rank_that_raises_after_the_logged_listen_failure_is_the_answer(tmp_path, capsys):
    # a cause of the rank's own still beats the store line (as before: the line was an effect, now a warning)
    d = cli_diagnosis(tmp_path, LOGGED["torch 2.1"] + TRAIN + trace("ValueError: unsupported token id 50001"), capsys)
    assert d["category"] == "python_exception", d["summary"]


# ---------------------------------------------------------------- the box read whole (box_outside_kills)

def copy_run(run: str, tmp_path: Path) -> Path:
    dest = tmp_path / run
    shutil.copytree(OLDER[run], dest)
    return dest


def edit_pod(run_dir: Path, pod: str, old: str, new: str) -> None:
    (log,) = [p for p in run_dir.joinpath("pods").rglob("*.log") if f"_{pod}_" in str(p)]
    text = log.read_text()
    assert old in text
    log.write_text(text.replace(old, new, 1))


def killed_pid(run_dir: Path) -> str:
    text = next(p for p in run_dir.joinpath("pods").rglob("*.log") if "_sigkill-worker-0_" in str(p)).read_text()
    return text.split("Signal 9 (SIGKILL) received by PID ", 1)[1].split()[0]


def test_a_worker_killed_from_outside_that_the_box_does_not_call_root_cause_is_the_root(capsys):
    # torch 2.1: the box's root cause is the peer that lost its connection (its error file came first); rank 1's SIGKILL
    # is only listed under "Failures:"
    (d,) = cli_diagnoses(RUNS / "sigkill_torch2_1", capsys)
    assert (d["category"], d["first_failure"]["rank"]) == ("host_oom", 1), d["summary"]


def test_a_worker_the_agent_itself_signalled_is_not_killed_from_outside(tmp_path, capsys):
    run = copy_run("sigkill_torch2_1", tmp_path)
    pid = killed_pid(run)
    # the agent's own close named that pid before the box: its SIGKILL is the agent's escalation, not the OOM killer's
    (log,) = [p for p in run.joinpath("pods").rglob("*.log") if "_sigkill-worker-0_" in str(p)]
    lines = log.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if "failed (exitcode: " in ln)
    stamp = lines[at].split(" ", 1)[0]
    lines.insert(at, f"{stamp} stderr F [2026-12-05 09:24:31,300] torch.distributed.elastic.multiprocessing.api: [WARNING] "
                     f"Sending process {pid} closing signal SIGTERM\n")
    log.write_text("".join(lines))
    (d,) = cli_diagnoses(run, capsys)
    assert d["category"] != "host_oom", d["summary"]


def test_a_worker_listed_with_sigterm_is_not_promoted(tmp_path, capsys):
    # -15 is how the agent lists the survivors it closed itself (torch 2.15's boxes): never a stop from outside by the box alone
    run = copy_run("sigkill_torch2_1", tmp_path)
    pid = killed_pid(run)
    edit_pod(run, "sigkill-worker-0", f"exitcode  : -9 (pid: {pid})", f"exitcode  : -15 (pid: {pid})")
    edit_pod(run, "sigkill-worker-0", "Signal 9 (SIGKILL) received by PID", "Signal 15 (SIGTERM) received by PID")
    (d,) = cli_diagnoses(run, capsys)
    assert d["category"] not in ("host_oom", "preempted"), d["summary"]


# ---------------------------------------------------------------- an unprefixed traceback's rank from the box (_rank_by_exception_line)

def test_an_unprefixed_traceback_takes_the_rank_of_the_box_entry_ending_in_its_line(capsys):
    # torch 2.1: worker-1's ranks 2 and 3 print unprefixed; the box lists rank 3 with the KeyError, rank 2 with gloo's error
    (d,) = cli_diagnoses(RUNS / "rank_raises_torch2_1", capsys)
    assert (d["category"], d["first_failure"]["rank"]) == ("python_exception", 3), d["summary"]


def test_two_box_entries_ending_in_the_same_line_name_no_rank(tmp_path, capsys):
    # both entries end in the KeyError: the box cannot say which rank printed the traceback in the pod's stream
    run = copy_run("rank_raises_torch2_1", tmp_path)
    (log,) = [p for p in run.joinpath("pods").rglob("*.log") if "_rank-raises-worker-1_" in str(p)]
    text = log.read_text()
    root = text.split("Root Cause (first observed failure):", 1)
    gloo = [ln for ln in root[1].splitlines() if "Connection closed by peer" in ln][0]
    log.write_text(root[0] + "Root Cause (first observed failure):" + root[1].replace(
        gloo, gloo.split(" F ", 1)[0] + " F   KeyError: 'target_column'", 1))
    (d,) = cli_diagnoses(run, capsys)
    assert d["first_failure"]["rank"] != 3, d["summary"]


def test_a_box_whose_root_cause_is_a_failure_of_its_own_keeps_it(tmp_path, capsys):
    # the same box, its root cause an exception of the rank's own (not a lost peer): the SIGKILLed entry is not promoted
    run = copy_run("sigkill_torch2_1", tmp_path)
    (log,) = [p for p in run.joinpath("pods").rglob("*.log") if "_sigkill-worker-0_" in str(p)]
    head, box = log.read_text().split("Root Cause (first observed failure):", 1)
    reset = [ln for ln in box.splitlines() if "Connection reset by peer" in ln][0]
    log.write_text(head + "Root Cause (first observed failure):" + box.replace(
        reset, reset.split(" F ", 1)[0] + " F   ValueError: unsupported token id 50001 in batch (vocab size 50000)", 1))
    (d,) = cli_diagnoses(run, capsys)
    assert d["category"] != "host_oom", d["summary"]
