"""Rules from session 24's helper h24c (fixtures/eval README, "Session 24, helper h24c: classes of mistakes"): the misses
of dev and ../shared/eval/diagnosis-dev read by the mechanism that made gangscope wrong, and a rule for each class whose
cause the log shows and whose printer's source says what it means:

- the shell's note that its foreground job died of SIGKILL in the user's language (glibc's strsignal through libc's
  catalogue: "已杀死", "Getötet", ...), read like the English "Killed" (parsers/errors.py shell_job_signal_l10n);
- a traceback cut before its exception line whose frames are a framework's own save (DeepSpeed's save_checkpoint,
  Lightning's ModelCheckpoint hooks, the Trainer's _save_checkpoint, Megatron's save_checkpoint): a checkpoint's save
  that raised (pipeline/diagnose/rules.py CUT_TRACEBACK_FRAMES framework_checkpoint_save);
- mosaicml streaming's RuntimeError after every try of a download from remote storage failed (trace rule
  streaming_download_failed, storage_io);
- click's usage error line, argparse_error's sibling (click_usage_error, python_exception).

The lines are rebuilt from the sources' format strings and CPython's frame format with our values, not copied from the
fixtures or the threads."""

from __future__ import annotations

import re

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import category_of, found, reference_detect


@pytest.mark.parametrize(
    "line, category",
    [
        ("已杀死", "host_oom"),
        ("Getötet", "host_oom"),
        ("Убито", "host_oom"),
        ("강제 종료", None),  # not a catalogue's text
        ("죽었음", "host_oom"),
        ("Processus arrêté", "host_oom"),
        ("Terminado (killed)", "host_oom"),
        ("強制終了", "host_oom"),
        ("  0%|          | 0/16733 [00:00<?, ?b/s]已杀死", "host_oom"),
        # near misses: the word inside a sentence, a script's own message, SIGTERM's translations (ordinary words for
        # finished), a process killed by a script ("已杀死进程" is "killed the process")
        ("已杀死进程: 40213", None),
        ("训练已杀死", None),
        ("Beendet", None),
        ("已终止", None),
        ("Complété", None),
        ("Morto di fame", None),
        ("worker Getötet after 3 retries", None),
    ],
)  # fmt: skip
def test_the_shells_sigkill_note_in_the_users_language(line, category):
    assert category_of(line) == category
    assert (reference_detect(line) or (None, None))[1] == category  # the prefilter lets it through


@pytest.mark.parametrize(
    "line, rule",
    [
        ("Error: No such command 'run'.", "click_usage_error"),
        ("Error: No such command 'train_synth'.", "click_usage_error"),
        ("Error: Missing option '--config' / '-c'.", "click_usage_error"),
        ("Error: Missing argument 'DATA_DIR'.", "click_usage_error"),
        ("Error: No such option: --nproc-per-node Did you mean --nproc_per_node?", "click_usage_error"),
        ("Error: Invalid value for '--epochs': 'ten' is not a valid integer.", "click_usage_error"),
        ("Error: Got unexpected extra arguments (--lr 3e-4)", "click_usage_error"),
        ("Error: Option '--output-dir' requires an argument.", "click_usage_error"),
        # near misses: other programs' "Error: " lines, click's words elsewhere on a line
        ("Error: No such file or directory", None),
        ("Error: CUDA out of memory", None),
        ("Error: Invalid value", None),
        ("  Error: Missing argument 'DATA_DIR'.", None),
        ("wandb: Error: No such command 'sync'.", None),
    ],
)  # fmt: skip
def test_clicks_usage_error_and_its_near_misses(line, rule):
    hit = found(line)
    assert (hit[0] if hit else None) == rule
    if rule:
        assert hit[1] == "python_exception"


SITE = "/opt/conda/envs/train/lib/python3.10/site-packages"
STEPS = "".join(f"Step {n} | Loss = {2.31 - n * 0.01:.4f}\n" for n in range(6))
HEAD = ('[rank0]: Traceback (most recent call last):\n'
        '[rank0]:   File "/srv/runs/train_ds.py", line 131, in <module>\n'
        '[rank0]:     main()\n'
        '[rank0]:   File "/srv/runs/train_ds.py", line 122, in main\n')  # fmt: skip
DS_SAVE = (HEAD + "[rank0]:     engine.save_checkpoint(ckpt_dir, tag=tag)\n"
           f'[rank0]:   File "{SITE}/deepspeed/runtime/engine.py", line 3120, in save_checkpoint\n'
           "[rank0]:     self._save_zero_checkpoint(save_dir, tag)\n"
           f'[rank0]:   File "{SITE}/deepspeed/runtime/engine.py", line 3471, in _save_zero_checkpoint\n'
           "[rank0]:     zero_sd = dict(optimizer_state_dict=self.optimizer.state_dict(), ds_config=self.config, ds_version=version)\n"
           f'[rank0]:   File "{SITE}/deepspeed/runtime/zero/stage3.py", line 2504, in state_dict\n'
           "[rank0]:     state_dict[OPTIMIZER_STATE_DICT] = self._rigid_state_dict()\n")  # fmt: skip
DS_STEP = (HEAD + "[rank0]:     engine.step()\n"
           f'[rank0]:   File "{SITE}/deepspeed/runtime/engine.py", line 2213, in step\n'
           "[rank0]:     self._take_model_step(lr_kwargs)\n")  # fmt: skip
DS_LOAD = (HEAD + "[rank0]:     engine.load_checkpoint(ckpt_dir)\n"
           f'[rank0]:   File "{SITE}/deepspeed/runtime/engine.py", line 2710, in load_checkpoint\n'
           "[rank0]:     load_path, client_states = self._load_checkpoint(load_dir,\n")  # fmt: skip
PL_HEAD = ('Traceback (most recent call last):\n'
           '  File "/srv/seg/train.py", line 88, in <module>\n'
           '    trainer.fit(model, datamodule=dm)\n'
           f'  File "{SITE}/lightning/pytorch/trainer/call.py", line 218, in _call_callback_hooks\n'
           '    fn(trainer, trainer.lightning_module, *args, **kwargs)\n')  # fmt: skip
PL_HOOK = (PL_HEAD + f'  File "{SITE}/lightning/pytorch/callbacks/model_checkpoint.py", line 335, in on_validation_end\n'
           "    self._save_last_checkpoint(trainer, monitor_candidates)\n")  # fmt: skip
PL_INIT = ('Traceback (most recent call last):\n'
           '  File "/srv/seg/train.py", line 61, in <module>\n'
           "    ckpt = ModelCheckpoint(save_last=True, monitor=None)\n"
           f'  File "{SITE}/pytorch_lightning/callbacks/model_checkpoint.py", line 173, in __init__\n'
           "    self.__validate_init_configuration()\n")  # fmt: skip
HF_SAVE = ('Traceback (most recent call last):\n'
           '  File "/srv/sft/run_sft.py", line 402, in <module>\n'
           "    main()\n"
           f'  File "{SITE}/transformers/trainer.py", line 2328, in _maybe_log_save_evaluate\n'
           "    self._save_checkpoint(model, trial, metrics=metrics)\n"
           f'  File "{SITE}/transformers/trainer.py", line 2405, in _save_checkpoint\n'
           "    self.save_model(output_dir, _internal_call=True)\n")  # fmt: skip
MEGATRON_SAVE = ('Traceback (most recent call last):\n'
                 '  File "/workspace/Megatron-LM/pretrain_gpt.py", line 230, in <module>\n'
                 "    pretrain(\n"
                 '  File "/workspace/Megatron-LM/megatron/training/training.py", line 1315, in train\n'
                 "    save_checkpoint_and_time(iteration, model, optimizer,\n"
                 '  File "/workspace/Megatron-LM/megatron/training/checkpointing.py", line 398, in save_checkpoint\n'
                 "    state_dict = generate_state_dict(\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        (STEPS + DS_SAVE, "checkpoint_error"),
        (STEPS + PL_HOOK, "checkpoint_error"),
        (STEPS + HF_SAVE, "checkpoint_error"),
        (STEPS + MEGATRON_SAVE, "checkpoint_error"),
        # near misses: the same engine's step, its load (as h22c: a load cut looks alike for a missing file, a download,
        # a mismatch), the callback's constructor (its MisconfigurationException is the configuration's)
        (STEPS + DS_STEP, "unknown"),
        (STEPS + DS_LOAD, "unknown"),
        (PL_INIT, "unknown"),
        # the exception line present: it decides, not the frames
        (STEPS + DS_SAVE + "[rank0]: IndexError: list index out of range\n", "python_exception"),
    ],
)  # fmt: skip
def test_a_cut_traceback_inside_a_frameworks_save(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


def test_the_save_it_names(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + DS_SAVE)
    # [h34i] the frame quoted as the log printed it (was the key "deepspeed/runtime/engine.py:_save_zero_checkpoint")
    assert "inside a checkpoint's save" in d.summary
    assert re.search(r'File "[^"]*/deepspeed/runtime/engine\.py", line \d+, in _save_zero_checkpoint', d.summary)


STREAMING = ('Traceback (most recent call last):\n'
             '  File "/llm-foundry/scripts/train/train.py", line 253, in main\n'
             "    train_loader = build_dataloader(train_loader_config, tokenizer, device_train_batch_size)\n"
             f'  File "{SITE}/streaming/base/stream.py", line 310, in _download_file\n'
             "    raise RuntimeError(\n")  # fmt: skip
GOT = ("RuntimeError: Failed to download s3://lake-corpora/mds/v2/train/index.json -> /tmp/tmpa81kq2zd/train/index.json. "
       "Got errors:\n[ClientError('An error occurred (403) when calling the HeadObject operation: Forbidden'), "
       "ClientError('An error occurred (403) when calling the HeadObject operation: Forbidden')]\n")  # fmt: skip
TRIED = ("RuntimeError: Failed to download oci://shards-eu/pile/train/shard.00017.mds -> /local/pile/train/shard.00017.mds. "
         "Tried 3 times, got errors:\n[ReadTimeoutError('Read timed out.'), ReadTimeoutError('Read timed out.'), "
         "ReadTimeoutError('Read timed out.')]\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        (STREAMING + GOT, "storage_io"),
        (STREAMING + TRIED, "storage_io"),
        # near misses: a script's own words, the same verb for a model's weights, without the arrow to a local path
        (STREAMING + "RuntimeError: Failed to download the tokenizer, check your token\n", "python_exception"),
        (STREAMING + "RuntimeError: Failed to download s3://lake-corpora/mds/v2/train/index.json\n", "python_exception"),
    ],
)  # fmt: skip
def test_streamings_download_that_failed_every_try(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


@pytest.mark.parametrize(
    "text, category",
    [
        ("Epoch 3/20\nloss: 0.4121 - acc: 0.8810\n已杀死\n", "host_oom"),
        ("Epoch 3/20\nloss: 0.4121 - acc: 0.8810\nGetötet\n", "host_oom"),
        ("Epoch 3/20\nloss: 0.4121 - acc: 0.8810\n已杀死进程: 40213\n", "running"),
        ("$ tune run --nproc_per_node 8 full_finetune_distributed --config qwen.yaml\nUsage: tune [OPTIONS] COMMAND [ARGS]...\n"
         "Try 'tune --help' for help.\n\nError: No such command 'run'.\n", "python_exception"),
    ],
)  # fmt: skip
def test_logs_that_end_in_them(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
