"""Rules from batch h16q of issue 16 (fixtures/eval README): a container tool's own word that a container failed.

kubectl exec / attach / run's "command terminated with exit code N" and docker compose's "<service> exited with code N"
(lower case, on their own line, at its start: read by parsers/tool_exits.py's anchored prefilter), and the container
runtime's "failed to create containerd task" / "failed to create shim task" / "failed to create task for container" /
"OCI runtime create failed" for a container that never started. Sources cited in parsers/errors.py. Negatives: code 0,
the words inside a sentence, a cause printed before them. Values in the texts are ours."""

from __future__ import annotations

import re

import pytest

from gangscope.parsers.errors import LINE_RULES, PREFILTER, detect
from gangscope.parsers.lines import Line
from gangscope.parsers.tool_exits import TOOL_EXIT_PREFILTER, ToolExitDetector
from gangscope.pipeline.curate.substream import LINE_PARSERS, SubStream
from diagnose_in_process import the_diagnosis

T = "2026-03-02T08:11:40.512000000Z"
RULES = {r.name: r for r in LINE_RULES}
TOOL_RULES = ("kubectl_command_exit", "compose_container_exit",
              "glibc_malloc_abort", "glibc_fortify_abort", "cxx_terminate_no_exception", "rust_panic",  # h27c; glibc_fortify_abort: h30b
              "prrte_signal_continued", "mpirun_executable_not_found")  # h33c: PRRTE's help texts


def rule_and_category(line: str) -> tuple[str, str] | None:
    """What the pipeline's parsers would read on the line: None when neither prefilter lets it by."""
    if not (re.search(PREFILTER, line) or re.search(TOOL_EXIT_PREFILTER, line)):
        return None
    found = detect(line)
    return (found[0].name, found[1]) if found is not None else None


@pytest.mark.parametrize(
    "line, expected",
    [
        ("command terminated with exit code 137", ("kubectl_command_exit", "host_oom")),
        ("command terminated with exit code 1", ("kubectl_command_exit", "unknown")),
        ("command terminated with exit code 143", ("kubectl_command_exit", "preempted")),
        ("I have no name!@fit-svc-5c8d7b9f46-k2xq9:/work$ command terminated with exit code 137", ("kubectl_command_exit", "host_oom")),
        ("root@trainer-0:/workspace# command terminated with exit code 2", ("kubectl_command_exit", "unknown")),
        ("fit-1 exited with code 139", ("compose_container_exit", "unknown")),
        ("lab_trainer_1 exited with code 137", ("compose_container_exit", "host_oom")),
        ("  Warning  Failed     12m (x4 over 14m)   kubelet  Error: failed to create containerd task: failed to create shim task: "
         "OCI runtime create failed: runc create failed: unable to start container process: error during container init: error "
         "running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: requirement error: "
         "unsatisfied condition: cuda>=12.4, please update your driver to a newer version: unknown",
         ("container_task_not_created", "pods_ready_timeout")),
        ("      Message:      failed to create containerd task: failed to create shim task: OCI runtime create failed: unable to "
         "retrieve OCI runtime error (open /run/containerd/io.containerd.runtime.v2.task/k8s.io/4be1/log.json",
         ("container_task_not_created", "pods_ready_timeout")),
        ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create "
         "failed: runc create failed: unable to start container process: exec: \"fit\": executable file not found in $PATH: unknown.",
         ("container_task_not_created", "pods_ready_timeout")),
        ("(HTTP code 500) server error - failed to create task for container: failed to create shim task: OCI runtime create "
         "failed: runc create failed: unable to start container process: error during container init: unknown",
         ("container_task_not_created", "pods_ready_timeout")),
    ],
)
def test_container_tool_lines(line, expected):
    assert rule_and_category(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "command terminated with exit code 0",  # kubectl prints no error for 0; read, no failure
        "fit-1 exited with code 0",  # a one-shot service that ended well
        "the remote command terminated with exit code 1 so we retried",  # inside a sentence
        "INFO waiting: worker exited with code 3 earlier, retrying",
        "  If the command terminated with exit code 137 check the memory limit",
        "a child process exited with code 1",
    ],
)
def test_no_failure_in_these(line):
    found = rule_and_category(line)
    assert found is None or found[0] not in (*TOOL_RULES, "container_task_not_created")


@pytest.mark.parametrize("rule", TOOL_RULES)
def test_every_match_of_a_tool_rule_passes_its_anchored_prefilter(rule):
    # The prefilter is the rules' heads: a line a rule would read is never skipped.
    for line in ("command terminated with exit code 9", "I have no name!@p:/$ command terminated with exit code 1",
                 "u@h:~$ command terminated with exit code 1", "svc-2 exited with code 1", "a.b_c-1   exited with code 255"):
        if RULES[rule].pattern.search(line):
            assert re.search(TOOL_EXIT_PREFILTER, line), line


def test_the_tool_prefilter_is_anchored_at_every_alternative():
    alternatives = re.split(r"\|(?=\^)", TOOL_EXIT_PREFILTER)
    assert len(alternatives) == len(TOOL_RULES)
    assert all(a.startswith("^") for a in alternatives)


def test_a_line_both_prefilters_pass_gives_one_record():
    sub = SubStream(LINE_PARSERS)
    line = "Error-relay exited with code 1"  # "Error" is a key of ErrorDetector's prefilter
    assert re.search(PREFILTER, line) and re.search(TOOL_EXIT_PREFILTER, line)
    records = sub.feed(Line(T, 0, line))
    assert [r.pattern for r in records if r.kind == "error"] == ["compose_container_exit"]
    assert ToolExitDetector in LINE_PARSERS


STEPS = "".join(f"step {i * 50} loss {1.9 - i / 50:.4f} lr 0.0002\n" for i in range(1, 6))


def test_kubectl_s_exit_137_after_training_is_host_memory(tmp_path):
    d = the_diagnosis(tmp_path, STEPS + "command terminated with exit code 137\n")
    assert (d.category, d.outcome) == ("host_oom", "failed")


def test_compose_s_exit_with_no_cause_is_unknown_not_running(tmp_path):
    d = the_diagnosis(tmp_path, "Attaching to fit-1\n" + "".join(f"fit-1  | {s}\n" for s in STEPS.splitlines())
                      + "fit-1 exited with code 1\n")
    assert (d.category, d.outcome) == ("unknown", "failed")


def test_a_cause_printed_before_the_tool_s_exit_wins(tmp_path):
    text = (STEPS + "Traceback (most recent call last):\n  File \"/work/fit.py\", line 12, in <module>\n    import peft\n"
            "ModuleNotFoundError: No module named 'peft'\ncommand terminated with exit code 1\n")
    d = the_diagnosis(tmp_path, text)
    assert d.category == "python_exception"


def test_a_container_the_runtime_never_started_never_became_ready(tmp_path):
    text = ("Events:\n  Normal   Scheduled  40s  default-scheduler  Successfully assigned ml/fit-0 to gpu-node-3\n"
            "  Warning  Failed     12s  kubelet  Error: failed to create containerd task: failed to create shim task: OCI runtime "
            "create failed: runc create failed: unable to start container process: error during container init: error running "
            "hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: mount error: unknown\n")
    d = the_diagnosis(tmp_path, text)
    assert d.category == "pods_ready_timeout"
