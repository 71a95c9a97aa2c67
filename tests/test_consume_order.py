"""`gangscope consume` builds the index `replay` builds of the same logs and events, whatever the order
they arrive in: events late or first, pauses in the middle of a traceback, Trainer logs without a bar,
a SIGTERM mid-stream, a consumer killed during a rebalance, consumers of one group scaled out and the
topic given more partitions. The comparisons are of whole documents (all but `source`).

Also here: the pieces those comparisons rest on, each on its own (the commit point of a partition
with an open record, the order records read back are diagnosed in, the summary's counts, the one
name of the index prefix)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from kafka_fixtures import (
    ROOT,
    committed_offsets,
    comparable,
    documents,
    end_offsets,
    fluentbit_records,
    produce,
    replay_into,
    service_command,
    settled,
    start_service,
    stop,
    wait_until,
)

SETTLE_S = 90  # a deadline for the index to settle, not a speed assertion


# --- the pieces ---------------------------------------------------------------------------------


def test_a_partition_with_an_open_record_commits_its_next_offset_once_its_state_is_checkpointed():
    from gangscope.pipeline.run.commit_point import commit_point, resume_point

    point = commit_point(500, [420, 460], checkpointed=True)
    assert point.offset == 500
    assert resume_point(point) == (500, 420)  # without a usable checkpoint: from the open record's first line
    assert commit_point(500, [420], checkpointed=False).offset == 420
    assert resume_point(commit_point(500, [], checkpointed=True)) == (500, 500)
    assert resume_point(None) == (None, None)


def test_records_read_back_are_diagnosed_in_the_order_replay_curated_them():
    """One line holds many states of a bar, all of one time and seq: read back from OpenSearch (any
    order) a rank's last step is the line's last state, as replay has it (was: by id, any state)."""
    from gangscope.pipeline.diagnose import back_half
    from gangscope.pipeline.diagnose.digest import JobDigest
    from gangscope.pipeline.run import replay as replay_mod

    delivered = []
    replay_mod.run(replay_mod.ReplayOptions(paths=[str(ROOT / "fixtures" / "dialects")]), delivered.extend)
    in_replay = JobDigest()
    for r in delivered:
        in_replay.add(r)
    indexed = list({r.id: r for r in delivered}.values())  # one document per id, as an index holds them
    random.Random(7).shuffle(indexed)
    read_back = back_half.digest_of(indexed)
    want = {k: s.step for k, s in in_replay.last_steps.items()}
    assert {k: s.step for k, s in read_back.last_steps.items()} == want
    assert want[("vision/mlp-lightning", 1, "mlp-lightning-master-0", None, None)] == 36


def test_the_summary_counts_each_record_once_however_often_it_was_updated(tmp_path):
    """A rank's epoch record is one document, rewritten as its progress goes on (was: 544 for 52)."""
    from gangscope.pipeline.run.cli import main

    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        assert main(["replay", str(ROOT / "fixtures" / "runs"), str(ROOT / "fixtures" / "dialects"), "--out", str(out),
                     "--no-progress", "--workers", workers]) == 0
        counts = json.loads((out / "summary.json").read_text())["records"]
        for kind, n in counts.items():
            ids = {json.loads(line)["id"] for line in (out / f"{kind}.ndjson").read_text().splitlines()}
            assert n == len(ids), (workers, kind)
        assert counts["epoch"] > 10


def test_index_prefix_is_the_one_name_and_prefix_an_old_spelling_that_warns(capsys):
    import argparse

    from gangscope.pipeline.run import config, opensearch_cli

    consume = argparse.ArgumentParser()
    config.add_arguments(consume)
    assert consume.parse_args(["--index-prefix", "a-"]).index_prefix == "a-"
    assert consume.parse_args(["--prefix", "b-"]).index_prefix == "b-"
    assert "--prefix is deprecated; use --index-prefix" in capsys.readouterr().err
    other = argparse.ArgumentParser()
    opensearch_cli.add_connection(other)
    assert other.parse_args(["--index-prefix", "c-"]).prefix == "c-"
    assert capsys.readouterr().err == ""
    assert other.parse_args(["--prefix", "d-"]).prefix == "d-"
    assert "--prefix is deprecated; use --index-prefix" in capsys.readouterr().err
