"""Rules from batch h16v of issue 16 (fixtures/eval README, "Batch h16v"): a trainer's own stop at the wall-clock limit it
keeps below the scheduler's is `time_limit`; TPUEstimator's graceful-shutdown hook finding lame TPU workers is `preempted`.

The lines, each from the source that prints it (cited in parsers/errors.py, rules anemoi_time_limit, olmo_time_limit and
tpu_lame_workers): anemoi-training's TimeLimit callback (LOGGER.info("Time limit of %s reached. Stopping training.",
frequency_to_string(self.limit)), training/src/anemoi/training/diagnostics/callbacks/stopping.py), OLMo's
Trainer.check_if_cancelled (log.warning(f"Run canceled due to {cancel_reason}, stopping in {extra_steps} more steps...")
with cancel_reason "time limit reached", olmo/train.py), TensorFlow's GracefulShutdownHook.after_run
(logging.info('ShutdownHook: lame workers found: %s', lame_workers), tensorflow/python/tpu/session_support.py), through
absl's and glog's prefixes. Values in the texts are ours."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of


@pytest.mark.parametrize(
    "line, category",
    [
        ("[2026-02-03 11:04:51,207][anemoi.training.diagnostics.callbacks.stopping][INFO] - Time limit of 47h reached. "
         "Stopping training.", "time_limit"),
        ("INFO:anemoi.training.diagnostics.callbacks.stopping:Time limit of 1d reached. Stopping training.", "time_limit"),
        ("Time limit of 30m reached. Stopping training.", "time_limit"),
        ("2024-03-09 21:17:44.913\tWARNING\tolmo.train:1061\tRun canceled due to time limit reached, stopping in 10 more steps...",
         "time_limit"),
        ("[2024-03-09 21:17:44] WARNING [olmo.train:1063, rank=0] Run canceled due to time limit reached", "time_limit"),
        ("INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)", "preempted"),
        ("I0309 21:17:44.913005 139881023485760 session_support.py:391] ShutdownHook: lame workers found: "
         "HeartbeatManager(/job:tpu_worker/replica:0/task:0/device:CPU:0,/job:tpu_worker/replica:0/task:1/device:CPU:0)", "preempted"),
        # near misses: Lightning's Timer is the user's own budget (a planned end), OLMo's other cancel reasons, other wordings
        ("Time limit reached. Elapsed time is 1 day, 0:00:03. Signaling Trainer to stop.", None),
        ("[2024-03-09 21:17:44] WARNING [olmo.train:1063, rank=0] Run canceled due to Weights & Biases tag", None),
        ("Time limit of 5s for the health probe exceeded, retrying", None),
        ("INFO:tensorflow:ShutdownHook: saving checkpoint to gs://bucket/run/model.ckpt", None),
    ],
)  # fmt: skip
def test_the_lines_and_their_near_misses(line, category):
    assert category_of(line) == category


ANEMOI = ("".join(f"[2026-02-03 11:04:51,207][anemoi.training.diagnostics.callbacks.stopping][INFO] - Time limit of 2m reached. "
                  "Stopping training.\n" for _ in range(4))
          + "\n"
          + '  File "/opt/src/anemoi-core/training/src/anemoi/training/train/train.py", line 541, in main\n'
          + "    AnemoiTrainer(config).train()\n"
          + "...\n"
          + '  File "/opt/envs/anemoi/lib/python3.12/site-packages/pytorch_lightning/trainer/call.py", line 222, in _call_callback_hooks\n'
          + "    fn(trainer, trainer.lightning_modu\n")  # fmt: skip
OLMO = ("[2024-03-09 21:15:02] INFO [olmo.train:967, rank=0] [step=11990/739328]\n"
        "[2024-03-09 21:17:44] WARNING [olmo.train:1063, rank=0] Run canceled due to time limit reached, stopping in 10 more steps...\n"
        "[2024-03-09 21:17:44] INFO [olmo.train:1140, rank=0] Saving checkpoint...\n")  # fmt: skip
TPU = ("I0309 21:16:02.520152 139881023485760 tpu_estimator.py:616] Enqueue next (100) batch(es) of data to infeed.\n"
       "INFO:tensorflow:Outfeed finished for iteration (412, 7)\n"
       "INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)\n"
       "I0309 21:17:44.913005 139881023485760 session_support.py:391] ShutdownHook: lam\n")  # fmt: skip


@pytest.mark.parametrize("text, category", [(ANEMOI, "time_limit"), (OLMO, "time_limit"), (TPU, "preempted")])
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
