"""The shapes of the lines of Python and PyTorch stack traces, as compiled regexes.

Sources (FORMATS.md section 4; real output of each in fixtures/traces/ and fixtures/runs/):
CPython Lib/traceback.py (`StackSummary.format`, `TracebackException.format`,
`format_exception_only`, `_ExceptionPrintContext` for ExceptionGroup boxes),
Python/faulthandler.c (`dump_frame`, `faulthandler_dump_traceback`, `write_thread_id`),
Lib/multiprocessing/pool.py and Lib/concurrent/futures/process.py (`RemoteTraceback`),
torch/multiprocessing/spawn.py (`ProcessRaisedException`), torch/_utils.py
(`ExceptionWrapper`: "Original Traceback"), torch/distributed/elastic/multiprocessing/
errors/__init__.py (`_FAILURE_FORMAT_TEMPLATE`, `_MSG_FORMAT_TEMPLATE`).
"""

from __future__ import annotations

import re

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # 3.13+ colour (FORCE_COLOR / PYTHON_COLORS)

TB_HEAD = re.compile(r"^Traceback \(most recent call last\):\s*$")
GROUP_TB_HEAD = re.compile(r"^Exception Group Traceback \(most recent call last\):\s*$")  # inside a box
EG_HEAD = re.compile(r"^[ \t]*\+ Exception Group Traceback \(most recent call last\):\s*$")
FRAME = re.compile(r'^\s+File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<func>.+)$')
SYNTAX_FRAME = re.compile(r'^\s+File "(?P<file>[^"]*)", line (?P<line>\d+)\s*$')
# faulthandler: no comma before `in`, line may be `???` (Python/faulthandler.c dump_frame).
# Captured free text (function names, messages) is stripped by the reader: a lazy `.+?\s*$`
# would be quadratic on a long line of spaces.
DUMP_FRAME = re.compile(r'^\s+File "(?P<file>[^"]*)", line (?P<line>\d+|\?\?\?) in (?P<func>.+)$')
CARET = re.compile(r"^\s*[~^]+\s*$")
REPEAT = re.compile(r"^\s*\[Previous line repeated (\d+) more times?\]\s*$")
SEPARATOR = re.compile(
    r"^(?:(?P<cause>The above exception was the direct cause of the following exception:)"
    # "While handling": stackprinter's words (formatting.py format_exc_info chain_hint)
    r"|(?P<context>(?:During handling of|While handling) the above exception, another exception occurred:))\s*$"
)
# `format_exception_only`: "Type: message", or the bare type when str(exc) is empty
# (and Ray's wrapper, named f"RayTaskError({cause_cls.__name__})": ray-project/ray python/ray/exceptions.py
# RayTaskError.as_instanceof_cause, printed `ray.exceptions.RayTaskError(RuntimeError): ...`)
EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:\.<locals>\.[\w.]+)?(?:\([A-Za-z_]\w*\))?)(?:: ?(?P<msg>.*))?$")
FATAL = re.compile(r"^Fatal Python error: (?P<msg>.*)$")
DUMP_THREAD = re.compile(
    r"^(?:(?P<current>Current thread)|Thread) (?P<tid>0x[0-9a-fA-F]+)(?: \[[^\]]*\])? \(most recent call first\):\s*$"
    r"|^(?P<stack>Stack) \(most recent call first\):\s*$"
)
DUMP_TIMEOUT = re.compile(r"^Timeout \((?P<t>\d+:\d\d:\d\d(?:\.\d+)?)\)!\s*$")
DUMP_EXTENSIONS = re.compile(r"^Extension modules: ")
REMOTE_HEAD = re.compile(r"^(?P<type>(?:multiprocessing\.pool\.|concurrent\.futures\.process\._)?RemoteTraceback):\s*$")
# torchrun's ChildFailedError line where the paste or the excerpt starts (no Traceback header
# before it): the box after it is read all the same.
CHILD_FAILED_HEAD = re.compile(r"^(?:[\w.]+\.)?ChildFailedError:\s*$")
# ... or from its title line, when neither that line nor the border above it was kept
# (errors/__init__.py _MSG_FORMAT_TEMPLATE: "{boarder}\n{title}\n{section}\nFailures:...",
# the title being f"{name} FAILED").
BOX_TITLE = re.compile(r"^\S.{0,400} FAILED\s*$")
# ... or from its "Root Cause (first observed failure):" section, where the excerpt starts below
# the title (the same template: "Root Cause (first observed failure):\n{root_failure}"; torch 1.9's
# put "Root Cause:" first, between `=` rules: "{boarder}\n{title}\n{section}\nRoot Cause:\n...";
# a copy may have set a space before the colon).
BOX_ROOT_CAUSE = re.compile(r"^Root Cause(?: \(first observed failure\))? ?:\s*$")
CHILD_FAILED_TYPE = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"
# --- h25c (issue 16, session 25): an exception line cut mid-name where a paste or an excerpt ends.
# Python prints the type as `module.QualName` (cpython Lib/traceback.py TracebackException.format_exception_only:
# stype = exc_type.__qualname__, prefixed by exc_type.__module__ unless it is "__main__" or "builtins"), and a class
# name is a CapWords word: a dotted name whose last part starts in lower case, with no colon, is a module path cut
# short (`torch.distribu` of torch.distributed.elastic.multiprocessing.errors.ChildFailedError), not a type. The few
# stdlib exception classes with lower-case names are kept as types.
CUT_TYPE = re.compile(r"^[A-Za-z_]\w*(?:\.\w+)*\.[a-z_]\w*$")
LOWER_CASE_TYPES = frozenset({"socket.timeout", "socket.error", "socket.herror", "socket.gaierror", "select.error"})
# ... or cut inside the class name the last frame raises (`raise ChildFailedError(` then `ChildFa`): the statement's
# name, read from the frame's code line.
RAISED = re.compile(r"^raise\s+(?:[\w.]+\.)?(?P<name>[A-Za-z_]\w*)\s*(?:\(|$)")
# A box entry's rank and exit code found by their values' shape, where a copy of the box joined
# its fields on one line, lost the `:` after a key, the `_` of `local_rank` / `error_file`, or put
# the fields in a table (`| rank | ... |`) or a list (`- rank: ...`). The values are the format
# strings' (torch/distributed/elastic/multiprocessing/errors/__init__.py _FAILURE_FORMAT_TEMPLATE,
# torch 1.9: "rank: ${rank} (local_rank: ${local_rank})", "exitcode: ${exitcode} (pid: ${pid})";
# 1.10 on: "rank      : ..." / "exitcode  : ... (pid: ${pid})"): whole, with their parentheses,
# so that a launcher line ("failed (exitcode: -9) local_rank: 4 (pid: N)", elastic/multiprocessing/
# api.py) is neither.
BOX_RANK_SHAPE = re.compile(r"\brank\s*[:|]?\s*(?P<rank>-?\d+)\s*\(local[ _]?rank\s*:\s*(?P<local_rank>-?\d+)\)")
BOX_EXITCODE_SHAPE = re.compile(r"\bexitcode\s*[:|]?\s*(?P<code>-?\d+)\s*\(pid\s*:\s*(?P<pid>\d+)\)")
SPAWN_INTRO = re.compile(r"^-- Process (?P<index>\d+) terminated with the following error:\s*$")
ORIGINAL_TB = re.compile(r"^Original Traceback \(most recent call last\):\s*$")
BORDER = re.compile(r"^=+\s*$")
BOX_LINE = re.compile(r"^[ \t]+[|+]")
TRIPLE_QUOTE = re.compile(r'^"""\s*$')
TB_TEXT = "Traceback (most recent call last):"
# TensorFlow's op errors (2.9+, python/eager/execute.py quick_execute and python/framework/error_interpolation.py): the
# message "Graph execution error:", a blank line, then "Detected at node <name> defined at (most recent call last):" and
# the node's creation stack (File lines, a blank line after each, or "<stack traces unavailable>"), then the op's own
# message and its "[[{{node X}}]]" lines; 1.14+ graphs also print "Original stack trace for '<name>':" after a blank
# line. Both continue the exception's message (real TF 2.21 output: fixtures/tf_real/*.log).
TF_NODE_STACK = re.compile(r"^(?:Detected at node .{1,2000} defined at \(most recent call last\):|Original stack trace for '[^'\n]{1,2000}':)\s*$")
TF_NO_STACK = re.compile(r"^<stack traces unavailable>\s*$")
# [h34e] torch.compile's (dynamo's) errors go on after blank lines: pytorch/pytorch torch/_dynamo/exc.py augment_exc_message
# appends to the exception's text "\nfrom user code:\n " + "".join(traceback.format_list(real_stack)) (File lines with their
# source line, the first indented one space more: 2.1 to current), then "\nSet TORCH_LOGS=\"+dynamo\" and
# TORCHDYNAMO_VERBOSE=1 for more information\n" (2.1-2.5; 2.0 "Set torch._dynamo.config.verbose=True for more information",
# 2.6+ "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're reporting a bug to
# PyTorch). ..."), "\nMinifier script written to ...", "\nLast frame execution written to ...", and "\n\nYou can suppress
# this exception and fall back to eager by setting:\n    import torch._dynamo\n    torch._dynamo.config.suppress_errors =
# True\n" (2.0-2.5). DYNAMO_USER_CODE opens the frames of the message, DYNAMO_HINT is a line that continues it after a
# blank one (real runs: fixtures/runs/compile_metric_torch2_1, _torch2_4).
DYNAMO_USER_CODE = re.compile(r"^from user code:\s*$")
DYNAMO_HINT = re.compile(
    r"^(?:Set (?:TORCH_LOGS=\"\+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information"
    r"|TORCHDYNAMO_VERBOSE=1 for the internal stack trace \(please do this especially if you're reporting a bug to PyTorch\)"
    r"|(?:torch\._dynamo|torchdynamo)\.config\.verbose=True for more information)"
    r"|You can suppress this exception and fall back to eager by setting:"
    r"|Minifier script written to \S|Last frame execution written to \S)"
)

# Lines that start a log record of their own, so they cannot continue an exception
# message: timestamps first, glog / torch elastic / c10 headers, level names first,
# NCCL's host:pid:tid, dict-like metric lines, progress bars, step lines, and SLURM's own programs
# (srun, slurmstepd, ...), which write "<argv0>: <level prefix><message>" to the job's stderr beside
# the tasks' output (SchedMD/slurm src/common/log.c _log_msg: "%s: %s%s\n", log->argv0, pfx, buf;
# argv0 "slurmstepd-<node>" in some builds, fixtures/eval dev 319): no exception is named srun.
# [h30f] c10's MessageLogger head before torch 2.3, "[" + severity letter + " " + file + ":" + line + "] " with no time
# (c10/util/Logging.cpp MessageLogger::MessageLogger, its time fields commented out): `[E ProcessGroupNCCL.cpp:821] [Rank 1]
# Watchdog caught ...` of another rank after a traceback's exception line starts a record of its own (dev 1219).
FOREIGN = re.compile(
    r"""^(?:\[?\d{4}-\d\d-\d\d[T _]\d\d:\d\d
    |(?:srun|salloc|sbatch|slurmstepd(?:-[\w.-]+)?):\ 
    |\[?\d\d:\d\d:\d\d
    |\[?[IWEFD]\d{4}\ \d\d:\d\d:\d\d
    |\[[IWEF]\ [\w.-]+\.(?:cpp|cc|cu|cuh|h|hpp):\d+\]\ 
    |\[?(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL|TRACE)(?:\]|:|\s)
    |[\w.-]+:\d+:\d+\ \[\d+\]\ NCCL\ 
    |\{['"]
    |(?i:epoch|step|iter(?:ation)?)\b[\s:=\[]*\d
    |[^\r]*\r)""",
    re.X,
)

# --- h30f (issue 16, session 30): another process's log line written between a frame's indent and its source line.
# CPython's own traceback printer (Python/traceback.c display_source_line, 3.x up to 3.12, PyErr_Display's path for an
# uncaught exception) writes a source line in three writes: the indent (_Py_WriteIndent, 4 blanks; PyFile_WriteString of
# blanks before 3.11), the stripped line (PyFile_WriteObject), then "\n". Workers started by torchrun run `python -u`
# (torch/distributed/run.py config_from_args), so their stderr is unbuffered and a sibling writing to the same stream between
# the first and the second write leaves its whole line behind the frame's blanks, and the source line at the margin under
# it (fixtures/eval dev 1219, huggingface/accelerate#1209: `    [E ProcessGroupNCCL.cpp:821] [Rank 3] Watchdog caught ...`
# inside rank 2's traceback, then `work = default_pg.broadcast([tensor], opts)`). Only heads no Python source line can
# start with: c10's MessageLogger (c10/util/Logging.cpp: "[" + severity letter + " " + file + ":" + line + "] " before torch
# 2.3, "[" + letter + MMDD hh:mm:ss.nnnnnnnnn + " " + file:line + "] " from 2.3, "[rankN]:" before it when the global rank is
# set), glog's "E1206 18:44:16.994932 12345 file.cc:N] " and NCCL's "host:pid:tid [dev] NCCL " (FOREIGN's).
INTERLEAVED = re.compile(
    r"""^[ \t]+(?:(?:\[rank\d+\]:)?\[[IWEF](?:\d{4}\ \d\d:\d\d:\d\d\.\d+)?\ [\w.-]+\.(?:cpp|cc|cu|cuh|h|hpp):\d+\]\ 
    |[IWEF]\d{4}\ \d\d:\d\d:\d\d\.\d+\ +\d+\ [\w.-]+\.(?:cpp|cc|cu|cuh|h|hpp):\d+\]\ 
    |[\w.-]+:\d+:\d+\ \[\d+\]\ NCCL\ )""",
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
    r"|(?:[\w.]+\.)?ChildFailedError:\s*$"
    r"|\S.{0,400} FAILED\s*$"
    r"|Root Cause \(first observed failure\):\s*$"
    r"|The above exception was the direct cause|During handling of the above exception"
    # behind a '\r' bar or a head (TraceParser._start decides): '.*' then the literal is the one form
    # re scans fast (any test of the head's last characters made it 8x slower: 0.013 -> 0.11 s CPU
    # on the fixtures' 14,440 lines, replay 0.81x); Python's "Original Traceback" passes, _start refuses it
    # (no colon: rich's box title and IPython's head line, RENDERED below, end the words without one)
    r"|.*Traceback \(most recent call last\)"
    r"|File \"[^\"]*\", line \d+, in "  # stackprinter's frame line, at the margin (RENDERED)
    r"|.* File \"[^\"]*\", line \d+, in "  # ... behind a head (HEADED; traces._headed_start decides)
    r"|[\w.-]+\.pyw? \d+ [\w<>.]+\s*$|\d+ [\w<>.]+ [\w.-]+\.pyw?\s*$"  # pretty_errors' frame (PE_FRAME)
    r"|│ +(?:File \"|Traceback \(most recent call last\):)"  # a traceback inside a viewer's box (MARGIN)
    # [h29b] a frame line of rich's panel whose title the copy lost (RICH_FRAME: an excerpt or a tail starts in the box)
    # (the border as a literal character: Hyperscan takes no "\u" escape; a superset of RICH_FRAME, no negated class of it)
    r"|│ \S.*?:\d+ in \S.*│\s*$"
    # [h30e] the head of a stack a warning quotes (traces.QUOTED_STACK_HEAD: read, no trace)
    r"|.*Traceback of forward call that (?:caused the error|induced the previous calculation):)"
)

# -- tracebacks other libraries draw (helper h16w, issue 16). Each shape was read off the library's real output
# (fixtures/renderers/matrix, made by running it: regenerate.py --matrix; versions in README.md there) and is printed
# by the file named. trace_blocks.derender turns them into CPython's lines; the parser's states for them are in traces.py.
#: rich.traceback: a ROUNDED panel titled "Traceback (most recent call last)" (rich/traceback.py
#: Traceback.__rich_console__, Panel(title="[traceback.title]Traceback [dim](most recent call last)"), 12.6.0-14.2.0)
RICH_HEAD = re.compile(r"^\u256d\u2500+ Traceback \(most recent call last\) \u2500+\u256e\s*$")
RICH_BODY = re.compile(r"^\u2502")  # "│" its left border; "╰──╯" closes it
RICH_END = re.compile(r"^\u2570\u2500+\u256f\s*$")
#: a frame: filename, ":", lineno, " in ", name (rich/traceback.py _render_stack, Text.assemble)
#: (the right border too: a line cut before it may have lost part of the name)
RICH_FRAME = re.compile(r"^\u2502 (?P<file>[^\s\u2502][^\u2502]*?):(?P<line>\d+) in (?P<func>[^\s\u2502]+) *\u2502\s*$")
#: the frame's line, marked "❱" (Syntax highlight_lines, the indent guides "│   " drawn in the code)
RICH_CODE = re.compile(r"^\u2502 \u2771 *\d+ (?P<code>.*?)\s*\u2502?\s*$")
#: IPython's ultratb: the exception's type then the words right-aligned (IPython/core/ultratb.py
#: VerboseTB.prepare_header: etype + "Traceback (most recent call last)".rjust(width - len(etype)), 8.18.1-9.18.1)
IPY_HEAD = re.compile(r"^(?P<type>[A-Za-z_][\w.]*) +Traceback \(most recent call last\)\s*$")
#: a frame: "File path:N, in f(args)", "File path:N" at module level, "Cell In[3], line N" (IPython/core/tbtools.py
#: _format_filename and ultratb.py format_record)
IPY_FRAME = re.compile(r"^(?:File (?P<file>\S.*?):(?P<line>\d+)(?:, in (?P<func>[^\s(]+)\(.*\))?|Cell (?P<cell>In\[\d+\]), line (?P<cline>\d+))\s*$")
IPY_ARROW = re.compile(r"^-*> ?\s*\d+ (?P<code>.*)$")  # "---> 19     return allocate(step)"
#: [h27a] ultratb's frame line before IPython 8 (5.x-7.x VerboseTB.format_record: level = '%s %s\n' % (link, call), link the file
#: as util_path.compress_user gives it, "~/..." for the home, or "<ipython-input-N-hash>" for a cell; call 'in %s%s' % (func,
#: inspect.formatargvalues(...)) or "in f(***failed resolving arguments***)"): "/tmp/ipykernel_55/2596833136.py in <cell line:
#: 0>()", "<ipython-input-10-344640e27da1> in <module>", "~/env/lib/python3.8/site-packages/x.py in f(self, a)". No line number:
#: the "---> N" line under it holds the frame's (IPY_ARROW). The file is a path or a <...> name, so an exception line
#: ("Error: ... in f(x)") is none.
IPY_CLASSIC_FRAME = re.compile(r"^(?P<file>(?:[~/.]|[A-Za-z]:[\\/]|<)\S*?) in (?P<func>[A-Za-z_][\w.]*|<[^>\n]*>)(?:\(.*\))?\s*$")
#: stackprinter: 'File "%s", line %s, in %s' at the margin and "--> %-3s  %s" on the line
#: (stackprinter/frame_formatting.py FrameFormatter.headline_tpl, marked_sourceline_tpl; 0.2.10-0.2.13)
SP_FRAME = re.compile(r'^File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<func>.+)$')
SP_ARROW = re.compile(r"^--> ?(?P<line>\d+)\s+(?P<code>.*)$")
SP_ELIDED = re.compile(r"^\s*\(\.\.\.\)\s*$")  # " (...)": lines left out (frame_formatting.py); "[rankN]:" prefixes eat its space
#: loguru (backtrace=True): "> File" marks the frame that caught it, a blank line between frames, the variables under
#: a frame drawn with "│" and "└" (loguru/_better_exceptions.py ExceptionFormatter: _format_locations,
#: _format_value's "└ "; 0.6.0-0.7.3; better_exceptions' own hook draws the same marks)
LOGURU_FRAME = re.compile(r'^> File "')
VALUE_MARKS = re.compile(r"^\s*[\u2502\u2514]")
#: a log viewer's or a dashboard's box drawn around a plain traceback: every line "│ " + text, padded, "│" at the
#: right edge (fixtures/eval dev 457, a RayJob's log copied from a viewer: ray-project/ray#43265); the text inside is
#: CPython's. traces.unmargin takes the border off.
MARGIN = "\u2502"
#: pretty_errors (pretty_errors/__init__.py ExceptionWriter and excepthook, 1.2.24-1.2.25): a blank line and a rule of
#: "-" (write_header), per frame a blank line, its location (write_location: "file.py N function" by default, "N function
#: file.py" with line_number_first, as mono() sets) and its line (write_code: bare, "> " before it in mono()), "---"
#: between frames in mono() (its infix); then a blank line, the type and a colon, the message on the lines below
#: (write_exception: name + ':\n' + '\n'.join(args); the type alone without args). An exception's __context__ is printed
#: before it, from its own rule on; its __cause__ never. trace_blocks.depretty turns it into CPython's lines.
PE_FRAME = re.compile(
    r"^(?:(?P<file>[\w.-]+\.pyw?) (?P<line>\d+) (?P<func>[\w<>.]+)"
    r"|(?P<line2>\d+) (?P<func2>[\w<>.]+) (?P<file2>[\w.-]+\.pyw?))\s*$"
)
PE_RULE = re.compile(r"^-{20,}\s*$")
PE_INFIX = re.compile(r"^---\s*$")
PE_TYPE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*):\s*$")  # the message on the next line
#: its exception line: "Type:", or a class's name alone (capitalised: a frame's line cut to a word is none)
PE_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*:|(?:[A-Za-z_]\w*\.)*[A-Z]\w*)\s*$")
#: the first line of a drawn traceback behind a head a log collector or a logger wrote on every line
#: (`kubectl logs --timestamps`, `%(asctime)s %(levelname)s `; fixtures/renderers/matrix *_ts, *_log): ultratb's
#: head (IPY_HEAD) or stackprinter's margin frame line (SP_FRAME), one space after the head (an indented File line is
#: CPython's). Not pretty_errors' location: a prefilter for it behind a head ('.*\.py ... $') made the Hyperscan scan
#: of every line 8-25 % slower (replay of realistic-300000 0.92x), for a shape no corpus line has. traces.TraceParser._start takes the head off when it is a log line's (FOREIGN: a time or a level first);
#: rich's panel and CPython's header are found by their own words there.
HEADED = re.compile(
    r" (?P<ipy>[A-Za-z_][\w.]* +Traceback \(most recent call last\)\s*$)"
    r'|(?<=\S) (?P<sp>File "[^"]*", line \d+, in \S.*$)'
)
RENDERED = (
    ("rich", RICH_HEAD, "rich/traceback.py"),
    ("ipython", IPY_HEAD, "IPython/core/ultratb.py"),
    ("stackprinter", SP_FRAME, "stackprinter/frame_formatting.py"),
    ("loguru", LOGURU_FRAME, "loguru/_better_exceptions.py"),
    ("pretty_errors", PE_FRAME, "pretty_errors/__init__.py"),
)


# Line tests as compiled regexes: the rules call C, not Python, for every line of a trace.
blank = re.compile(r"\s*$").match
indented = re.compile(r"[ \t]+\S").match
interleaved = INTERLEAVED.match
anything = re.compile("").match
foreign = re.compile(  # a log line of its own, or the start of another trace
    "|".join(p.pattern for p in (TB_HEAD, EG_HEAD, FATAL, DUMP_THREAD, DUMP_TIMEOUT)) + f"|(?x:{FOREIGN.pattern})"
).match
