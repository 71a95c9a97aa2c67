"""A loss that went NaN/Inf and stayed so to the end of the log: the last reports of a stream.

One non-finite loss followed by finite ones is a skipped step (fp16 dynamic loss scaling skips an
overflowing step by design), not a failure. The same value in the LAST reports of a stream, with no
finite loss after them, is a run that diverged and never came back: what a person reads in a log
whose last step lines say `loss nan`. `NONFINITE_TAIL` such reports (rules.py) make a divergence.

What counts as a non-finite report (one row per source, data):
- a step record whose loss is NaN/Inf (every step dialect; parsers/steps.py);
- a step record of the HF Trainer whose grad norm is NaN/Inf and whose loss is printed 0.0: the
  Trainer's `logging_nan_inf_filter` (default True; transformers trainer.py `_inner_training_loop`,
  `tr_loss + tr_loss / (1 + global_step - _globalstep_last_logged)` for a NaN/Inf step loss) leaves
  the logged loss at 0 when every step of the logging window was NaN/Inf. A grad norm NaN beside a
  finite, moving loss is not one (an fp16 GradScaler skip: torch/amp/grad_scaler.py);
- a plain loop's printed non-finite loss (error rule `loss_printed_nonfinite`, parsers/errors.py),
  counted when no step record of its stream shows a finite loss after the first of them. Finite
  prints no parser reads are not seen: the same limit as the count of such lines (rules.NONFINITE_STEPS).
"""

from __future__ import annotations

import math
from typing import Any

from gangscope.parsers.records import ErrorRecord, StepRecord
from gangscope.parsers.steps import NONFINITE_LOSS
from gangscope.pipeline.diagnose.rules import NONFINITE_TAIL, PRINTED_NONFINITE_LOSS
from gangscope.pipeline.diagnose.views import AttemptView

#: Step dialects whose loss is printed 0 for a logging window of NaN/Inf losses (see the module doc).
FILTERED_LOSS_DIALECTS = frozenset({"hf_trainer"})


def _stream(record: Any) -> tuple:
    return (record.pod, record.container, record.stream, record.rank, record.local_rank)


def _order(record: Any) -> tuple:
    return (record.time or "", record.seq or 0)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def nonfinite_report(step: StepRecord) -> bool:
    """Whether a step record reports a NaN/Inf loss (or the Trainer's filtered one; module doc)."""
    nonfinite = step.nonfinite or ()
    if "loss" in nonfinite or (step.loss is not None and not _finite(step.loss)):
        return True
    return "grad_norm" in nonfinite and step.loss == 0.0 and step.dialect in FILTERED_LOSS_DIALECTS


def nonfinite_tail(view: AttemptView) -> tuple[list[StepRecord], list[ErrorRecord]]:
    """(step records, printed-loss errors) of the first stream whose last loss reports are
    NONFINITE_TAIL or more non-finite ones, in order; ([], []) when no stream ends so."""
    by_stream: dict[tuple, list[StepRecord]] = {}
    for step in view.steps:
        if step.loss is not None or step.nonfinite:
            by_stream.setdefault(_stream(step), []).append(step)
    for key in sorted(by_stream, key=lambda k: tuple("" if v is None else str(v) for v in k)):
        steps = sorted(by_stream[key], key=_order)
        tail: list[StepRecord] = []
        for step in reversed(steps):
            if not nonfinite_report(step):
                break
            tail.append(step)
        if len(tail) >= NONFINITE_TAIL:
            return tail[::-1], []
    printed: dict[tuple, list[ErrorRecord]] = {}
    for error in view.errors:
        if error.pattern == PRINTED_NONFINITE_LOSS:
            printed.setdefault(_stream(error), []).append(error)
    for key in sorted(printed, key=lambda k: tuple("" if v is None else str(v) for v in k)):
        lines = sorted(printed[key], key=_order)
        if len(lines) < NONFINITE_TAIL:
            continue
        first = _order(lines[0])
        if any(_finite(s.loss) and _order(s) > first for s in by_stream.get(key, ())):
            continue
        return [], lines
    return [], []


def without_recovered_losses(failures: list, view: AttemptView) -> list:
    """Failures less the step parser's non-finite losses that a finite loss of the same stream
    follows: the run came back from it (an fp16 skipped step, a bad batch), so it is not what ended
    the attempt. A non-finite loss with no finite one after it stays a failure."""
    last_finite: dict[tuple, tuple] = {}
    for step in view.steps:
        if _finite(step.loss) and not nonfinite_report(step):
            key, order = _stream(step), _order(step)
            if key not in last_finite or order > last_finite[key]:
                last_finite[key] = order
    kept = []
    for failure in failures:
        error = failure.error
        if error.pattern == NONFINITE_LOSS and last_finite.get(_stream(error), ("", -1)) > _order(error):
            continue
        kept.append(failure)
    return kept
