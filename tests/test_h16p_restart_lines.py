"""Rules from batch h16p of issue 16 (fixtures/eval README, "Batch h16p"): a launcher's word that its workers failed
before it starts them again is a failure when nothing follows it, no failure when the restarted workers log on.

The lines, each from the source that prints it (cited in parsers/errors.py): torch elastic's agent on a failed or
unhealthy group ("[default] Worker group FAILED. 3/3 attempts left; will restart worker group",
torch/distributed/elastic/agent/server/api.py SimpleElasticAgent._invoke_run; DLRover's form with "is failure node");
Ray's raylet on a worker process that never registered (src/ray/raylet/worker_pool.cc, the dead and the hung form and
Ray 1.x's "to raylet within timeout"). Both are warnings (role) listed in rules.TEARDOWN_AT_THE_END: the answer is
`unknown` only when they are the attempt's last records. Values in the texts are ours."""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import detect, rule_role
from diagnose_in_process import the_diagnosis


def rule_of(line: str) -> str | None:
    found = detect(line)
    return found[0].name if found is not None else None


STEPS = "".join(f"epoch 1 step {i * 50} loss {2.4 - i / 40:.4f} lr 0.0001\n" for i in range(1, 7))
END = "Training completed. Do not forget to share your model on huggingface.co/models =)\n"
RESTART = ("INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; will restart worker group\n"
           "INFO:torch.distributed.elastic.agent.server.api:[default] Stopping worker group\n"
           "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group\n"
           "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:\n"
           "  restart_count=1\n  master_addr=10.40.2.17\n  master_port=29500\n"
           "INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group\n")  # fmt: skip
RAYLET = "".join(f"(raylet) [2026-03-02 09:14:0{i},201 E 5120 5120] (raylet) worker_pool.cc:586: Some workers of the worker "
                 f"process({7301 + i}) have not registered within the timeout. The process is dead, probably it crashed during start.\n"
                 for i in range(3))  # fmt: skip


@pytest.mark.parametrize(
    "line, rule",
    [
        ("INFO:torch.distributed.elastic.agent.server.api:[default] Worker group FAILED. 3/3 attempts left; will restart worker group",
         "elastic_group_restart"),
        ("[2026-01-05 11:02:33,120] torch.distributed.elastic.agent.server.api: [INFO] [trainer] Worker group UNHEALTHY. 1/2 attempts "
         "left; will restart worker group", "elastic_group_restart"),
        ("[INFO] [ft_launcher.py:301] [default] Worker group FAILED. 3/5 attempts left; will restart worker group", "elastic_group_restart"),
        ("[default] Worker group FAILED, is failure node: False,3/3 attempts left; will restart worker group.", "elastic_group_restart"),
        ("(raylet) worker_pool.cc:586: Some workers of the worker process(40112) have not registered within the timeout. The process "
         "is still alive, probably it's hanging during start.", "ray_worker_start_timeout"),
        ("[2021-04-01 10:00:00,000 I 881 881] worker_pool.cc:352: Some workers of the worker process(9023) have not registered to "
         "raylet within timeout.", "ray_worker_start_timeout"),
        ("Some workers of the worker process(9023) have not registered to raylet within timeout (60 s), so the process 9023 will be "
         "killed immediately and a new one will be started.", "ray_worker_start_timeout"),
        # not theirs: the group's healthy states, a restart that is not the agent's sentence, other workers' words
        ("INFO:torch.distributed.elastic.agent.server.api:[default] Worker group SUCCEEDED. 0/3 attempts left", None),
        ("INFO:torch.distributed.elastic.agent.server.api:[default] Starting worker group", None),
        ("Worker group FAILED to reach the barrier, retrying", None),
        ("Some workers of the worker process pool were recycled", None),
    ],
)  # fmt: skip
def test_the_lines_and_their_near_misses(line, rule):
    assert rule_of(line) == rule


def test_both_are_warnings_never_a_failure_by_themselves():
    assert rule_role("elastic_group_restart") == rule_role("ray_worker_start_timeout") == "warning"


@pytest.mark.parametrize("tail", [RESTART, RESTART + "INFO:torch.distributed.elastic.multiprocessing:Setting worker0 reply file to: "
                                  "/tmp/torchelastic_k2/none_q8/attempt_1/0/error.json\n", RAYLET])  # fmt: skip
def test_a_log_that_ends_in_the_restart_or_the_dead_workers_failed(tmp_path, tail):
    d = the_diagnosis(tmp_path, STEPS + tail)
    assert (d.category, d.outcome) == ("unknown", "failed"), d.summary
    assert "workers stopped or failed" in d.summary


@pytest.mark.parametrize("tail", [RESTART, RAYLET])
def test_workers_that_log_on_after_it_are_no_failure(tmp_path, tail):
    assert the_diagnosis(tmp_path, STEPS + tail + STEPS).category == "running"
    assert the_diagnosis(tmp_path, STEPS + tail + STEPS + END).category == "success"


def test_a_cause_printed_before_the_restart_is_the_answer(tmp_path):
    trace = ("[rank1]: Traceback (most recent call last):\n"
             '[rank1]:   File "train.py", line 210, in <module>\n'
             "[rank1]:     loss = model(batch)\n"
             "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB\n")  # fmt: skip
    d = the_diagnosis(tmp_path, STEPS + trace + RESTART)
    assert (d.category, d.first_failure["rank"]) == ("cuda_oom", 1)
