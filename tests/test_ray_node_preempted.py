"""Ray's word that an actor's node was preempted (rule ray_node_preempted, parsers/errors.py), with near misses.

Ray's GCS writes an actor's death cause "The actor died because its node has died. Node Id: <hex>" and, on the next
line, why the node died: "\tthe actor's node was terminated expectedly: " / "unexpectedly: " / "preempted: " + the
reason (src/ray/gcs/gcs_server/gcs_actor_manager.cc, NodeDeathInfo's AUTOSCALER_DRAIN_PREEMPTED for the last). A
preempted node is the job stopped from outside while healthy (SPEC `preempted`); the other two stay `node_failure`.
Lines below are written with our own values in Ray's wording.
"""

from __future__ import annotations

import pytest

from gangscope.parsers.errors import first_trace_rule
from gangscope.pipeline.run import replay

_HEAD = "The actor died unexpectedly before finishing this task.\n\tclass_name: RolloutWorker\n\tactor_id: 7be1c0a9d4\n"
_DIED = "The actor died because its node has died. Node Id: 5c9e03ab71f2\n"


@pytest.mark.parametrize("tail", [
    "\tthe actor's node was preempted: spot instance reclaimed by the provider",
    "\tthe actor's node was preempted: preemption notice received, draining node",
])
def test_a_preempted_node_is_preempted(tail):
    found = first_trace_rule("ray.exceptions.ActorDiedError", _HEAD + _DIED + tail, [])
    assert found is not None and (found.name, found.category) == ("ray_node_preempted", "preempted")


@pytest.mark.parametrize("message, category", [
    (_HEAD + _DIED + "\tthe actor's node was terminated unexpectedly: health check failed due to missing too many heartbeats",
     "node_failure"),
    (_HEAD + _DIED + "\tthe actor's node was terminated expectedly: received SIGTERM", "node_failure"),
    # "preempted" in the actor's own text, not Ray's node-death line
    (_HEAD + "\tthe actor's node was preempted: x", "unknown"),
    ("The actor died because its node has died. Node Id: 5c9e03ab71f2", "node_failure"),
])
def test_near_misses(message, category):
    found = first_trace_rule("ray.exceptions.ActorDiedError", message, [])
    assert found is not None and found.name != "ray_node_preempted" and found.category == category


def test_a_ray_trainer_whose_node_was_preempted_is_diagnosed_preempted(tmp_path):
    log = tmp_path / "driver.log"
    log.write_text(
        "(RolloutWorker pid=48211, ip=10.12.0.7) step 120 loss 0.4127\n"
        "Traceback (most recent call last):\n"
        '  File "/app/train.py", line 88, in <module>\n'
        "    ray.get(refs)\n"
        '  File "/opt/conda/lib/python3.11/site-packages/ray/_private/worker.py", line 2772, in get\n'
        "    raise value\n"
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
        "\tclass_name: RolloutWorker\n"
        "\tactor_id: 7be1c0a9d4\n"
        "The actor died because its node has died. Node Id: 5c9e03ab71f2\n"
        "\tthe actor's node was preempted: spot instance reclaimed by the provider\n"
    )
    result = replay.run(replay.ReplayOptions(paths=[str(log)], fmt="text"), lambda batch: None)
    [d] = result.diagnoses
    assert d.category == "preempted", d.summary
    assert d.exception_type == "ray.exceptions.ActorDiedError"
