"""Python stack traces: one `TraceRecord` per printed exception, assembled from one stream's lines.

Two stages, each with one job:

1. `TraceParser` (the `StreamParser` of parsers/base.py) decides which lines form a
   trace block. It is a state machine whose rules are data (`RULES`: per state, an
   ordered list of `(test, action, next state)`), in the spirit of Fluent Bit's
   multiline engine (fluent/fluent-bit src/multiline/flb_ml_parser_python.c) but
   joining chained exceptions, ExceptionGroup boxes, faulthandler dumps, remote
   tracebacks and torchrun's ChildFailedError box into one block each.
2. `parse_block(lines)` reads a finished block: the exception chain, frames,
   sub-exceptions, failures, and the fingerprint.

Formats (FORMATS.md section 4, checked against real output of CPython 3.10-3.13 and
torch 2.x): CPython Lib/traceback.py (`TracebackException.format`, `StackSummary.format`,
`_ExceptionPrintContext`), Python/faulthandler.c (`dump_frame`, `faulthandler_dump_traceback`),
Lib/multiprocessing/pool.py (`RemoteTraceback`, `ExceptionWithTraceback`),
torch/multiprocessing/spawn.py (`ProcessRaisedException`), torch/utils/data/_utils
(`ExceptionWrapper`: "Original Traceback"), torch/distributed/elastic/multiprocessing/
errors/__init__.py (`_FAILURE_FORMAT_TEMPLATE`, `_MSG_FORMAT_TEMPLATE`).

Where a trace ends, in order: the end of the stream (`close()`); a line that arrives
more than `idle_s` after the trace's previous line (the lines' own times: the parser
has no clock); a line that cannot continue the current state (a blank line that is
not followed by a chain separator, a new trace header, a log-line header after an
exception message, the closing border of a box); for free-form message lines also
`message_gap_s` and `max_message_lines`.

`exception_type` of a faulthandler dump is the text after `Fatal Python error: `
(`Segmentation fault`, `Aborted`, ...), as it names the signal the way the process
saw it; `details["signal"]` has the signal name (`SIGSEGV`). Dump frames are put
oldest first, like traceback frames.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from gangscope.parsers.fingerprint import fingerprint, frame_keys, normalize_message
from gangscope.parsers.lines import Line
from gangscope.parsers.records import ChainLink, Frame, Record, TraceRecord

# ----------------------------------------------------------------------------- line shapes

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # 3.13+ colour (FORCE_COLOR / PYTHON_COLORS)

TB_HEAD = re.compile(r"^Traceback \(most recent call last\):\s*$")
GROUP_TB_HEAD = re.compile(r"^Exception Group Traceback \(most recent call last\):\s*$")  # inside a box
EG_HEAD = re.compile(r"^[ \t]*\+ Exception Group Traceback \(most recent call last\):\s*$")
FRAME = re.compile(r'^\s+File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<func>.+?)\s*$')
SYNTAX_FRAME = re.compile(r'^\s+File "(?P<file>[^"]*)", line (?P<line>\d+)\s*$')
# faulthandler: no comma before `in`, line may be `???` (Python/faulthandler.c dump_frame)
DUMP_FRAME = re.compile(r'^\s+File "(?P<file>[^"]*)", line (?P<line>\d+|\?\?\?) in (?P<func>.+?)\s*$')
CARET = re.compile(r"^\s*[~^]+\s*$")
REPEAT = re.compile(r"^\s*\[Previous line repeated (\d+) more times?\]\s*$")
SEPARATOR = re.compile(
    r"^(?:(?P<cause>The above exception was the direct cause of the following exception:)"
    r"|(?P<context>During handling of the above exception, another exception occurred:))\s*$"
)
# `format_exception_only`: "Type: message", or the bare type when str(exc) is empty
EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:\.<locals>\.[\w.]+)?)(?:: ?(?P<msg>.*))?$")
FATAL = re.compile(r"^Fatal Python error: (?P<msg>.*?)\s*$")
DUMP_THREAD = re.compile(
    r"^(?:(?P<current>Current thread)|Thread) (?P<tid>0x[0-9a-fA-F]+)(?: \[[^\]]*\])? \(most recent call first\):\s*$"
    r"|^(?P<stack>Stack) \(most recent call first\):\s*$"
)
DUMP_TIMEOUT = re.compile(r"^Timeout \((?P<t>\d+:\d\d:\d\d(?:\.\d+)?)\)!\s*$")
DUMP_EXTENSIONS = re.compile(r"^Extension modules: ")
REMOTE_HEAD = re.compile(r"^(?P<type>(?:multiprocessing\.pool\.|concurrent\.futures\.process\._)?RemoteTraceback):\s*$")
SPAWN_INTRO = re.compile(r"^-- Process (?P<index>\d+) terminated with the following error:\s*$")
ORIGINAL_TB = re.compile(r"^Original Traceback \(most recent call last\):\s*$")
BORDER = re.compile(r"^=+\s*$")
BOX_LINE = re.compile(r"^[ \t]+[|+]")
TRIPLE_QUOTE = re.compile(r'^"""\s*$')
_TB_TEXT = "Traceback (most recent call last):"

# Lines that start a log record of their own, so they cannot continue an exception
# message: timestamps first, glog / torch elastic / c10 headers, level names first,
# NCCL's host:pid:tid, dict-like metric lines, progress bars, step lines.
FOREIGN = re.compile(
    r"""^(?:\[?\d{4}-\d\d-\d\d[T _]\d\d:\d\d
    |\[?\d\d:\d\d:\d\d
    |\[?[IWEFD]\d{4}\ \d\d:\d\d:\d\d
    |\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL|TRACE)(?:\]|:|\s)
    |[\w.-]+:\d+:\d+\ \[\d+\]\ NCCL\ 
    |\{['"]
    |(?i:epoch|step|iter(?:ation)?)\b[\s:=\[]*\d
    |[^\r]*\r)""",
    re.X,
)

#: Any line that can START a trace (meant for `re.search` / `re.match` on the line text).
#: While no trace is open, lines that do not match need not be fed.
PREFILTER = (
    r"^(?:Traceback \(most recent call last\):"
    r"|[ \t]+(?:\+ Exception Group Traceback|File (?:\x1b\[[0-9;]*m)?\")"
    r"|Fatal Python error: "
    r"|(?:Current thread|Thread) 0x[0-9a-fA-F]+ "
    r"|Stack \(most recent call first\)"
    r"|Timeout \(\d+:\d\d:\d\d"
    r"|(?:multiprocessing\.pool\.|concurrent\.futures\.process\._)?RemoteTraceback:"
    r"|The above exception was the direct cause|During handling of the above exception"
    r"|[^\r]*\r.*Traceback \(most recent call last\):)"
)


# Line tests as compiled regexes: the rules call C, not Python, for every line of a trace.
_blank = re.compile(r"\s*$").match
_indented = re.compile(r"[ \t]+\S").match
_any = re.compile("").match
_foreign = re.compile(  # a log line of its own, or the start of another trace
    "|".join(p.pattern for p in (TB_HEAD, EG_HEAD, FATAL, DUMP_THREAD, DUMP_TIMEOUT)) + f"|(?x:{FOREIGN.pattern})"
).match


def _after_exception(t: str) -> str:
    """The state after an exception line: some exceptions carry a structured message."""
    m = EXCEPTION.match(t)
    kind = m.group("type") if m else ""
    if not (m and m.group("msg") or "").strip():
        if kind.endswith("ChildFailedError"):
            return "child_failed_open"
        if kind.endswith("RemoteTraceback"):
            return "remote_open"
        if kind.endswith("ProcessRaisedException"):
            return "spawn_open"
    return "message"


# ----------------------------------------------------------------------------- the rules

TAKE = "take"  # the line belongs to the trace
HOLD = "hold"  # a blank line that belongs only if the trace goes on (a chain separator follows)
END = "end"  # the trace ended before this line; the line is looked at again with no trace open
LAST = "last"  # the line belongs to the trace and ends it
GOTO = "goto"  # look at the same line again in the next state

Rule = tuple[Callable[[str], Any], str, "str | Callable[[str], str] | None"]

#: Where a trace starts. The first rule that matches wins (all start states are open states).
START: list[Rule] = [
    (TB_HEAD.match, TAKE, "frames"),
    (EG_HEAD.match, TAKE, "box"),
    (SYNTAX_FRAME.match, TAKE, "syntax"),  # a SyntaxError of the main script has no header
    (FATAL.match, TAKE, "dump_head"),
    (DUMP_THREAD.match, TAKE, "dump"),
    (DUMP_TIMEOUT.match, TAKE, "dump"),
    (REMOTE_HEAD.match, TAKE, "remote_open"),
    (SEPARATOR.match, TAKE, "after_separator"),  # the exception before it was printed without header
]

#: state -> ordered rules. A state's rules that do not match leave the trace (END).
RULES: dict[str, list[Rule]] = {
    "frames": [
        (TB_HEAD.match, END, None),
        (EG_HEAD.match, END, None),
        (_indented, TAKE, "frames"),  # File lines, code lines, carets, "[Previous line repeated]"
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),
    ],
    "syntax": [
        (_indented, TAKE, "syntax"),  # the code line and its caret line
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),
    ],
    "message": [  # free-form: the lines of a multi-line message and of __notes__
        (_blank, HOLD, "message_blank"),
        (SEPARATOR.match, TAKE, "after_separator"),
        (_foreign, END, None),
        (_any, TAKE, "message"),
    ],
    "message_blank": [
        (_blank, END, None),
        (SEPARATOR.match, TAKE, "after_separator"),
    ],
    "message_done": [  # the message had a closing line (box border, closing quotes)
        (_blank, HOLD, "message_blank"),
        (SEPARATOR.match, TAKE, "after_separator"),
    ],
    "after_separator": [
        (_blank, TAKE, "after_separator"),
        (TB_HEAD.match, TAKE, "frames"),
        (EG_HEAD.match, TAKE, "box"),
        (REMOTE_HEAD.match, TAKE, "remote_open"),
        (FOREIGN.match, END, None),
        (EXCEPTION.match, TAKE, _after_exception),  # an exception that was never raised has no frames
    ],
    "box": [  # an ExceptionGroup: every line has a `|` or `+` margin
        (BOX_LINE.match, TAKE, "box"),
        (_blank, HOLD, "message_blank"),
        (SEPARATOR.match, TAKE, "after_separator"),  # `[rankN]:` streams lose their blank lines
    ],
    "remote_open": [
        (TRIPLE_QUOTE.match, TAKE, "remote_body"),
        (_any, GOTO, "message"),
    ],
    "remote_body": [
        (TRIPLE_QUOTE.match, TAKE, "message_done"),
        (_any, TAKE, "remote_body"),
    ],
    "spawn_open": [
        (_blank, TAKE, "spawn_open"),
        (SPAWN_INTRO.match, TAKE, "spawn_intro"),
        (_any, GOTO, "message"),
    ],
    "spawn_intro": [
        (TB_HEAD.match, TAKE, "frames"),  # the child's traceback ends the parent's message
        (_any, GOTO, "message"),
    ],
    "child_failed_open": [
        (BORDER.match, TAKE, "child_failed_box"),
        (_any, GOTO, "message"),
    ],
    "child_failed_box": [
        (BORDER.match, TAKE, "message_done"),
        (_any, TAKE, "child_failed_box"),
    ],
    "dump_head": [  # "Fatal Python error: ..." and the lines before the first blank
        (_blank, HOLD, "dump_blank"),
        (DUMP_THREAD.match, TAKE, "dump"),
        (_indented, TAKE, "dump"),
        (_foreign, END, None),
        (_any, TAKE, "dump_head"),
    ],
    "dump": [
        (_indented, TAKE, "dump"),
        (DUMP_THREAD.match, TAKE, "dump"),
        (_blank, HOLD, "dump_blank"),
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
FREE_TEXT = frozenset({"message", "message_blank", "dump_head", "remote_body", "child_failed_box"})
COUNTED_TEXT = frozenset({"message", "message_blank", "dump_head"})

#: States in which a trace may end without being cut short.
TERMINAL = frozenset({"message", "message_blank", "message_done", "box", "dump", "dump_blank"})


# ----------------------------------------------------------------------------- the parser


class TraceParser:
    """Assembles the stack traces of one logical stream (see parsers/base.py).

    Parameters: `idle_s` closes an open trace before a line that comes later than that
    after the trace's previous line; `message_gap_s` does the same for lines that would
    continue an exception message (Python prints a whole traceback at once: in the
    fixture runs its lines are microseconds apart, while the program's next output comes
    later); `max_lines` / `max_bytes` bound what one trace keeps
    (its first and last lines; the rest is counted and `truncated` is set);
    `max_message_lines` bounds a free-text message.
    """

    PREFILTER = PREFILTER

    def __init__(
        self,
        idle_s: float = 5.0,
        message_gap_s: float = 0.25,
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
        self._last_s: float | None = None
        self._day: str = ""
        self._day_s = 0.0
        self._second = ""
        self._second_s = 0.0

    @property
    def open(self) -> bool:
        return self._state is not None

    def feed(self, line: Line) -> tuple[bool, list[Record]]:
        text = line.text
        if "\x1b" in text:
            text = _ANSI.sub("", text)
        if self._state is None:
            return self._start(line, text), []
        now = self._seconds(line.time) if line.time else None
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
        if action == END or (state in FREE_TEXT and not self._text_goes_on(state, gap)):
            return self._restart(line, text)
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
        return True, []

    def close(self) -> list[Record]:
        """End of the stream: an open trace is emitted; one cut short is `truncated`."""
        if self._state is None:
            return []
        return self._finish()

    def expire(self, time: str) -> list[Record]:
        """Emit the open trace if its last line is more than `idle_s` older than `time`.

        For streams that go quiet after a trace (a rank that died): the caller passes a
        time it saw elsewhere (another stream of the pod, a later poll), so the parser
        stays pure and still needs no clock."""
        if self._state is None or self._last_s is None:
            return []
        now = self._seconds(time)
        if now is None or now - self._last_s <= self.idle_s:
            return []
        return self._finish()

    # -- internals

    def _text_goes_on(self, state: str, gap: float) -> bool:
        if gap > self.message_gap_s:
            return False
        self._text_lines += 1
        return self._text_lines <= (self.max_message_lines if state in COUNTED_TEXT else 10 * self.max_lines)

    def _start(self, line: Line, text: str) -> bool:
        for test, _action, nxt in START:
            if test(text):
                break
        else:
            # a header glued to a progress bar drawn with '\r' on the same line
            pos = line.text.rfind(_TB_TEXT) if "\r" in text else -1
            if pos < 0 or not TB_HEAD.match(line.text[pos:]):
                return False
            line = line._replace(text=line.text[pos:])
            nxt = "frames"
        self._state = nxt  # type: ignore[assignment]
        self._first = line
        self._block = _Block(self.max_lines, self.max_bytes)
        self._held = []
        self._failures = None
        self._text_lines = 0
        self._last_s = self._seconds(line.time) if line.time else None
        self._block.add(line.text)
        return True

    def _restart(self, line: Line, text: str) -> tuple[bool, list[Record]]:
        records = self._finish()
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
        if first is None or state == "syntax":  # a `File "...", line N` that no SyntaxError followed
            return []
        failures, self._failures = (self._failures.result() if self._failures else None), None
        record = parse_block(block.lines(), block.text(), failures)
        if record is None:
            return []
        record.time, record.seq, record.rank, record.local_rank = first.time, first.seq, first.rank, first.local_rank
        record.line_count = block.count
        # cut short: over its bounds, or it stopped (stream end, idle, a foreign line) where more was due
        record.truncated = block.truncated or state not in TERMINAL
        return [record]

    def _seconds(self, ts: str) -> float | None:
        """Seconds of an RFC 3339 time, cheaply; None if unreadable. Lines of one trace
        mostly share their second, so that part is parsed once."""
        if ts[-1:] == "Z" and ts[:19] == self._second:
            frac = ts[19:-1]
            return self._second_s + (float(frac) if frac else 0.0)
        m = _RFC3339.match(ts)
        if m is None:
            return None
        day, hh, mm, ss, tz = m.groups()
        if day != self._day:
            try:
                self._day_s = date.fromisoformat(day).toordinal() * 86400.0
            except ValueError:
                return None
            self._day = day
        whole = self._day_s + int(hh) * 3600 + int(mm) * 60
        if tz and tz not in ("Z", "z"):
            sign = -1 if tz[0] == "+" else 1
            whole += sign * (int(tz[1:3]) * 3600 + int(tz[-2:]) * 60)
        elif ts[10:11] == "T" and ts[-1:] == "Z":
            self._second, self._second_s = ts[:19], whole + int(ss[:2])
        return whole + float(ss)


_RFC3339 = re.compile(r"(\d{4}-\d\d-\d\d)[Tt _](\d\d):(\d\d):(\d\d(?:\.\d+)?)(Z|z|[+-]\d\d:?\d\d)?")


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


# ----------------------------------------------------------------------------- reading a block


@dataclass
class _Link:
    """One exception of a chain while it is being read."""

    type: str | None = None
    message_lines: list[str] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    connector: str | None = None
    group: list[dict[str, Any]] | None = None  # sub-exceptions of an ExceptionGroup
    remote: dict[str, Any] | None = None  # a traceback carried in the message (other process)
    remote_links: list[_Link] | None = None
    failures: dict[str, Any] | None = None  # ChildFailedError box

    @property
    def message(self) -> str:
        return "\n".join(self.message_lines)


@dataclass
class _Node:
    """The lines an ExceptionGroup box prints at one depth; sub-exception lists in between."""

    depth: int
    items: list[Any] = field(default_factory=list)  # str | list[_Node]


@dataclass
class _Box:
    node: _Node


_BOX_TOKEN = re.compile(
    r"^(?P<ind>(?:  )*)(?:"
    r"(?P<first>\+-\+-+ (?:\d+|\.\.\.) -+)"
    r"|(?P<next>\+-+ (?:\d+|\.\.\.) -+)"
    r"|(?P<close>\+-+)"
    r"|\+ (?P<head>.*)"
    r"|\|(?: (?P<text>.*))?"
    r")\s*$"
)
_MORE = re.compile(r"^and (?P<n>\d+) more exceptions?\s*$")
_MAX_DEPTH = re.compile(r"^\.\.\. \(max_group_depth is \d+\)\s*$")


def parse_block(lines: list[str], text: str | None = None, failures: dict[str, Any] | None = None) -> TraceRecord | None:
    """Read the lines of one trace block into a `TraceRecord` (identity fields left empty);
    `text` is what the record shows, the lines joined unless given; `failures`, what a
    `FailureBox` read of a ChildFailedError box while it streamed in (whole, even where
    `lines` are not)."""
    text = "\n".join(lines) if text is None else text
    clean = [_ANSI.sub("", t) if "\x1b" in t else t for t in lines]
    if FATAL.match(clean[0]) or DUMP_THREAD.match(clean[0]) or DUMP_TIMEOUT.match(clean[0]):
        record = _read_dump(clean)
    else:
        links = _read_chain(_unbox(clean))
        if not links:
            return None
        if failures is not None and links[-1].failures is not None:
            links[-1].failures = failures
        record = _record_of(links)
    record.text = text
    return record


def _record_of(links: list[_Link]) -> TraceRecord:
    last = links[-1]
    complete = [lk for lk in links if lk.type is not None]
    details: dict[str, Any] = {}
    if last.group is not None:
        details["exceptions"] = last.group  # the sub-exceptions of the ExceptionGroup raised last
    groups = [{"link": i, "exceptions": lk.group} for i, lk in enumerate(links[:-1]) if lk.group is not None]
    if groups:
        details["groups"] = groups  # groups earlier in the chain
    remotes = [dict(lk.remote, link=i) for i, lk in enumerate(links) if lk.remote]
    if remotes:
        details["remote"] = remotes
    if last.failures is not None:
        details.update(last.failures)
    form = _form_of(links)
    return TraceRecord(
        exception_type=last.type,
        message=last.message if last.type is not None else None,
        frames=last.frames,
        chain=[ChainLink(lk.type, lk.message, lk.frames, lk.connector) for lk in complete],  # type: ignore[arg-type]
        fingerprint=fingerprint([form, *_grouping_parts(links)]),
        form=form,
        details=details or None,
    )


def _form_of(links: list[_Link]) -> str:
    last = links[-1]
    if last.failures is not None:
        return "child_failed"
    if any(lk.group is not None for lk in links):
        return "exception_group"
    if any(lk.type and lk.type.endswith("RemoteTraceback") for lk in links):
        return "remote"
    if last.type in ("SyntaxError", "IndentationError", "TabError"):
        return "syntax_error"
    return "traceback"


# -- ExceptionGroup boxes


def _unbox(lines: list[str]) -> list[Any]:
    """Replace each top-level ExceptionGroup box by a `_Box` holding its tree."""
    out: list[Any] = []
    i, n = 0, len(lines)
    while i < n:
        if not EG_HEAD.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        root = _Node(depth=1)
        stack = [root]
        while i < n:
            m = _BOX_TOKEN.match(lines[i])
            if m is None or not m.group("ind"):
                break
            _box_step(stack, len(m.group("ind")) // 2, m)
            i += 1
        out.append(_Box(root))
    return out


def _box_step(stack: list[_Node], depth: int, m: re.Match[str]) -> None:
    """One line of a box: content at `depth`, or a sub-exception delimiter."""
    if m.group("first") is not None:  # `+-+---- 1 ----` at the group's own depth
        while len(stack) > 1 and stack[-1].depth > depth:
            stack.pop()
        subs: list[_Node] = []
        stack[-1].items.append(subs)
        child = _Node(depth + 1)
        subs.append(child)
        stack.append(child)
    elif m.group("next") is not None:  # `  +---- 2 ----`: one level in from the group
        group_depth = depth - 1
        while len(stack) > 1 and stack[-1].depth > group_depth:
            stack.pop()
        holder = stack[-1].items
        if not holder or not isinstance(holder[-1], list):
            holder.append([])
        child = _Node(group_depth + 1)
        holder[-1].append(child)
        stack.append(child)
    elif m.group("close") is not None:
        while len(stack) > 1 and stack[-1].depth > depth - 1:
            stack.pop()
    else:
        text = m.group("head") if m.group("head") is not None else (m.group("text") or "")
        while len(stack) > 1 and stack[-1].depth > depth:
            stack.pop()
        stack[-1].items.append(text)


def _sub_exception(node: _Node) -> dict[str, Any]:
    strs = [x for x in node.items if isinstance(x, str)]
    if len(strs) == 1 and len(node.items) == 1:
        more = _MORE.match(strs[0])
        if more:
            return {"more": int(more.group("n"))}
        if _MAX_DEPTH.match(strs[0]):
            return {"max_depth": True}
    links = _read_chain(node.items)
    if not links:
        return {"exception_type": None, "message": "\n".join(strs)}
    last = links[-1]
    out: dict[str, Any] = {
        "exception_type": last.type,
        "message": last.message,
        "frames": [{"file": f.file, "line": f.line, "function": f.function} for f in last.frames],
    }
    if len(links) > 1:
        out["chain"] = [{"exception_type": lk.type, "message": lk.message, "connector": lk.connector} for lk in links]
    if last.group is not None:
        out["exceptions"] = last.group
    return out


# -- chains


def _read_chain(items: list[Any]) -> list[_Link]:
    """Links of a chain, oldest first, from text lines (and boxes / sub-exception lists)."""
    links: list[_Link] = []
    i, n = 0, len(items)
    while i < n:
        i = _skip_blanks(items, i)
        if i >= n:
            break
        item = items[i]
        if isinstance(item, str) and SEPARATOR.match(item):  # nothing before it was kept
            i += 1
            continue
        if isinstance(item, _Box):
            links.extend(_read_chain(item.node.items))
            i += 1
        elif isinstance(item, list):  # sub-exceptions without a group line before them
            i += 1
            continue
        else:
            link, i = _read_exception(items, i)
            if link is None:
                break
            links.append(link)
        j = _skip_blanks(items, i)
        if j < n and isinstance(items[j], str) and (sep := SEPARATOR.match(items[j])):
            if links:
                links[-1].connector = "cause" if sep.group("cause") else "context"
            i = j + 1
        elif j < n and not isinstance(items[j], _Box):
            break
    return links


def _skip_blanks(items: list[Any], i: int) -> int:
    while i < len(items) and isinstance(items[i], str) and _blank(items[i]):
        i += 1
    return i


def _read_exception(items: list[Any], i: int) -> tuple[_Link | None, int]:
    n = len(items)
    link = _Link()
    first = items[i]
    has_header = bool(TB_HEAD.match(first) or GROUP_TB_HEAD.match(first))
    if has_header:
        i += 1
    elif not (SYNTAX_FRAME.match(first) or EXCEPTION.match(first)):
        return None, i
    i = _read_frames(items, i, link)
    if i >= n or not isinstance(items[i], str):
        return (link if has_header or link.frames else None), i
    m = EXCEPTION.match(items[i])
    if m is None:
        return (link if has_header else None), i
    link.type = m.group("type")
    link.message_lines = [m.group("msg") or ""]
    i = _read_message(items, i + 1, link)
    if i < n and isinstance(items[i], list):
        link.group = [_sub_exception(node) for node in items[i]]
        i += 1
    return link, i


def _read_frames(items: list[Any], i: int, link: _Link) -> int:
    n = len(items)
    code: list[str] = []
    while i < n and isinstance(items[i], str) and _indented(items[i]):
        t = items[i]
        m = FRAME.match(t) or SYNTAX_FRAME.match(t)
        if m:
            _set_code(link, code)
            code = []
            func = m.groupdict().get("func")
            link.frames.append(Frame(m.group("file"), int(m.group("line")), func))
        elif not CARET.match(t) and not REPEAT.match(t) and link.frames:
            code.append(t.strip())
        i += 1
    _set_code(link, code)
    return i


def _set_code(link: _Link, code: list[str]) -> None:
    if code and link.frames:
        link.frames[-1].code = "\n".join(code)


def _read_message(items: list[Any], i: int, link: _Link) -> int:
    """The message lines after the exception line; structured messages are read as such."""
    n = len(items)
    kind = link.type or ""
    rest = link.message_lines[0].strip() == ""
    if rest and kind.endswith("ChildFailedError") and i < n and isinstance(items[i], str) and BORDER.match(items[i]):
        j = i + 1
        while j < n and isinstance(items[j], str) and not BORDER.match(items[j]):
            j += 1
        box = [x for x in items[i : j + 1] if isinstance(x, str)]
        link.message_lines.extend(box)
        link.failures = _read_failures(box)
        return j + 1
    if rest and kind.endswith("RemoteTraceback") and i < n and isinstance(items[i], str) and TRIPLE_QUOTE.match(items[i]):
        j = i + 1
        while j < n and isinstance(items[j], str) and not TRIPLE_QUOTE.match(items[j]):
            j += 1
        body = [x for x in items[i + 1 : j] if isinstance(x, str)]
        link.message_lines.extend([items[i], *body] + ([items[j]] if j < n else []))
        _set_remote(link, body)
        return j + 1
    if rest and kind.endswith("ProcessRaisedException"):
        body = [x for x in items[i:] if isinstance(x, str)]
        while body and _blank(body[-1]):
            body.pop()
        link.message_lines.extend(body)
        for k, t in enumerate(body):
            intro = SPAWN_INTRO.match(t)
            if intro:
                _set_remote(link, body[k + 1 :])
                if link.remote:
                    link.remote["process"] = int(intro.group("index"))
                break
        return n
    # free text up to a chain separator (blank lines before it are not the message's)
    j = i
    while j < n and isinstance(items[j], str) and not SEPARATOR.match(items[j]):
        j += 1
    body = items[i:j]
    while body and _blank(body[-1]):
        body.pop()
    link.message_lines.extend(body)
    for k, t in enumerate(body):
        if ORIGINAL_TB.match(t):  # DataLoader worker: ExceptionWrapper.reraise
            _set_remote(link, [_TB_TEXT, *body[k + 1 :]])
            break
    return i + len(body)


def _set_remote(link: _Link, lines: list[str]) -> None:
    """A traceback printed inside a message (by a worker process), summarized."""
    links = _read_chain(lines)
    if not links:
        return
    last = links[-1]
    link.remote_links = links
    link.remote = {
        "exception_type": last.type,
        "message": last.message,
        "frames": [{"file": f.file, "line": f.line, "function": f.function, "code": f.code} for f in last.frames],
        "chain": [lk.type for lk in links],
    }


# -- torchrun's ChildFailedError box

_ENTRY = re.compile(r"^\[(?P<index>\d+)\]:\s*$")
_FIELD = re.compile(r"^  (?P<key>time|host|rank|exitcode|error_file|traceback)\s*: ?(?P<value>.*?)\s*$")
_RANK = re.compile(r"^(?P<rank>-?\d+) \(local_rank: (?P<local_rank>-?\d+)\)")
_EXITCODE = re.compile(r"^(?P<code>-?\d+) \(pid: (?P<pid>\d+)\)(?:\s*\((?P<signal>SIG\w+)\))?")
_SIGNAL = re.compile(r"Signal (?P<num>\d+) \((?P<name>SIG\w+)\) received by PID (?P<pid>\d+)")
_SECTION = re.compile(r"^-+\s*$")


class FailureBox:
    """Reads torchrun's failure summary box (errors/__init__.py `_MSG_FORMAT_TEMPLATE`) line
    by line, from its opening border on; `result()` gives `title` and `failures`.

    It is fed while the box streams in, so that every failure is kept even when the box
    (one traceback per failed rank) is too long for the trace's text; of each failure's
    traceback it keeps the first and the last lines, where the exception is.
    """

    KEEP_HEAD = 20
    KEEP_TAIL = 40

    def __init__(self) -> None:
        self.title: str | None = None
        self.failures: list[dict[str, Any]] = []
        self._lines = 0
        self._root = False
        self._current: dict[str, Any] | None = None
        self._message: list[str] | None = None
        self._tail: deque[str] = deque(maxlen=self.KEEP_TAIL)

    def add(self, t: str) -> None:
        self._lines += 1
        if self._lines == 2 and not _SECTION.match(t):
            self.title = t.strip()
            return
        if t.startswith("Root Cause"):
            self._root = True
            return
        entry = _ENTRY.match(t)
        if entry or _SECTION.match(t) or BORDER.match(t):
            self._done()
            if entry:
                self._current = {"index": int(entry.group("index")), "root_cause": self._root}
            return
        if self._current is None:
            return
        f = _FIELD.match(t) if self._message is None else None
        if f:
            key, value = f.group("key"), f.group("value")
            if key == "traceback":
                self._message = [value]
            else:
                _set_field(self._current, key, value)
        elif self._message is not None:
            t = t[2:] if t.startswith("  ") else t  # the template indents the message by 2
            if len(self._message) < self.KEEP_HEAD:
                self._message.append(t)
            else:
                self._tail.append(t)

    def result(self) -> dict[str, Any]:
        self._done()
        return {"title": self.title, "failures": self.failures}

    def _done(self) -> None:
        if self._current is not None:
            _finish_failure(self._current, (self._message or []) + list(self._tail))
            self.failures.append(self._current)
        self._current, self._message = None, None
        self._tail.clear()


def _read_failures(box: list[str]) -> dict[str, Any]:
    reader = FailureBox()
    for t in box:
        reader.add(t)
    return reader.result()


def _set_field(entry: dict[str, Any], key: str, value: str) -> None:
    if key == "rank":
        m = _RANK.match(value)
        entry["rank"] = int(m.group("rank")) if m else None
        entry["local_rank"] = int(m.group("local_rank")) if m else None
    elif key == "exitcode":
        m = _EXITCODE.match(value)
        entry["exitcode"] = int(m.group("code")) if m else None
        entry["pid"] = int(m.group("pid")) if m else None
        if m and m.group("signal"):
            entry["signal"] = m.group("signal")
    elif key == "error_file":
        entry["error_file"] = None if value == "<N/A>" else value
    else:
        entry[key] = value


def _finish_failure(entry: dict[str, Any], message: list[str]) -> None:
    while message and _blank(message[-1]):
        message.pop()
    entry["message"] = "\n".join(message)
    for key in ("time", "host", "rank", "local_rank", "exitcode", "pid", "error_file"):
        entry.setdefault(key, None)
    sig = _SIGNAL.search(entry["message"])
    if sig:
        entry["signal"] = sig.group("name")
    entry.setdefault("signal", None)
    links = _read_chain(message) if message and TB_HEAD.match(message[0]) else []
    entry["exception_type"] = links[-1].type if links else None


# -- faulthandler dumps

_SIGNALS = {
    "Segmentation fault": "SIGSEGV",
    "Aborted": "SIGABRT",
    "Bus error": "SIGBUS",
    "Floating point exception": "SIGFPE",
    "Illegal instruction": "SIGILL",
}


def _read_dump(lines: list[str]) -> TraceRecord:
    fatal = FATAL.match(lines[0])
    timeout = DUMP_TIMEOUT.match(lines[0])
    exception_type = fatal.group("msg") if fatal else ("Timeout" if timeout else None)
    message = lines[0] if timeout else exception_type
    threads: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for t in lines[1:]:
        th = DUMP_THREAD.match(t)
        if th:
            current = {"thread": th.group("tid"), "current": bool(th.group("current") or th.group("stack")), "frames": []}
            threads.append(current)
            continue
        fr = DUMP_FRAME.match(t)
        if fr and current is not None:
            line = fr.group("line")
            current["frames"].append(Frame(fr.group("file"), int(line) if line.isdigit() else None, fr.group("func")))
    crashed = next((th for th in threads if th["current"]), threads[0] if threads else None)
    frames = list(reversed(crashed["frames"])) if crashed else []  # oldest first, like tracebacks
    details: dict[str, Any] = {
        "threads": [
            {"thread": th["thread"], "current": th["current"], "frames": len(th["frames"])} for th in threads
        ]
    }
    if exception_type in _SIGNALS:
        details["signal"] = _SIGNALS[exception_type]
    parts = ["faulthandler", f"type:{exception_type or ''}"] + (frame_keys(frames) or [normalize_message(message)])
    return TraceRecord(
        exception_type=exception_type,
        message=message,
        frames=frames,
        chain=[ChainLink(exception_type, message or "", frames)] if exception_type else [],
        fingerprint=fingerprint(parts),
        form="faulthandler",
        details=details,
    )


# -- fingerprint


def _grouping_parts(links: list[_Link]) -> list[str]:
    """What the fingerprint is made of: per link its type, then its in-app frames; the
    message (masked) only where there is no frame with a function to key on."""
    parts: list[str] = []
    for lk in links:
        parts.append(f"type:{lk.type or ''}")
        parts.extend(frame_keys(lk.frames))
        keyed = any(f.function for f in lk.frames) and lk.type not in ("SyntaxError", "IndentationError", "TabError")
        if not keyed and not lk.remote_links:
            parts.append("msg:" + normalize_message(lk.message))
        if lk.remote_links:
            parts.append("remote:")
            parts.extend(_grouping_parts(lk.remote_links))
        if lk.group:
            parts.extend(_group_parts(lk.group))
        if lk.failures:
            for f in lk.failures["failures"]:
                if f.get("root_cause"):
                    parts.append(
                        "root:" + (f.get("exception_type") or f.get("signal") or normalize_message(f.get("message")))
                    )
    return parts


def _group_parts(subs: list[dict[str, Any]]) -> list[str]:
    parts: list[str] = ["group:"]
    for sub in subs:
        if "more" in sub or "max_depth" in sub:
            continue
        parts.append(f"sub:{sub.get('exception_type') or ''}")
        parts.extend(
            frame_keys([Frame(f["file"], f["line"], f["function"]) for f in sub.get("frames", []) if f["function"]])
        )
        if sub.get("exceptions"):
            parts.extend(_group_parts(sub["exceptions"]))
    parts.append("end:")
    return parts
