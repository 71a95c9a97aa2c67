"""Rules from batch h25c of issue 16 (fixtures/eval README, "Batch h25c"): a blind draw of launchers and envelopes.

One class of its misses shows its cause in the log: a paste or an excerpt that ends inside a traceback's exception
line, cut mid-name (`torch.distribu` of torch elastic's own `raise ChildFailedError(`). The cut name was read as the
exception type and outranked the agent's `failed (exitcode: -9)` line above it. Python prints the type as
`module.QualName` (cpython Lib/traceback.py, TracebackException.format_exception_only) and a class name is a CapWords
word: a dotted name ending in a lower-case part, with no colon, at the end of its block, is a module path cut short;
so is a name that is a strict prefix of the class the last frame raises (parsers/trace_shapes.py CUT_TYPE, RAISED).
Such a trace keeps its frames and has no type. The texts below are rebuilt from the sources' format strings with our
values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

AGENT = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 4417) of binary: "
         "/opt/conda/envs/train/bin/python\n")  # fmt: skip
AGENT_TB = ("Traceback (most recent call last):\n"
            '  File "/opt/conda/envs/train/lib/python3.10/site-packages/torch/distributed/run.py", line 753, in run\n'
            "    elastic_launch(\n"
            '  File "/opt/conda/envs/train/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 132, '
            "in __call__\n"
            "    return launch_agent(self._config, self._entrypoint, list(args))\n"
            '  File "/opt/conda/envs/train/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 246, '
            "in launch_agent\n"
            "    raise ChildFailedError(\n")  # fmt: skip
USER_TB = ("Traceback (most recent call last):\n"
           '  File "/workspace/train.py", line 41, in <module>\n'
           "    main()\n"
           '  File "/workspace/train.py", line 37, in main\n'
           '    raise ValueError("unknown scheduler: cosine_restart")\n')  # fmt: skip


@pytest.mark.parametrize(
    "text, category, exception_type",
    [
        # the batch's shape: the agent's line, then its own traceback cut inside the module path
        (AGENT + AGENT_TB + "torch.distribu\n", "host_oom", None),
        (AGENT + AGENT_TB + "torch.distributed.elastic.multiprocessing\n", "host_oom", None),
        # ... or cut inside the class name the last frame raises
        (AGENT + AGENT_TB + "torch.distributed.elastic.multiprocessing.errors.ChildFa\n", "host_oom", None),
        # the whole line, the same cause (the box is a wrapper)
        (AGENT + AGENT_TB + "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n", "host_oom", None),
    ],
)  # fmt: skip
def test_a_cut_exception_line_is_no_type(tmp_path, text, category, exception_type):
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.exception_type) == (category, exception_type), d.summary


@pytest.mark.parametrize(
    "last, exception_type",
    [
        # near misses: whole types with no message stay types
        ("ValueError", "ValueError"),
        ("KeyboardInterrupt", "KeyboardInterrupt"),
        ("socket.timeout", "socket.timeout"),
        ("omegaconf.errors.ConfigAttributeError", "omegaconf.errors.ConfigAttributeError"),
        # another class than the one raised (raised from an except clause further in) is no cut
        ("KeyError", "KeyError"),
        # a type with its message is whole
        ("ValueError: unknown scheduler: cosine_restart", "ValueError"),
    ],
)  # fmt: skip
def test_whole_exception_lines_stay_types(tmp_path, last, exception_type):
    d = the_diagnosis(tmp_path, USER_TB + last + "\n")
    assert d.exception_type == exception_type, d.summary


def test_a_name_cut_inside_the_raised_class_is_no_type(tmp_path):
    d = the_diagnosis(tmp_path, USER_TB + "ValueErr\n")
    assert d.exception_type is None, d.summary
