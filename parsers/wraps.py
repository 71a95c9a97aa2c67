"""Lines a terminal broke at a fixed width, joined back (plain-text logs copied from a terminal).

A terminal hard-wraps a line longer than its width W by starting a new row every W columns,
inside a word as often as not ("ProcessGroupNCCL'" / "s watchdog got stuck"). A copy of the
screen turns every row into a line: tmux and screen pad each row with spaces to W (the last
piece too), other terminals keep the pieces as they are, or trim their trailing spaces. Then no
physical line holds the words a rule needs, and the pieces after the first lost the line's rank
prefix. Joining them back must never glue two records together, so it is done only where it is
safe:

- the block shows it was wrapped at W: W is its longest line, at least `MIN_WIDTH`; at least
  `MIN_FULL` lines are exactly W long; and at least `MIN_SPLIT_WORDS` of them are followed by a
  line that carries no head of its own and goes on with the word the row ends in (the row ends
  in a letter, the next starts with a lower-case one): a break inside a word, which a terminal
  makes and a writer does not; [h30a] or inside a bracket the row opened, the next line starting
  at its first column (a writer's continuation inside brackets is indented; `inside_brackets`);
  [h32c] a pane narrower than `MIN_WIDTH`, down to `NARROW_MIN_WIDTH` (a web UI's log pane, a
  split terminal: launcher boxes copied at 40-56 columns), counts when the block shows more of
  those breaks, `NARROW_MIN_SPLIT_WORDS`: short lines of one length come by chance more often,
  and a 40-column row still holds the heads `HEAD` reads (a rank prefix, a date, a level); a
  rule line cut at W (a row of W dashes or equals signs, the next line the rest of the same
  sign: Open MPI's 74-dash help boxes, torchrun's 60-sign ChildFailedError box) is such a break
  too (`cut_rule`), and a row ending in a dotted name goes on with the next line even when that
  line reads as an exception's header (`cut_name`: "torch.distributed.elastic.multiprocessin" /
  "g.errors.ChildFailedError: ", the class's qualified name cut by the edge); a row followed by
  the same text again is no break (ranks printing one line each: "read 1281167 files from 1000
  directories" four times, fixtures/eval dev 668: the rest of a cut word is never the row itself);
- a row joins the next line only when the row is exactly W long and does not end in two
  spaces (padding: the logical line ended before the edge), and the next line is not blank and
  carries no head of its own (`HEAD`: a rank prefix, a timestamp, a logger's level, a Ray
  process prefix, a traceback line, an NCCL line): a record's first line always has one of those
  or is short. A piece that ends in a space the copy trimmed (W-1 long) is left alone.
- rows of a table are not a wrap: a row and the next line that start columns at the same places
  (at least `MIN_SHARED_COLUMNS` texts after a gap of two spaces or more, as `kubectl get pods`,
  `sky jobs queue` or `nvidia-smi` print them, padded to one width, one row ending in a letter
  and the next starting with a lower-case pod name) are records of their own (batch h16m,
  fixtures/eval dev 396).

Pure: text in, text out; a block at a time (the reader's blocks are whole lines), so a row at the
very end of a block is not joined to the next block's first line.
"""

from __future__ import annotations

import re

MIN_WIDTH = 60  # from this width on, MIN_SPLIT_WORDS breaks show a wrap (narrower: NARROW_*)
MIN_FULL = 3  # rows exactly W long
MIN_SPLIT_WORDS = 2  # of them followed by the rest of a word they cut
NARROW_MIN_WIDTH = 40  # [h32c] a narrower pane, read only on more evidence (module doc)
NARROW_MIN_SPLIT_WORDS = 3
MIN_SHARED_COLUMNS = 2  # column starts two lines share to be rows of one table

# Where a column of a table starts: a text after two or more spaces (a printer's column padding).
_COLUMN_START = re.compile(r"(?<=\S)  +(?=\S)")

# The start of a line that is a record of its own, never the rest of a wrapped one. Each part
# names who prints it.
HEAD = re.compile(
    r"\[rank ?\d+\]:"  # torch.distributed's "[rank3]:" (distributed_c10d.py), c10 logging
    r"|\[[A-Za-z_][\w-]*\d+(?:\|[\w-]+)*\]:"  # torchrun --tee "[default0]:" (FORMATS.md 4.8)
    r"|\[(?:\d+,)?\d+\]<std"  # Open MPI --tag-output "[1,0]<stderr>:", Horovod's gloo launcher "[1]<stderr>:"
    r"|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\[\d+\]<std"  # Horovod's, led by time.asctime()
    r"|\[rank: \d+\]"  # Lightning's rank_prefixed_message
    r"|\[?[IWEF](?:\d{4} \d\d:\d\d:\d\d| [\w/.-]+:\d+\])"  # glog / c10 logging "E0611 04:17:32" / "[E ProcessGroupNCCL.cpp:1316]"
    r"|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d"  # ISO and Python logging dates
    r"|\[?\d\d:\d\d:\d\d"  # a clock (collectors, `ts`)
    r"|\d\d/\d\d \d\d:\d\d:\d\d"  # mmengine's "04/17 09:41:43"
    r"|\(\S*(?: )?pid=\d+|\(raylet|\(autoscaler "  # Ray's process prefixes (ray/_private/worker.py print_worker_logs)
    r"|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL)\b"  # a logger's level first
    r"|Traceback \(most recent call last\)|\s+File \"|During handling of|The above exception"  # CPython traceback.py
    r"|[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt)\b"  # an exception's header line
    r"|\S+:\d+:\d+ \[\d+\] (?:[\w/.-]+:\d+ )?NCCL "  # NCCL's "host:pid:tid [dev] NCCL INFO", "... [dev] file:line NCCL WARN" (src/debug.cc)
    r"|\s*\d+%\|"  # a tqdm bar
)


def wrap_width(lines: list[str]) -> int | None:
    """The width the block's lines were hard-wrapped at, or None when nothing shows a wrap."""
    if len(lines) <= MIN_FULL:
        return None
    lengths = list(map(len, lines))
    width = max(lengths)
    if width < NARROW_MIN_WIDTH or lengths.count(width) < MIN_FULL:
        return None
    needed = MIN_SPLIT_WORDS if width >= MIN_WIDTH else NARROW_MIN_SPLIT_WORDS
    split_words = 0
    head = HEAD.match
    for i in [i for i, n in enumerate(lengths) if n == width and i + 1 < len(lines)]:
        row, nxt = lines[i].rstrip("\r"), lines[i + 1]
        if cut_rule(row, nxt) or (row[-1:].isalpha() and nxt[:1].islower() or inside_brackets(row) and nxt[:1].strip()) \
                and (head(nxt) is None or cut_name(row, nxt)) and not table_rows(row, nxt) and nxt.rstrip() != row.rstrip():
            split_words += 1
            if split_words >= needed:
                return width
    return None


def inside_brackets(row: str) -> bool:
    """[h30a] Whether `row` ends inside a bracket it opened: more `(` than `)` or more `[` than `]` in it. A writer who
    breaks a line there goes on with an indented one (a call's arguments, a dict or a module's repr as Python and pprint
    print them); a terminal breaks at the edge whatever is open ("... terminated with exception: [Rank 1" / "] Watchdog
    caught ...", "... WorkNCCL(" / "SeqNum=...", the watchdog's line of torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp
    wrapped at 75 columns, fixtures/eval dev 1154)."""
    return row.count("(") > row.count(")") or row.count("[") > row.count("]")


_RULE_SIGNS = "-=*"  # the signs launchers draw their boxes' rules with


def cut_rule(row: str, nxt: str) -> bool:
    """[h32c] Whether `row` is a rule line the edge cut: all of it one sign (`_RULE_SIGNS`), the next line the rest of it,
    the same sign alone and shorter. A writer's rules are whole lines; two rules in a row (Open MPI prints its box's
    closing and opening rules so) are each as long as the first."""
    sign = row[:1]
    return bool(sign) and sign in _RULE_SIGNS and row == sign * len(row) and 0 < len(nxt) < len(row) and nxt == sign * len(nxt)


# A row ending in a dotted name (a module path), and a line going on with the rest of it up to an exception class.
_ROW_ENDS_IN_NAME = re.compile(r"(?:^|[\s:(\[])(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*$")
_NAME_GOES_ON = re.compile(r"[a-z_.\d]\w*(?:\.[A-Za-z_]\w*)*(?:Error|Exception|Warning|Interrupt)\b")


def cut_name(row: str, nxt: str) -> bool:
    """[h32c] Whether the edge cut an exception's qualified name: `row` ends in a dotted name and `nxt` begins with the
    rest of it (lower case, a digit or a dot first) up to the class, so that the rest reads as an exception's header of
    its own ("g.errors.ChildFailedError: "). A header a writer starts on a line of its own begins with the whole name."""
    return _ROW_ENDS_IN_NAME.search(row) is not None and _NAME_GOES_ON.match(nxt) is not None


def table_rows(row: str, nxt: str) -> bool:
    """Whether two lines are rows of one table: at least MIN_SHARED_COLUMNS columns start at the same place."""
    starts = {m.end() for m in _COLUMN_START.finditer(row)}
    if len(starts) < MIN_SHARED_COLUMNS:
        return False
    return len(starts.intersection(m.end() for m in _COLUMN_START.finditer(nxt))) >= MIN_SHARED_COLUMNS


def join_wrapped(lines: list[str]) -> list[str]:
    """`lines` with the rows of each wrapped line joined into one (module doc); the same list when
    the block shows no wrap."""
    width = wrap_width(lines)
    if width is None:
        return lines
    head = HEAD.match
    out: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        while len(lines[i]) == width and i + 1 < n and not lines[i].rstrip("\r").endswith("  "):
            nxt = lines[i + 1]
            if not nxt.strip() or head(nxt) is not None and not cut_name(lines[i].rstrip("\r"), nxt) or table_rows(lines[i], nxt):
                break
            line = line.rstrip("\r") + nxt
            i += 1
        out.append(line)
        i += 1
    return out
