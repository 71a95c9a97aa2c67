"""torchrun's rendezvous result maps the `[default<local rank>]:` prefixes of a pod to global ranks.

The block is torch elastic's (torch/distributed/elastic/agent/server/api.py `_rendezvous`), in the
three ways it reaches a log: torch._logging's glog header on every line (a real torch 2.15 run:
fixtures/runs/tee_prefix_rendezvous), Python's `INFO:<logger>:` on the first line only (a root
basicConfig, as torch 1.x-2.3 logs are pasted), and behind Ray's worker prefix (torchx on Ray).
Values are ours.
"""

import json
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from gangscope.parsers.lines import Line, strip_rank_prefixes
from gangscope.parsers.records import StepRecord
from gangscope.parsers.rendezvous import RankMap, RendezvousParser
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.snapshot import ContainerState
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.sources.files import PodIdentity

RUNS = Path(__file__).resolve().parent.parent / "fixtures" / "runs"
POD = PodIdentity(namespace="team-a", pod="llm-pretrain-worker-1", pod_uid="9f0c1111-2222-3333-4444-555566667777",
                  container="pytorch")

FIELDS = ["restart_count=0", "master_addr=llm-pretrain-worker-0", "master_port=29500", "group_rank=1",
          "group_world_size=2", "local_ranks=[0, 1, 2, 3]", "role_ranks=[4, 5, 6, 7]", "global_ranks=[4, 5, 6, 7]",
          "role_world_sizes=[8, 8, 8, 8]", "global_world_sizes=[8, 8, 8, 8]"]
GLOG = "I1201 09:14:07.412000 57 torch/distributed/elastic/agent/server/api.py:552]"
BLOCKS = {
    "torch_logging": [f"{GLOG} [default] Rendezvous complete for workers. Result:",
                      *(f"{GLOG}   {f}" for f in FIELDS), f"{GLOG}   event_log_handler=null", f"{GLOG} "],
    "basic_config": ["INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:",
                     *(f"  {f}" for f in FIELDS), ""],
    "ray_worker": ["(CommandActor pid=4242) INFO:torch.distributed.elastic.agent.server.api:[] Rendezvous complete for "
                   "workers. Result:", *(f"(CommandActor pid=4242)   {f}" for f in FIELDS), "(CommandActor pid=4242)"],
}


def parse(lines):
    parser = RendezvousParser()
    found = []
    for i, raw in enumerate(lines):
        text = strip_rank_prefixes(raw)[0]
        if parser.open or "Rendezvous complete" in text:
            found += parser.feed(Line(f"2026-12-01T09:14:07.{i:06d}Z", 0, text))[1]
    return found + parser.close()


@pytest.mark.parametrize("form", sorted(BLOCKS))
def test_the_block_gives_each_local_rank_its_global_rank(form):
    [found] = parse(BLOCKS[form])
    assert isinstance(found, RankMap)
    assert (found.global_of, found.group_rank, found.restart_count) == ({0: 4, 1: 5, 2: 6, 3: 7}, 1, 0)


def test_a_block_cut_before_its_global_ranks_gives_no_map():
    lines = BLOCKS["basic_config"]
    cut = lines[:7] + ["[default0]:epoch 1/2 step 1/10 loss 1.3985"] + lines[7:]
    assert parse(cut) == []


def test_local_and_global_lists_that_do_not_pair_up_give_no_map():
    lines = [l.replace("global_ranks=[4, 5, 6, 7]", "global_ranks=[4, 5]") for l in BLOCKS["basic_config"]]
    assert parse(lines) == []


def cri(lines, start=0):
    return [f"2026-12-01T09:14:{7 + (start + i) // 1000:02d}.{(start + i) % 1000:03d}000000Z "
            f"{'stdout' if l.startswith('[default') else 'stderr'} F {l}" for i, l in enumerate(lines)]


STEPS = ["[default1]:epoch 1/2 step 1/10 loss 1.4192", "[default3]:epoch 1/2 step 1/10 loss 1.3811"]


def curate(lines, curator=None):
    curator = curator or ContainerCurator(POD, "cri", CurationStats())
    return curator, curator.feed_lines(cri(lines)) + curator.close()


def steps_of(records):
    return sorted((r.local_rank, r.rank) for r in records if isinstance(r, StepRecord))


@pytest.mark.parametrize("form", sorted(BLOCKS))
def test_prefixed_step_lines_after_the_block_carry_their_global_rank(form):
    _, out = curate(BLOCKS[form] + STEPS)
    assert steps_of(out) == [(1, 5), (3, 7)]
    assert not any(isinstance(r, RankMap) for r in out)  # the map is no record of its own


def test_without_the_block_the_rank_stays_null():
    _, out = curate(STEPS)
    assert steps_of(out) == [(1, None), (3, None)]


def test_a_restarted_worker_group_with_other_ranks_replaces_the_map():
    again = [l.replace("restart_count=0", "restart_count=1").replace("[4, 5, 6, 7]", "[0, 1, 2, 3]")
             for l in BLOCKS["torch_logging"]]
    _, out = curate(BLOCKS["torch_logging"] + STEPS[:1] + again + ["[default1]:epoch 1/2 step 2/10 loss 1.3020"])
    assert [(r.step, r.rank) for r in out if isinstance(r, StepRecord)] == [(1, 5), (2, 1)]


@pytest.mark.parametrize("cut_at", [3, len(BLOCKS["torch_logging"])])
def test_the_map_and_a_block_being_read_go_on_from_a_snapshot(cut_at):
    lines = cri(BLOCKS["torch_logging"] + STEPS)
    first = ContainerCurator(POD, "cri", CurationStats())
    out = first.feed_lines(lines[:cut_at])
    state = msgspec.msgpack.decode(msgspec.msgpack.encode(first.snapshot()), type=ContainerState)
    second = ContainerCurator.from_snapshot(state, CurationStats())
    out += second.feed_lines(lines[cut_at:]) + second.close()
    assert steps_of(out) == [(1, 5), (3, 7)]


def replay_steps(run: str) -> Counter:
    """Step records of a fixture run per "<pod>/<rank>", as curation stamps them."""
    got: Counter = Counter()
    for path in sorted((RUNS / run).glob("pods/*/*/*.log")):
        ns, pod, uid = path.parts[-3].split("_")
        curator = ContainerCurator(PodIdentity(namespace=ns, pod=pod, pod_uid=uid, container=path.parts[-2]), "cri",
                                   CurationStats())
        records = curator.feed_lines(path.read_text(encoding="utf-8").splitlines()) + curator.close()
        got.update(f"{r.pod}/{'null' if r.rank is None else r.rank}" for r in records if isinstance(r, StepRecord))
    return got


def test_a_real_two_node_torchrun_run_gives_every_rank_its_global_rank():
    manifest = json.loads((RUNS / "tee_prefix_rendezvous" / "manifest.json").read_text())
    assert replay_steps("tee_prefix_rendezvous") == {key: v["count"] for key, v in manifest["steps"].items()}
    assert {p: v["ranks"] for p, v in manifest["pods"].items()} == {
        "tee-prefix-rendezvous-worker-0": [0, 1], "tee-prefix-rendezvous-worker-1": [2, 3]}


def test_the_same_run_without_loglevel_info_keeps_local_ranks_only():
    # fixtures/runs/tee_prefix: the agents log no rendezvous block; worker-1's [default0]: is rank 2, not 0
    got = replay_steps("tee_prefix")
    assert got and all(key.endswith("/null") for key in got)
