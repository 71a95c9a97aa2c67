"""Step lines of one stream -> `StepRecord`s.

`StepParser` is a `StreamParser` (base.py): one instance per logical stream. The
formats live in dialects.py; this module keeps what only a stream knows:

- progress bars are one line rewritten with `\\r` (tqdm, Lightning) or `\\b...\\r`
  (Keras 3): every state is read, and a step drawn many times gives one record,
  its last state;
- lines about the same step (and rank) merge into one record, so a record is
  emitted when the stream moves on to another step, or at `close()`;
- "Epoch n/N" headers give the epoch of the Keras bar states that follow;
- Composer and Lightning's Rich bar print a header line and then indented
  lines of metrics: the parser is `open` until the block ends.

Step numbers: bars that count batches within an epoch (Lightning, Keras,
Composer) are turned into the global step, `epoch index * steps per epoch + n`,
with the printed position kept as metrics `epoch_step` / `epoch_steps`; every
other dialect keeps the step as printed (a plain loop's `epoch 2/3 step 5/20`
stays step 5 of epoch 2). The Trainer's logs dict prints no step at all: see
`fold_trainer_logs`, which numbers those records from the Trainer's bar.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import msgspec

from gangscope.parsers import dialects
from gangscope.parsers.divisors import divisors
from gangscope.parsers.dialects import DEFAULT_CACHE, Dialect, ShapeCache, build, is_step, strip_ansi
from gangscope.parsers.lines import Line, LineState
from gangscope.parsers.records import ErrorRecord, Record, StepRecord, record_from_state, record_state

# The rank a logger wrote into the message: DeepSpeed's log_dist "[Rank 0] ..."
# (deepspeed/utils/logging.py get_dist_msg), Accelerate's MultiProcessAdapter "[RANK 0] ..."
# (accelerate/logging.py). Used only when the line has no launcher prefix.
_TEXT_RANK = re.compile(r"\[(?:Rank|RANK) (\d+)\]")
# Launcher prefixes that parsers/lines.py leaves (it reads "[...]:" heads only), stripped once before every
# dialect: `srun --label` "12: " (the task id, a global rank), Open MPI `--tag-output` "[1,0]<stdout>:" ([jobid,rank]),
# Horovod's gloo launcher "[0]<stdout>:" ([rank]; see lines.py).
_LAUNCHER = re.compile(r"(\d{1,6}): |\[(?:\d+,)?(\d+)\]<std(?:out|err)>: ?").match
# dialects whose printed step may restart every epoch, and whose epochs count from 0 or 1 (decided from the stream)
_PLAIN_EPOCHS = (dialects.GENERIC, dialects.TQDM_EPOCH, dialects.ULTRALYTICS)
# ...tested by identity: `in` on the tuple compares every field of each frozen Dialect (per step line)
_PLAIN_EPOCH_IDS = frozenset(map(id, _PLAIN_EPOCHS))
_ULTRALYTICS = dialects.ULTRALYTICS.name
# the dialects of the records TrainerLogFolder.add keeps or reads (None: records of no dialect, LossColumns, BarShown)
_FOLDED = frozenset((dialects.TRAINER_PLAN, dialects.HF_TRAINER.name, dialects.TQDM.name, None))
# Step-line dialects whose lines go straight to the step being assembled: none of the stream's
# other state (bars, epoch headers, Keras' and Paddle's evaluation bars, Lightning's validation,
# an epoch's or a plain loop's step numbers) reads or changes them (StepParser._segment's tests,
# each of which passes them by). Most step lines are of these (Megatron, DeepSpeed, torchtitan,
# the Trainer's dicts).
_STRAIGHT_IDS = frozenset(
    id(d) for d in dialects.DIALECTS
    if d.kind == "step" and d.step_scope != "epoch" and id(d) not in _PLAIN_EPOCH_IDS
    and d.name not in ("keras", "generic", "paddle")
    and all(d is not other for other in (dialects.LIGHTNING, dialects.KERAS, dialects.PADDLE, dialects.TQDM))
)
# dialects whose lines can open a StepParser (`open`): a block's header, a bar read from a whole line
_OPENING_IDS = frozenset(id(d) for d in dialects.DIALECTS if d.kind == "block_header" or d is dialects.TQDM)
# StepParser.read_whole's answer where a line is not one it reads alone: `feed` it
NOT_WHOLE = object()


def _marked(text: str) -> bool:
    """A line `feed` reads otherwise than whole (a non-empty `text`): blank, with ANSI codes, a `\\r`
    or `\\b`, a bar, a YOLO header, or a launcher's head."""
    if text.isspace() or "\x1b" in text or "\r" in text or "\b" in text or "%|" in text or "_mem " in text:
        return True
    first = text[0]
    return (first == "[" or "0" <= first <= "9") and _LAUNCHER(text) is not None


# layout (ShapeCache: the UTF-8 bytes, every digit 1-9 made a 0) -> no mark in it (`_marked` False).
# A layout's texts differ only in which ASCII digit stands where: none of the marks holds a digit,
# blanks are no digits, and _LAUNCHER tests only where digits stand (its \d also takes other
# digits, which the layout keeps as they are), so every text of a layout has the answer of the
# first. Saves the six scans of each step line's text (callgrind: see the commit); bounded as the cache.
_WHOLE: dict[bytes, bool] = {}
_WHOLE_MAX = 20000
_SHORT = dialects.GUARDS_FIRST_BYTES  # texts this long or longer: marks first, then `fields` (as it was)
_UNSEEN = dialects._UNSEEN
# metric the tqdm bar records carry to `fold_trainer_logs`: how many tqdm.write() calls were seen at that step
WRITES = "tqdm_writes"


class _Pending:
    """A step being assembled: the fields read so far and the line it started on."""

    __slots__ = ("fields", "line", "rank")

    def __init__(self, fields: dict, line: Line, rank: int | None):
        self.fields = fields
        self.line = line
        self.rank = rank

    def same_step(self, fields: dict, rank: int | None) -> bool:
        a = self.fields
        step = a.get("step")
        if step is None or step != fields.get("step") or rank != self.rank:
            return False
        ea, eb = a.get("epoch"), fields.get("epoch")
        return ea is None or eb is None or ea == eb

    def merge(self, fields: dict) -> None:
        metrics = self.fields["metrics"]
        for k, v in fields.items():
            if k == "metrics":
                metrics.update(v)
            elif v is not None:
                self.fields[k] = v
        if "nonfinite" in self.fields or "nonfinite" in fields:
            dialects.merge_nonfinite(self.fields, fields)

    def record(self) -> StepRecord:
        # The line's coordinates are set on the record, not passed beside the fields: a call with
        # both merges them into a new dict first (a third of the cost of the call).
        record = StepRecord(**self.fields)
        line = self.line
        record.time, record.seq, record.rank, record.local_rank = line.time, line.seq, self.rank, line.local_rank
        return record


class PendingState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A step being assembled, in a snapshot: its fields so far (as `dialects.build` gives them,
    numbers as they were read) and the line it started on."""

    fields: dict[str, Any]
    line: LineState
    rank: int | None = None

    @classmethod
    def of(cls, pending: _Pending) -> "PendingState":
        fields = dict(pending.fields)
        fields["metrics"] = dict(fields.get("metrics") or {})
        return cls(fields=fields, line=LineState.of(pending.line), rank=pending.rank)

    def pending(self) -> _Pending:
        if not isinstance(self.fields.get("metrics"), dict):
            raise ValueError("a pending step without its metrics")
        return _Pending(dict(self.fields), self.line.line(), self.rank)


class StepState(msgspec.Struct, tag="step", kw_only=True, omit_defaults=True):
    """A `StepParser` in a snapshot: the step being assembled (`pending`), the block being read
    (`block`, of dialect `block_dialect`) and what the stream told so far: the epoch of an
    "Epoch n/N" header, the training bar's total, where a tqdm.write() clear stands (`cleared`),
    whether bar states come one per line (`bar_lines`), and what a plain loop's step numbers do
    (`restarts`, `first_epoch`, `last_plain`: its previous (epoch, step))."""

    pending: PendingState | None = None
    epoch: int | float | None = None
    total_epochs: int | float | None = None
    bar_total: int | float | None = None
    cleared: int = 0
    bar_lines: bool = False
    block: PendingState | None = None
    block_dialect: str | None = None
    restarts: bool | None = None
    first_epoch: int | None = None
    last_plain: tuple[Any, Any] | None = None
    keras_done: int = 0
    paddle_total: int | None = None
    lightning: list[Any] | None = None
    nan_run: bool = False
    grad_run: int = 0
    grad_first: dict[str, Any] | None = None


class LightningValidation:
    """Lightning 1.x: the main bar counts validation batches (total = train + val batches of the epoch, and
    n = train batches + val batches processed so far), and advances while validation runs. Kept per stream: the
    epoch followed, val batches of finished validation runs (`done`), the run going on (`current`: its last n, or
    None), the last main n read as training, whether the main bar was seen advancing during a validation (only
    then are its counts shifted: Lightning 2.x counts training batches alone), and the epoch's training total once
    an epoch showed it."""

    __slots__ = ("epoch", "done", "current", "last_n", "advances", "train_total")

    def __init__(self, state: list | None = None):
        self.epoch, self.done, self.current, self.last_n, self.advances, self.train_total = state or (None, 0, None, 0, False, None)

    def state(self) -> list:
        return [self.epoch, self.done, self.current, self.last_n, self.advances, self.train_total]

    def validation(self, n, total) -> None:
        """A state of the validation bar: a run starts, goes on, or ends (its batches then count as done)."""
        if n is None or not total:
            return
        self.current = n
        if n >= total:
            self.done += total
            self.current = None

    def train(self, fields: dict) -> bool:
        """A state of the main bar: False when it is a validation advance; else its counts made training ones."""
        epoch, n, total = fields.get("epoch"), fields.get("step"), fields.get("total_steps")
        if n is None:
            return True
        if epoch != self.epoch:
            if self.epoch is not None and self.advances and self.done and total:
                self.train_total = total - self.done  # the last epoch's checks: the same every epoch
            self.epoch, self.done, self.current, self.last_n = epoch, 0, None, 0
        if self.current is not None:  # validation is running
            if n > self.last_n:
                self.advances = True
                return False
            return True  # the main bar redrawn at the last training batch (Lightning 2.x on_validation_end)
        self.last_n = n
        if self.advances:
            if n <= self.done:
                return False
            fields["step"] = n - self.done
            if total:
                fields["total_steps"] = self.train_total or total - self.done
        return True


class StepParser:
    """Training step lines of one stream, in every dialect of dialects.DIALECTS."""

    PREFILTER = dialects.PREFILTER
    State = StepState  # the class of its snapshots

    def __init__(self, cache: ShapeCache = DEFAULT_CACHE):
        self._cache = cache
        self._pending: _Pending | None = None
        # from "Epoch n/N" headers
        self._epoch: int | float | None = None
        self._total_epochs: int | None = None
        # The training bar's total: bars with another total in the same stream are
        # evaluation/prediction bars (the Trainer's eval bar has no description).
        self._bar_total: int | None = None
        # a tqdm.write() cleared the bar ("\r" + blanks + "\r") and it is about to be redrawn
        self._cleared = 0
        # bar states arrive one per line (torchrun --tee splits its children's output at "\r"):
        # the blank lines of a clear matter, so the parser wants every line from then on
        self._bar_lines = False
        self._block: _Pending | None = None
        self._block_dialect: Dialect | None = None
        # plain loops printing "epoch e/E step s/S": does s restart every epoch? (None: not yet seen)
        self._restarts: bool | None = None
        self._first_epoch: int | None = None
        self._last_plain: tuple | None = None  # (epoch, printed step) of the previous such line
        # A Keras bar reached its total N (N here; 0: not yet) and no "Epoch n/N" followed: the next bars are
        # evaluate()/predict() (keras/src/callbacks/progbar_logger.py: fit prints the header before every epoch
        # when epochs > 1), except fit's own reprint of the final state with the val_* metrics (on_epoch_end,
        # finalize=True), which comes first and is again N/N; -1: that chance is gone.
        self._keras_done = 0
        # PaddlePaddle's fit: the training bar's total (its first); a bar of another total is the eval loader's
        # ("Eval begin..." then "step 157/157 - loss: ...": python/paddle/hapi/callbacks.py ProgBarLogger)
        self._paddle_total: int | None = None
        self._lightning = LightningValidation()
        # the last step's loss was NaN/Inf (a nan_loss error record was given for the run it is in)
        self._nan_run = False
        self._grad_run = 0  # consecutive records with a non-finite grad norm
        self._grad_first: ErrorRecord | None = None  # the error of that run, at its first record

    @property
    def open(self) -> bool:
        return self._block is not None or self._bar_lines

    def feed(self, line: Line) -> tuple[bool, list[Record]]:
        out: list[Record] = []
        text = line.text
        if self._block is not None:
            item = self._block_dialect.item  # type: ignore[union-attr]
            if item is not None and item.guard(text):
                self._block_item(text, item)
                return True, out
            self._end_block(out)
        if not text or text.isspace():
            # a clear split over lines: blanks, then an empty line, then the redrawn bar
            self._cleared = 1 if text else (2 if self._cleared == 1 else 0)
            return False, out
        if "\x1b" in text:
            text = strip_ansi(text)
        rank = line.rank
        if text and (text[0] == "[" or "0" <= text[0] <= "9"):
            m = _LAUNCHER(text)
            if m:
                text = text[m.end():]
                if rank is None:
                    rank = int(m.group(1) or m.group(2))
                if not text:
                    return False, out
        if rank is None and "[R" in text:
            m = _TEXT_RANK.search(text)
            if m:
                rank = int(m.group(1))
        if "\r" in text or "\b" in text:
            # tqdm.write() clears the bar with "\r" + blanks + "\r" and redraws it with "\r" + bar:
            # segments [blanks, "", bar]; _cleared is 1 after the blanks, 2 after the empty one
            self._cleared = 0
            for seg in text.replace("\b", "").split("\r"):
                if not seg:
                    self._cleared = 2 if self._cleared == 1 else 0
                    continue
                if seg.isspace():
                    self._cleared = 1
                    continue
                self._segment(seg, line, rank, out)
                self._cleared = 0
        else:
            self._segment(text, line, rank, out, whole_line=True)
        return False, out

    def read_whole(self, text: str):
        """What `feed` reads of a line's `text` where it is one segment that only `_segment`'s
        layout lookup and `_found` act on (none that leaves the parser open): `cache.fields(text)`
        (None, or (dialect, fields or None)), for `feed_read`. `NOT_WHOLE` where any other branch of
        `feed` could act: an open block or bar, a blank line, ANSI codes, a launcher's head, a `\\r`
        or `\\b`, a bar or a YOLO header in it, or a dialect whose line opens the parser (`_OPENING_IDS`).
        Changes nothing but the shape cache, which `feed` would fill the same way (a second read of
        the line is the cache's)."""
        if self._block is not None or self._bar_lines or not text:
            return NOT_WHOLE
        cache = self._cache
        if len(text) < _SHORT:
            layout, known = cache._layout_of(text)
            if layout is None:  # (non-ASCII: 1,024 bytes or more) no dialect's guard holds: `fields` is None
                return NOT_WHOLE if _marked(text) else None
            # whether the text holds a mark is its layout's (see _WHOLE): tested once per layout
            whole = _WHOLE.get(layout)
            if whole is None:
                whole = not _marked(text)
                if len(_WHOLE) >= _WHOLE_MAX:
                    _WHOLE.clear()
                _WHOLE[layout] = whole
            if not whole:
                return NOT_WHOLE
            # cache.fields(text), its layout made
            if known is None:
                return None
            found = known[5](text) if known is not _UNSEEN else cache.fields_of(text, layout, known)
        else:  # (a long line of bar states is not scanned for guards)
            if _marked(text):
                return NOT_WHOLE
            found = cache.fields(text)
        if found is not None and found[1] is not None and id(found[0]) in _OPENING_IDS:
            return NOT_WHOLE
        return found

    def feed_read(self, found, line: Line) -> list[Record]:
        """`feed(line)`'s records where `read_whole(line.text)` gave `found` (not NOT_WHOLE): the
        same branches of `feed` and `_segment`, without their tests `read_whole` made."""
        out: list[Record] = []
        if found is None:
            return out
        rank = line.rank
        if rank is None and "[R" in line.text:
            m = _TEXT_RANK.search(line.text)
            if m:
                rank = int(m.group(1))
        self._found(found[0], found[1], line, rank, out, True)
        return out

    def close(self) -> list[Record]:
        out: list[Record] = []
        if self._block is not None:
            self._end_block(out)
        if self._pending is not None:
            self._emit(self._pending, out)
            self._pending = None
        return out

    # ------------------------------------------------------------------ snapshots

    def snapshot(self) -> StepState:
        """What this stream's parser knows, as plain data (the shape cache is shared, not state)."""
        p, b = self._pending, self._block
        return StepState(
            pending=None if p is None else PendingState.of(p), epoch=self._epoch, total_epochs=self._total_epochs,
            bar_total=self._bar_total, cleared=self._cleared, bar_lines=self._bar_lines,
            block=None if b is None else PendingState.of(b),
            block_dialect=None if self._block_dialect is None else self._block_dialect.name,
            restarts=self._restarts, first_epoch=self._first_epoch, last_plain=self._last_plain,
            keras_done=self._keras_done, paddle_total=self._paddle_total, lightning=self._lightning.state(),
            nan_run=self._nan_run, grad_run=self._grad_run,
            grad_first=None if self._grad_first is None else record_state(self._grad_first),
        )

    def restore(self, state: StepState) -> None:
        """Take up where the parser of `state` was."""
        block_dialect = None
        if state.block is not None:
            block_dialect = dialects.FACTS.get(state.block_dialect or "")
            if block_dialect is None or block_dialect.kind != "block_header":
                raise ValueError(f"step parser: {state.block_dialect!r} is not a block dialect of this build")
        self._pending = None if state.pending is None else state.pending.pending()
        self._epoch, self._total_epochs, self._bar_total = state.epoch, state.total_epochs, state.bar_total
        self._cleared, self._bar_lines = state.cleared, state.bar_lines
        self._block = None if state.block is None else state.block.pending()
        self._block_dialect = block_dialect
        self._restarts, self._first_epoch, self._last_plain = state.restarts, state.first_epoch, state.last_plain
        self._keras_done = state.keras_done
        self._paddle_total = state.paddle_total
        self._lightning = LightningValidation(state.lightning)
        self._nan_run = state.nan_run
        self._grad_run = state.grad_run
        self._grad_first = None if state.grad_first is None else record_from_state(state.grad_first)  # type: ignore[assignment]

    # ------------------------------------------------------------------ internals

    def _segment(self, seg: str, line: Line, rank: int | None, out: list[Record], whole_line: bool = False) -> None:
        bar = seg.find("%|")
        if bar >= 0:
            end = seg.find("]", bar) + 1
            if 0 < end < len(seg) and not seg[end:].isspace():
                # a log line written right after a bar state, on the same physical line
                self._segment(seg[:end], line, rank, out, whole_line)
                seg = seg[end:]
        if "_mem " in seg:
            names = dialects.yolo_loss_names(seg)
            if names is not None:  # for TrainerLogFolder, which names the parts of the bars of every stream
                out.append(LossColumns(names=names))
                return
        found = self._cache.fields(seg)
        if found is None:
            return
        self._found(found[0], found[1], line, rank, out, whole_line)

    def _found(self, d: Dialect, fields: dict | None, line: Line, rank: int | None, out: list[Record],
               whole_line: bool) -> None:
        """`_segment`'s work once the shape cache read the segment: dialect `d`, its `fields`."""
        if fields is None:
            if d is dialects.TQDM:  # the bar at 0: no step, but a bar is there
                out.append(BarShown())
            return
        if id(d) in _STRAIGHT_IDS:
            self._stage(fields, line, rank, out)
            return
        if d.kind == "eval_bar":
            self._lightning.validation(fields.get("step"), fields.get("total_steps"))
            return
        if d is dialects.LIGHTNING and not self._lightning.train(fields):
            return
        if d.kind == "plan":  # for TrainerLogFolder only (it consumes it)
            fields.pop("metrics", None)
            out.append(StepRecord(time=line.time, seq=line.seq, rank=rank, local_rank=line.local_rank, **fields))
            return
        if d.kind == "epoch_header":
            self._epoch = fields.get("epoch")
            self._total_epochs = fields.get("total_epochs")
            self._keras_done = 0
            return
        if d is dialects.KERAS:
            step, total = fields.get("step"), fields.get("total_steps")
            if self._keras_done:
                reprint = self._keras_done > 0 and step == total == self._keras_done
                self._keras_done = -1
                if not reprint:
                    return
            elif step is not None and step == total:
                self._keras_done = total
        if d is dialects.PADDLE:
            total = fields.get("total_steps")
            if self._paddle_total is None:
                self._paddle_total = total
            elif total != self._paddle_total:
                return
        if d.kind == "block_header":
            self._block = _Pending(fields, line, rank)
            self._block_dialect = d
            return
        if d is dialects.TQDM:
            total = fields.get("total_steps")
            if self._bar_total is None:
                self._bar_total = total
            elif total != self._bar_total:
                return
            if self._cleared == 2:
                fields["metrics"][WRITES] = 1.0
            self._cleared = 0
            if whole_line:
                self._bar_lines = True
        if fields.get("epoch") is None and self._epoch is not None and d.name in ("keras", "generic", "paddle"):
            fields["epoch"] = self._epoch
            if fields.get("total_epochs") is None:
                fields["total_epochs"] = self._total_epochs
        if d.step_scope == "epoch":
            _to_global_step(fields, d)
        elif id(d) in _PLAIN_EPOCH_IDS and fields.get("total_steps") and fields.get("epoch") is not None:
            self._plain_global_step(fields)
        self._stage(fields, line, rank, out)

    def _plain_global_step(self, fields: dict) -> None:
        """`epoch 2/3 step 5/20`: the global step when the printed one restarts every epoch.

        Taken to restart until the first line of a later epoch says otherwise (its step did not
        go back); the steps of the first epoch are the same either way.
        """
        epoch, step = fields["epoch"], fields["step"]
        if not isinstance(epoch, int):
            return
        if self._first_epoch is None:
            self._first_epoch = epoch
        last = self._last_plain
        self._last_plain = (epoch, step)
        if self._restarts is None and last is not None and epoch > last[0]:
            self._restarts = step <= last[1]
        if self._restarts is False:
            return
        base = 0 if self._first_epoch == 0 else 1
        _to_global_step(fields, dialects.GENERIC, base)

    def _stage(self, fields: dict, line: Line, rank: int | None, out: list[Record]) -> None:
        p = self._pending
        if p is not None and p.same_step(fields, rank):
            writes = p.fields["metrics"].get(WRITES, 0.0) + fields["metrics"].get(WRITES, 0.0)
            p.merge(fields)
            if writes:
                p.fields["metrics"][WRITES] = writes
            return
        if p is not None:
            self._emit(p, out)
        if fields.get("step") is None:
            # nothing to merge on (the Trainer's logs dict): a record of its own
            self._pending = None
            self._emit(_Pending(fields, line, rank), out)
            return
        self._pending = _Pending(fields, line, rank)

    def _emit(self, pending: _Pending, out: list[Record]) -> None:
        """A finished step's record, and a `nan_loss` error record where it starts a run of non-finite losses
        (one per run: the steps that follow with NaN losses are that run, a finite loss ends it)."""
        record = pending.record()
        if record.nonfinite and "loss" in record.nonfinite:
            if not self._nan_run:
                self._nan_run = True
                out.append(_nan_loss_error(record, pending.line.text))
        elif record.loss is not None:
            self._nan_run = False
        if record.nonfinite and "grad_norm" in record.nonfinite:
            self._grad_run += 1
            if self._grad_run == 1:
                self._grad_first = _nan_loss_error(record, pending.line.text, "grad norm", NONFINITE_GRAD_RUN)
            if self._grad_run == NONFINITE_GRAD_RUN and not self._nan_run and self._grad_first is not None:
                out.append(self._grad_first)
        elif self._grad_run and record.grad_norm is not None:
            self._grad_run, self._grad_first = 0, None
        out.append(record)

    def _block_item(self, text: str, item: Dialect) -> None:
        reading = self._cache.read(text, only=(item,))
        if reading is None:
            return
        fields = build(reading)
        if fields is not None:
            fields.pop("dialect", None)
            self._block.merge(fields)  # type: ignore[union-attr]

    def _end_block(self, out: list[Record]) -> None:
        block, d = self._block, self._block_dialect
        self._block = self._block_dialect = None
        if block is None or d is None:
            return
        fields = block.fields
        if not is_step(fields, d):
            return
        if d.step_scope == "epoch":
            _to_global_step(fields, d)
        self._stage(fields, block.line, block.rank, out)


# the pattern name of the error records a run of non-finite losses gives (not a rule of parsers/errors.py: the step
# parser finds them, in every dialect, where the line printed its loss as nan/inf)
NONFINITE_LOSS = "nonfinite_loss"
_NAN_TEXT = re.compile(r"(?<![A-Za-z])(?:nan|NaN|NAN|inf|Inf|INF)(?![A-Za-z])")


# A grad norm that stays NaN/Inf is a diverged run even where the loss looks finite: the HF Trainer's
# logging_nan_inf_filter (default True; transformers trainer.py _inner_training_loop: a NaN/Inf step loss
# is replaced by the mean of the logging window) prints 0 or an old mean while grad_norm says nan.
# One or a few are not: under fp16 the GradScaler skips an overflowing step and halves its scale
# (torch/amp/grad_scaler.py: init_scale 2**16, backoff_factor 0.5), so the first steps of a run can
# log inf. A run of this many consecutive step records with a non-finite grad norm is the
# "endless overflow" of a diverged run.
NONFINITE_GRAD_RUN = 10


def _nan_loss_error(step: StepRecord, text: str, what: str = "loss", run: int = 1) -> ErrorRecord:
    """The error record of a run of non-finite losses, at its first step; `line` is the line that printed it (of a
    bar redrawn with "\r", the first state that printed a nan/inf, at most 2,000 characters)."""
    if "\r" in text:
        states = [seg for seg in text.split("\r") if _NAN_TEXT.search(seg)]
        text = states[0] if states else text.rsplit("\r", 1)[-1]
    text = text[:2000]
    where = f" at step {step.step}" if step.step is not None else ""
    after = f" and in the {run - 1} step lines after it" if run > 1 else ""
    return ErrorRecord(time=step.time, seq=step.seq, rank=step.rank, local_rank=step.local_rank, category="nan_loss",
                       message=f"{what} is not finite{where}{after} ({step.dialect} step line)", line=text,
                       pattern=NONFINITE_LOSS)


def _to_global_step(fields: dict, d: Dialect, epoch_base: int | None = None) -> None:
    """n of N within epoch e -> the global step; the printed position stays as metrics."""
    n, per_epoch, epoch = fields.get("step"), fields.get("total_steps"), fields.get("epoch")
    base = d.epoch_base if epoch_base is None else epoch_base
    if n is None or not per_epoch or epoch is None or base is None:
        return
    index = int(epoch) - base
    fields["metrics"]["epoch_step"] = float(n)
    fields["metrics"]["epoch_steps"] = float(per_epoch)
    fields["step"] = index * per_epoch + n
    total_epochs = fields.get("total_epochs")
    fields["total_steps"] = per_epoch * total_epochs if total_epochs else None


class LossColumns(msgspec.Struct):
    """The loss columns an Ultralytics/YOLO epoch header names (dialects.YOLO_HEADER): no record, but what
    `TrainerLogFolder` names the parts of the bars after. The header is logged (ultralytics 8.x: LOGGER on
    stdout) where the bar is not (tqdm on stderr), so the names are the container's, not one stream's."""

    names: tuple[str, ...]
    stream: str | None = None  # set by curation as on records


class BarShown(msgspec.Struct):
    """A tqdm bar drawn at 0 (no step yet): no record, but tells `TrainerLogFolder` that the container
    has a bar that will number the Trainer's dicts. The Trainer draws it at train begin
    (transformers trainer_callback.py ProgressCallback.on_train_begin, tqdm(total=max_steps)); its first
    numbered state can reach the log after the first dicts (stdout and stderr are two pipes; under
    torchrun --tee two tee threads)."""

    stream: str | None = None  # set by curation as on records


class TrainerLogsState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A `TrainerLogFolder` in a snapshot: the logs dicts waiting for their step (`logs`), the
    steps the bar was redrawn at after a write (`marks`), the bar's record of each step (`bars`; empty
    while bar records are held: then they are the records of `held`),
    its total, steps per epoch once decided (`per_epoch`), the bar records held (`held`), and
    whether a dict was seen (`seen_logs`) or the bar is nobody's Trainer (`plain_bar`). Records
    as `records.record_state` gives them."""

    logs: list[dict[str, Any]] = []
    marks: list[int] = []
    bars: list[dict[str, Any]] = []
    total: int | float | None = None
    per_epoch: float | None = None
    held: list[dict[str, Any]] = []
    seen_logs: bool = False
    plain_bar: bool = False
    plan_steps: int | None = None
    plan_epochs: int | None = None
    loss_names: list[str] | None = None
    bar_shown: bool = False
    gave_up: bool = False
    gave_up_total: int | float | None = None
    held_since: int | None = None
    bar_seen: bool = False


class TrainerLogFolder:
    """Gives the Trainer's logs dicts their step, for the records of one container.

    The Trainer prints its logs dict to stdout without a step number (tqdm.write)
    and its bar to stderr. A dict's epoch is global step / steps per epoch (S), so
    once S is known every dict has its step: `round(epoch * S)`. S is found from the
    bar: it divides the bar's total (max_steps = S * epochs) unless max_steps was
    set, and the steps it gives must be whole, within the total, and match the steps
    at which the bar was redrawn after a write (each write clears the bar and redraws
    it at the current step; `StepParser` counts these on the bar's records, metric
    `tqdm_writes`; under torchrun --tee the redraws can arrive shifted, so they only
    vote). A numbered dict gets the bar's total and rate, and the bar's own records
    are dropped: the dicts are the step lines.

    Without a bar (`disable_tqdm`, PrinterCallback: a log file, a pod whose stderr is
    buffered until the bar's line ends) the run's plan tells S: the Trainer's
    "Num Epochs = E" and "Total optimization steps = N" (Unsloth's banner likewise)
    give S = N / E when max_steps was not set, which the dicts' epochs confirm (every
    `epoch * S` whole and within N); then each dict is numbered and released as it
    comes, bar or no bar. A plan they contradict (max_steps set) only adds N as a total.

    It also names the loss parts of Ultralytics/YOLO bars (metrics loss_part0..) after the
    last column header of the container (`LossColumns`), whichever stream printed it.

    Streaming: `add` returns the records that are ready (everything but dicts
    waiting for S, and bar records held while it is not known whether dicts will
    come); `close` decides with what it has and returns the rest. Bar records are
    held at most `max_held` at a time, and for at most `bar_wait_lines` lines of the
    container from the first one held (`add`'s `line`: the container's line the records
    come from): then they go on as they are, and so do the bar's next records, until a
    dict comes (the Trainer's bar after all: its records are dropped again from there, its
    dicts numbered as ever). `cut` counts the bar records released at either bound (the
    curation adds them to its counters). Without the line bound a bar of fewer states than
    `max_held` with no dict was held until the container closed: a consumer indexed none of
    its steps while the pod ran, and carried them in every checkpoint. The Trainer logs a dict
    every `logging_steps` (default 500: transformers training_args.py), one bar line a step
    under torchrun --tee, so 2,048 lines is four times its default reach. In plain-bar mode
    the bar's records are not kept for the dicts' rates (`_bars`): no dict may ever come.
    Dicts wait for S at most `max_waiting` at a time: past that, they and the dicts
    after them go on unnumbered (step null: no guess) until a new bar total or a new
    plan starts over. A run decides S within its first dicts; every dict re-weighs all
    that wait, so an unbounded wait made a pod of dicts that never decide quadratic in
    time and memory (8k dicts 5.7 s, 32k 118 s).
    """

    def __init__(self, max_held: int = 10_000, max_waiting: int = 512, bar_wait_lines: int = 2_048):
        self.max_held = max_held
        self.max_waiting = max_waiting
        self.bar_wait_lines = bar_wait_lines
        self.cut = 0  # bar records released at a bound, not yet counted by the owner
        self._held_since: int | None = None  # the container's line of the first bar record held
        # A bar record came since the start or the last cut (`_bars` keeps only the steps dicts may still ask for)
        self._bar_seen = False
        self._logs: list[StepRecord] = []  # dicts waiting for S
        self._marks: set[int] = set()  # steps the bar was redrawn at after a write
        self._bars: dict[int, StepRecord] = {}  # the bar's record of each step (for its rate)
        self._total: int | None = None
        self._per_epoch: float | None = None  # S, once decided
        self._held: list[Record] = []  # bar records not yet known to be needed
        self._seen_logs = False
        self._plain_bar = False  # held too many bar records without a dict: not the Trainer
        self._plan_steps: int | None = None  # "Total optimization steps = N"
        self._plan_epochs: int | None = None  # "Num Epochs = E"
        self._loss_names: tuple[str, ...] | None = None  # the last LossColumns
        self._bar_shown = False  # a bar was drawn at 0 (BarShown): its numbered states will come
        self._gave_up = False  # max_waiting dicts waited: no S for this total (`_gave_up_total`)
        self._gave_up_total: int | float | None = None

    @property
    def bar_due(self) -> int | None:
        """The container's line from which the bar records held go on without a dict (None: none held)."""
        return None if self._held_since is None else self._held_since + self.bar_wait_lines

    def add(self, records: list[Record], bar_may_come: bool = True, line_no: Callable[[], int] | None = None) -> list[Record]:
        """The records ready to go on. `bar_may_come=False` (the container's curation says no line
        of it is being written in pieces) releases a dict that nothing can number yet at once,
        unnumbered, while the container has shown no bar: see `_release`. `line_no()`: the container's
        line these records come from (its lines counted from 1, every stream), asked only while bar
        records are held or one comes (None: not counted, no line bound)."""
        out: list[Record] = []
        if line_no is not None and self._held_since is not None and line_no() >= self._held_since + self.bar_wait_lines:
            self._cut_bar(out)
        for r in records:
            dialect = getattr(r, "dialect", None)
            if dialect not in _FOLDED:  # a step of another dialect: it goes on (the last branch below)
                if dialect == _ULTRALYTICS and self._loss_names is not None:
                    _name_loss_parts(r, self._loss_names)  # type: ignore[arg-type]
                out.append(r)
            elif dialect == dialects.TRAINER_PLAN:
                self._add_plan(r)  # type: ignore[arg-type]
            elif dialect == dialects.HF_TRAINER.name and r.step is None:  # type: ignore[attr-defined]
                self._seen_logs = True
                self._plain_bar = False  # the Trainer's bar after all (if a bound made it plain): dropped from here
                self._logs.append(r)  # type: ignore[arg-type]
            elif dialect == dialects.TQDM.name:
                if r.metrics.pop(WRITES, 0):  # type: ignore[attr-defined]
                    self._marks.add(r.step)  # type: ignore[attr-defined]
                self._total = r.total_steps or self._total  # type: ignore[attr-defined]
                self._bar_seen = True
                if self._plain_bar:
                    out.append(r)
                    continue
                self._bars[r.step] = r  # type: ignore[attr-defined,index]
                if not self._seen_logs:
                    if self._held_since is None and line_no is not None:
                        self._held_since = line_no()
                    self._held.append(r)
                    if len(self._held) > self.max_held:
                        self._cut_bar(out)
            elif dialect is None and type(r) is LossColumns:
                self._loss_names = r.names
            elif dialect is None and type(r) is BarShown:
                self._bar_shown = True
            else:
                if dialect == _ULTRALYTICS and self._loss_names is not None:
                    _name_loss_parts(r, self._loss_names)  # type: ignore[arg-type]
                out.append(r)
        if self._seen_logs:
            self._held, self._held_since = [], None
            out.extend(self._release(final=False, bar_may_come=bar_may_come))
            if len(self._logs) > self.max_waiting:
                out.extend(self._settle_waiting())
        return out

    def _cut_bar(self, out: list[Record]) -> None:
        """A bound hit with bar records held and no dict: they go on as they are (counted in `cut`),
        and so do the bar's next ones until a dict comes; none is kept for the dicts' rates."""
        self._plain_bar = True
        self.cut += len(self._held)
        out.extend(self._held)
        self._held, self._held_since = [], None
        self._bars.clear()
        self._bar_seen = False

    def _settle_waiting(self) -> list[StepRecord]:
        """Too many dicts wait for an S the evidence does not decide: they go on unnumbered, and
        so do the next ones while the bar's total stays."""
        self._gave_up, self._gave_up_total = True, self._total
        done, self._logs = self._logs, []
        return done

    def snapshot(self) -> "TrainerLogsState":
        """What the folder holds and knows, as plain data."""
        return TrainerLogsState(
            logs=[record_state(r) for r in self._logs], marks=sorted(self._marks),
            # while bar records are held, the bar's records are those (each step's last): stored once
            bars=[] if self._held else [record_state(r) for r in self._bars.values()], total=self._total,
            per_epoch=self._per_epoch,
            held=[record_state(r) for r in self._held], seen_logs=self._seen_logs, plain_bar=self._plain_bar,
            plan_steps=self._plan_steps, plan_epochs=self._plan_epochs,
            loss_names=None if self._loss_names is None else list(self._loss_names), bar_shown=self._bar_shown,
            gave_up=self._gave_up, gave_up_total=self._gave_up_total, held_since=self._held_since,
            bar_seen=self._bar_seen,
        )

    def restore(self, state: "TrainerLogsState") -> None:
        """Take up where the folder of `state` was."""
        self._logs = [record_from_state(r) for r in state.logs]  # type: ignore[misc]
        self._marks = set(state.marks)
        bars = [record_from_state(r) for r in state.bars]
        self._bars = {r.step: r for r in bars}  # type: ignore[attr-defined]
        self._total, self._per_epoch = state.total, state.per_epoch
        self._held = [record_from_state(r) for r in state.held]
        if self._held and not bars:
            self._bars = {r.step: r for r in self._held}  # type: ignore[attr-defined]
        self._seen_logs, self._plain_bar = state.seen_logs, state.plain_bar
        self._plan_steps, self._plan_epochs = state.plan_steps, state.plan_epochs
        self._loss_names = None if state.loss_names is None else tuple(state.loss_names)
        self._bar_shown = state.bar_shown
        self._gave_up, self._gave_up_total = state.gave_up, state.gave_up_total
        self._held_since = state.held_since
        self._bar_seen = state.bar_seen or bool(self._bars)  # (snapshots before the flag: the bars kept said it)

    def close(self) -> list[Record]:
        out: list[Record] = list(self._release(final=True))
        out.extend(self._logs)  # no bar to number them by
        out.extend(self._held)
        self._logs, self._held, self._held_since = [], [], None
        return out

    def _add_plan(self, plan: StepRecord) -> None:
        """A line of the run's plan; a new plan (a second train() in the same process) starts over."""
        steps, epochs = plan.total_steps, plan.total_epochs
        if steps is not None and steps != self._plan_steps or epochs is not None and epochs != self._plan_epochs:
            if self._per_epoch is not None and not self._bar_seen:
                self._per_epoch = None
            self._gave_up = False
        if steps is not None:
            self._plan_steps = steps
        if epochs is not None:
            self._plan_epochs = epochs

    def _release(self, final: bool, bar_may_come: bool = True) -> list[StepRecord]:
        if self._per_epoch is None and self._gave_up and self._total == self._gave_up_total:
            done, self._logs = self._logs, []
            return done
        if self._per_epoch is None:
            self._per_epoch = self._decide(final)
        if self._per_epoch is None and not bar_may_come and self._total is None and not self._bar_seen and not self._bar_shown:
            # No bar so far and none being written (PrinterCallback: `disable_tqdm`, a log
            # file), no plan that numbers them: the dicts go on as they come, step null, rather
            # than wait for a bar that may never come. A bar that shows later numbers the
            # dicts after it (a runtime holds a line until it ends: a CRI bar with no newline
            # yet shows as a partial line, which keeps the dicts waiting).
            done, self._logs = self._logs, []
            return done
        if self._per_epoch is None or not self._logs:
            return []
        s = self._per_epoch
        last = None
        for log in self._logs:
            if log.epoch:
                log.step = round(log.epoch * s)
                last = log.step if last is None else max(last, log.step)
                log.total_steps = self._total or self._plan_steps
                bar = self._bars.get(log.step)
                if bar is not None:
                    if log.throughput is None and bar.throughput is not None:
                        log.throughput, log.throughput_unit = bar.throughput, bar.throughput_unit
                    if log.step_time_s is None:
                        log.step_time_s = bar.step_time_s
        if last is not None and len(self._bars) > 1:
            # The run's dicts come in step order: the bar's records of earlier steps are asked for by
            # no later dict of this run (one of a new train() is for its own bar's record). Kept, they
            # were every step of the run in memory and in every checkpoint.
            self._bars = {step: bar for step, bar in self._bars.items() if step >= last}
        done, self._logs = self._logs, []
        return done

    def _decide(self, final: bool) -> float | None:
        """Steps per epoch, when the evidence names one (or, at the end, the best there is)."""
        total = self._total
        if not total:  # no bar yet: the run's plan, if it printed one (and no list to build per record)
            return self._from_plan()
        epochs = [log.epoch for log in self._logs if log.epoch]
        if not epochs:
            return None
        divisors = set(_divisors(total))
        candidates = set(divisors)
        marks = sorted(self._marks)[:MAX_MARKS]
        for m in marks:  # max_steps set explicitly: S need not divide the total
            for e in epochs[:3]:
                candidates.add(round(m / e))
        scored = []
        for s in candidates:
            steps = [e * s for e in epochs]
            # epochs print 4 significant digits: the product is whole to that precision
            if s <= 0 or any(abs(x - round(x)) > max(1e-6, 1e-3 * x) or round(x) > total for x in steps):
                continue
            scored.append((_mark_votes({round(x) for x in steps}, marks), s))
        if not scored:
            return None
        scored.sort(reverse=True)
        best_score, best = scored[0]
        # A lone candidate decides only when it divides the total (S * epochs = the bar's total); one
        # read off a single redraw is one vote (a multiple of S fits the first dicts as well)
        decided = len(scored) == 1 and best in divisors or best_score >= 2 and (
            len(scored) == 1 or best_score > scored[1][0])
        return float(best) if decided or final else None


    def _from_plan(self) -> float | None:
        """S = N / E from the run's plan, when every waiting dict's epoch confirms it."""
        n, e = self._plan_steps, self._plan_epochs
        if not n or not e or n % e:
            return None
        s = n // e
        epochs = [log.epoch for log in self._logs if log.epoch]
        if not epochs or not _whole_steps(epochs, s, n):
            return None
        return float(s)


MAX_MARKS = 64  # the first redraws vote (enough to tell S from its multiples; bounds the work of a long bar)


def _mark_votes(steps: set[int], marks: list[int]) -> int:
    """How well the dicts' steps under a candidate S match the bar's redraws after a write: each step
    redrawn counts for it, each redraw up to its last step that is none of them against it (every
    logs dict is one write, so a multiple of the true S leaves every other redraw unexplained). Under
    torchrun --tee the dicts and the bar come through two pipes, so the redraws can run ahead of the
    dicts: only redraws up to the candidate's last step count."""
    last = max(steps)
    votes = 0
    for m in marks:
        if m > last:
            break
        votes += 1 if m in steps else -1
    return votes


def _whole_steps(epochs: list[float], s: int, total: int) -> bool:
    """Every epoch * s is a whole step within the total (epochs print 4 significant digits: whole to that precision)."""
    for e in epochs:
        x = e * s
        if abs(x - round(x)) > max(1e-6, 1e-3 * x) or round(x) > total:
            return False
    return True


def _divisors(n: int) -> list[int]:
    """The divisors of a bar's total, factored (a total of 2**64 hung trial division to its
    square root); none past a `long` (parsers/divisors.py)."""
    return divisors(n)


def _name_loss_parts(record: StepRecord, names: tuple[str, ...]) -> None:
    named = dialects.name_loss_parts(record.metrics, record.loss, record.nonfinite or [], names)
    if named is not None:
        record.metrics, record.loss, nonfinite = named
        record.nonfinite = nonfinite or None


def fold_trainer_logs(records: list[StepRecord]) -> list[StepRecord]:
    """`TrainerLogFolder` over the complete records of one container."""
    folder = TrainerLogFolder(max_held=len(records) + 1, max_waiting=len(records) + 1)
    return folder.add(records) + folder.close()  # type: ignore[return-value]
