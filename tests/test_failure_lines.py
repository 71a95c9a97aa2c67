"""The failure lines frameworks print, read from their source (issue 16, h22b): fixtures/formats/failure_lines.json.

Each entry is one format string of a framework (torch.distributed, NCCL, CUDA as torch prints it, DataLoader, DeepSpeed,
Megatron, Lightning, transformers/accelerate, Ray, SLURM/submitit, Kubernetes/Kueue, the NVIDIA driver, storage,
checkpoints) instantiated with our own values in the context its printer gives it, and the category the line names.
Pasted alone as a log, it gets that category. Entries gangscope still gets wrong are strict xfails, each with why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnose_in_process import diagnoses_of

TABLE = Path(__file__).resolve().parent.parent / "fixtures" / "formats" / "failure_lines.json"
ENTRIES = json.loads(TABLE.read_text())
FIELDS = {"id", "family", "source_repo", "path", "version", "format", "text", "category", "half"}

# Left wrong on purpose, with the reason (README "Failure lines from the frameworks' source (h22b)").
STILL_WRONG = {
    "store_recv_closed": "TCPStore's recvBytes report reads as a lost peer (nccl_error) wherever it comes: at start-up it "
                         "is the rendezvous, mid-run the store's host died; the line alone does not say which",
    "mg_missing_ckpt_old": "Megatron's 2023 '--exit-on-missing-checkpoint' line holds no capital or rare sign for the "
                           "line prefilter's first-character skip (tests/test_errors.py); only the 2026 wording is read",
    "nccl_cuda_failure_illegal": "NCCL's CUCHECK WARN is read by the nccl_warn family (nccl_error); measure half, no rule",
    "dl_too_many_open_files": "the DataLoader's EMFILE RuntimeError has no rule (python_exception); measure half",
    "mg_rerun_nan_loss": "Megatron's rerun state machine with a NaN loss message has no rule; measure half",
    "pl_sigterm_exception": "Lightning's SIGTERMException (a SystemExit, no message) has no rule; measure half",
    "submitit_not_requeued": "submitit's 'Job not requeued because: ...' has no rule; measure half",
    "k8s_kubelet_eviction_memory": "the kubelet's memory-pressure eviction event has no rule; measure half",
    "k8s_scheduler_preempted": "the default scheduler's 'Preempted by pod ... on node ...' event has no rule; measure half",
    "errno107_fuse": "ENOTCONN (a dead FUSE mount) is not among the storage errnos; measure half",
    "s3fs_internal_eremoteio": "EREMOTEIO (s3fs's InternalError) is not among the storage errnos; measure half",
}


def category_of_text(tmp_path: Path, entry: dict) -> str | None:
    diagnoses = diagnoses_of(tmp_path, entry["text"] + "\n", entry["id"])
    chosen = next((d for d in diagnoses if d.category not in ("success", "running")), diagnoses[0] if diagnoses else None)
    return chosen.category if chosen else None


def test_the_table_has_every_field_and_alternating_halves():
    assert 80 <= len(ENTRIES) <= 120
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)
    seen: dict[str, int] = {}
    for entry in ENTRIES:
        assert set(entry) == FIELDS, entry["id"]
        assert entry["half"] == ("build" if seen.get(entry["family"], 0) % 2 == 0 else "measure"), entry["id"]
        seen[entry["family"]] = seen.get(entry["family"], 0) + 1


def test_the_still_wrong_list_names_entries_of_the_table():
    assert set(STILL_WRONG) <= {e["id"] for e in ENTRIES}


@pytest.mark.parametrize(
    "entry",
    [pytest.param(e, id=e["id"], marks=[pytest.mark.xfail(reason=STILL_WRONG[e["id"]], strict=True)] if e["id"] in STILL_WRONG else [])
     for e in ENTRIES],
)  # fmt: skip
def test_a_failure_line_gets_the_category_it_names(tmp_path, entry):
    assert category_of_text(tmp_path, entry) == entry["category"]


def test_transformers_older_unable_to_load_weights_wording_is_a_checkpoint_error(tmp_path):
    # transformers 3.x-4.x: "Unable to load weights from pytorch checkpoint file. If you tried ..." (no "for '<name>'")
    text = ('Traceback (most recent call last):\n  File "/workspace/train.py", line 40, in <module>\n    main()\n'
            "OSError: Unable to load weights from pytorch checkpoint file. If you tried to load a PyTorch model from a TF 2.0 "
            "checkpoint, please set from_tf=True. ")  # fmt: skip
    assert category_of_text(tmp_path, {"id": "older_hf", "text": text}) == "checkpoint_error"
