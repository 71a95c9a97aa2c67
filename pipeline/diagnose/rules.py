"""The tables of diagnosis: cause and effect, how sure a verdict is, the words of a summary.

Cause -> effect is data: a change in how failures are ranked or phrased is an edit
here, not in the code that applies it (`root_cause.py`, `summary.py`, `endings.py`).
"""

from __future__ import annotations

import re


#: Categories that one rank's failure produces on the OTHER ranks, and how.
EFFECTS: dict[str, str] = {
    "nccl_timeout": "blocked in a collective the failed rank never joined until the NCCL watchdog or gloo timeout fired",
    "nccl_error": "lost their connection to it (NCCL / gloo peer gone)",
    "preempted": "were stopped with SIGTERM by their launcher",
    "rendezvous_error": "lost the rendezvous / store it hosted",
    "hang": "stayed stuck in a collective until the NCCL heartbeat monitor gave up",
}

#: An effect may be printed before its cause is (a killed rank says nothing; its launcher
#: notices within its monitor interval, while peers see the closed socket at once).
EFFECT_SLACK_S = 120.0

#: Step dialects of bare progress bars (parsers/dialects.py): one of their records at N/N is the end of
#: training only when the log showed that bar moving (a record of the same total between 0 and N before
#: it). tqdm prints n/N on creation and on close (tqdm/std.py __init__ refresh, close -> display), a
#: viewer or a paste keeps only the last: a bar seen only at N/N (or 1/1) is what the data, hub and
#: loading bars without a description look like as well (datasets' undescribed "100%|...| 1/1").
BARS_NEEDING_PROGRESS = frozenset({"tqdm"})

#: Stall reports' own word that the stall they reported is over (rule names, parsers/errors.py; category
#: `hang`, role `warning`): XLA's rendezvous watchdog logs "unstuck ... Warning above was a false-positive"
#: when the peers it waited for arrive (openxla/xla xla/service/rendezvous.cc AwaitAndLogIfStuck). For
#: endings.stall_reports such a line is progress, as a step is: a stall it follows resumed.
STALL_RESOLVED = frozenset({"xla_rendezvous_unstuck"})

# --- h25a (issue 16, session 25): c10d's store-based barrier (parsers/errors.py store_barrier_wait, store_barrier_completed).
#: Its completion line is progress past the barrier: the waits before it resumed.
STALL_RESOLVED = STALL_RESOLVED | {"store_barrier_completed"}
#: Stall reports a library prints again every interval while it waits, with how many reports of one pod make a stall:
#: c10d logs the barrier's wait every 10 s (torch/distributed/distributed_c10d.py _store_based_barrier), and one or two
#: reports are peers arriving late (a node's launcher started a few seconds after another's); three are 30 s and more of a
#: world that did not fill.
STALL_REPEATS: dict[str, int] = {"store_barrier_wait": 3}

#: Stops a launcher's own kill explains (rule names, parsers/errors.py): slurmstepd prints the same
#: "*** STEP|JOB ... CANCELLED AT ... ***" (no reason) for scancel and for the step srun terminates
#: itself after a task's bad exit (SchedMD/slurm src/srun/launch.c _task_finish -> _step_signal
#: (SIG_TERM_KILL) when kill_on_bad_exit) or that slurmstepd kills over its memory limit
#: (jobacct_gather_handle_mem_limit -> _acct_kill_step). After one of the listed failures of the same
#: pod, such a cancel says nothing new: a launcher summary (tier 3), not a stop from outside.
LAUNCHER_OWN_KILL: dict[str, frozenset[str]] = {
    "slurm_cancelled": frozenset({"srun_task_exit", "srun_task_oom", "slurm_mem_limit", "slurm_oom"}),
}

#: A failure whose own words say it is the echo of another process's failure, and the launcher reports that name the
#: process that failed first (rule names, parsers/errors.py): where the root is such an echo of category `unknown` and
#: a report of the same pod names a rank, the report's rank is the first failure's. Horovod's SHUT_DOWN_ERROR ("This
#: was caused by an exception on one of the ranks", horovod/common/common.h) is printed by every survivor;
#: mpirun / prterun name the first process to exit non-zero (help-orterun.txt / help-prun.txt [non-zero-exit]:
#: "The first process to do so was: Process name: [[j,a],N]") or to leave early ([proc-exit-no-sync]). Batch h16n,
#: dev 403.
ECHO_OF_ANOTHER_FAILURE = re.compile(r"Horovod has been shut down\. This (?:was|has been) caused by an exception on one of the ranks")
FIRST_FAILURE_REPORTS = frozenset({"mpirun_first_process", "mpirun_exited_early"}) | {"prrte_first_process"}  # h33c: PRRTE's names

#: Among simultaneous effects, the one that explains the others comes first: a SIGTERM a
#: launcher RECEIVED (eviction, preemption) makes its peers lose their connection, which
#: makes collectives time out. (torchrun's own SIGTERMs to the survivors of a failure are
#: launcher summaries or warnings, never a tier-2 failure.)
EFFECT_ORDER = ("preempted", "nccl_error", "rendezvous_error", "hang", "nccl_timeout")

#: ... unless the explained effect came first: effects that an earlier effect explains (category -> the categories it
#: explains when they follow it). On a timed-out work ProcessGroupNCCL's watchdog aborts the communicators and takes the
#: process down (pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp watchdogHandler: "Watchdog caught
#: collective operation timeout", then abort and "To avoid data inconsistency, we are taking the entire process down"):
#: the peers still in the collective then see a closed connection or NCCL's ncclRemoteError ("remote process exited or
#: there was a network error"), and the rank's own later calls "NCCL communicator was aborted". Those NCCL errors after a
#: timeout are its effects; a lost peer BEFORE any timeout still explains the timeouts (a killed rank's peers see the
#: closed socket at once, their collective times out minutes later). "Before" is by time, or, where the lines carry
#: none, by order of appearance in the same stream. Batch h16c (issue 16).
#: [h34h] ... and the heartbeat monitor's stall report after it: on a timed-out work the watchdog thread dumps the flight
#: recorder and aborts the communicators (ProcessGroupNCCL.cpp watchdogHandler -> abort), and while it is blocked there it
#: stops beating, so the monitor thread logs "Heartbeat monitor timed out! Process will be terminated after dumping debug info."
#: and "ProcessGroupNCCL's watchdog got stuck for N seconds without making progress in monitoring enqueued collectives. This
#: typically indicates a NCCL/CUDA API hang blocking the watchdog" when heartbeat_ stopped increasing (pytorch/pytorch torch/csrc/
#: distributed/c10d/ProcessGroupNCCL.cpp ProcessGroupNCCL::heartbeatMonitor, 2.3-2.5; HeartbeatMonitor::runLoop later; both `hang` in
#: parsers/errors.py). A stall reported AFTER the same attempt's collective timeout is that teardown blocking, the timeout
#: its cause; a stall with no timeout before it stays `hang`. Batch h34h, dev 1661 (NeMo ASR, Lightning bar, rank 1's
#: BROADCAST watchdog timeout at 1800000 ms, then its heartbeat monitor 600 s later).
EXPLAINED_WHEN_LATER: dict[str, frozenset[str]] = {"nccl_timeout": frozenset({"nccl_error", "hang"})}
#: The words of the timeouts that do so: the collective timeouts that end the process (ProcessGroupNCCL's watchdog, gloo's
#: unbound_buffer.cc). Not the watchdog's "Exception (either an error or timeout) detected by watchdog at work", printed
#: for an NCCL error as well (a rank that sees ncclRemoteError prints it before the error), nor a caller's own wait that
#: ran out (Ray's RayChannelTimeoutError: the driver stops waiting for an actor whose own failure its log shows later).
EXPLAINING_TIMEOUT = re.compile(r"Watchdog caught collective operation timeout|Timeout at NCCL work: |WorkNCCL::checkTimeout"
                                r"|Timed out waiting \d+ms for (?:recv|send) operation|Application timeout caused pair closure")

#: Effects that say what a crash of no category of its own was (an `unknown` root: "Fatal Python error: Aborted", libstdc++'s
#: "terminate called", the shell's "Aborted") when the same process reported one BEFORE it (same pod and rank, earlier by
#: time or, without times, by order in its stream): a rank whose NCCL or gloo connection failed then aborts (NCCL's
#: ncclCommAbort / torch's "To avoid data inconsistency, we are taking the entire process down", Horovod's background thread
#: throwing on a failed NCCL call: horovod/common/ops/nccl_operations.cc NCCLContext::ErrorCheck, terminate without a
#: handler). Never one printed after the crash (the survivors' view of it). Batch h16n-2 (issue 16).
CRASH_EXPLAINED_BY_EARLIER: frozenset[str] = frozenset({"nccl_error"})

#: [h20a] Crashes that are only a native stack (glibc's backtrace_symbols frames, parsers/errors.py native_backtrace_frame: no
#: signal, no message) are explained by the same rank's own collective timeout (EXPLAINING_TIMEOUT) close to them, printed
#: before or after: the watchdog throws, the process aborts and its handler dumps the stack, while Ray's log monitor and the
#: threads' separate streams print the two in either order (verl-project/verl#2995, dev 600: the frames first;
#: vllm-project/vllm#6042: the watchdog first). A rank is never the survivor of its own crash, so the order does not matter.
BARE_STACK_CRASHES: frozenset[str] = frozenset({"native_backtrace_frame"})

#: Launcher-level failures whose category names a cause: a death by SIGKILL or SIGTERM, or the
#: child's own exception copied into torchrun's box from its error file (the only trace of it
#: when the rank's lines could not be read, e.g. under a custom --log-line-prefix-template).
INFORMATIVE_SUMMARY = frozenset({"host_oom", "preempted", "cuda_oom", "gpu_hardware", "cuda_error",
                                 "checkpoint_error", "storage_io", "dataloader_error", "nan_loss",
                                 "python_exception"})  # fmt: skip

#: [h32b] Launcher summaries that only say the teardown began (a line printed before the launcher's own report of why:
#: DeepSpeed's "Killing subprocess N" before its "exits with return code = N"): the root of an attempt only where no other
#: failure was read; another summary, later as it comes, says more (which rank, which exit code, which error).
TEARDOWN_ONLY: frozenset[str] = frozenset({"deepspeed_launcher_killing"})

#: Loss-scale overflows in one attempt beyond which the run is called diverged (fp16
#: dynamic loss scaling skips an occasional step by design).
ENDLESS_OVERFLOW = 20

#: A collapsed loss scale: dynamic loss scaling starts at 2**16 in apex, DeepSpeed and Megatron
#: (apex/amp/scaler.py, deepspeed/runtime/fp16/loss_scaler.py initial_scale_power=16) and at
#: 2**7 in fairseq (fairseq/optim/dynamic_loss_scaler.py init_scale); a scale that still
#: overflows 2**10 below where it started means gradients overflow fp16 barely amplified.
#: Per overflow rule (parsers/errors.py): the highest scale its `scale` group may show.
COLLAPSED_LOSS_SCALE: dict[str, float] = {
    "overflow_deepspeed": 2.0**6,  # the attempted scale
    "overflow_deepspeed_fused": 2.0**6,  # the attempted scale
    "overflow_apex": 2.0**6,  # the new scale
    "overflow_fairseq": 2.0**-3,  # the new scale
}
#: Overflows at a collapsed scale that make a divergence (one can be a spike).
COLLAPSED_OVERFLOWS = 3

#: Step lines with a NaN/Inf loss that make a divergence by themselves (one can be a skipped
#: fp16 step; with a stall or a failed end, one is enough).
NONFINITE_STEPS = 3
#: The error rule of a loss printed as NaN/Inf by a plain loop (parsers/errors.py): its lines
#: count like non-finite step records (NONFINITE_STEPS).
PRINTED_NONFINITE_LOSS = "loss_printed_nonfinite"
#: The last loss reports of a stream, all NaN/Inf with no finite loss after them, that make a
#: divergence (diagnose/nonfinite_tail.py): a loss that went non-finite and stayed so to the end.
NONFINITE_TAIL = 2

#: Trace forms (parsers/records.py TraceRecord.form) that show an exception was raised even when the copy
#: stops before its exception line: CPython prints "Traceback (most recent call last):" and the
#: `File "...", line N, in f` frames only while it reports an exception (Lib/traceback.py
#: TracebackException.format / StackSummary.format; Python/pythonrun.c PyErr_Display), the exception
#: line comes last. A log whose last record is such a trace with no exception line was cut inside a
#: failure: it failed and the cause is not in the text (SPEC rev. 2 `unknown`; endings.cut_traceback_at_the_end).
CUT_TRACEBACK_FORMS = frozenset({"traceback"})

#: Lines of tracebacks other renderers print (rule names, parsers/errors.py): IPython's ultratb header and frame locations,
#: rich's traceback box (its title, a frame's current-line marker). Like CPython's header and frames, they are printed only
#: while an exception is reported, its own line last (IPython/core/ultratb.py VerboseTB, rich/traceback.py Traceback): a pod
#: whose last record is one of them was cut inside a failure (endings.cut_traceback_at_the_end: unknown).
RENDERED_TRACEBACK_LINES = frozenset({"ultratb_header", "ultratb_location", "rich_traceback",
                                      "traceback_header_cut"})  # [h33a] CPython's header cut inside itself (dev 1477)

#: [h22c] Where a traceback cut before its exception line was raised, by the frames it shows (innermost first, each
#: `path:function` as parsers/errors.frame_key writes a frame; an IPython location line's path and function alike): the
#: operation that failed, when it is one the taxonomy names. The exception's class and message are not in the text, but
#: CPython prints the frames from where the exception propagated, so the innermost frame of one of these operations is
#: inside the operation that raised (endings.raised_inside). (name, category, what failed, frame pattern, source).
#: Saves only: a load cut the same way is as often the start-up read of a file that is missing, a download or a version
#: mismatch, which only the exception line tells apart (the load side was tried: it turned one held-out answer wrong, its
#: text not opened; fixtures/eval README "Batch h22c"). Samples: dev 806
#: (huggingface/diffusers#7229, cut in safetensors' save_file under accelerate's save_state), dev 794
#: (dlwpt-code#61, cut in DataLoader._next_data), dev 795 (mmsegmentation#3615, IPython's frame of __next__).
CUT_TRACEBACK_FRAMES: tuple[tuple[str, str, str, re.Pattern[str], str], ...] = (
    ("checkpoint_save", "checkpoint_error", "a checkpoint's save",
     re.compile(r"torch/serialization\.py:(?:save|_save|_legacy_save|_open_zipfile_writer)$|"
                r"safetensors/torch\.py:(?:save_file|save_model)$|accelerate/accelerator\.py:(?:\w+\.)?save_state$|"
                r"accelerate/checkpointing\.py:save|torch/distributed/checkpoint/.*save"),
     "pytorch/pytorch torch/serialization.py (save and its zip-file writer); huggingface/safetensors bindings/python/py_src/"
     "safetensors/torch.py (save_file, save_model); huggingface/accelerate src/accelerate/accelerator.py (Accelerator.save_state), "
     "checkpointing.py (save_accelerator_state); torch/distributed/checkpoint (save, save_state_dict)"),
    # --- h24c (issue 16, session 24; fixtures/eval README "Session 24, helper h24c"): the frameworks' own saves, whose frames
    # a cut traceback shows above (or instead of) torch.save's: the same reading, a save that raised is the checkpoint
    # failing. Saves only, as above (a load cut before its line looks alike for a missing file, a download, a mismatch).
    ("framework_checkpoint_save", "checkpoint_error", "a checkpoint's save",
     re.compile(r"deepspeed/runtime/engine\.py:(?:\w+\.)?(?:save_checkpoint|_save_checkpoint|_save_zero_checkpoint|_save_moe_checkpoint|"
                r"save_16bit_model|save_fp16_model)$|"
                r"(?:lightning/pytorch|pytorch_lightning)/callbacks/model_checkpoint\.py:(?:\w+\.)?(?:on_train_batch_end|"
                r"on_train_epoch_end|on_validation_end|on_train_end|_save_\w+)$|"
                r"(?:lightning/pytorch|pytorch_lightning)/trainer/trainer\.py:(?:\w+\.)?save_checkpoint$|"
                r"transformers/trainer\.py:(?:\w+\.)?(?:_save_checkpoint|save_model)$|"
                r"megatron/(?:training/)?checkpointing\.py:(?:\w+\.)?save_checkpoint$"),
     "deepspeedai/DeepSpeed deepspeed/runtime/engine.py (DeepSpeedEngine.save_checkpoint -> _save_checkpoint, "
     "_save_zero_checkpoint, _save_moe_checkpoint; save_16bit_model, its old name save_fp16_model); Lightning-AI/pytorch-lightning "
     "src/lightning/pytorch/callbacks/model_checkpoint.py (ModelCheckpoint: its hooks on_train_batch_end, on_train_epoch_end, "
     "on_validation_end, on_train_end exist to save: _save_topk_checkpoint, _save_last_checkpoint, _save_checkpoint -> "
     "trainer.save_checkpoint; not __init__, whose MisconfigurationException is the configuration's), "
     "trainer/trainer.py (Trainer.save_checkpoint); huggingface/transformers src/transformers/trainer.py (Trainer._save_checkpoint, "
     "save_model); NVIDIA/Megatron-LM megatron/training/checkpointing.py (save_checkpoint; megatron/checkpointing.py before 2024)"),
    ("dataloader_iteration", "dataloader_error", "the DataLoader's iteration",
     re.compile(r"torch/utils/data/dataloader\.py:(?:\w+\.)?(?:__next__|_next_data|_process_data|_get_data|_try_get_data|_process_next_batch)$|"
                r"torch/utils/data/_utils/(?:fetch|worker|signal_handling)\.py:"),  # [h33g] not _utils.py:reraise (DataParallel's too)
     "pytorch/pytorch torch/utils/data/dataloader.py (_BaseDataLoaderIter.__next__ -> _next_data -> _process_data -> "
     "ExceptionWrapper.reraise for a worker's exception; _get_data/_try_get_data for a worker that died), "
     "torch/utils/data/_utils/fetch.py (the dataset's __getitem__ / __iter__ with num_workers=0), worker.py, signal_handling.py"),
    # [h24d] An object store's transfer: s3transfer is boto3's S3 transfer manager and nothing else (its upload.py and
    # download.py read and write the object's parts, tasks.py and futures.py run and wait on them), boto3/s3 the
    # client methods that hand a file to it (inject.py upload_file / upload_fileobj / download_file / download_fileobj,
    # transfer.py S3Transfer). A traceback cut inside them was raised by the transfer: the object store's upload or
    # download failed (SPEC rev. 2 storage_io: object store errors, a remote fetch that fails). Sample: dev 832
    # (mosaicml/composer#1438, a checkpoint's upload to an S3-compatible store, cut in s3transfer/upload.py).
    ("object_store_transfer", "storage_io", "an object store's transfer",
     re.compile(r"s3transfer/(?:upload|download|tasks|futures|manager|utils)\.py:|"
                r"boto3/s3/(?:inject\.py:(?:\w+\.)?(?:upload|download)_file(?:obj)?|transfer\.py:(?:\w+\.)?(?:upload|download)_file)$"),
     "boto/s3transfer s3transfer/upload.py, download.py, tasks.py, futures.py, manager.py, utils.py (the transfer manager's "
     "parts and futures); boto/boto3 boto3/s3/inject.py (upload_file, upload_fileobj, download_file, download_fileobj), "
     "boto3/s3/transfer.py (S3Transfer.upload_file, download_file)"),
)

#: Line rules (parsers/errors.py) that read an exception line behind a renderer's marker (pytest's "E   " and its short
#: summary's "FAILED <nodeid> - ", a notebook's JSON error output): their `type` group is the exception's class (summary.exception_type_of).
MARKED_EXCEPTION_LINES = frozenset({"pytest_exception", "pytest_failed_summary", "jupyter_error_output"})

#: Launcher teardown lines (rule names, parsers/errors.py) that are a failed attempt's last word when nothing follows
#: them: torch elastic's agent signals only the workers still alive (torch/distributed/elastic/multiprocessing/api.py
#: SubprocessContext._close: `if handler.proc.poll() is None: logger.warning("Sending process %s closing signal %s", ...)`),
#: which it does after a worker failed, on a signal of its own, or to restart the group after a membership change (new
#: workers then start and log). A log whose last records are these, no output after them, ended in a failure it does not
#: explain (SPEC rev. 2 `unknown`; endings.teardown_at_the_end). So are a launcher's word that its workers failed before it
#: starts them again, when no restarted worker logs after it: torch elastic's agent on a failed or unhealthy group ("Worker
#: group FAILED. 3/3 attempts left; will restart worker group", torch/distributed/elastic/agent/server/api.py _invoke_run)
#: and Ray's raylet on a worker process that never registered ("Some workers of the worker process(N) have not registered
#: within the timeout. The process is dead, probably it crashed during start.", src/ray/raylet/worker_pool.cc). Batch
#: h16p, dev 440 and 450.
#: [h29b] ElasticDL's master on a worker pod whose phase turned Failed (it relaunches the worker while relaunches are left):
#: rule elasticdl_pod_failed, dev 1077.
TEARDOWN_AT_THE_END = frozenset({"agent_closing", "elastic_group_restart", "ray_worker_start_timeout", "elasticdl_pod_failed"})

#: Warning rules (role `warning`, parsers/errors.py) besides NCCL's (category nccl_error) whose lines, when a log ends in
#: them with no step, trace or other line a parser read after them, are its last word: the failure they warn of, at the
#: low confidence of warnings_at_end (endings.warnings_at_the_end). TensorFlow's device allocation retries
#: (tf_device_alloc_retry: the BFC allocator asks again at 0.9 of the size and a run often goes on): a log that stops
#: inside them ran out of GPU memory (batch h16z, dev 510); one where the run goes on shows it by a line after them
#: (batch h16t, dev 523: the allocator's "The caller indicates that this is not a failure", rule tf_bfc_not_a_failure).
LAST_WORD_WARNINGS = frozenset({"tf_device_alloc_retry"})
#: [h30d] A gang scheduler's or its operator's word that the gang cannot be placed yet, repeated while it waits (the
#: training-operator's "PodGroup <ns>/<job> unschedulable", scheduler-plugins Coscheduling's PreFilter rejections): the
#: gang never became ready (pods_ready_timeout) where a log ends in them; a gang admitted later goes on to pods and steps.
#: Dev 1197, 1199.
LAST_WORD_WARNINGS = LAST_WORD_WARNINGS | frozenset({"training_operator_podgroup_unschedulable", "coscheduling_prefilter_rejected"})

#: How sure a diagnosis is, by what it rests on.
CONFIDENCE = {
    "rank_report": 0.9,  # a rank printed its own failure
    "corroborated": 0.95,  # ... and its launcher's box agrees
    "launcher": 0.75,  # only the launcher saw it (SIGKILL leaves no trace in the rank)
    "effect": 0.6,  # only effects were seen
    "end_line": 0.85,  # the framework said training ended
    "running": 0.5,  # no failure and no end: still going, or the log was cut
    "silent_suspect": 0.6,  # the ranks that never timed out
    "event": 0.8,  # the scheduler said so
    "clean_end": 0.9,
    "no_error": 0.5,
    "stall": 0.6,
    "short_of_end": 0.4,  # the log ends before the run's own totals, with no error
    "warnings_at_end": 0.45,  # the log ends in NCCL warnings, no error raised
    "cut_traceback": 0.35,  # the log ends inside a traceback cut before its exception line
    "teardown_at_end": 0.35,  # the log ends with the launcher stopping its workers, nothing after
    "unknown": 0.2,
}

#: Envelopes whose end is not the job's: a plain text file (parsers/envelopes.py "text") is as often a
#: pasted excerpt as a whole log, so a run's totals not reached in it say the copy stopped, not that
#: progress did (endings._short_of_the_end reads only container logs: cri, docker, fluentbit).
EXCERPT_SOURCES = frozenset({"text"})

#: What the summary says a root category means for the rank it happened on.
WHAT_HAPPENED: dict[str, str] = {
    "cuda_oom": "ran out of GPU memory",
    "host_oom": "was killed for host memory (SIGKILL / OOM killer)",
    "nccl_timeout": "hit a collective timeout",
    "nccl_error": "failed in communication",
    "cuda_error": "hit a CUDA error",
    "gpu_hardware": "hit a GPU hardware fault",
    "dataloader_error": "lost a DataLoader worker",
    "storage_io": "failed on storage I/O",
    "checkpoint_error": "failed to save or load a checkpoint",
    "nan_loss": "diverged (loss NaN/Inf)",
    "python_exception": "raised",
    "preempted": "was stopped from outside (preemption, SIGTERM/SIGHUP or Ctrl-C)",
    "time_limit": "was stopped at the scheduler's time limit",
    "rendezvous_error": "failed the rendezvous",
    "hang": "stopped making progress (stuck in a collective or a CUDA call)",
    "pods_ready_timeout": "never became ready (unschedulable, image pull or crash at start)",
    "node_failure": "lost its node",
    "unknown": "crashed",
}

#: What the scheduler's events say about an attempt: (pattern on reason / end_reason, category, outcome).
EVENT_VERDICTS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"PodsReadyTimeout", re.I), "pods_ready_timeout", "evicted"),
    (re.compile(r"NodeFailure|NodeNotReady|NodeLost", re.I), "node_failure", "evicted"),
    (re.compile(r"Preempt|InClusterQueue|InCohort", re.I), "preempted", "evicted"),
    (re.compile(r"OOMKill", re.I), "host_oom", "failed"),
)

# --- h26b (issue 16, session 26; fixtures/eval README "Batch h26b"): the abort that ProcessGroupNCCL's watchdog itself causes.
#: [h26b] A crash that says only that the process aborted, faulthandler's dump for SIGABRT ("Fatal Python error: Aborted" and
#: the threads' stacks: python/cpython Modules/faulthandler.c, faulthandler_handlers {SIGABRT, 0, "Aborted", 0}), is the
#: watchdog's own teardown when the same process reported its collective timeout (EXPLAINING_TIMEOUT) before it: on a timed-out
#: work ProcessGroupNCCL logs "Some NCCL operations have failed or timed out. ..." and "To avoid data inconsistency, we are
#: taking the entire process down." and rethrows the timeout on the watchdog thread (pytorch/pytorch torch/csrc/distributed/
#: c10d/ProcessGroupNCCL.cpp WorkNCCL::handleException: LOG(ERROR) << tearDownMsg; std::rethrow_exception(exception_)), which
#: ends in std::terminate ("terminate called after throwing an instance of 'std::runtime_error'", "  what():  " + the timeout,
#: gcc-mirror/gcc libstdc++-v3/libsupc++/vterminate.cc) and abort(). Only an abort: a segfault or another fatal signal after
#: a timeout is not the teardown's. The timeout must come first (by time, or by order in the same stream without times) and
#: from the same pod and rank where both name one. Sample: dev 910 (discuss.pytorch.org "Can't understand NCCL error", FSDP,
#: torch 2.0.1: both ranks' watchdog lines, the teardown pair, what(), then "Fatal Python error: Aborted" with no rank).
WATCHDOG_TEARDOWN_ABORT = re.compile(r"^Fatal Python error: Aborted\b")

# --- h27f (issue 16, session 27; fixtures/eval README "Batch h27f"): a traceback CPython reported and swallowed.
#: [h27f] Line rules (parsers/errors.py) that announce an exception the interpreter could not raise and went on from
#: (sys.unraisablehook's default "Exception ignored in: <object>", and the "Exception ignored <where>" of
#: _PyErr_WriteUnraisableMsg; python/cpython Doc/library/sys.rst unraisablehook, Python/errors.c): the traceback printed on
#: the next line of the same stream is part of that report, no failure of the run (root_cause.without_handled). Sample:
#: dev 940 (huggingface/open-r1#658, a finalizer's TimeoutError above the GRPO run's NCCL watchdog timeout).
UNRAISABLE_REPORTS = frozenset({"unraisable_exception"})

# --- h28a (issue 16, session 28; fixtures/eval README "Batch h28a"): a swallowed report of a death that happened anyway.
#: [h28a] Trace rules (parsers/errors.py TRACE_RULES) whose exception, inside CPython's "Exception ignored ..." report
#: (UNRAISABLE_REPORTS), still stands for a failure of the run: the DataLoader's SIGCHLD handler (torch/utils/data/_utils/
#: signal_handling.py handler -> _error_if_any_worker_fails, torch/csrc/DataLoader.cpp errorIfAnyWorkerFails) raises in
#: whatever the main thread was running when a worker process died, and where that was a finalizer or an at-fork callback
#: (logging's os.register_at_fork(after_in_parent=_releaseLock); CPython Modules/posixmodule.c run_at_forkers ->
#: PyErr_WriteUnraisable) the interpreter reports it and goes on. The worker is dead all the same: the iterator's next
#: fetch finds it (torch/utils/data/dataloader.py _MultiProcessingDataLoaderIter._try_get_data: "DataLoader worker (pid(s)
#: {pids_str}) exited unexpectedly") and the epoch fails. The rules: the handler's messages as the table reads them first
#: (dataloader: "DataLoader worker (pid ...", whose other messages are the loader's own failures too), by its frame where the
#: message is cut (dataloader_worker_check), a worker killed for memory (dataloader_killed). A swallowed exception of any
#: other rule stays no failure (dev 940, math_verify's own timeout). Sample: dev 960 (open-mmlab/OpenPCDet#969, "Exception ignored in: <function _releaseLock
#: ...>" then the handler's "RuntimeError: DataLoader worker (pid N) exited unexpectedly with exit code 1. ...").
UNRAISABLE_STILL_FAILS = frozenset({"dataloader", "dataloader_worker_check", "dataloader_killed"})
# --- h28d (issue 16, session 28; fixtures/eval README "Batch h28d"): older versions' wordings.
#: [h28d] NCCL WARN messages (rule nccl_warn) of a step NCCL falls back from at init and goes on: not the last word of a log
#: that ends in NCCL warnings (endings.warnings_at_the_end reads past them; the other warnings after or before them count
#: as before). NCCL 2.x up to 2.12 printed `WARN("Failed to open libibverbs.so[.1]")` when it could not dlopen the IB verbs
#: library (NVIDIA/nccl src/misc/ibvwrap.cc wrap_ibv_symbols, v2.4-v2.12); the IB transport's init then fails and NCCL uses
#: its socket transport (src/init.cc initNet: "NET/Socket : Using ...", "Using network Socket"); later versions print the
#: same words at INFO (src/misc/ibvsymbols.cc buildIbvSymbols: INFO(NCCL_INIT, "Failed to open libibverbs.so[.1]")).
#: Samples: dev 1009 (pytorch/pytorch#47885, NCCL 2.7.8: both ranks' fallback warning, then the init's real failure
#: "Duplicate GPU detected", which the answer now names).
FALLBACK_NCCL_WARNINGS = re.compile(r"NCCL WARN Failed to open libibverbs\.so\[\.1\]\s*$")

#: [h28d] Line rules (parsers/errors.py) of a framework's notice that it caught a CUDA OOM in a batch and goes on without
#: the batch (fairseq's "| WARNING: ran out of memory, skipping batch", 2018, and "attempting to recover from OOM in
#: forward/backward pass", 0.8+; facebookresearch/fairseq fairseq/trainer.py train_step). An OOM of a pod that such a
#: notice follows, then a step record of the pod with no failure of another category between them, is one the run went on
#: from (root_cause.without_handled drops it); where something else fails before the next step (dev 1004: the AttributeError
#: of the skipped batch's None gradients) or no step follows, the OOM stays a failure.
OOM_SKIP_NOTICES = frozenset({"oom_batch_skipped", "oom_recovery_attempt"})
# --- h28f (issue 16, session 28; fixtures/eval README "Batch h28f"): torch_npu's exception for a failed CANN call, and CANN's report.
#: [h28f] torch_npu raises a failed ACL / HCCL call as a RuntimeError whose first line names only the call and its return code
#: ("<func>:<file>:<line> OPS function error: HcclAllreduce, error code is 6", "... HCCL function error: HcclBroadcast, error code
#: is 7"), and whose text goes on, after a newline, with CANN's own error report of that call (c10_npu_get_error_message(): the
#: "[ERROR] <time> (PID:N, Device:D, RankID:R) ERR01100 OPS call acl api failed." line, then the fault code and its message,
#: "EI0006: ... Getting socket times out. ..."); "The Inner error is reported as above" is its RuntimeError for an asynchronous
#: failure whose report was printed before it (Ascend/pytorch torch_npu/csrc/core/npu/NPUException.h OPS_CHECK_ERROR: TORCH_CHECK(
#: false, __func__, ":", __FILE__, ":", __LINE__, " OPS function error: ", ..., ", error code is ", Error, ..., "\n",
#: c10_npu::c10_npu_get_error_message()); torch_npu/csrc/distributed/HCCLUtils.hpp HCCL_CHECK_ERROR (" HCCL function error: "
#: ... + ".\n" + c10_npu::c10_npu_get_error_message()); torch_npu/csrc/core/npu/NPUQueue.cpp ("The Inner error is reported as
#: above. ..."); the mirror read at 9e73e708a). The traceback's exception line is only the first line, so the report's lines are
#: read by the line rules on their own: where one of the same pod and rank, close in time, says what failed (CANN_REPORTS), it is
#: the root (root_cause._npu_call_of_its_own_report). Samples: dev 1020 (vllm-project/vllm-ascend#486, HcclAllreduce error code 6
#: and EI0006 under it), dev 1029 (hiyouga/LlamaFactory#3670, the aicore exception before "The Inner error is reported as above").
NPU_CALL_FAILED = re.compile(r"\b(?:OPS|HCCL) function error: \w+, error code is \d+|\bThe Inner error is reported as above")
#: [h28f] The line rules (parsers/errors.py, h28f block) that read CANN's report of what failed on the NPU.
CANN_REPORTS = frozenset({"hccl_error_code", "cann_task_exception", "npu_oom"})
# --- h28g (issue 16, session 28; fixtures/eval README "Batch h28g"): ranks that raised the same exception, untimed.
#: [h28g] The exit codes torchrun's box gives a worker the agent itself stopped: on the first failed worker the agent closes the
#: others ("Sending process N closing signal SIGTERM", then SIGKILL past the timeout: pytorch/pytorch torch/distributed/elastic/
#: multiprocessing/api.py PContext.close / SubprocessContext._close), and each is listed with `exitcode : -15` (or -9) and
#: `traceback : Signal 15 (SIGTERM) received by PID N`. The box's root cause is the failure recorded first (torch/distributed/
#: elastic/multiprocessing/errors/__init__.py ChildFailedError.get_first_failure: min of ProcessFailure.timestamp), so a worker
#: listed with one of these codes was still running when another's failed exit was seen. Where such a worker had printed the
#: same exception (word for word) as the box's root-cause rank, with no time on either line, the order the two tracebacks
#: appear in is only the order the streams were merged: the rank that exited on it is the first failure
#: (root_cause.first_exit_of_same_error). Sample: dev 980 (a Kaggle torchrun log: ranks 0 and 1 both
#: `RuntimeError: Found dtype Half but expected Float`, rank 0 printed first, the box: rank 0 exitcode -15, rank 1 the root cause).
AGENT_CLOSING_EXITCODES = frozenset({-15, -9})
# --- h28c (issue 16, session 28; fixtures/formats/failure_lines.json batch h28c): conditions the layers under the job report
# while it may still go on, failures only where the log ends in them (parsers/errors.py rules of role `warning`): the kernel's
# SunRPC client retrying a server that stopped answering (it prints "nfs: server %s OK" and the job goes on when it comes back),
# a pod's volume the kubelet could not mount yet and a Secret it could not find yet (it retries; the pod starts once they
# are there), the device plugin marking a GPU unhealthy (the job on the other GPUs goes on). (The hung-task watchdog's and
# the liveness probe's reports are `hang` warnings: endings.stall_reports reads them, a stall only with no step after it.)
LAST_WORD_WARNINGS = LAST_WORD_WARNINGS | {"sunrpc_server_not_responding", "k8s_volume_mount_failed", "k8s_secret_not_found",
                                           "device_plugin_xid_unhealthy"}
# --- h29c (issue 16, session 29; fixtures/formats/failure_lines.json batch h29c): more conditions of the layers under the job
# that it may outlive, failures only where the log ends in them: the Lustre client's lost connection (it prints "Connection
# restored to ..." and the job goes on), the kubelet's other volume waits and the attach-detach controller's attach failures
# (it retries), a ConfigMap or a name containerd still reserves (the kubelet retries; the pod starts once they are there),
# the device plugin's "device marked unhealthy" (the job on the other GPUs goes on).
LAST_WORD_WARNINGS = LAST_WORD_WARNINGS | {"lustre_connection_lost", "k8s_volume_attach_failed", "k8s_configmap_not_found",
                                           "containerd_name_reserved", "device_plugin_marked_unhealthy"}
# --- h29g (issue 16, session 29; fixtures/eval README "Batch h29g"): the TTS trainers' clean-up line (parsers/errors.py
# tts_run_folder_cleanup), printed only from their exception / KeyboardInterrupt handlers: a log that ends in it stopped
# before its end for a reason it does not show (unknown); one where the handler's traceback follows is read by that.
LAST_WORD_WARNINGS = LAST_WORD_WARNINGS | {"tts_run_folder_cleanup"}
# --- h30c (issue 16, session 30; fixtures/formats/failure_lines.json batch h30c): the same conditions in a pod's status as
# `kubectl get pod -o yaml|json` prints it (a ConfigMap, a Secret or a key not found yet, a name containerd still reserves:
# the kubelet retries), and TensorPipe's word that a peer's connection ended (the RPC agent logs it and fails that pipe's
# RPCs; at a peer's clean exit the job goes on): failures only where the log ends in them.
LAST_WORD_WARNINGS = LAST_WORD_WARNINGS | {"k8s_container_waiting_message", "tensorpipe_connection_lost"}
# --- h31f (issue 16, session 31; fixtures/eval README "The one-sentence summary, audited (h31f)"): what the proving line says
# happened, where a category's one wording (WHAT_HAPPENED) would say more than it does. Each entry: (category, pattern on the
# root error's exception line / message / line, pattern on its traceback's frames ("file:function") or None, the words, the
# source that prints the line). The first entry whose patterns match words the summary; none: WHAT_HAPPENED's.
#: host_oom: an allocation that failed is no kill (nothing was killed: the process raised or aborted itself); a kill's
#: wording (WHAT_HAPPENED) stays for the kernel's, the kubelet's, Slurm's, Ray's kills and a launcher's exit code -9 / 137.
#: dataloader_error: "lost a DataLoader worker" only where a worker died; a worker's exception, and one raised while the
#: DataLoader fetched in the training process itself (num_workers=0, no worker), are said as such; any other input pipeline
#: failure (TF's tf.data, datasets, a sampler) is a failure to load data.
_ALLOCATION_FAILED = (
    r"^(?:[\w.]*\.)?(?:_Array)?MemoryError\b|DefaultCPUAllocator: (?:can't allocate memory|not enough memory)|std::bad_alloc|"
    r"cannot allocate memory for thread-local data|Failed to malloc \d+ bytes|The paging file is too small|"
    r"OOM when allocating tensor|\[Errno 12\] Cannot allocate memory")
CAUSE_WORDINGS: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None, str, str], ...] = (
    ("host_oom", re.compile(_ALLOCATION_FAILED, re.M), None, "ran out of host memory (an allocation failed)",
     "python/cpython Objects/exceptions.c (MemoryError); numpy/numpy numpy/_core/_exceptions.py _ArrayMemoryError; pytorch/"
     "pytorch c10/core/impl/alloc_cpu.cpp alloc_cpu (\"DefaultCPUAllocator: can't allocate memory: you tried to allocate \", "
     "nbytes, \" bytes. Error code \"...); gcc-mirror/gcc libstdc++-v3/libsupc++/new_op.cc (std::bad_alloc); bminor/glibc "
     "elf/dl-tls.c oom(); NVIDIA/nccl src/include/alloc.h (\"Failed to malloc %ld bytes\"); Windows ERROR_COMMITMENT_LIMIT "
     "(1455); tensorflow/tensorflow op_kernel.cc allocate_tensor (\"OOM when allocating tensor\" on the CPU); python/cpython "
     "Lib/multiprocessing/popen_fork.py (os.fork: ENOMEM)"),
    ("dataloader_error", re.compile(r"DataLoader worker \(pids?\(?s?\)? [^\n]*(?:killed by signal|exited unexpectedly)|"
                                    r"DataLoader process \(pid|DataLoader worker process \d+ (?:exited|is killed)"), None,
     "lost a DataLoader worker",
     "pytorch/pytorch torch/csrc/DataLoader.cpp (\"DataLoader worker (pid %d) is killed by signal: %s.\"), torch/utils/data/"
     "dataloader.py _try_get_data (\"DataLoader worker (pid(s) {pids_str}) exited unexpectedly\"); PaddlePaddle/Paddle "
     "paddle/fluid/imperative/data_loader.cc (\"DataLoader process (pid %ld) exited ...\")"),
    ("dataloader_error", re.compile(r"in DataLoader worker process \d+"), None, "failed in a DataLoader worker (it raised)",
     "pytorch/pytorch torch/_utils.py ExceptionWrapper (\"Caught {exc_type.__name__} in DataLoader worker process N.\")"),
    ("dataloader_error", re.compile(r""), re.compile(r"torch[/\\]utils[/\\]data[/\\]_utils[/\\]fetch\.py:fetch$"),
     "failed while the DataLoader fetched a batch in the training process (no worker)",
     "pytorch/pytorch torch/utils/data/_utils/fetch.py _MapDatasetFetcher.fetch / _IterableDatasetFetcher.fetch, called by "
     "torch/utils/data/dataloader.py _SingleProcessDataLoaderIter._next_data"),
    ("dataloader_error", re.compile(r""), None, "failed loading data (the DataLoader or input pipeline)", "SPEC rev. 2 dataloader_error"),
    # [h32b] the teardown's first words alone (rule deepspeed_launcher_killing): no crash of the worker is in the log
    ("unknown", re.compile(r"sigkill_handler\] Killing subprocess \d+"), None,
     "was killed by its launcher's teardown (a worker exited non-zero or the launcher got a signal: the log does not say which)",
     "deepspeedai/DeepSpeed deepspeed/launcher/launch.py sigkill_handler (logger.info(f\"Killing subprocess {process.pid}\"), "
     "called on a worker's non-zero exit and on SIGINT / SIGTERM)"),
)
#: The size of the allocation that failed, where the line says it (the sources above): bytes, or numpy's "Unable to allocate
#: 1.2 GiB for an array".
ALLOCATION_SIZE = re.compile(r"you tried to allocate (\d+) bytes|Failed to malloc (\d+) bytes|Unable to allocate ([\d.]+ [KMGTPE]?i?B) ")
# --- h31d (issue 16, session 31; fixtures/eval README "Real runs under older releases (h31d)"): torchrun's box, read whole.
#: [h31d] The exit codes with which torchrun's box lists a worker that something OUTSIDE the agent killed, when that entry is
#: not the box's root cause: the box's "Root Cause (first observed failure)" is the failure with the smallest timestamp
#: (torch/distributed/elastic/multiprocessing/errors/__init__.py ChildFailedError.get_first_failure), and a worker killed by
#: a signal leaves no error file, so its ProcessFailure takes the time the agent noticed the death (`self.timestamp =
#: int(time.time())`), up to one monitor interval late (torchrun's --monitor-interval: 5 s by default in torch 2.1, 0.1 s
#: in 2.4, torch/distributed/run.py), while a peer that lost its connection to it wrote its error file at once. So under
#: torch 2.1 the box of fixtures/runs/sigkill_torch2_1 names the peer ("Connection reset by peer") as root cause and the
#: SIGKILLed rank 1 only as "Failures: [1]: ... exitcode : -9 ... Signal 9 (SIGKILL) received by PID N"; the agent's own
#: "failed (exitcode: N) local_rank: M" line names the first failure it saw, the peer. Such an entry is a launcher's word
#: that the worker died of that signal (tier 1, as that line is), unless the agent itself signalled that pid ("Sending
#: process N closing signal SIGTERM", then SIGKILL to one still alive after its timeout: multiprocessing/api.py
#: SubprocessContext._close; rule agent_closing, whose pid this reads), and only where the box's root-cause entry is itself
#: one of the `EFFECTS` (the bias above puts a peer's report of the death first; a root cause that is a failure of its own
#: stands). SIGTERM (-15) is left out: the agent's own close lists its survivors so (torch 2.15's boxes do).
BOX_OUTSIDE_KILL_EXITCODES = frozenset({-9})

# --- h32d (issue 16, session 32; fixtures/eval README "Batch h32d"): the JobSet controller's refusal from the API server of a
# child Job of the gang (parsers/errors.py jobset_job_creation_failed): it retries every reconcile, and the Job's pods exist
# once a create succeeds: the gang never became ready (pods_ready_timeout) where a log ends in it. Dev 1405.
LAST_WORD_WARNINGS = LAST_WORD_WARNINGS | {"jobset_job_creation_failed"}

#: [h32c] Exception messages that say what failed is printed on the lines below them: PaddlePaddle's imperative tracer
#: wrapping an operator's C++ exception other than its own enforce error (a BadAlloc from the allocator, a std::exception)
#: in errors::Fatal("Operator %s raises an %s exception.\nThe exception content is\n:%s.", type, demangle(typeid(ex).name()),
#: ex.what()) (PaddlePaddle/Paddle paddle/fluid/imperative/tracer.cc TraceOp, Paddle 2.0-2.4; "(Fatal) " the short form's
#: type tag): the exception's first line names the wrapper, its words (an allocator's "Out of memory error on GPU N") come
#: after "The exception content is". Read as a bare exception line is (root_cause._message_on_the_lines_below).
CAUSE_BELOW_MESSAGES = re.compile(r"^\(Fatal\) Operator \S+ raises an (?:struct |class )?[\w:]+ exception\.\s*$")
# --- h34a (issue 16, session 34; fixtures/eval README "Batch h34a"): TensorFlow's BFC allocator dump as a last word.
#: [h34a] The BFC allocator's memory dump (rules tf_bfc_dump_in_use_total, tf_bfc_dump_stats: "Sum Total of in-use chunks:
#: <size>", the Stats block's "MaxAllocSize:"), which BFCAllocator::DumpMemoryLog writes only after an allocation failed
#: and before the op's OOM status: a log that ends in it ran out of GPU memory (dev 1596, 1598, copies cut inside the dump);
#: where the status follows (dev 509: "OOM when allocating tensor ..."), the status is the cause and the summary's proof.
#: The summary of such an ending says the GPU ran out of memory (endings.no_failure's warnings_at_the_end branch).
TF_BFC_DUMP = frozenset({"tf_bfc_dump_in_use_total", "tf_bfc_dump_stats"})
LAST_WORD_WARNINGS = LAST_WORD_WARNINGS | TF_BFC_DUMP

#: [h34d] Cross-rank consistency checks in which every rank compares what all ranks gathered with its own and names the FIRST
#: rank that differs from it, so the one rank that differs (the odd one out) is named by every other rank and itself names
#: another: ProcessGroupWrapper's fingerprint check under TORCH_DISTRIBUTED_DEBUG=DETAIL ("Detected mismatch between
#: collectives on ranks. Rank <own> is running collective: <fingerprint>, but Rank <other> is running collective: ...",
#: torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp CollectiveFingerPrint::verify) and DDP's construction check ("DDP
#: expects same model across all ranks, but Rank <own> has N params, while rank <other> has inconsistent M params.",
#: torch/csrc/distributed/c10d/reducer.cpp verify_params_across_processes); words read in the torch 2.1.2 and 2.4.1
#: binaries and in fixtures/runs coll_mismatch_detail_* / ddp_model_mismatch_* (h34d). Not the size / stride form
#: ("appears not to match sizes of the same param in process 0"): every rank compares with rank 0 there. Read by
#: root_cause._odd_rank_named_by_peers: the rank named by every other reporting rank (at least two) is the first failure.
PEER_NAMING_CHECKS = (
    re.compile(r"Detected mismatch between collectives on ranks\. Rank (?P<own>\d+) is running collective: .*?, but Rank "
               r"(?P<other>\d+) is running "),
    re.compile(r"DDP expects same model across all ranks, but Rank (?P<own>\d+) has \d+ params, while rank (?P<other>\d+) "
               r"has inconsistent \d+ params"),
)
#: [h34c] loky's TerminatedWorkerError (joblib's process executor, loky 3): its message ends at the sentence below, and
#: "\nThe exit codes of the workers are {SIGKILL(-9), ...}" follows after a blank line (joblib/loky loky/process_executor.py
#: wait_result_broken_or_wakeup), read by parsers/errors.py loky_worker_exit_codes: the codes say how the worker died.
CAUSE_BELOW_MESSAGES = re.compile(CAUSE_BELOW_MESSAGES.pattern + r"|^A worker process managed by the executor was unexpectedly "
                                  r"terminated\. This could be caused by a segmentation fault while calling the function or by an "
                                  r"excessive memory usage causing the Operating System to kill the worker\.\s*$")

# --- h34f (issue 16, session 34; fixtures/eval README "Batch h34f"): NCCL's notices of InfiniBand port events.
#: [h34f] NCCL's IB transport runs one thread per HCA that reads the verbs library's asynchronous events, WARNs each but
#: IBV_EVENT_COMM_EST as "NET/IB : Got async event : <ibv_event_type_str(event)>", acks it and goes on (NVIDIA/nccl
#: src/transport/net_ib.cc ncclIbAsyncThreadMain, 2.4-2.18, and the nccl-rdma-sharp-plugins copy src/p2p_plugin.c; nothing
#: is failed there). Of the verbs library's event strings (rdma-core libibverbs/enum_strs.c ibv_event_type_str) those of
#: the port and the subnet manager say the fabric was reconfigured under a port that is up: "port active", "LID change",
#: "P_Key change", "SM change", "client reregistration" (the SM asks every port to re-register, e.g. after an SM failover),
#: "GID table change". A log that ends in those notices has not ended in a communication failure: they are read past as
#: FALLBACK_NCCL_WARNINGS are (endings.warnings_at_the_end). "port error", "local catastrophic error", "CQ error", the work
#: queue errors and the rest stay the warnings they were. A notice cut by the copy is read as the one event its cut text
#: can only begin (a cut that could begin a failure event, "port " or "S", is not). Sample: dev 1641
#: (deepspeedai/DeepSpeedExamples#310: eight ranks' Init COMPLETE, then five processes' "client reregistration", cut).
IB_PORT_NOTICE_EVENTS = ("port active", "LID change", "P_Key change", "SM change", "client reregistration", "GID table change")
IB_OTHER_EVENTS = (
    "CQ error", "local work queue catastrophic error", "invalid request local work queue error",
    "local access violation work queue error", "communication established", "send queue drained", "path migrated",
    "path migration request error", "local catastrophic error", "port error", "SRQ catastrophic error", "SRQ limit reached",
    "last WQE reached", "WQ fatal", "WQ fatal error", "unknown",
)


def _unambiguous_prefixes(names: tuple[str, ...], others: tuple[str, ...]) -> list[str]:
    """[h34f] Each name and every prefix of it that begins none of `others` (longest first)."""
    return sorted({name[:k] for name in names for k in range(1, len(name) + 1)
                   if not any(other.startswith(name[:k]) for other in others)}, key=len, reverse=True)


IB_PORT_NOTICES = re.compile(r"NCCL WARN NET/IB : Got async event : (?:"
                             + "|".join(map(re.escape, _unambiguous_prefixes(IB_PORT_NOTICE_EVENTS, IB_OTHER_EVENTS)))
                             + r")\s*$")
FALLBACK_NCCL_WARNINGS = re.compile(f"(?:{FALLBACK_NCCL_WARNINGS.pattern})|(?:{IB_PORT_NOTICES.pattern})")
