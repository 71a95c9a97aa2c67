"""Logical lines: what every parser is fed, after the envelope is removed.

A `Line` is one complete log line of one stream (CRI partials already joined),
with the rank prefixes that launchers add (`[rank3]: `, torchrun's `[default0]:`)
taken off and turned into numbers, so that the lines of several ranks
interleaved in one stream can be told apart.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import msgspec


class Line(NamedTuple):
    time: str | None  # RFC 3339 as the envelope gave it (UTC), None for plain text without times
    seq: int  # position among lines of the same stream with the same time
    text: str  # the payload, rank prefixes removed; may contain '\r' (progress bars)
    rank: int | None = None  # global rank, from `[rankN]:`
    local_rank: int | None = None  # local rank, from torchrun's `[<role><N>]:`


class LineState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A `Line` in a snapshot (parsers keep the line a record started on)."""

    time: str | None = None
    seq: int = 0
    text: str = ""
    rank: int | None = None
    local_rank: int | None = None

    @classmethod
    def of(cls, line: Line) -> "LineState":
        return cls(time=line.time, seq=line.seq, text=line.text, rank=line.rank, local_rank=line.local_rank)

    def line(self) -> Line:
        return Line(self.time, self.seq, self.text, self.rank, self.local_rank)


# torch.distributed's excepthook writes f"[rank{rank}]: {line}" (distributed_c10d.py), and c10
# logging writes "[rank0]:[E1218 ...". torchrun --tee writes f"[{role}{local_rank}]:" with no
# space (FORMATS.md 4.8). Prefixes stack: "[default0]:[rank0]: Traceback ...".
# torchrun's --log-line-prefix-template builds its own from ${role_name}, ${local_rank} and
# ${rank}; the form read here joins such parts with "|" (fixtures/runs/tee_custom_prefix:
# "[${role_name}${local_rank}|rank${rank}]: " gives "[default1|rank3]: ").
# At most 9 digits: a rank is small, and int() refuses strings of over 4300 digits (issue 10).
_PREFIX = re.compile(
    r"\[(?:rank ?(\d{1,9})\]: ?|([A-Za-z_][A-Za-z_-]*?)(\d{1,9})\]:"
    r"|([A-Za-z_][\w-]*?\d{1,9}(?:\|[A-Za-z_][\w-]*?\d{1,9}){1,3})\]: ?)"
)
_PART = re.compile(r"([A-Za-z_][\w-]*?)(\d+)$")


# Launchers' prefixes of other shapes, tried when no bracket prefix led the line:
# - Open MPI `mpirun --tag-output` (horovodrun uses it): "[jobid,rank]<stdout>:" before every
#   line, e.g. "[1,0]<stderr>:Traceback" (open-mpi/ompi orte/mca/iof/base/iof_base_output.c,
#   "[%s,%s]<%s>:"); stacked when a line was relayed twice. Horovod's own launcher (horovodrun
#   with gloo, and horovod.spark) writes "[rank]<stdout>:" with no job id (horovod/horovod
#   horovod/runner/common/util/safe_shell_exec.py prefix_stream '{time}[{rank}]<{prefix}>:{line}',
#   index = slot_info.rank in runner/gloo_run.py _exec_command_fn). {time} is empty unless
#   --prefix-output-with-timestamp (horovodrun) or prefix_output_with_timestamp=True (horovod.spark's
#   run and SparkBackend): then time.asctime(), always 24 characters ("Thu Dec  3 14:20:11 2026"),
#   stands before the bracket: "Thu Dec  3 14:20:11 2026[1]<stderr>:Traceback ...". A line is
#   tried for that form only where a "[" stands at offset 24.
# - Slurm `srun --label`: the task id (= global rank), padded to the width of the largest,
#   then ": " ("  7: Traceback"; SchedMD/slurm src/common/eio + srun's label option, "%*d: ").
#   Taken off where a non-blank follows it, or [h34b] a traceback's frame line ("0:   File \"..."; the line as the task
#   wrote it, its two blanks kept), so that a labelled traceback cut before its header still reads as one (batch h34b,
#   dev 1615, NVIDIA/nccl#1176). Other blanks after "N: " are left alone: a numbered code listing has that shape.
# - Lightning's rank_prefixed_message: "[rank: 3] " (lightning/fabric/utilities/rank_zero.py).
_MPI = re.compile(r"(?:\[(?:\d{1,9},)?(\d{1,9})\]<(?:stdout|stderr|stddiag)>:)+")
_ASCTIME_TAGGED = re.compile(r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d "
                             r"\d\d:\d\d:\d\d \d{4}\[(\d{1,9})\]<(?:stdout|stderr)>:")
_SRUN = re.compile(r" {0,8}(\d{1,6}): (?=\S| {1,8}File \")")
_LIGHTNING = re.compile(r"\[rank: (\d{1,9})\] ")
# - ParlAI's distributed workers: "rank:{:3d} |" before every print and log line of a rank other
#   than 0 ("rank:  3 | 2022-10-20 03:35:11,494 CRITICAL | Traceback ..."; facebookresearch/ParlAI
#   parlai/utils/distributed.py distributed_context, override_print and add_format_prefix).
_PARLAI = re.compile(r"rank: {0,8}(\d{1,9}) \| ?")
# - Determined's trial logs (`det trial logs`, the web UI): "[<UTC time>] <container id, 8 hex>
#   [rank=N] || <LEVEL>: " (determined-ai/determined master's trial_logs query: '[YYYY-MM-DD"T"HH24:MI:SS"Z"]'
#   || ' ' || substring(container_id, 1, 8) || ' [rank=' || rank_id || ']' || ' || ' || level || ': ' || log).
_DETERMINED = re.compile(r"\[(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z|UNKNOWN TIME)\] (?:[0-9a-f]{8}|\[UNKNOWN CONTAINER\])"
                         r"(?: \[rank=(\d{1,9})\])? \|\| (?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL): )?")
# torch's "[rankN]:" after what a logger, a log viewer or a progress bar printed first on the
# same line ("[89251] [rank0]:[E411 ...", "2024-05-01 10:00:00 [rank3]: Traceback",
# "...2.42s/it][rank5]:[E728 ..."): the head is dropped with the prefix.
_INNER = re.compile(r"\[rank(\d{1,9})\]: ?")
# Ray's driver prints its workers' lines behind "(name pid=N, ip=A) " (coloured on a tty:
# "\x1b[2m\x1b[36m(RayTrainWorker pid=1942, ip=10.0.0.7)\x1b[0m"; ray/_private/worker.py
# print_worker_logs: "({prefix}{pid}{, ip=...})" where prefix is "<actor or task name> pid=", or
# just "pid=" for a process that runs neither yet (the driver's "(pid=N) " lines), and is empty
# for the raylet's and the autoscaler's lines: "(raylet) ", "(raylet, ip=A) ", "(autoscaler +1m3s) ").
# It names a process, not a rank: it is taken off so that the worker's traceback reads as one.
# A copy pasted from a terminal into an issue thread loses the colour codes' ESC byte and keeps the rest ("[36m(WorkerDict
# pid=N)[0m "; h20a: fixtures/eval dev 601 (NovaSky-AI/SkyRL#757), dev 033, OpenRLHF/OpenRLHF#624): the ESC is optional.
_RAY = re.compile(r"(?:\x1b?\[[0-9;]*m)*\((?:(?:[\w.:<>-]+ )?pid=\d{1,9}|raylet|autoscaler \+[\dhms]+)(?:, ip=[\w.:-]+)?\)"
                  r"(?:\x1b?\[[0-9;]*m)* ?")
_INNER_REACH = INNER_REACH = 512  # how far into a line such a prefix is looked for
# [h24d] docker compose's prefix on every line of a service's container ("web-1  | Traceback ...", "algo-1-x7k2_1 | ..."):
# compose v2 pads the container's name to the widest name + 1, then " |", then " " and the line (docker/compose
# cmd/formatter/logs.go presenter.setPrefix: fmt.Sprintf("%-"+strconv.Itoa(width)+"s |", p.name), computeWidth: width+1;
# logConsumer.Log: fmt.Fprintf(l.writer, "%s %s\n", p.prefix, line)), docker-compose 1.x pads to the widest name, then
# " | " (compose/cli/log_printer.py build_log_prefix: container.name_without_project.ljust(prefix_width) + ' | ').
# The name is the container's without its project, or v2's "<project>-<service>-<index>": it ends in its replica index
# ("_1", "-1"). Coloured on a tty (the prefix wrapped in SGR codes; a copy from a terminal keeps them without ESC).
# It names a container, not a rank: it is taken off so that the container's traceback and errors read as its own.
# Batch h24d, dev 832 (mosaicml/composer#1438).
_COMPOSE = re.compile(r"(?:\x1b?\[[0-9;]*m)*[A-Za-z0-9][\w.-]{0,62}[-_]\d{1,4} +\|(?:\x1b?\[[0-9;]*m)*(?: |$)")
COMPOSE_BAR, COMPOSE_REACH = " |", 80  # the cheap test for it: " |" within this many characters of a line's start
# [h25d] torchx's and NeMo-Run's log printers put "<role>/<replica id> " before every line of a replica (pytorch/torchx
# torchx/util/log_tee_helpers.py _print_log_lines_for_role_replica: prefix = f"{color_begin}{which_role}/{which_replica}{color_end} "
# through _prefix_line; torchx/cli/cmd_log.py print_log_lines: f"{GREEN}{role_name}/{replica_id}{ENDC} "; NVIDIA/NeMo-Run
# src/nemo_run/run/logs.py print_log_lines, the same, its role named after the task, e.g. "nemo.collections.llm.api.pretrain").
# Green on a tty (a copy from a terminal keeps the codes without ESC). It names a role's replica, not a rank, and is read only
# where torchrun's own prefix follows it ("i.pretrain/0 [default1]:Traceback ..."): that one gives the local rank. A bare
# "<word>/<digits> " is too common a start of a line (a fraction, a path) to be taken off alone.
# Batch h25d, dev 869 (NVIDIA-NeMo/Speech#12473); dev 715 (#12203) has "[rank0]:" after it, which _INNER reads already.
_TORCHX = re.compile(r"(?:\x1b?\[[0-9;]*m)*[A-Za-z_][\w.-]{0,127}/\d{1,6}(?:\x1b?\[[0-9;]*m)* (?=\[)")
TORCHX_MARK, TORCHX_REACH = "]:", 160  # the cheap test for it: the end of torchrun's prefix within this many characters
# [h25d] A log viewer's table pasted into a GitHub comment: GitHub's paste handler turns an HTML table into a Markdown one,
# each row its cells' text joined by " | ", an empty cell written as a no-break space (github/paste-markdown
# src/paste-markdown-table.ts tableMarkdown: `.map(columnText).join(' | ')`; columnText: textContent trimmed, "|" escaped as
# "\\|", a newline as " ", `text || noBreakSpace`). A viewer's row is its icon columns (empty), its time, then the log line:
# "\u00a0 | \u00a0 | \u00a0 | 2021-11-17 12:30:37 | File ...". Read only with one empty cell or more first and a time cell
# before the line (loguru's own "2023-07-26 04:37:11.717 | INFO     | ..." starts with its time, no empty cell, and is left
# as it is); the line's leading blanks were trimmed by the paste. Batch h25d, dev 865 (tensorflow/tensorflow#53098).
_PASTED_TABLE_ROW = re.compile(r"(?:[ \u00a0]+\|)+ (?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?) \|(?: |$)")
# The first characters of a line that may start a rank prefix (besides a digit: srun's task id).
PREFIX_FIRST = "[ (\x1br\u00a0"  # [h25d] the no-break space of a pasted table's empty cell


def strip_rank_prefixes(text: str) -> tuple[str, int | None, int | None]:
    """Remove leading rank prefixes; return (text, rank, local_rank)."""
    if not text.startswith("["):
        return _other_prefixes(text)
    rank = local_rank = None
    pos = 0
    while text.startswith("[", pos):
        end = text.find("]:", pos)
        if end < 0:
            break
        # A prefix ends at the first "]:" (no part of one can hold a "]"), and its optional
        # space follows: the head up to there decides, and the same heads come back line
        # after line, so what each says is remembered.
        head = text[pos : end + 3]
        known = _HEADS.get(head)
        if known is None:
            known = _read_head(head)
            if len(_HEADS) >= 4096:
                _HEADS.clear()
            _HEADS[head] = known
        size, r, lr = known
        if not size:
            break
        if r is not None:
            rank = r
        if lr is not None:
            local_rank = lr
        pos += size
    if not pos:
        return _other_prefixes(text)
    return text[pos:], rank, local_rank


def may_be_prefixed(text: str) -> bool:
    """Whether a line can carry a rank prefix (a cheap test before `strip_rank_prefixes`)."""
    first = text[:1]
    return (first != "" and (first in PREFIX_FIRST or first.isdigit()) or text.find("[rank", 1, _INNER_REACH) > 0
            or text[24:25] == "["  # Horovod's prefix led by time.asctime() (24 characters)
            or text.find(COMPOSE_BAR, 1, COMPOSE_REACH) > 0  # [h24d] docker compose's "<container> | "
            or text.find(TORCHX_MARK, 1, TORCHX_REACH) > 0)  # [h25d] torchx's "<role>/<replica> " before torchrun's prefix


def _other_prefixes(text: str) -> tuple[str, int | None, int | None]:
    """mpirun's, srun's, Lightning's and ParlAI's prefixes, or torch's "[rankN]:" after a head (see above)."""
    first = text[:1]
    m = None
    if first == "[":
        m = _MPI.match(text) or _LIGHTNING.match(text) or _DETERMINED.match(text)
        if m is None and text[1:2].isdigit() and (ray := _RAY.match(text)) is not None:  # Ray's prefix, its ESC lost
            return strip_rank_prefixes(text[ray.end():]) if ray.end() < len(text) else ("", None, None)
    elif first == " " or first.isdigit():
        m = _SRUN.match(text)
    elif first == "r":
        m = _PARLAI.match(text)
    elif text[24:25] == "[":
        m = _ASCTIME_TAGGED.match(text)
    elif first == "(" or first == "\x1b":
        ray = _RAY.match(text)
        if ray is not None:
            return strip_rank_prefixes(text[ray.end():]) if ray.end() < len(text) else ("", None, None)
    if m is not None:
        rest, rank, local_rank = strip_rank_prefixes(text[m.end():]) if text[m.end():m.end() + 1] == "[" else (text[m.end():], None, None)
        return rest, (rank if rank is not None or m.group(1) is None else int(m.group(1))), local_rank
    if text.find(COMPOSE_BAR, 1, COMPOSE_REACH) > 0 and (compose := _COMPOSE.match(text)) is not None:  # [h24d]
        return strip_rank_prefixes(text[compose.end():]) if compose.end() < len(text) else ("", None, None)
    if (first == " " or first == "\u00a0") and (row := _PASTED_TABLE_ROW.match(text)) is not None:  # [h25d]
        return strip_rank_prefixes(text[row.end():]) if row.end() < len(text) else ("", None, None)
    if text.find(TORCHX_MARK, 4, TORCHX_REACH) > 0 and (torchx := _TORCHX.match(text)) is not None:  # [h25d]
        rest = text[torchx.end():]
        stripped = strip_rank_prefixes(rest)
        if len(stripped[0]) < len(rest):  # torchrun's prefix followed it
            return stripped
    at = text.find("[rank", 1, _INNER_REACH)
    if at > 0 and text[at - 1] in " \t]>:" and (m := _INNER.match(text, at)) is not None:
        rest, rank, local_rank = strip_rank_prefixes(text[m.end():])
        return rest, (rank if rank is not None else int(m.group(1))), local_rank
    return text, None, None


_HEADS: dict[str, tuple[int, int | None, int | None]] = {}


def _read_head(head: str) -> tuple[int, int | None, int | None]:
    """(length of the prefix at the start of `head`, 0 if none; its rank; its local rank)."""
    m = _PREFIX.match(head)
    if m is None:
        return 0, None, None
    rank = local_rank = None
    if m.group(1) is not None:
        rank = int(m.group(1))
    elif m.group(3) is not None:
        local_rank = int(m.group(3))
    else:
        for i, part in enumerate(m.group(4).split("|")):
            name, number = _PART.match(part).groups()
            if name == "rank":
                rank = int(number)
            elif name in ("local_rank", "local") or i == 0:
                local_rank = int(number)
    return m.end(), rank, local_rank
