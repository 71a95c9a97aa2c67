"""torch elastic's ChildFailedError box as users paste it: a copy that lost the border, the indent,
the `:` after a key, the `_` of `local_rank` / `error_file`, that joined an entry's fields on one line,
or that set them out as a table or a list; and torch 1.9's box (`Root Cause:` first, `msg` for the
traceback). The rank, local rank and exit code are read from each.
Formats: pytorch/pytorch torch/distributed/elastic/multiprocessing/errors/__init__.py
_FAILURE_FORMAT_TEMPLATE and _MSG_FORMAT_TEMPLATE (1.9: "  rank: ${rank} (local_rank: ${local_rank})",
"  exitcode: ${exitcode} (pid: ${pid})", "  msg: \"${message}\""; 1.10 on: "  rank      : ...",
"  exitcode  : ...", "  traceback : ${message}"). The lines below are written from those templates."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from gangscope.parsers.trace_shapes import BOX_EXITCODE_SHAPE, BOX_RANK_SHAPE

HEAD = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
run_job.py FAILED
Failures:
<NO_OTHER_FAILURES>
Root Cause (first observed failure):
[0]:
"""

ENTRIES = {
    # fields joined where a rendered page's line breaks were lost, keys without `:`, `local rank`
    "joined": "time\nhost\n2025-04-01_10:11:12\nnode-b7\n"
              "rank5 (local rank: 1)exitcode: -9 (pid: 3141)error file: <N/A>\n"
              "traceback : Signal 9 (SIGKILL) received by PID 3141\n",
    # the template's lines without their indent of 2
    "unindented": "time      : 2025-04-01_10:11:12\nhost      : node-b7\nrank      : 5 (local_rank: 1)\n"
                  "exitcode  : -9 (pid: 3141)\nerror_file: <N/A>\n"
                  "traceback : Signal 9 (SIGKILL) received by PID 3141\n",
    # a table: one row a field
    "table": "| time | 2025-04-01_10:11:12 |\n| host | node-b7 |\n| rank | 5 (local_rank: 1) |\n"
             "| exitcode | -9 (pid: 3141) |\n| error_file | <N/A> |\n",
    # a list, the `_` of local_rank lost
    "list": "- time: 2025-04-01_10:11:12\n- host: node-b7\n- rank: 5 (localrank: 1)\n- exitcode: -9 (pid: 3141)\n",
}


@pytest.mark.parametrize("layout", sorted(ENTRIES))
def test_the_root_cause_rank_and_exit_code_are_read_from_a_pasted_layout(tmp_path, layout):
    d = the_diagnosis(tmp_path, HEAD + ENTRIES[layout])
    assert d.rank == 5
    assert d.category == "host_oom"


def test_torch_1_9s_box_gives_its_root_cause_rank(tmp_path):
    box = ('train.py FAILED\n' + "=" * 40 + '\nRoot Cause:\n[0]:\n  time: 2021-08-02_11:12:13\n'
           '  rank: 3 (local_rank: 3)\n  exitcode: 1 (pid: 2718)\n  error_file: <N/A>\n'
           '  msg: "Process failed with exitcode 1"\n' + "=" * 40 + '\nOther Failures:\n[1]:\n'
           '  time: 2021-08-02_11:12:13\n  rank: 1 (local_rank: 1)\n  exitcode: 1 (pid: 2716)\n'
           '  error_file: <N/A>\n  msg: "Process failed with exitcode 1"\n' + "*" * 40 + "\n")
    d = the_diagnosis(tmp_path, box)
    assert d.rank == 3
    assert "exited with code 1" in d.summary


@pytest.mark.parametrize("line", [
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 4 (pid: 61) of binary: /usr/bin/python",
    "[rank3]: local_rank: 3 (pid: 99)",
    "rank 2 (local rank of node 0) finished",
    "exitcode: 1 (see log)",
    "INFO: rank: 0 world size: 8",
])
def test_a_line_that_is_no_box_field_has_no_box_shape(line):
    assert BOX_RANK_SHAPE.search(line) is None
    assert BOX_EXITCODE_SHAPE.search(line) is None


@pytest.mark.parametrize("line, rank, local", [
    ("  rank      : 7 (local_rank: 3)", 7, 3),
    ("rank: 7 (local_rank: 3)", 7, 3),
    ("rank7 (local rank: 3)exitcode: 1 (pid: 5)", 7, 3),
    ("| rank | 7 (local_rank: 3) |", 7, 3),
])
def test_the_rank_shape_reads_every_layout_of_the_field(line, rank, local):
    m = BOX_RANK_SHAPE.search(line)
    assert (int(m["rank"]), int(m["local_rank"])) == (rank, local)


def test_torch_1_9s_warning_for_a_worker_without_error_file_names_its_rank(tmp_path):
    stars = "*" * 50
    warning = (f"{stars}\n{'CHILD PROCESS FAILED WITH NO ERROR_FILE'.center(50)}\n{stars}\n"
               "CHILD PROCESS FAILED WITH NO ERROR_FILE\n"
               "Child process 8080 (local_rank 6) FAILED (exitcode 1)\n"
               "Error msg: Process failed with exitcode 1\n"
               "Without writing an error file to <N/A>.\n" + stars + "\n")
    d = the_diagnosis(tmp_path, warning)
    assert d.rank == 6
    assert d.category == "unknown"


def test_the_warnings_exit_code_decides_its_category(tmp_path):
    d = the_diagnosis(tmp_path, "Child process 8080 (local_rank 2) FAILED (exitcode -9)\n")
    assert (d.category, d.rank) == ("host_oom", 2)
