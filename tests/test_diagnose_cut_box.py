"""torch elastic's ChildFailedError box cut inside its root cause's `rank` field (an excerpt that ends
mid-line): the rank is whole once " (" follows it; a bare number at the cut may have lost digits.
Format: pytorch/pytorch torch/distributed/elastic/multiprocessing/errors/__init__.py _FAILURE_FORMAT_TEMPLATE
("  rank      : ${rank} (local_rank: ${local_rank})")."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

BOX = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-03-02_08:14:55
  host      : node-a1
  rank      : """


@pytest.mark.parametrize("cut, rank", [("5 (local_rank: 1", 5), ("5 (local_r", 5), ("5 (", 5),
                                       ("5 (local_rank: 1)", 5), ("5", None), ("", None)])
def test_a_box_cut_inside_the_rank_field_keeps_a_whole_rank(tmp_path, cut, rank):
    d = the_diagnosis(tmp_path, BOX + cut + "\n")
    assert d.category == "unknown"
    assert d.rank == rank
    assert d.summary.endswith("failed (the box shows no exit code).")  # [h31f] one sentence ends with its period
    assert "None" not in d.summary
