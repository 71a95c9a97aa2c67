"""Rules from batch h25a of issue 16 (fixtures/eval README, "Batch h25a"): a blind draw of the thin classes, searched by
their failure lines.

One class of its misses shows its cause in the log: c10d's store-based barrier at the end of init_process_group logs
"Waiting in store based barrier ..." every 10 s while the ranks that joined its key differ from the world size, and a
log that ends in that wait repeated, with no step and no "Completed store-based barrier" after it, is a start-up that
stopped (parsers/errors.py store_barrier_wait, store_barrier_completed; pipeline/diagnose/rules.py STALL_REPEATS). One or
two reports are a late peer, not a stall. The lines below are rebuilt from torch's format strings with our values, not
copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of, found


def wait(joined: int = 8, world: int = 4, rank: int = 0, form: str = "1.x") -> str:
    if form == "1.x":  # torch 1.8-1.13
        tail = f"(world_size={world}, worker_count={joined}, timeout=0:30:00)"
        return f"Waiting in store based barrier to initialize process group for rank: {rank}, key: store_based_barrier_key:1 {tail}"
    if form == "2.0":  # torch 2.0-2.2, through the logging module's default format
        tail = f"(world_size={world}, num_workers_joined={joined}, timeout=0:10:00)"
        return (f"INFO:torch.distributed.distributed_c10d:Waiting in store based barrier to initialize process group for rank: "
                f"{rank}, key: store_based_barrier_key:2 {tail}")
    # torch 2.3+ (debug level): the seconds waited run into "rank:"
    tail = f"(world_size={world}, num_workers_joined={joined}, timeout=0:10:00 error=Wait timeout)"
    return (f"Waiting in store based barrier to initialize process group for 20.0193 secondsrank: {rank}, key: "
            f"store_based_barrier_key:1 {tail}")


@pytest.mark.parametrize(
    "line, category",
    [
        (wait(), "hang"),
        (wait(1, 2, form="2.0"), "hang"),
        (wait(3, 16, rank=5, form="2.3"), "hang"),
        # the elastic DDP controller's copy: "process" "group" run together
        ("Waiting in store based barrier to initialize processgroup for rank: 2, key: store_based_barrier_key:0 "
         "(world_size=4, worker_count=3, timeout=0:00:20)", "hang"),
        # the count met as it was read: the barrier is done, no stall
        (wait(4, 4), None),
        # near misses: the key's first add, the barrier's timeout message quoted in prose, W&B's and the agents' waits,
        # prose about the barrier
        ("Added key: store_based_barrier_key:1 to store for rank: 0", None),
        ("wandb: Waiting for W&B process to finish... (success).", None),
        ("it keeps waiting in store based barrier to initialize process group, any idea?", None),
        ("Waiting in store based barrier to", None),
    ],
)  # fmt: skip
def test_the_wait_line_and_its_near_misses(line, category):
    assert category_of(line) == category


def test_the_completion_line_is_the_barrier_s_own_word_that_it_is_met():
    assert found("Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 4 nodes.") == (
        "store_barrier_completed", "hang")
    assert found("Completed store-based barrier setup in 3 s") is None


LAUNCH = ("[INFO] 2026-02-11 08:03:12,441 run: Running torch.distributed.run with args: ['/opt/venv/lib/python3.10/site-packages/"
          "torch/distributed/run.py', '--nproc_per_node', '4', 'train.py', '--data', 'shapes.yaml']\n"
          "[INFO] 2026-02-11 08:03:12,443 run: Using nproc_per_node=4.\n")  # fmt: skip
STEPS = "".join(f"{{'loss': {2.5 - n / 10:.4f}, 'learning_rate': 4.9e-05, 'epoch': 0.0{n}}}\n" for n in range(1, 7))
TIMEOUT = ("Traceback (most recent call last):\n"
           '  File "train.py", line 41, in <module>\n'
           '    dist.init_process_group(backend="nccl")\n'
           '  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 595, in init_process_group\n'
           "    _store_based_barrier(rank, store, timeout)\n"
           '  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 238, in _store_based_barrier\n'
           "    raise RuntimeError(\n"
           "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
           "store_based_barrier_key:1 (world_size=4, worker_count=8, timeout=0:30:00)\n")  # fmt: skip
DONE = "Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 4 nodes.\n"


def waits(n: int, joined: int = 8, world: int = 4) -> str:
    return "".join(wait(joined, world) + "\n" for _ in range(n))


@pytest.mark.parametrize(
    "text, category",
    [
        (LAUNCH + waits(3), "hang"),
        (LAUNCH + waits(6, 1, 2), "hang"),
        # one or two reports: a peer arriving late, the log cut in start-up
        (LAUNCH + waits(2), "running"),
        (LAUNCH + waits(1, 3), "running"),
        # the barrier completed, or training went on, after the waits
        (LAUNCH + waits(4, 3) + DONE, "running"),
        (LAUNCH + waits(4, 3) + STEPS, "running"),
        # the waits end in the barrier's timeout: the failure is the answer
        (LAUNCH + waits(5) + TIMEOUT, "rendezvous_error"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
