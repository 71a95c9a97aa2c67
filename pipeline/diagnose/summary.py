"""The words of a diagnosis: the summary sentence, who failed, the exception type."""

from __future__ import annotations

import re
from typing import Any

from gangscope.parsers import times
from gangscope.parsers.errors import groups_of
from gangscope.parsers.records import ErrorRecord
from gangscope.parsers.steps import NONFINITE_LOSS
from gangscope.pipeline.diagnose.root_cause import Failure
from gangscope.pipeline.diagnose.rules import (ALLOCATION_SIZE, CAUSE_WORDINGS, EFFECTS, MARKED_EXCEPTION_LINES,
                                              WHAT_HAPPENED)
from gangscope.pipeline.diagnose.views import AttemptView


# An exception line ("Type: message") at the start of an error's line, where no trace was read.
_EXCEPTION_LINE = re.compile(r"^((?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Interrupt|Failure)|nccl\w+Error))(?::|$)")


def exception_type_of(view: AttemptView, error: ErrorRecord) -> str | None:
    """The exception type of the traceback an error line came from, or of the exception line it is."""
    if not error.trace_id:
        m = _EXCEPTION_LINE.match(error.line or "")
        if m is None and error.pattern in MARKED_EXCEPTION_LINES:
            return groups_of(error).get("type")
        return m.group(1) if m else None
    if error.trace_id:
        m = re.match(r"^([A-Za-z_][\w.]*)(?::|$)", error.message or "")
        if m and not error.message.startswith("ChildFailedError root cause"):
            return m.group(1)
        for trace in view.traces:
            if trace.id == error.trace_id:
                return trace.exception_type
    return None


def who(first: dict[str, Any] | None) -> str:
    """"rank R in pod P on node N" for a first_failure dict ("a rank" when there is none)."""
    if not first:
        return "a rank"
    rank, pod, node = first.get("rank"), first.get("pod"), first.get("node")
    who = f"rank {rank}" if rank is not None else "a worker"
    if pod:
        who += f" in pod {pod}"
    if node:
        who += f" on node {node}"
    return who


def _step_at(view: AttemptView, rank: int | None, pod: str | None, t: float) -> int | None:
    """The rank's step at the failure: a step stamped at the failure's own time (a nan_loss error is
    made from its step line), else the latest printed up to a second after it (two streams of one
    pod are stamped apart)."""
    best: tuple[bool, float, int] | None = None
    for s in view.steps:
        if s.step is None or (rank is not None and s.rank is not None and s.rank != rank):
            continue
        if rank is None and pod and s.pod != pod:
            continue
        st = times.seconds(s.time)
        if st is None or st > t + 1:
            continue
        key = (st == t, st, s.step)
        if best is None or key > best:
            best = key
    return best[2] if best else None


_ALLOC = re.compile(r"Tried to allocate ([\d.]+ [KMGTP]?i?B)")


# A frame of code that writes a checkpoint: torch.save (torch/serialization.py save/_save), safetensors'
# save_file, transformers' Trainer._save_checkpoint / save_model, Lightning's save_checkpoint,
# DeepSpeed's save_checkpoint, torch.distributed.checkpoint's save / save_state_dict.
_SAVING_FRAME = re.compile(r"(?i)save|checkpoint|ckpt|serializ")
# A checkpoint path in a message: a path naming a checkpoint or ending like a checkpoint file.
_CHECKPOINT_PATH = re.compile(
    r"""(?:^|[\s'"(])((?:[\w.~-]*/)+[^\s'"/)]*(?:checkpoint|ckpt)[^\s'")]*|"""
    r"""(?:[\w.~-]*/)*[\w.~-]+\.(?:pt|pth|ckpt|safetensors|distcp))(?=$|[\s'"):,])""", re.IGNORECASE)


def _saving_checkpoint(view: AttemptView, error: ErrorRecord) -> str:
    """" while saving checkpoint PATH" (or " while saving a checkpoint") when a storage error came
    from code that writes a checkpoint: a frame of its traceback saves, or its message names one."""
    if error.category != "storage_io":
        return ""
    trace = next((t for t in view.traces if error.trace_id and t.id == error.trace_id), None)
    texts = [error.message or "", error.line or "", (trace.message or "") if trace else ""]
    for text in texts:
        m = _CHECKPOINT_PATH.search(text)
        if m:
            return f" while saving checkpoint {m.group(1)}"
    if trace is not None and any(_SAVING_FRAME.search(f"{f.file} {f.function or ''}") for f in trace.frames[-8:]):
        return " while saving a checkpoint"
    return ""


#: The longest message quoted in a summary; a longer one is cut at a word boundary, marked "...".
MESSAGE_LIMIT = 160
#: [h34h] The longest summary sentence (tests/test_diagnose_summary_text.py reads a longer one as unreadable): the suspect
#: sentence of a collective timeout quotes the timeout's line as its proof and may carry two symptoms after it, which
#: together can run past it (dev 1661: 424); its proof is then cut shorter, at a word boundary, marked "...".
SUMMARY_LIMIT = 400
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# What a JSON or repr dump leaves after the message it quoted ('"message": "X: ",' or '... device" })'):
# a closing double quote and brackets or commas, where the message opened none (an apostrophe is
# never taken for one: "can't open '/x'").
_DUMP_TAIL = re.compile(r"""\s*(")[\s,;)}\]]*$""")
# A traceback header a wrapper's message ends with (the DataLoader's "Original Traceback ...:"), and [h31f] what follows one
# inside a message that runs on into the next block (torchrun's "failed (exitcode: -9) ... of binary: X" then the agent's
# "Traceback (most recent call last): File ...", mp.spawn's "-- Process 2 terminated with the following error: Traceback
# ..."): the traceback's own lines are the trace's, not the message's.
_TRACEBACK_TAIL = re.compile(r"\s*(?:Original )?Traceback \(most recent call last\):?(?:\s.*)?$")
# [h31f] A log line's own time left at the head of a message ("2025-12-31 07:22:37.807117: train_loss nan", dev 1254): the
# line's stamp, not its words.
# glog's prefix as well ("I1107 16:02:51.306615 20417 solver.cpp:347] ", google/glog src/logging.cc LogMessage: severity,
# MMDD, time, thread id, file:line, "] ").
_TIME_HEAD = re.compile(r"^(?:\[?\d{4}-\d\d-\d\d[T _]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?:\]\s*|:?\s+)|"
                        r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w.-]+:\d+\] )(?=\S)")
# [h31f] gangscope's own heads for torchrun's failure box (parsers/errors.py classify_child_failed, reading torch/distributed/
# elastic/multiprocessing/errors/__init__.py ChildFailedError.format_msg's "Root Cause (first observed failure)"): said in
# words, the wrapper's class name left out (issue 16: "wrappers unwrapped").
_WRAPPER_HEADS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^ChildFailedError root cause: "), "torchrun's root-cause box says "),
    (re.compile(r"^ChildFailedError \(no failure listed\)$"), "torchrun's failure box lists no failure"),
    # [h32h] one entry of the box read as a message (its lines joined: dev 280): the same file's _FAILURE_FORMAT_TEMPLATE,
    # "[${idx}]:\n  time      : ${time}\n  host      : ${hostname}\n  rank      : ${rank} (local_rank: ${local_rank})\n
    # exitcode  : ${exitcode} (pid: ${pid})[ ${signal_name}]\n  error_file: ${error_file}\n  traceback : ${message}" (torch
    # 1.9's "msg: ..." in place of "traceback : ...")
    (re.compile(r"^(?:\[\d+\]:? )?(?:time ?: \S+ )?(?:host ?: \S+ )?rank ?: (\d+) \(local_rank: \d+\) exitcode ?: (-?\d+) "
                r"\(pid: \d+\)(?: \(?SIG[A-Z]+\)?)? error_file ?: \S+ (?:traceback ?: |msg: )"),
     r"torchrun's failure box says rank \1 exited with code \2: "),
)


def _squash(text: str) -> str:
    """One line: control characters and runs of white space (tabs, newlines, the collector's double
    spaces) become one space."""
    return re.sub(r"\s+", " ", _CONTROL.sub(" ", text)).strip()


def _clean(text: str) -> str:
    """The message without what its printing around it left: a dump's closing quote and brackets,
    a dangling traceback header, a trailing colon with nothing after it."""
    text = _squash(text)
    for _ in range(3):
        before = text
        m = _DUMP_TAIL.search(text)
        if m and text.count(m.group(1)) % 2 == 1:
            text = text[:m.start()].rstrip()
        text = _TRACEBACK_TAIL.sub("", text)
        text = re.sub(r"(?:\s*:)+$", "", text).rstrip()
        text = re.sub(r"^(?::\s*)+", "", text)  # the rest of a line cut after its printer's name
        text = _TIME_HEAD.sub("", text)
        if text == before:
            break
    return text


def without_stamp(text: str) -> str:
    """[h31f] A quoted line without the time (or glog prefix) its logger put at its head."""
    return _TIME_HEAD.sub("", text)


def cut_message(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """`text` cut to about `limit` characters at a word boundary, "..." where it was cut."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    if space >= limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:(.") + "..."


def _continuation(view: AttemptView | None, error: ErrorRecord) -> str:
    """The text a message ending in ':' announced, printed on the lines after it: the rest of its
    traceback's exception message (an exception split over lines: `Type` / `:` / `text`, or
    `Error(s) in loading state_dict for M:` / its missing keys), else the next error line of the
    same pod and rank."""
    if view is None:
        return ""
    trace = next((t for t in view.traces if error.trace_id and t.id == error.trace_id), None)
    if trace is not None and trace.message:
        lines = [ln.strip() for ln in trace.message.splitlines()]
        lines = [ln for ln in lines if ln and ln.strip(":").strip()]
        head = _clean(error.message or "")
        if lines and head.endswith(_clean(lines[0])):
            lines = lines[1:]
        return " ".join(lines[:4])
    at = next((i for i, e in enumerate(view.errors) if e is error), None)
    if at is not None:
        for other in view.errors[at + 1:at + 9]:
            if other.pod == error.pod and other.rank == error.rank and other.message and other.message != error.message:
                return other.message
    return ""


# [h32h] A traceback frame read as an exception's message: an exception line with no message ("...RendezvousTimeoutError",
# raised bare) followed by a pasted block's `  File "...", line N, in f` (dev 1406). Python prints a frame only on its own
# line before the exception line (traceback.py StackSummary.format: '  File "{}", line {}, in {}'), never as the message:
# the summary quotes the type alone.
_FRAME_AS_MESSAGE = re.compile(r"(?<=[\w.]): File \"[^\"]*\", line \d+, in \S+.*$")


# [h32h] A message read out of a JSON string value (a controller's zap line: `"error": "job \"x\" creation failed ..."`,
# dev 1405; Go's %q / strconv.Quote escapes the same way) keeps its escapes: `\"` and `\\` are a quote and a backslash.
# Only where every quote of the message is escaped: a message that has bare quotes too is not one JSON string but nested
# quoting (runc's `caused "...: caused \"...\""`, dev 463), whose levels unescaping would merge.
_ESCAPED = re.compile(r'\\(["\\])')
_BARE_QUOTE = re.compile(r'(?<!\\)"')


def readable_message(error: ErrorRecord, view: AttemptView | None = None) -> str:
    """The error's message as a summary quotes it: one line, the text a trailing ':' announced
    joined on from the lines after it, dump and header debris taken off, cut at a word boundary."""
    raw = _squash(error.message or "")
    message = _FRAME_AS_MESSAGE.sub("", _clean(raw))
    if '\\"' in message and message.count('\\"') % 2 == 0 and not _BARE_QUOTE.search(message):
        message = _ESCAPED.sub(r"\1", message)  # [h32h] a JSON string's escaped quotes, read as JSON reads them
    for head, words in _WRAPPER_HEADS:
        message = head.sub(words, message)
    if raw.endswith(":"):
        rest = _clean(_continuation(view, error))
        if rest:
            message = f"{message}: {rest}" if message else rest
    return cut_message(message)


def _detail(error: ErrorRecord, view: AttemptView | None = None) -> str:
    m = _ALLOC.search(error.message or "") or _ALLOC.search(error.line or "")
    if m:
        return f" (tried to allocate {m.group(1)})"
    # every category quotes the line that proves it (issue 16: "the cause, the rank and the proof in
    # one sentence"): the exception's message, the launcher's signal line, the kernel's kill line
    message = readable_message(error, view)
    if error.pattern == NONFINITE_LOSS and message:
        shown = nonfinite_excerpt(error.line or "", message)
        message = f"{message}; the line: {shown}" if shown else message
    return f": {message}" if message else ""


# [h32h] a non-finite value as a step line prints it (the step parser's _NAN_TEXT: nan / inf in their cases)
_NONFINITE_VALUE = re.compile(r"(?<![A-Za-z])(?:nan|NaN|NAN|inf|Inf|INF)(?![A-Za-z])")
EXCERPT_BEFORE = 60
# a progress bar's drawing (Keras' "[====>....]", tqdm's blocks): no words; an excerpt starts after it
_BAR_DRAWING = re.compile(r"[=>.#\u2500-\u259f]{10,}\]?")


def nonfinite_excerpt(line: str, message: str) -> str:
    """[h32h] The proof of a run of non-finite losses (parsers/steps.py _nan_loss_error: "loss is not finite at step N
    (<dialect> step line)"), from the step line that printed it: the line, without its logger's time, up to the first
    non-finite value of the field the message names ("grad norm" -> a grad field, else a loss field; else the first
    non-finite value), with up to EXCERPT_BEFORE characters before it ("..." where cut). Empty where the line shows none."""
    text = without_stamp(_squash(line))
    field = "grad" if message.startswith("grad norm") else "loss"
    hits = list(_NONFINITE_VALUE.finditer(text))
    hit = next((m for m in hits if field in text[max(0, m.start() - 40):m.start()].lower()), hits[0] if hits else None)
    if hit is None:
        return ""
    end = hit.end()
    if end < len(text) and text[end] in "'\"":  # a quoted value ('nan' in a dict's repr, "NaN" in a JSON line)
        end += 1
    start = max(0, hit.start() - EXCERPT_BEFORE)
    if start:
        space = text.find(" ", start, hit.start())
        start = space + 1 if space != -1 else start
    bars = [m.end() for m in _BAR_DRAWING.finditer(text, start, hit.start())]
    start = bars[-1] if bars else start
    shown = text[start:end]
    if shown.count('"') % 2:  # a JSON string cut at its head: start after its lone quote
        shown = shown[shown.index('"') + 1:].lstrip(" ,;")
    return ("..." if start else "") + shown.strip()


def what_happened(view: AttemptView, error: ErrorRecord, category: str) -> str:
    """The words of what happened: the first of rules.CAUSE_WORDINGS whose patterns the root error's exception line / message /
    line (and its traceback's frames) match, else WHAT_HAPPENED's for its category. An allocation that failed names its size
    where the line says it."""
    entries = [e for e in CAUSE_WORDINGS if e[0] == category]
    if not entries:
        return WHAT_HAPPENED.get(category, "failed")
    trace = next((t for t in view.traces if error.trace_id and t.id == error.trace_id), None)
    text = "\n".join(x for x in (error.message, error.line, trace and trace.message and
                                 f"{trace.exception_type or ''}: {trace.message}") if x)  # fmt: skip
    frames = [f"{f.file}:{f.function or ''}" for f in trace.frames] if trace is not None else []
    for _category, words_at, frame_at, words, _source in entries:
        if words_at.search(text) and (frame_at is None or any(frame_at.search(f) for f in frames)):
            size = ALLOCATION_SIZE.search(text) if category == "host_oom" else None
            if size:
                amount = size.group(3) or f"{size.group(1) or size.group(2)} bytes"
                words = words.replace("(an allocation failed)", f"(an allocation of {amount} failed)")
            return words
    return WHAT_HAPPENED.get(category, "failed")


def sentence(text: str) -> str:
    """[h31f] The summary as one sentence that ends once: a final period, unless it ends in one already, in a cut's "..." or
    in the '!' / '?' of the message it quotes; a trailing ',', ';' or ':' gives way to it."""
    text = text.rstrip()
    if not text or re.search(r"[.!?]$", text):
        return text
    return re.sub(r"[\s,;:]+$", "", text) + "."


def ranks_text(ranks: list[int]) -> str:
    """"rank 3" or "ranks 0-2,5" for a sorted list of ranks."""
    if not ranks:
        return ""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    runs, start = [], ranks[0]
    for a, b in zip(ranks, ranks[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return "ranks " + ",".join(runs)


def summary_of(view: AttemptView, root: Failure, first: dict[str, Any], symptoms: list[dict[str, Any]],
             suspects: list[int]) -> str:  # fmt: skip
    """The summary sentence of a failed attempt: who failed how, at which step, and what the others then did."""
    error = root.error
    tail = [_effect(len(s["ranks"]) or s["count"], EFFECTS[s["category"]]) for s in symptoms
            if s["category"] in EFFECTS and s["category"] != "nccl_timeout" or
            (s["category"] == "nccl_timeout" and not suspects)][:2]  # fmt: skip
    ends = "; " + "; ".join(tail) if tail else ""
    if suspects:
        timed = next((s for s in symptoms if s["category"] == "nccl_timeout"), None)
        reporters = sorted({*(timed["ranks"] if timed else ()), *([root.rank] if root.rank is not None else ())})
        op = _op_of(error)
        if first.get("rank") in suspects:  # the first failure is a silent rank the log showed alive
            hit = f"{ranks_text(reporters)}" if reporters else "the other ranks"
        else:
            hit = f"{ranks_text(reporters)} (first {who(first)})" if len(reporters) > 1 else who(first)
        suspect = "is the suspect" if len(suspects) == 1 else "are the suspects"
        # [h31f] the suspect's pod where the first failure is it, and the timeout's own line as its proof
        named = who(first) if suspects == [first.get("rank")] and first.get("pod") else ranks_text(suspects)
        proof = readable_message(error, view)
        text = (f"{hit} hit a collective timeout{op} while {ranks_text(suspects)} never reported one: "
                f"{named} {suspect} (stuck or dead before the collective)")
        room = SUMMARY_LIMIT - len(text) - len(ends) - len("; the timeout's line: ")
        if proof and len(proof) > room:
            proof = cut_message(proof, max(room - 3, MESSAGE_LIMIT // 4))
        text += f"; the timeout's line: {proof}" if proof else ""
    else:
        step = _step_at(view, first.get("rank"), first.get("pod"), root.t)
        at = f" at step {step}" if step is not None else ""
        when = f" at {error.time}" if error.time and step is None else ""
        saving = _saving_checkpoint(view, error)
        text = f"{who(first)} {what_happened(view, error, root.category)}{saving}{at}{when}{_detail(error, view)}"
    return text + ends


def _effect(count: int, what: str) -> str:
    """"3 ranks then lost their connection ..." ("1 rank then lost its connection ...")."""
    if count != 1:
        return f"{count} ranks then {what}"
    what = re.sub(r"^were\b", "was", what)
    what = re.sub(r"\btheir\b", "its", what)
    return f"1 rank then {what}"


def _op_of(error: ErrorRecord) -> str:
    m = re.search(r"SeqNum=(\d+), OpType=(\w+)", error.line or "")
    if m:
        return f" in {m.group(2)} (SeqNum={m.group(1)})"
    m = re.search(r"for (recv|send) operation", error.line or "")
    return f" (gloo {m.group(1)})" if m else ""
