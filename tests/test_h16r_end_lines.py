"""Rules from batch h16r of issue 16 (fixtures/eval README, "Batch h16r"): the end of a run as launchers and frameworks
print it, the evidence `success` needs (SPEC rev. 2). Each line is read from the source that prints it (cited in
parsers/errors.py): torch elastic's agent when its worker group exited 0 ("[default] worker group successfully finished.
Waiting 300 seconds for other agents to finish.", then _exit_barrier's "Local worker group finished (SUCCEEDED)" and
"Done waiting for other agents. Elapsed: ...", and torch 1.9-1.10's console worker events
{"name": "torchelastic.worker.status.SUCCEEDED", ...}; torch/distributed/elastic/agent/server/api.py), DeepSpeed's launcher for a
worker that exited 0 ("Process N exits successfully.", deepspeed/launcher/launch.py) and fairseq's train loop ("done
training in N seconds", fairseq_cli/train.py); torchtitan's "Training completed" now also as its formatter prints it. All are role END: evidence of an end, never a failure, and a cause
printed before them stays the answer. Values in the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect, rule_role
from diagnose_in_process import the_diagnosis


def rule_of(line: str) -> str | None:
    found = detect(line)
    return found[0].name if found is not None else None


STEPS = "".join(f"epoch 1 step {i * 50} loss {2.4 - i / 40:.4f} lr 0.0001\n" for i in range(1, 7))

ENDS = {
    "elastic_group_succeeded": [
        "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 seconds for "
        "other agents to finish.",
        "[2026-02-11 07:41:09,552] torch.distributed.elastic.agent.server.api: [INFO] [trainer] worker group successfully "
        "finished. Waiting 900 seconds for other agents to finish.",
        "I0211 07:41:09.552000 3117 site-packages/torch/distributed/elastic/agent/server/api.py:906] [default] worker group "
        "successfully finished. Waiting 300 seconds for other agents to finish.",
        # torchx's Ray scheduler ran the agent with an empty role (meta-pytorch/torchx#492's log)
        "ray/0 (CommandActor pid=51120) INFO:torch.distributed.elastic.agent.server.api:[] worker group successfully finished. "
        "Waiting 300 seconds for other agents to finish.",
    ],
    "elastic_worker_succeeded_event": [
        '{"name": "torchelastic.worker.status.SUCCEEDED", "source": "WORKER", "timestamp": 0, "metadata": {"run_id": "none", '
        '"global_rank": 3, "group_rank": 0, "worker_id": "40217", "role": "default", "hostname": "node-7", "state": "SUCCEEDED"}}',
    ],
    "elastic_local_finished": [
        "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (SUCCEEDED). Waiting 300 seconds for other "
        "agents to finish",
        "[2026-02-11 07:41:09,553] torch.distributed.elastic.agent.server.api: [INFO] Local worker group finished "
        "(WorkerState.SUCCEEDED). Waiting 300 seconds for other agents to finish",
    ],
    "elastic_exit_barrier_done": [
        "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: 0.0021340847015380859 seconds",
        "I0211 07:41:09.561000 3117 site-packages/torch/distributed/elastic/agent/server/api.py:920] Done waiting for other "
        "agents. Elapsed: 4.0531158447265625e-06 seconds",
    ],
    "deepspeed_process_exit_ok": [
        "[2026-02-11 07:41:12,004] [INFO] [launch.py:351:main] Process 48213 exits successfully.",
    ],
    # torchtitan's own formatter (torchtitan/tools/logging.py), after torchrun's rank prefix: read by no rule before h16r
    "torchtitan_done": [
        "[rank0]:[titan] 2026-02-11 07:41:12,100 - root - INFO - Training completed",
        "[titan] 2026-02-11 07:41:12,100 - root - INFO - train.py:512 - Training completed",
        "Training completed",
    ],
    "fairseq_done_training": [
        "2026-02-11 07:41:12 | INFO | fairseq_cli.train | done training in 5213.4 seconds",
        "| done training in 871.0 seconds",
    ],
}
CASES = [(line, rule) for rule, lines in ENDS.items() for line in lines]


@pytest.mark.parametrize("line, rule", CASES)
def test_each_end_line_is_read_by_its_rule(line, rule):
    assert rule_of(line) == rule
    assert rule_role(rule) == "end"


@pytest.mark.parametrize(
    "line",
    [
        # the failed forms of the same sources, and near misses: none is an end
        "INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 0/3 attempts left",
        "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (FAILED). Waiting 300 seconds for other agents to finish",
        "ERROR:torch.distributed.elastic.agent.server.api:Error waiting on exit barrier. Elapsed: 300.1 seconds",
        "Waiting 300 seconds for other agents to finish.",
        "Process 48213 exits with return code = 1",
        "Done waiting for other agents",
        '{"name": "torchelastic.worker.status.TERMINATED", "source": "WORKER", "timestamp": 0, "metadata": {"global_rank": 2}}',
        '{"name": "torchelastic.worker.status.FAILED", "source": "WORKER", "timestamp": 0, "metadata": {"global_rank": 1}}',
        "| done training in",
        "we are done training in the cloud",
        "[titan] 2026-02-11 07:41:12,100 - root - ERROR - Training completed",
        "[titan] 2026-02-11 07:41:12,100 - root - INFO - Training completed 3 of 9 shards",
    ],
)  # fmt: skip
def test_near_misses_are_no_end(line):
    assert rule_of(line) not in ENDS


@pytest.mark.parametrize("line, rule", CASES)
def test_steps_then_the_end_line_is_success(tmp_path, line, rule):
    d = the_diagnosis(tmp_path, STEPS + line + "\n")
    assert (d.category, d.outcome) == ("success", "succeeded"), d.summary


def test_without_the_end_line_the_same_log_is_running(tmp_path):
    assert the_diagnosis(tmp_path, STEPS).category == "running"


TRACE = ("[rank1]: Traceback (most recent call last):\n"
         '[rank1]:   File "train.py", line 210, in <module>\n'
         "[rank1]:     loss = model(batch)\n"
         "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB\n")  # fmt: skip


@pytest.mark.parametrize("line, rule", CASES)
def test_a_failure_before_the_end_line_is_the_answer(tmp_path, line, rule):
    d = the_diagnosis(tmp_path, STEPS + TRACE + line + "\n")
    assert (d.category, d.first_failure["rank"]) == ("cuda_oom", 1), d.summary


def test_torchrun_whole_success_tail(tmp_path):
    tail = "\n".join(ENDS["elastic_group_succeeded"][:1] + ENDS["elastic_local_finished"][:1] + ENDS["elastic_exit_barrier_done"][:1])
    d = the_diagnosis(tmp_path, STEPS + tail + "\n")
    assert d.category == "success" and "Done waiting for other agents" in d.summary


def _cri(lines: list[str], start: int) -> str:
    return "".join(f"2026-03-12T08:{start + i // 60:02d}:{i % 60:02d}.000000000Z stderr F {line}\n" for i, line in enumerate(lines))


def test_one_pods_clean_end_does_not_hide_another_pods_failure(tmp_path):
    # Two pods of one job (kubelet's /var/log/pods layout): worker-0's agent logs its group's success, worker-1's rank 2
    # ran out of memory. The job failed; the end line of one node is no evidence for the other (endings: an END line
    # counts only when no failure was read in the attempt).
    from gangscope.pipeline.run import replay

    steps = [f"epoch 1 step {i * 50} loss {2.4 - i / 40:.4f} lr 0.0001" for i in range(1, 7)]
    ok = steps + [ENDS["elastic_group_succeeded"][0], ENDS["elastic_exit_barrier_done"][0]]
    bad = steps + [line for line in TRACE.replace("[rank1]", "[rank2]").splitlines()]
    for pod, lines, uid in (("worker-0", ok, "0a"), ("worker-1", bad, "1b")):
        folder = tmp_path / "pods" / f"team-r_llmft-{pod}_{uid * 16}" / "pytorch"
        folder.mkdir(parents=True)
        (folder / "0.log").write_text(_cri(lines, 10))
    result = replay.run(replay.ReplayOptions(paths=[str(tmp_path / "pods")]), lambda batch: None)
    assert result.failures.summary() == []
    [d] = [d for d in result.diagnoses]
    assert d.category == "cuda_oom" and d.first_failure["rank"] == 2, d.summary
