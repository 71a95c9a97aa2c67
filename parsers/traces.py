"""Python stack traces: one `TraceRecord` per printed exception, assembled from one stream's lines.

`TraceParser` (the `StreamParser` of parsers/base.py) decides which lines form a trace
block; `trace_blocks.parse_block` reads the finished block; the line shapes both use,
with their sources, are in `trace_shapes`.

The parser is a state machine whose rules are data (`RULES`: per state, an ordered list
of `(test, action, next state)`), in the spirit of Fluent Bit's multiline engine
(fluent/fluent-bit src/multiline/flb_ml_parser_python.c), but joining chained
exceptions, ExceptionGroup boxes, faulthandler dumps, tracebacks of other processes
and torchrun's ChildFailedError box into one block each.

Where a trace ends, in order: the end of the stream (`close()`, or `expire()` when the
stream went quiet); a line that arrives more than `idle_s` after the trace's previous
line (the lines' own times: the parser has no clock); a line that cannot continue the
current state (a blank line not followed by a chain separator, a new trace header, a
log-line header after an exception message, the closing border of a box); for
free-text message lines also `message_gap_s` and `max_message_lines`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from typing import Any

import msgspec

from gangscope.parsers import times
from gangscope.parsers.lines import Line, LineState
from gangscope.parsers.records import Record
from gangscope.parsers.trace_blocks import FailureBox, FailureBoxState, parse_block
from gangscope.parsers.trace_shapes import (
    ANSI,
    BORDER,
    BOX_LINE,
    BOX_ROOT_CAUSE,
    BOX_TITLE,
    CHILD_FAILED_HEAD,
    CHILD_FAILED_TYPE,
    DUMP_EXTENSIONS,
    DUMP_THREAD,
    DUMP_TIMEOUT,
    DYNAMO_HINT,
    DYNAMO_USER_CODE,
    EG_HEAD,
    EXCEPTION,
    FATAL,
    FRAME,
    FOREIGN,
    HEADED,
    IPY_ARROW,
    IPY_CLASSIC_FRAME,
    IPY_FRAME,
    IPY_HEAD,
    LOGURU_FRAME,
    MARGIN,
    PE_EXCEPTION,
    PE_FRAME,
    PE_INFIX,
    PE_RULE,
    PE_TYPE,
    PREFILTER,
    REMOTE_HEAD,
    RICH_BODY,
    RICH_END,
    RICH_FRAME,
    RICH_HEAD,
    SEPARATOR,
    SP_ARROW,
    SP_ELIDED,
    SP_FRAME,
    SPAWN_INTRO,
    SYNTAX_FRAME,
    TB_HEAD,
    TB_TEXT,
    TF_NO_STACK,
    TF_NODE_STACK,
    TRIPLE_QUOTE,
    anything,
    blank,
    foreign,
    indented,
    interleaved,
)

__all__ = ["PREFILTER", "TraceParser", "parse_block"]


def _after_exception(t: str) -> str:
    """The state after an exception line: some exceptions carry a structured message."""
    m = EXCEPTION.match(t)
    kind = m.group("type") if m else ""
    if not (m and m.group("msg") or "").strip():
        if kind.endswith("ChildFailedError"):
            return "child_failed_open"
        if kind.endswith("RemoteTraceback"):
            return "remote_open"
        # mp.spawn's wrapper: ProcessRaisedException, or a bare Exception before torch 1.8
        # (torch/multiprocessing/spawn.py: raise Exception(msg), msg = "\n\n-- Process N terminated
        # with the following error:\n" + the child's traceback); spawn_open reads any other
        # bare Exception as a plain message.
        if kind.endswith("ProcessRaisedException") or kind == "Exception":
            return "spawn_open"
    return "message"


def _pe_after_exception(t: str) -> str:
    """pretty_errors: "Type:" has its message on the lines below, the type alone none."""
    return "pe_args" if PE_TYPE.match(t) else "pe_message"


# [h30e] A warning that quotes a stack: File lines with no header before them and no exception after them, not a
# traceback (a header cut off would be read as one, FRAME in START). torch's anomaly mode (detect_anomaly, Lightning's
# Trainer(detect_anomaly=True)) warns with the FORWARD call's stack of the node whose backward failed, right before the
# backward's own traceback: torch/csrc/autograd/anomaly_mode.cpp _print_stack / AnomalyMetadata::print_stack
# (TORCH_WARN("Error detected in ", name, ". ", "Traceback of forward call that caused the error:\n", stack), and for a
# parent node "Previous calculation was induced by ", name, ". Traceback of forward call that induced the previous
# calculation:\n"); then TORCH_WARN's " (Triggered internally at ...anomaly_mode.cpp:N.)" and the warnings module's
# source line, both indented. Read as the open state "quoted_stack" (START below): its File and indented lines are taken,
# the TORCH_WARN tail ends it, any other line ends it too and is read again; it gives no record (_finish), and while it is
# open the stream's lines all reach the parser, as for any open trace. Run: fixtures/runs/lightning_anomaly_nan (torch
# 2.15, Lightning 2.6.6).
QUOTED_STACK_HEAD = re.compile(r"Traceback of forward call that (?:caused the error|induced the previous calculation):\s*$")
QUOTED_STACK_END = re.compile(r"^\s*\(Triggered internally at ")  # c10's TORCH_WARN tail (c10/util/Exception.cpp)

# ----------------------------------------------------------------------------- the rules

TAKE = "take"  # the line belongs to the trace
HOLD = "hold"  # a blank line that belongs only if the trace goes on (a chain separator follows)
END = "end"  # the trace ended before this line; the line is looked at again with no trace open
LAST = "last"  # the line belongs to the trace and ends it
GOTO = "goto"  # look at the same line again in the next state
ASIDE = "aside"  # [h30f] another writer's line inside the trace: not the trace's, the parsers after this one read it, the trace goes on

Rule = tuple[Callable[[str], Any], str, "str | Callable[[str], str] | None"]

#: Where a trace starts. The first rule that matches wins (all start states are open states).
START: list[Rule] = [
    (TB_HEAD.match, TAKE, "tb_head"),
    (QUOTED_STACK_HEAD.search, TAKE, "quoted_stack"),  # [h30e] a warning's quoted stack: read, then dropped (_finish)
    (EG_HEAD.match, TAKE, "box"),
    (SYNTAX_FRAME.match, TAKE, "syntax"),  # a SyntaxError of the main script has no header
    (FRAME.match, TAKE, "frames"),  # a traceback whose header was cut off (an excerpt, a lost line)
    (FATAL.match, TAKE, "dump_head"),
    (DUMP_THREAD.match, TAKE, "dump"),
    (DUMP_TIMEOUT.match, TAKE, "dump"),
    (REMOTE_HEAD.match, TAKE, "remote_open"),
    (SEPARATOR.match, TAKE, "after_separator"),  # the exception before it was printed without header
    (CHILD_FAILED_HEAD.match, TAKE, "child_failed_open"),  # torchrun's box, its traceback not shown
    (BOX_TITLE.match, TAKE, "child_failed_box"),  # the box from its title on (see _finish)
    (BOX_ROOT_CAUSE.match, TAKE, "child_failed_box"),  # ... or from its root-cause section on
    # tracebacks other libraries draw (trace_shapes.RENDERED, each with the file that prints it)
    (RICH_HEAD.match, TAKE, "rich_box"),
    # [h29b] rich's panel from a frame line on, its title cut off (an excerpt or a tail that starts inside the box), as
    # FRAME above starts CPython's traceback whose header was cut off: rich/traceback.py _render_stack prints each frame
    # as "path:line in name" inside the panel's border, nothing else in a log draws that line
    (RICH_FRAME.match, TAKE, "rich_box"),
    (IPY_HEAD.match, TAKE, "ipy_frames"),
    (SP_FRAME.match, TAKE, "sp_frames"),
    (PE_FRAME.match, TAKE, "pe_code"),  # pretty_errors: its rule is no start (a rule of dashes is any log's)
]

#: state -> ordered rules. A state's rules that do not match leave the trace (END).
RULES: dict[str, list[Rule]] = {
    "quoted_stack": [  # [h30e] QUOTED_STACK_HEAD's frames and source lines, up to TORCH_WARN's tail
        (QUOTED_STACK_END.match, LAST, None),
        (FRAME.match, TAKE, "quoted_stack"),
        (indented, TAKE, "quoted_stack"),
    ],
    "tb_head": [  # loguru's header is followed by a blank line (its frames have one between them)
        (blank, HOLD, "lframes"),
        (anything, GOTO, "frames"),
    ],
    "lframes": [  # loguru: "> File" on the frame that caught it, "│ └ value" lines, blank lines
        (indented, TAKE, "lframes"),
        (LOGURU_FRAME.match, TAKE, "lframes"),
        (blank, HOLD, "lframes"),
        (TB_HEAD.match, END, None),
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),
    ],
    "rich_box": [  # inside rich's panel; a box cut short ends at the first line without its border
        (RICH_END.match, TAKE, "rich_after"),
        (RICH_BODY.match, TAKE, "rich_box"),
    ],
    "rich_after": [  # the exception line comes right after the panel
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),
    ],
    "ipy_frames": [  # ultratb: "File path:N, in f(...)", context lines, "---->" on the line, blank lines between
        (blank, HOLD, "ipy_frames"),
        (indented, TAKE, "ipy_frames"),
        (IPY_FRAME.match, TAKE, "ipy_frames"),
        (IPY_CLASSIC_FRAME.match, TAKE, "ipy_frames"),  # [h27a] before IPython 8: "<file> in <func>(<args>)"
        (IPY_ARROW.match, TAKE, "ipy_frames"),
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),
    ],
    "sp_frames": [  # stackprinter: 'File "..."' at the margin, "-->" on the line, variables, blank lines between
        (blank, HOLD, "sp_frames"),
        (indented, TAKE, "sp_frames"),
        (SP_FRAME.match, TAKE, "sp_frames"),
        (SP_ARROW.match, TAKE, "sp_frames"),
        (SP_ELIDED.match, TAKE, "sp_frames"),
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),
    ],
    "pe_code": [  # pretty_errors: the frame's line after its location
        (anything, TAKE, "pe_frames"),
    ],
    "pe_frames": [  # blank lines, mono()'s "---", the next location; the exception line ends the frames
        (blank, HOLD, "pe_frames"),
        (PE_INFIX.match, TAKE, "pe_frames"),
        (PE_FRAME.match, TAKE, "pe_code"),
        (FOREIGN.match, END, None),
        (PE_EXCEPTION.match, TAKE, _pe_after_exception),
    ],
    "pe_args": [  # the line below "Type:" is its message's first, whatever it looks like
        (anything, TAKE, "pe_message"),
    ],
    "pe_message": [  # the message's lines (the args, one a line) below "Type:"
        (blank, HOLD, "pe_message_blank"),
        (foreign, END, None),
        (anything, TAKE, "pe_message"),
    ],
    "pe_message_blank": [  # a rule then a location: the exception raised while handling this one
        (blank, HOLD, "pe_message_blank"),
        (PE_RULE.match, HOLD, "pe_rule"),
    ],
    "pe_rule": [
        (blank, HOLD, "pe_rule"),
        (PE_FRAME.match, TAKE, "pe_code"),
    ],
    "frames": [
        (TB_HEAD.match, END, None),
        (EG_HEAD.match, END, None),
        (interleaved, ASIDE, "frames"),  # a sibling's log line behind a frame's indent (trace_shapes.INTERLEAVED)
        (indented, TAKE, "frames"),  # File lines, code lines, carets, "[Previous line repeated]"
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),
    ],
    "syntax": [
        (indented, TAKE, "syntax"),  # the code line and its caret line
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),
    ],
    "message": [  # free-form: the lines of a multi-line message and of __notes__
        (blank, HOLD, "message_blank"),
        (SEPARATOR.match, TAKE, "after_separator"),
        (foreign, END, None),
        (anything, TAKE, "message"),
    ],
    "message_blank": [
        (blank, HOLD, "message_blank2"),  # loguru prints two blank lines before a chain separator
        (SEPARATOR.match, TAKE, "after_separator"),
        (TF_NODE_STACK.match, TAKE, "tf_node_stack"),  # TensorFlow's op error goes on after a blank line
        (DYNAMO_USER_CODE.match, TAKE, "dynamo_frames"),  # [h34e] so does torch.compile's (trace_shapes.DYNAMO_USER_CODE)
        (DYNAMO_HINT.match, TAKE, "message"),
    ],
    "dynamo_frames": [  # [h34e] "from user code:"'s File and source lines, in the message; the blank line after them
        (indented, TAKE, "dynamo_frames"),
        (blank, HOLD, "message_blank"),
    ],
    "tf_node_stack": [  # the node's creation stack: File lines with a blank after each, then the op's message
        (blank, HOLD, "tf_node_stack"),
        (indented, TAKE, "tf_node_stack"),
        (TF_NO_STACK.match, TAKE, "tf_node_stack"),
        (TF_NODE_STACK.match, TAKE, "tf_node_stack"),
        (SEPARATOR.match, TAKE, "after_separator"),
        (foreign, END, None),
        (anything, TAKE, "message"),
    ],
    "message_blank2": [
        (SEPARATOR.match, TAKE, "after_separator"),
        (DYNAMO_HINT.match, TAKE, "message"),  # [h34e] dynamo's "\n\nYou can suppress this exception ..."
    ],
    "message_done": [  # the message had a closing line (box border, closing quotes)
        (blank, HOLD, "message_blank"),
        (SEPARATOR.match, TAKE, "after_separator"),
    ],
    "after_separator": [
        (blank, TAKE, "after_separator"),
        (TB_HEAD.match, TAKE, "tb_head"),
        (RICH_HEAD.match, TAKE, "rich_box"),
        (IPY_HEAD.match, TAKE, "ipy_frames"),
        (SP_FRAME.match, TAKE, "sp_frames"),
        (EG_HEAD.match, TAKE, "box"),
        (REMOTE_HEAD.match, TAKE, "remote_open"),
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),  # an exception that was never raised has no frames
    ],
    "box": [  # an ExceptionGroup: every line has a `|` or `+` margin
        (BOX_LINE.match, TAKE, "box"),
        (blank, HOLD, "message_blank"),
        (SEPARATOR.match, TAKE, "after_separator"),  # `[rankN]:` streams lose their blank lines
    ],
    "remote_open": [
        (TRIPLE_QUOTE.match, TAKE, "remote_body"),
        (anything, GOTO, "message"),
    ],
    "remote_body": [
        (TRIPLE_QUOTE.match, TAKE, "message_done"),
        (anything, TAKE, "remote_body"),
    ],
    "spawn_open": [
        (blank, TAKE, "spawn_open"),
        (SPAWN_INTRO.match, TAKE, "spawn_intro"),
        (anything, GOTO, "message"),
    ],
    "spawn_intro": [
        (TB_HEAD.match, TAKE, "frames"),  # the child's traceback ends the parent's message
        (anything, GOTO, "message"),
    ],
    "child_failed_open": [
        (BORDER.match, TAKE, "child_failed_box"),
        (BOX_TITLE.match, TAKE, "child_failed_box"),  # a copy that lost the border: the title follows
        (anything, GOTO, "message"),
    ],
    "child_failed_box": [
        (BORDER.match, TAKE, "message_done"),
        (anything, TAKE, "child_failed_box"),
    ],
    "dump_head": [  # "Fatal Python error: ..." and the lines before the first blank
        (blank, HOLD, "dump_blank"),
        (DUMP_THREAD.match, TAKE, "dump"),
        (indented, TAKE, "dump"),
        (foreign, END, None),
        (anything, TAKE, "dump_head"),
    ],
    "dump": [
        (indented, TAKE, "dump"),
        (DUMP_THREAD.match, TAKE, "dump"),
        (blank, HOLD, "dump_blank"),
        (DUMP_EXTENSIONS.match, LAST, None),
    ],
    "dump_blank": [
        (DUMP_THREAD.match, TAKE, "dump"),
        (DUMP_EXTENSIONS.match, LAST, None),
    ],
}

#: States that read free text: a line there must also come within `message_gap_s` of the
#: trace's previous line, and only so many of them may come in a row (`max_message_lines`
#: in COUNTED_TEXT, ten times `max_lines` inside a box or quotes, which have a closing line).
FREE_TEXT = frozenset({"message", "message_blank", "message_blank2", "dump_head", "remote_body", "child_failed_box",
                       "pe_args", "pe_message", "pe_message_blank", "dynamo_frames"})
COUNTED_TEXT = frozenset({"message", "message_blank", "message_blank2", "dump_head", "pe_message", "pe_message_blank",
                          "dynamo_frames"})

#: States in which a trace may end without being cut short.
TERMINAL = frozenset({"message", "message_blank", "message_blank2", "message_done", "box", "dump", "dump_blank",
                      "tf_node_stack", "dynamo_frames",
                      "pe_message", "pe_message_blank", "pe_rule"})


# ----------------------------------------------------------------------------- the parser


# The longest head taken off before a header and the lines of its trace (a logger's or a log
# collector's: times, levels, process names, ids).
MAX_HEAD = 300
_DIGITS_AS_ZERO = str.maketrans("0123456789", "0000000000")


# Python's own headers that end in the same words: no head before them
_OWN_WORDS = re.compile(r".*(?:Original|Exception Group) $").match  # (the prefilter lets neither pass)


def unmargin(text: str) -> str:
    """A line of a viewer's box without its border: "│ " on the left, "│" at the right edge and the padding before it."""
    t = text[2:] if text[1:2] == " " else text[1:]
    t = t.rstrip()
    if t.endswith(MARGIN):
        t = t[:-1].rstrip()
    return t


_HEADED_STATE = {"ipy": "ipy_frames", "sp": "sp_frames"}  # trace_shapes.HEADED's groups


def _headed_start(raw: str, text: str) -> tuple[int, str]:
    """Where a drawn traceback starts behind a head on its line, and its state; (-1, "") for none. rich's panel
    ("<time> <level> ╭─── Traceback (most recent call last) ───╮") behind any head; ultratb's head and stackprinter's
    frame line (trace_shapes.HEADED) behind a log line's head (a time or a level first, FOREIGN), the head without
    colours."""
    if "\u256d" in text:
        pos = raw.find("\u256d")
        return (pos, "rich_box") if pos > 0 and RICH_HEAD.match(raw[pos:]) else (-1, "")
    m = HEADED.search(text)
    if m is None:
        return -1, ""
    kind = m.lastgroup or ""
    pos = m.start(kind)
    if not FOREIGN.match(text) or raw[:pos] != text[:pos]:
        return -1, ""
    return pos, _HEADED_STATE[kind]


def _shape(head: str) -> str:
    """A head as it recurs line after line: its digits (times, pids, counters) as 0."""
    return head.translate(_DIGITS_AS_ZERO)


class TraceState(msgspec.Struct, tag="trace", kw_only=True, omit_defaults=True):
    """An open trace in a snapshot: the rule state it is in, its first line, the lines kept
    (`lines` from the start, `tail` the last ones; `line_count` read, `dropped` between them,
    `cut` a line shortened), blank lines `held` until the trace goes on, free-text lines read
    in a row (`text_lines`), the time of its last line in seconds (`last_s`) and a torchrun
    failure box being read."""

    state: str
    first: LineState
    lines: list[str] = []
    tail: list[str] = []
    line_count: int = 0
    dropped: int = 0
    cut: bool = False
    held: list[str] = []
    text_lines: int = 0
    last_s: float | None = None
    head: str | None = None  # the shape of the head before its header (see TraceParser._start)
    head_len: int = 0
    head_each_line: bool | None = None
    after_frame: bool = False
    margin: bool = False
    failures: FailureBoxState | None = None
    aside: TraceState | None = None  # [h31h] a trace set aside while another rank's trace is read (TraceParser.feed)


# [h31h] Traces of other ranks set aside at most at once in one stream (a pod's ranks: 8 GPUs a node); past it a header
# inside a trace ends it, as before.
MAX_ASIDE = 8
# [h31h] Where a CPython frame line starts behind a progress bar's '\r' states on the same line (tqdm/std.py status_printer
# writes '\r' + the bar and no newline until the bar closes; another rank's File line, one write of its own, lands behind it)
GLUED_FRAME = '  File "'


def _depth(state: TraceState | None) -> int:
    n = 0
    while state is not None:
        n, state = n + 1, state.aside
    return n


class TraceParser:
    """Assembles the stack traces of one logical stream (see parsers/base.py).

    Parameters: `idle_s` closes an open trace before a line that comes later than that
    after the trace's previous line; `message_gap_s` does the same for lines that would
    continue an exception message (Python prints a whole traceback at once: in the
    fixture runs, on a loaded machine, its lines are at most 15 microseconds apart, while
    a program that logs on after a handled traceback printed its next line 90 ms later);
    `max_lines` / `max_bytes` bound what one trace keeps
    (its first and last lines; the rest is counted and `truncated` is set);
    `max_message_lines` bounds a free-text message.
    """

    PREFILTER = PREFILTER
    State = TraceState  # the class of its snapshots

    def __init__(
        self,
        idle_s: float = 5.0,
        message_gap_s: float = 0.05,
        max_lines: int = 2000,
        max_bytes: int = 256 * 1024,
        max_message_lines: int = 200,
    ) -> None:
        self.idle_s = idle_s
        self.message_gap_s = message_gap_s
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.max_message_lines = max_message_lines
        self._state: str | None = None
        self._first: Line | None = None
        self._block = _Block(max_lines, max_bytes)
        self._held: list[str] = []
        self._failures: FailureBox | None = None
        self._text_lines = 0
        self._last_s: float | None = None  # seconds since the epoch of the last line
        # A header behind a head on its line ("<time> CRITICAL | Traceback ..."): the head's shape
        # (digits as 0), its length, and whether the lines after it carry it too (None: not yet known).
        self._head: str | None = None
        self._head_len = 0
        self._head_each_line: bool | None = None
        self._after_frame = False  # the last line taken off its head was a File line
        self._margin = False  # every line of the trace is inside a viewer's box (trace_shapes.MARGIN)
        # [h31h] the traces set aside (the last one first) while another's is read, and whether the line being fed
        # is to be read again by the trace taken up again
        self._aside: TraceState | None = None
        self._again = False

    @property
    def open(self) -> bool:
        return self._state is not None

    def feed(self, line: Line) -> tuple[bool, list[Record]]:
        consumed, records = self._feed(line)
        while self._again:  # [h31h] the trace ended, one set aside was taken up again: the line is read by it
            self._again = False
            consumed, more = self._feed(line)
            records += more
        return consumed, records

    def _feed(self, line: Line) -> tuple[bool, list[Record]]:
        text = line.text
        if "\x1b" in text:
            text = ANSI.sub("", text)
        if self._state is None:
            return self._start(line, text), []
        glued = False
        if self._head is not None:
            bare = self._without_head(line, text)
            if bare is None:  # a collector's line of another head (level, process): the trace is over
                return self._restart(line, text)
            line, text = bare
        if self._margin:
            if text[:1] != MARGIN:  # out of the box (its bottom border, a line of its own)
                return self._restart(line, text)
            line, text = line._replace(text=unmargin(line.text)), unmargin(text)
        elif self._head is None and self._state in ("frames", "tb_head"):
            if "\r" in text and (at := text.rfind(GLUED_FRAME)) > 0 and FRAME.match(text[at:]):
                # [h31h] another rank's File line behind this stream's open progress bar: the frame from its indent on
                line, text, glued = line._replace(text=line.text[line.text.rfind(GLUED_FRAME):]), text[at:], True
            if text[:1] not in (" ", "\t", ""):
                line, text = self._reindent(line, text)
            else:
                self._after_frame = False
        if (self._aside is not None and self._state == "message" and text[:1] == " " and self._aside.state in ("frames", "tb_head")
                and (not self._text_lines or FRAME.match(text))):
            # [h31h] an indented line right after this trace's exception line, or a File line in its message, while another
            # rank's trace waits aside for its frames: the other trace's (CPython writes a traceback line by line)
            return self._restart(line, text)
        if self._state == "sp_frames" and self._cpython_source_at_margin(text):
            self._as_cpython_frames()
            line, text = line._replace(text="    " + line.text), "    " + text
        now = times.leading_seconds(line.time) if line.time else None
        gap = now - self._last_s if now is not None and self._last_s is not None else 0.0
        if gap > self.idle_s:
            return self._restart(line, text)
        state = self._state
        while True:
            for test, action, nxt in RULES[state]:
                if test(text):
                    break
            else:
                return self._restart(line, text)
            if action != GOTO:
                break
            state = nxt  # type: ignore[assignment]
        if (action == END and state == "frames" and self._head is None and not self._margin and TB_HEAD.match(text)
                and _depth(self._aside) < MAX_ASIDE):
            # [h31h] another rank's header inside the frames of this one (unprefixed tracebacks of two ranks of a pod, torch
            # < 2.2, written into one stderr line by line): this trace is set aside, taken up again when the other ends
            aside = self.snapshot()
            self._aside = None
            consumed = self._start(line, text)
            self._aside = aside
            return consumed, []
        if action == END or (state in FREE_TEXT and not self._text_goes_on(state, gap)):
            return self._restart(line, text)
        if action == ASIDE:
            # the frame's source line comes after the sibling's line, at the margin when the indent went before it:
            # read it as the source (_reindent) if the trace's last line is the frame's File line
            if self._head is None and not self._margin:
                block = self._block
                last = block.tail[-1] if block.tail else (block.head[-1] if block.head else "")
                self._after_frame = FRAME.match(last) is not None
            return False, []
        if action == HOLD:
            self._held.append(line.text)
        else:
            self._take(line.text)
            if state == "child_failed_open":
                self._failures = FailureBox()
            if self._failures is not None and state in ("child_failed_open", "child_failed_box"):
                self._failures.add(text)
        if now is not None:
            self._last_s = now
        if action == LAST:
            return True, self._finish()
        self._state = nxt(text) if callable(nxt) else nxt  # type: ignore[assignment]
        if self._state not in FREE_TEXT:
            self._text_lines = 0
        return not glued, []

    def close(self) -> list[Record]:
        """End of the stream: an open trace is emitted; one cut short is `truncated`."""
        records: list[Record] = []
        while self._state is not None:  # and the traces set aside, each taken up again (_finish)
            records += self._finish()
        return records

    @property
    def quiet_s(self) -> float:
        """How long the stream must stay quiet before the open trace is certainly over: in a
        free-text message only a line within `message_gap_s` could still continue it."""
        return self.message_gap_s if self._state in COUNTED_TEXT and self._state != "dump_head" else self.idle_s

    def expire(self, time: str) -> list[Record]:
        """Emit the open trace if its last line is more than `quiet_s` older than `time`.

        For streams that go quiet after a trace (a rank that died): the caller passes a
        time it saw elsewhere (another stream of the pod, a later poll), so the parser
        stays pure and still needs no clock."""
        records: list[Record] = []
        now = times.leading_seconds(time)
        while self._state is not None and self._last_s is not None and now is not None and now - self._last_s > self.quiet_s:
            records += self._finish()  # then a trace set aside and taken up again, if it is as quiet
        return records

    # -- snapshots

    def snapshot(self) -> "TraceState | None":
        """The open trace as plain data; None when no trace is open (then there is nothing to
        keep: the next line is read as by a new parser)."""
        if self._state is None or self._first is None:
            return None
        block = self._block
        return TraceState(
            state=self._state, first=LineState.of(self._first), lines=list(block.head), tail=list(block.tail),
            line_count=block.count, dropped=block.dropped, cut=block.cut, held=list(self._held),
            text_lines=self._text_lines, last_s=self._last_s,
            head=self._head, head_len=self._head_len, head_each_line=self._head_each_line, after_frame=self._after_frame,
            margin=self._margin,
            failures=None if self._failures is None else self._failures.snapshot(),
            aside=self._aside,
        )

    def restore(self, state: "TraceState") -> None:
        """Take up the open trace of `state` (this parser's bounds apply to what comes next)."""
        if state.state not in RULES:
            raise ValueError(f"trace parser state {state.state!r} is not one of this build's")
        block = _Block(self.max_lines, self.max_bytes)
        block.head, block.tail, block.count = list(state.lines), deque(state.tail), state.line_count
        block.dropped, block.cut = state.dropped, state.cut
        block._head_room -= sum(len(t) + 1 for t in state.lines)
        block._tail_size = sum(len(t) + 1 for t in state.tail)
        self._state, self._first, self._block = state.state, state.first.line(), block
        self._held, self._text_lines, self._last_s = list(state.held), state.text_lines, state.last_s
        self._head, self._head_len, self._head_each_line = state.head, state.head_len, state.head_each_line
        self._after_frame = state.after_frame
        self._margin = state.margin
        self._failures = None if state.failures is None else FailureBox.from_snapshot(state.failures)
        self._aside = state.aside

    # -- internals

    def _text_goes_on(self, state: str, gap: float) -> bool:
        if gap > self.message_gap_s:
            return False
        self._text_lines += 1
        return self._text_lines <= (self.max_message_lines if state in COUNTED_TEXT else 10 * self.max_lines)

    def _start(self, line: Line, text: str) -> bool:
        """Open a trace if the line starts one; True if the line is the trace's alone."""
        consumed = True
        head = None
        margin = False
        if text[:1] == MARGIN:  # a plain traceback inside a viewer's box: read without the border
            inner = unmargin(text)
            if TB_HEAD.match(inner) or FRAME.match(inner):
                margin, text, line = True, inner, line._replace(text=unmargin(line.text))
        for test, _action, nxt in START:
            if test(text):
                break
        else:
            # a header glued to a progress bar drawn with '\r' on the same line, or behind a head
            # a logger or a log collector wrote first ("<time> CRITICAL | Traceback (most recent
            # call last):", ParlAI's logger; "<prog> | <time> | ERROR | Traceback ...", a head on
            # every line of the trace): the trace starts at the header, and the line stays for
            # the parsers after this one
            at = text.rfind(TB_TEXT)
            pos = line.text.rfind(TB_TEXT) if at > 0 and ("\r" in text or TB_HEAD.match(text[at:]) and not _OWN_WORDS(text, 0, at)) else -1
            nxt = "tb_head"
            if pos < 0:  # a drawn traceback behind a head
                pos, nxt = _headed_start(line.text, text)
                if pos <= 0:
                    return False
            elif not TB_HEAD.match(line.text[pos:]):
                return False
            if "\r" not in line.text[:pos] and 0 < pos <= MAX_HEAD:
                head = line.text[:pos]
            line = line._replace(text=line.text[pos:])
            consumed = False
        self._head = _shape(head) if head is not None else None
        self._head_len = len(head) if head is not None else 0
        self._head_each_line = None
        self._after_frame = False
        self._margin = margin
        self._state = nxt  # type: ignore[assignment]
        self._first = line
        self._block = _Block(self.max_lines, self.max_bytes)
        self._held = []
        self._failures = None
        if nxt == "child_failed_box":  # a box whose border and exception line were not kept
            self._failures = FailureBox()
            self._failures.add("=" * 60)
            if BOX_ROOT_CAUSE.match(text):  # no title: the section's own rule comes first
                self._failures.add("-" * 60)
            self._failures.add(text)
        self._text_lines = 0
        self._last_s = times.leading_seconds(line.time) if line.time else None
        self._block.add(line.text)
        return consumed

    def _without_head(self, line: Line, text: str) -> tuple[Line, str] | None:
        """The line with the head its trace's header had taken off, if it carries one of the same
        shape; None for a line without it where every line has had it. Decided on the first line
        after the header: a logger writes the head once (the trace's other lines come bare), a log
        collector on every line."""
        n = self._head_len
        carries = len(line.text) > n and _shape(line.text[:n]) == self._head
        if not carries and len(line.text) <= n and line.text.strip() and _shape(line.text).rstrip() == self._head.rstrip():
            # the head alone: a blank line of the trace behind it (its trailing space kept or trimmed)
            line = line._replace(text=line.text + " " * (n - len(line.text)))
            carries = True
        if self._head_each_line is None:
            self._head_each_line = carries
            if not carries:
                self._head = None
        if not carries:
            return None if self._head_each_line else (line, text)
        bare = line.text[n:]
        if self._state in ("frames", "tb_head") and bare[:1] not in (" ", "\t", ""):
            # a collector that strips each line (the head then the text, no indent): the
            # traceback's own indents put back, 2 for a File line, 4 for the code line after it
            if bare.startswith('File "'):
                bare = "  " + bare
            elif self._after_frame:
                bare = "    " + bare
        self._after_frame = FRAME.match(bare) is not None
        line = line._replace(text=bare)
        return line, (ANSI.sub("", bare) if "\x1b" in bare else bare)

    def _reindent(self, line: Line, text: str) -> tuple[Line, str]:
        """[h26a] A CPython traceback whose lines lost their indents with no head before them (a paste outside a
        code fence: GitHub's Markdown keeps the text but a copy from the rendered page drops the leading blanks; a
        collector that strips lines and writes no head): CPython prints every frame as '  File "<path>", line N, in
        <name>' and its source line under it with four blanks (Lib/traceback.py StackSummary.format_frame_summary), so
        a 'File "..."' line at the margin after the header is a frame, and the line right after it its source line
        (the `_without_head` rule for a head's lines, without the head). The exception line comes after a source
        line, at the margin, and is read as before; a frame printed with no source line (a frozen module's) before
        the exception line makes that line read as source: the trace reads as cut, never as another exception."""
        if text.startswith('File "') and FRAME.match("  " + text):
            self._after_frame = True
            return line._replace(text="  " + line.text), "  " + text
        if self._after_frame:
            self._after_frame = False
            return line._replace(text="    " + line.text), "    " + text
        return line, text

    def _cpython_source_at_margin(self, text: str) -> bool:
        """[h29e] Whether a line read as stackprinter's is CPython's source line with its indent lost: the line right
        after a 'File "<path>", line N, in <name>' at the margin (the trace's last line kept, no blank line held
        between), at the margin itself, that is no frame, arrow or elision of stackprinter's, no log line and no
        exception line. stackprinter prints its source lines indented under the frame ("    581      x = f(y)", "-->" on
        the failing one: trace_shapes.SP_ARROW) and the exception at the margin; CPython's traceback copied without its
        indents (a launcher front-end logging a child's stderr line by line, a copy from a rendered page, no header kept:
        _reindent's case with its header cut) puts the source line at the margin right under its frame. A line reads
        as an exception when it carries a message ("Type: ...") or its class name is capitalised ("ValueError",
        "a.b.KeyboardInterrupt"); "trainer.train(args)", "main()", "raise" are source. Sample: dev 1114
        (cocktailpeanut/fluxgym#289: fluxgym's "[time] [INFO] " before each line of sd-scripts' traceback)."""
        if self._held or self._margin or text[:1] in (" ", "\t", "") or not text.strip():
            return False
        block = self._block
        last = block.tail[-1] if block.tail else (block.head[-1] if block.head else "")
        if not SP_FRAME.match(last) or SP_FRAME.match(text) or SP_ARROW.match(text) or SP_ELIDED.match(text) or FOREIGN.match(text):
            return False
        m = EXCEPTION.match(text)
        if m is None:
            return True
        if m["msg"] is not None:
            return False
        name = m["type"].split("(", 1)[0].rsplit(".", 1)[-1]
        return not name[:1].isupper()

    def _as_cpython_frames(self) -> None:
        """The trace read so far as stackprinter's, read again as CPython's frames with their indents lost: its File lines
        put back at CPython's two blanks (Lib/traceback.py StackSummary.format_frame_summary), the state `frames`, the
        line being read the source line under the last frame (the caller indents it by four)."""
        old = self._block
        block = _Block(self.max_lines, self.max_bytes)
        for kept in old.lines():
            block.add("  " + kept if SP_FRAME.match(kept) else kept)
        block.count, block.dropped, block.cut = old.count, old.dropped, old.cut
        self._block = block
        self._state = "frames"
        self._after_frame = False

    def _restart(self, line: Line, text: str) -> tuple[bool, list[Record]]:
        records = self._finish()
        if self._state is not None:  # [h31h] a trace set aside was taken up again: it reads the line (feed)
            self._again = True
            return False, records
        return self._start(line, text), records

    def _take(self, text: str) -> None:
        if self._held:
            for held in self._held:
                self._block.add(held)
            self._held = []
        self._block.add(text)

    def _finish(self) -> list[Record]:
        state, first, block = self._state, self._first, self._block
        self._state, self._first, self._held = None, None, []
        if self._aside is not None:  # [h31h] the last trace set aside is taken up again (after this one's record is made)
            aside, self._aside = self._aside, None
            try:
                return self._finish_one(state, first, block)
            finally:
                self.restore(aside)
        return self._finish_one(state, first, block)

    def _finish_one(self, state: str | None, first: Line | None, block: _Block) -> list[Record]:
        if first is None or state == "syntax":  # a `File "...", line N` that no SyntaxError followed
            return []
        if state == "quoted_stack":  # [h30e] the stack a warning quotes: no exception, no trace
            return []
        failures, self._failures = (self._failures.result() if self._failures else None), None
        lines = block.lines()
        if BOX_TITLE.match(first.text):  # read as the box it is: its exception line and border implied
            lines = [f"{CHILD_FAILED_TYPE}: ", "=" * 60, *lines]
        elif BOX_ROOT_CAUSE.match(first.text):  # ... and its title too
            lines = [f"{CHILD_FAILED_TYPE}: ", "=" * 60, "-" * 60, *lines]
        record = parse_block(lines, block.text(), failures)
        if record is None:
            return []
        record.time, record.seq, record.rank, record.local_rank = first.time, first.seq, first.rank, first.local_rank
        record.line_count = block.count
        # cut short: over its bounds, or it stopped (stream end, idle, a foreign line) where more was due
        record.truncated = record.truncated or block.truncated or state not in TERMINAL  # (h25c: or its type was cut)
        return [record]


class _Block:
    """The lines of one trace within bounds: the first ones and the last ones are kept (the
    exception line, the most telling one, comes last), the ones between only counted."""

    __slots__ = ("head", "tail", "count", "dropped", "cut", "_head_lines", "_tail_lines", "_head_room", "_tail_room", "_tail_size")

    def __init__(self, max_lines: int, max_bytes: int) -> None:
        self._tail_lines = max(1, max_lines // 10)
        self._head_lines = max(1, max_lines - self._tail_lines)
        self._tail_room = max(1, max_bytes // 4)
        self._head_room = max(1, max_bytes - self._tail_room)
        self.head: list[str] = []
        self.tail: deque[str] = deque()
        self._tail_size = 0
        self.count = 0
        self.dropped = 0
        self.cut = False

    def add(self, text: str) -> None:
        self.count += 1
        size = len(text) + 1
        if not self.tail and len(self.head) < self._head_lines and size <= self._head_room:
            self.head.append(text)
            self._head_room -= size
            return
        if size > self._tail_room:
            text, size, self.cut = text[: self._tail_room - 1], self._tail_room, True
        self.tail.append(text)
        self._tail_size += size
        while len(self.tail) > self._tail_lines or self._tail_size > self._tail_room:
            self._tail_size -= len(self.tail.popleft()) + 1
            self.dropped += 1

    @property
    def truncated(self) -> bool:
        return self.dropped > 0 or self.cut

    def lines(self) -> list[str]:
        return self.head + list(self.tail) if self.tail else self.head

    def text(self) -> str:
        if not self.dropped:
            return "\n".join(self.lines())
        return "\n".join([*self.head, f"[... {self.dropped} lines not kept ...]", *self.tail])
