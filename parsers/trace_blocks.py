"""Reading one finished trace block: its exception chain, frames, sub-exceptions of
ExceptionGroups, tracebacks of other processes, torchrun's failures, faulthandler
threads, and the fingerprint. `parsers/traces.py` decides which lines form the block.

`exception_type` of a faulthandler dump is the text after `Fatal Python error: `
(`Segmentation fault`, `Aborted`, ...), the way the process saw its signal;
`details["signal"]` names the signal (`SIGSEGV`). Dump frames are put oldest first, like
traceback frames. The location line of a SyntaxError (`File "...", line N`, no function)
is a frame with `function` None.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import msgspec

from gangscope.parsers.fingerprint import fingerprint, frame_keys, normalize_message
from gangscope.parsers.records import ChainLink, Frame, TraceRecord
from gangscope.parsers.trace_shapes import (
    ANSI,
    BORDER,
    BOX_EXITCODE_SHAPE,
    BOX_RANK_SHAPE,
    CARET,
    CUT_TYPE,
    DUMP_FRAME,
    DUMP_THREAD,
    DUMP_TIMEOUT,
    EG_HEAD,
    EXCEPTION,
    FATAL,
    FRAME,
    GROUP_TB_HEAD,
    IPY_ARROW,
    IPY_CLASSIC_FRAME,
    IPY_FRAME,
    IPY_HEAD,
    LOGURU_FRAME,
    LOWER_CASE_TYPES,
    ORIGINAL_TB,
    PE_FRAME,
    PE_INFIX,
    PE_RULE,
    PE_TYPE,
    RAISED,
    REPEAT,
    RICH_CODE,
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
    TRIPLE_QUOTE,
    VALUE_MARKS,
    blank,
    indented,
)


def _num(digits: str | None) -> int | None:
    """A number printed in a trace; None for absurd ones (a line number of 5000 digits is junk,
    and int() refuses strings that long)."""
    if digits is None or len(digits) > 18:
        return None
    try:
        return int(digits)
    except ValueError:
        return None


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
    cut: bool = False  # h25c: its exception line was cut mid-name (read as no type; the trace is cut short)

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
    clean = [ANSI.sub("", t) if "\x1b" in t else t for t in lines]
    if PE_FRAME.match(clean[0]):
        clean = depretty(clean)
        if not any(EXCEPTION.match(t) for t in clean[1:] if not indented(t)):
            return None  # location-like lines, no exception: no trace (a copy cut in the frames says nothing more)
    elif _rendered(clean):
        clean = derender(clean)
    if FATAL.match(clean[0]) or DUMP_THREAD.match(clean[0]) or DUMP_TIMEOUT.match(clean[0]):
        record = _read_dump(clean)
    else:
        # a box's head line holds EG_HEAD's words: a block without them has no box (one search of the block)
        boxed = "+ Exception Group Traceback (most recent call" in "\n".join(clean)
        links = _read_chain(_unbox(clean) if boxed else clean)
        if not links:
            return None
        if failures is not None and links[-1].failures is not None:
            links[-1].failures = failures
        record = _record_of(links)
        record.truncated = record.truncated or any(link.cut for link in links)  # h25c: read as a trace cut before its exception line
    record.text = text
    return record


# -- tracebacks other libraries draw (trace_shapes.RENDERED)


def _rendered(lines: list[str]) -> bool:
    """Whether the block is one a renderer drew (the parser's start states for them): rich's panel, IPython's
    head, stackprinter's margin frame line, loguru's blank line after the header."""
    first = lines[0]
    c = first[:1]
    if c == "\u256d":
        return RICH_HEAD.match(first) is not None
    if c == "\u2502":  # [h29b] rich's panel from a frame line on, its title cut off (traces.START)
        return RICH_FRAME.match(first) is not None
    if c == "F" and SP_FRAME.match(first):
        return True
    if c == "T" and TB_HEAD.match(first) is not None:
        return len(lines) > 1 and blank(lines[1]) is not None
    # [h27a] ultratb's head of a type that starts with "T" (TypeError, TimeoutError) is IPython's too: the test above let
    # none of them through, and their block was read as no trace at all (dev 923; h27f found the same in dev 944)
    return IPY_HEAD.match(first) is not None


_ARROW_LINE = re.compile(r"^-*> ?\s*(?P<line>\d+) ")


def _classic_line(lines: list[str], start: int) -> str:
    """[h27a] The line number of a frame of ultratb before IPython 8 (trace_shapes.IPY_CLASSIC_FRAME): its "---> N" line's,
    found before the next frame; "0" where the frame shows none (a compiled file's frame, a copy cut under it)."""
    for t in lines[start:start + 40]:
        if (m := _ARROW_LINE.match(t)) is not None:
            return m.group("line")
        if IPY_CLASSIC_FRAME.match(t) or IPY_FRAME.match(t) or not (blank(t) or indented(t)):
            break
    return "0"


def derender(lines: list[str]) -> list[str]:
    """A drawn traceback's lines as CPython prints them: a header per exception, `  File "f", line N, in g` and the
    frame's line (where the renderer shows it) below, the exception line and what follows it as they are. A box cut
    short gives its header and the frames read up to the cut."""
    out: list[str] = []
    kind = ""  # in the frames of: "cpython" (loguru's, CPython's layout), "drawn" (rich, IPython, stackprinter)
    for i, t in enumerate(lines):
        if RICH_HEAD.match(t) or IPY_HEAD.match(t):
            out.append(TB_TEXT)
            kind = "drawn"
            continue
        if TB_HEAD.match(t):
            out.append(t)
            kind = "cpython"
            continue
        if not kind and (SP_FRAME.match(t) or RICH_FRAME.match(t)):  # [h29b] rich's panel whose title was cut off
            out.append(TB_TEXT)
            kind = "drawn"
        if not kind:
            out.append(t)
            continue
        m = RICH_FRAME.match(t) or SP_FRAME.match(t)
        if m:
            out.append(f'  File "{m.group("file")}", line {m.group("line")}, in {m.group("func").strip()}')
        elif (m := IPY_FRAME.match(t)) is not None:
            where = m.group("file") or m.group("cell")
            out.append(f'  File "{where}", line {m.group("line") or m.group("cline")}, in {m.group("func") or "<module>"}')
        elif kind == "drawn" and (m := IPY_CLASSIC_FRAME.match(t)) is not None:  # [h27a] its line number is the arrow's
            out.append(f'  File "{m.group("file")}", line {_classic_line(lines, i + 1)}, in {m.group("func")}')
        elif (m := RICH_CODE.match(t)) is not None:
            out.append("    " + m.group("code").replace("\u2502   ", "    ").strip())
        elif (m := SP_ARROW.match(t) or IPY_ARROW.match(t)) is not None:
            out.append("    " + m.group("code").strip())
        elif LOGURU_FRAME.match(t):
            out.append("  " + t[2:])
        elif blank(t) or t[:1] in ("\u2502", "\u2570") or VALUE_MARKS.match(t) or SP_ELIDED.match(t):
            continue  # a panel's other lines, blank lines between frames, values under a frame
        elif indented(t):
            if kind == "cpython" or FRAME.match(t):
                out.append(t)
        else:  # the exception line: the frames are over
            kind = ""
            out.append(t)
    return out


def depretty(lines: list[str]) -> list[str]:
    """pretty_errors' lines (trace_shapes.PE_FRAME and beside it) as CPython prints them: a header, per frame
    `  File "f", line N, in g` and its line, "Type: message" where it printed the message below the type, and where a rule
    starts the next exception, the one raised while handling it (pretty_errors prints the __context__ first)."""
    out = [TB_TEXT]
    frames = True
    i, n = 0, len(lines)
    while i < n:
        t = lines[i]
        if frames:
            m = PE_FRAME.match(t)
            if m is not None:
                file, line, func = (m.group("file"), m.group("line"), m.group("func")) if m.group("file") else (
                    m.group("file2"), m.group("line2"), m.group("func2"))
                out.append(f'  File "{file}", line {line}, in {func}')
                if i + 1 < n:
                    code = lines[i + 1]
                    out.append("    " + (code[2:] if code[:2] == "> " else code).strip())
                i += 2
                continue
            if blank(t) or PE_INFIX.match(t):
                i += 1
                continue
            frames = False
            m = PE_TYPE.match(t)
            if m is not None and i + 1 < n and not blank(lines[i + 1]):
                out.append(f"{m.group('type')}: {lines[i + 1]}")
                i += 2
                continue
        elif PE_RULE.match(t) and i + 1 < n and any(PE_FRAME.match(x) for x in lines[i + 1 : i + 3]):
            while out and blank(out[-1]):
                out.pop()
            out += ["", "During handling of the above exception, another exception occurred:", "", TB_TEXT]
            frames = True
            i += 1
            continue
        out.append(t)
        i += 1
    return out


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
        start = i
        while i < n:
            m = _BOX_TOKEN.match(lines[i])
            if m is None or not m.group("ind"):
                break
            _box_step(stack, len(m.group("ind")) // 2, m)
            i += 1
        if i == start:  # a header indented the way no box is (fuzzing, issue 10): text, or this loops forever
            out.append(lines[i])
            i += 1
            continue
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
            return {"more": _num(more.group("n"))}
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
    while i < len(items) and isinstance(items[i], str) and blank(items[i]):
        i += 1
    return i


def _read_exception(items: list[Any], i: int) -> tuple[_Link | None, int]:
    n = len(items)
    link = _Link()
    first = items[i]
    has_header = bool(TB_HEAD.match(first) or GROUP_TB_HEAD.match(first))
    if has_header:
        i += 1
    elif not (SYNTAX_FRAME.match(first) or FRAME.match(first) or EXCEPTION.match(first)):
        return None, i
    i = _read_frames(items, i, link)
    if i >= n or not isinstance(items[i], str):
        return (link if has_header or link.frames else None), i
    m = EXCEPTION.match(items[i])
    if m is None:
        return (link if has_header else None), i
    if m.group("msg") is None and _skip_blanks(items, i + 1) >= n and _cut_type(m.group("type"), link):
        link.cut = True  # h25c: the exception line was cut mid-name where the block ends: a trace with no type
        return link, n
    link.type = m.group("type")
    link.message_lines = [m.group("msg") or ""]
    i = _read_message(items, i + 1, link)
    if i < n and isinstance(items[i], list):
        link.group = [_sub_exception(node) for node in items[i]]
        i += 1
    return link, i


def _cut_type(kind: str, link: _Link) -> bool:
    """h25c: whether a bare exception line that ends its block is a name cut short (trace_shapes CUT_TYPE, RAISED)."""
    if CUT_TYPE.match(kind) and kind not in LOWER_CASE_TYPES:
        return True
    code = link.frames[-1].code if link.frames else None
    raised = RAISED.match(code.splitlines()[-1].strip()) if code else None
    last = kind.rsplit(".", 1)[-1]
    return bool(raised) and raised.group("name") != last and raised.group("name").startswith(last)


def _read_frames(items: list[Any], i: int, link: _Link) -> int:
    n = len(items)
    code: list[str] = []
    while i < n and isinstance(items[i], str) and indented(items[i]):
        t = items[i]
        where = _FRAME_OF.get(t, _UNSEEN)
        if where is _UNSEEN:
            where = _frame_of(t)
        if where is not None:
            _set_code(link, code)
            code = []
            link.frames.append(Frame(*where))
        elif link.frames:
            # CARET's and REPEAT's lines start (past their blanks) with `~`/`^` and `[`: other code lines need neither search
            stripped = t.strip()
            c = stripped[:1]
            if not ((c == "~" or c == "^") and CARET.match(t)) and not (c == "[" and REPEAT.match(t)):
                code.append(stripped)
        i += 1
    _set_code(link, code)
    return i


# A frame's line as (file, line, function), None for a line that is no File line, per line
# text: the same frame lines come in every rank's trace (bounded: at most this many, this long).
_FRAME_OF: dict[str, tuple[str, int | None, str | None] | None] = {}
_FRAME_LINES = 4096
_FRAME_LINE_CHARS = 512
_UNSEEN = object()


def _frame_of(t: str) -> tuple[str, int | None, str | None] | None:
    m = FRAME.match(t) or SYNTAX_FRAME.match(t)
    if m is None:
        where = None
    else:
        func = m.groupdict().get("func")
        where = (m.group("file"), _num(m.group("line")), func.strip() if func else None)
    if len(t) <= _FRAME_LINE_CHARS:
        if len(_FRAME_OF) >= _FRAME_LINES:
            _FRAME_OF.clear()
        _FRAME_OF[t] = where
    return where


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
        # items[j] is the closing quote, or an ExceptionGroup box the worker printed (unboxed
        # above; fuzzing, issue 10): a box is not a message line
        closing = [items[j]] if j < n and isinstance(items[j], str) else []
        link.message_lines.extend([items[i], *body, *closing])
        _set_remote(link, body)
        return j + 1 if closing else j
    if rest and (kind.endswith("ProcessRaisedException") or (kind == "Exception" and _spawn_intro_next(items, i))):
        body = [x for x in items[i:] if isinstance(x, str)]
        while body and blank(body[-1]):
            body.pop()
        link.message_lines.extend(body)
        for k, t in enumerate(body):
            intro = SPAWN_INTRO.match(t)
            if intro:
                _set_remote(link, body[k + 1 :])
                if link.remote:
                    link.remote["process"] = _num(intro.group("index"))
                break
        return n
    # free text up to a chain separator (blank lines before it are not the message's)
    j = i
    while j < n and isinstance(items[j], str) and not SEPARATOR.match(items[j]):
        j += 1
    body = items[i:j]
    while body and blank(body[-1]):
        body.pop()
    link.message_lines.extend(body)
    for k, t in enumerate(body):
        if ORIGINAL_TB.match(t):  # DataLoader worker: ExceptionWrapper.reraise
            _set_remote(link, [TB_TEXT, *body[k + 1 :]])
            break
    return i + len(body)


def _spawn_intro_next(items: list[Any], i: int) -> bool:
    """Whether the first line after the blank ones from `i` is mp.spawn's "-- Process N terminated
    with the following error:" (a bare `Exception` raised by torch.multiprocessing.spawn before 1.8)."""
    for x in items[i:]:
        if not isinstance(x, str):
            return False
        if not blank(x):
            return SPAWN_INTRO.match(x) is not None
    return False


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
# A field at the template's indent of 2, or at none where a copy lost it; `msg` is torch 1.9's
# `traceback` (its template: "  msg: \"${message}\"").
_FIELD = re.compile(r"^(?:  )?(?P<key>time|host|rank|exitcode|error_file|traceback|msg)\s*: ?(?P<value>.*)$")
# The rank is whole once " (" follows it: an excerpt cut inside the field ("0 (local_rank: 0", "3 (local_r")
# keeps the rank; the local rank only with its closing parenthesis (a cut number may have lost digits).
_RANK = re.compile(r"^(?P<rank>-?\d+) \((?:local[_ ]rank: (?P<local_rank>-?\d+)\))?")
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
                self._current = {"index": _num(entry.group("index")), "root_cause": self._root}
            return
        if self._current is None:
            return
        f = _FIELD.match(t) if self._message is None else None
        if self._message is None:
            _set_shaped_fields(self._current, t)
        if f:
            key, value = f.group("key"), f.group("value").strip()
            if key in ("traceback", "msg"):
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

    def snapshot(self) -> "FailureBoxState":
        """What was read of the box so far, as plain data."""
        return FailureBoxState(title=self.title, failures=list(self.failures), lines=self._lines, root=self._root,
                               current=None if self._current is None else dict(self._current),
                               message=None if self._message is None else list(self._message), tail=list(self._tail))

    @classmethod
    def from_snapshot(cls, state: "FailureBoxState") -> "FailureBox":
        box = cls()
        box.title, box.failures, box._lines, box._root = state.title, state.failures, state.lines, state.root
        box._current, box._message = state.current, state.message
        box._tail.extend(state.tail)
        return box

    def _done(self) -> None:
        if self._current is not None:
            _finish_failure(self._current, (self._message or []) + list(self._tail))
            self.failures.append(self._current)
        self._current, self._message = None, None
        self._tail.clear()


class FailureBoxState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A `FailureBox` in a snapshot: the failures read, and the one being read (`current`, its
    traceback's first lines `message` and last lines `tail`); `lines` counts the box's lines."""

    title: str | None = None
    failures: list[dict[str, Any]] = []
    lines: int = 0
    root: bool = False
    current: dict[str, Any] | None = None
    message: list[str] | None = None
    tail: list[str] = []


def _read_failures(box: list[str]) -> dict[str, Any]:
    reader = FailureBox()
    for t in box:
        reader.add(t)
    return reader.result()


def _set_shaped_fields(entry: dict[str, Any], t: str) -> None:
    """The rank and exit code of a line that holds them in a copy's layout (see BOX_RANK_SHAPE),
    where the template's own field line did not give them."""
    if entry.get("rank") is None and (m := BOX_RANK_SHAPE.search(t)):
        entry["rank"], entry["local_rank"] = _num(m.group("rank")), _num(m.group("local_rank"))
    if entry.get("exitcode") is None and (m := BOX_EXITCODE_SHAPE.search(t)):
        entry["exitcode"], entry["pid"] = _num(m.group("code")), _num(m.group("pid"))


def _set_field(entry: dict[str, Any], key: str, value: str) -> None:
    if key == "rank":
        m = _RANK.match(value)
        if m is None and entry.get("rank") is not None:  # read from its shape (_set_shaped_fields)
            return
        entry["rank"] = _num(m.group("rank")) if m else None
        entry["local_rank"] = _num(m.group("local_rank")) if m and m.group("local_rank") else None
    elif key == "exitcode":
        m = _EXITCODE.match(value)
        if m is None and entry.get("exitcode") is not None:
            return
        entry["exitcode"] = _num(m.group("code")) if m else None
        entry["pid"] = _num(m.group("pid")) if m else None
        if m and m.group("signal"):
            entry["signal"] = m.group("signal")
    elif key == "error_file":
        entry["error_file"] = None if value == "<N/A>" else value
    else:
        entry[key] = value


def _finish_failure(entry: dict[str, Any], message: list[str]) -> None:
    while message and blank(message[-1]):
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
    exception_type = fatal.group("msg").strip() if fatal else ("Timeout" if timeout else None)
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
            current["frames"].append(Frame(fr.group("file"), _num(line) if line.isdigit() else None, fr.group("func").strip()))
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
