"""[h26c] The heads Kubernetes users' tools put before every line (kubectl --timestamps / --prefix, stern,
logcli) and log stores' JSON exports (Cloud Logging, logcli jsonl): each read as the plain log, its time and
pod/container taken from the head; ordinary lines are not taken for such heads (near misses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gangscope.parsers import envelopes
from gangscope.parsers.envelopes import detect_format, read_fluentbit
from gangscope.pipeline.run import replay

TRACE = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 412, in <module>',
    "    main()",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.14 GiB",
]
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "envelopes_h26c"


# --- one line each ------------------------------------------------------------------------------------------

def test_kubectl_timestamps_give_the_line_its_time():
    env = envelopes.decode_kubectl("2024-05-01T10:00:03.000000003Z torch.OutOfMemoryError: CUDA out of memory.")
    assert env.time == "2024-05-01T10:00:03.000000003Z"
    assert env.text == "torch.OutOfMemoryError: CUDA out of memory."
    assert env.kubernetes is None
    # an offset (a kubelet in a local zone) and a shorter fraction (logcli --no-labels, RFC 3339) too
    assert envelopes.decode_kubectl("2024-05-01T12:00:03+02:00 x").time == "2024-05-01T12:00:03+02:00"
    # a line without the head (kubectl's own "error: ..." under --ignore-errors) is plain text, kept whole
    env = envelopes.decode_kubectl("error: container pytorch is terminated")
    assert env.time is None and env.text == "error: container pytorch is terminated"


def test_kubectl_prefix_names_the_pod_and_container_and_may_carry_the_time():
    env = envelopes.decode_kubectl_prefix("[pod/llama-train-worker-3/pytorch] Traceback (most recent call last):")
    assert env.kubernetes == {"pod_name": "llama-train-worker-3", "container_name": "pytorch"}
    assert env.text == "Traceback (most recent call last):" and env.time is None
    env = envelopes.decode_kubectl_prefix("[pod/llama-train-worker-3/pytorch] 2024-05-01T10:00:03.123456789Z   File \"x\"")
    assert env.time == "2024-05-01T10:00:03.123456789Z"
    assert env.text == '  File "x"'  # the line's own indentation is kept
    # an empty container name (kubectl could not read it from the field path)
    assert envelopes.decode_kubectl_prefix("[pod/a-0/] x").kubernetes == {"pod_name": "a-0"}


@pytest.mark.parametrize("line", [
    "[something] Traceback (most recent call last):",  # a bracket that is no kubectl prefix
    "[pod/trainer-0] x",  # no container part
    "[pod/Trainer-0/pytorch] x",  # not a DNS name
    "[pods/trainer-0/pytorch] x",
    "[pod/trainer-0/pytorch]x",  # no space after it
    "[default0]:[pod/trainer-0/pytorch] x",  # not at the start
])
def test_near_misses_of_the_kubectl_prefix(line):
    env = envelopes.decode_kubectl_prefix(line)
    assert env.kubernetes is None and env.text == line
    assert detect_format([line] * 5) == "text"


def test_stern_names_the_pod_and_container():
    env = envelopes.decode_stern("trainer-worker-1 pytorch RuntimeError: NCCL error")
    assert env.kubernetes == {"pod_name": "trainer-worker-1", "container_name": "pytorch"}
    assert env.text == "RuntimeError: NCCL error"
    # coloured (a copy of a terminal keeps the codes, with or without their ESC)
    env = envelopes.decode_stern("\x1b[32mtrainer-worker-1\x1b[0m \x1b[33mpytorch\x1b[0m x")
    assert env.kubernetes["pod_name"] == "trainer-worker-1" and env.text == "x"
    env = envelopes.decode_stern("[32mtrainer-worker-1[0m [33mpytorch[0m 2024-05-01T10:00:03.000000001Z x")
    assert env.time == "2024-05-01T10:00:03.000000001Z" and env.text == "x"


def test_loki_labels_name_the_pod_container_namespace_and_stream():
    env = envelopes.decode_loki('2024-05-01T10:00:03Z {container="pytorch", namespace="team-a", pod="w-0", '
                                'stream="stderr"}   Traceback (most recent call last):')
    assert env.time == "2024-05-01T10:00:03Z" and env.stream == "stderr"
    assert env.kubernetes == {"pod_name": "w-0", "container_name": "pytorch", "namespace_name": "team-a"}
    assert env.text == "Traceback (most recent call last):"  # the padding after the labels is gone
    # the OpenTelemetry collector's label names
    env = envelopes.decode_loki('2024-05-01T10:00:03+02:00 {k8s_pod_name="w-1", k8s_container_name="c"} x')
    assert env.kubernetes == {"pod_name": "w-1", "container_name": "c"}
    # labels that name no pod: the line has its time, the file's pod
    env = envelopes.decode_loki('2024-05-01T10:00:03Z {job="trainer"} x')
    assert env.kubernetes is None and env.time == "2024-05-01T10:00:03Z"


def test_cloud_logging_entries_are_read_as_records():
    line = json.dumps({"textPayload": "RuntimeError: CUDA error: an illegal memory access was encountered\n",
                       "timestamp": "2024-05-01T10:00:03.123456789Z", "logName": "projects/p/logs/stderr",
                       "resource": {"type": "k8s_container", "labels": {"pod_name": "w-0", "container_name": "pytorch",
                                                                        "namespace_name": "team-a"}},
                       "labels": {"k8s-pod/app": "trainer", "compute.googleapis.com/resource_name": "gke-node-1"}})
    env = read_fluentbit(line)
    assert env.text == "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert env.time == "2024-05-01T10:00:03.123456789Z" and env.stream == "stderr"
    assert env.kubernetes == {"pod_name": "w-0", "container_name": "pytorch", "namespace_name": "team-a",
                              "labels": {"app": "trainer"}, "host": "gke-node-1"}
    assert detect_format([line] * 3) == "fluentbit"
    env = read_fluentbit(json.dumps({"jsonPayload": {"message": "x"}, "timestamp": "2024-05-01T10:00:03Z"}))
    assert env.text == "x" and env.kubernetes is None and env.stream == "stdout"


def test_logcli_jsonl_records_are_read():
    line = json.dumps({"labels": {"pod": "w-0", "container": "c"}, "line": "x", "timestamp": "2024-05-01T10:00:03.5Z"})
    env = read_fluentbit(line)
    assert env.text == "x" and env.kubernetes == {"pod_name": "w-0", "container_name": "c"}


@pytest.mark.parametrize("obj", [
    {"line": "x"},  # no timestamp: not logcli's
    {"line": 3, "timestamp": "2024-05-01T10:00:03Z"},
    {"line": "x", "timestamp": "2024-05-01T10:00:03Z", "labels": "pod=w-0"},
    {"textPayload": 3, "timestamp": "2024-05-01T10:00:03Z"},
    {"jsonPayload": {"msg": "x"}, "timestamp": "2024-05-01T10:00:03Z"},
    {"level": "info", "ts": 1714557603.0, "msg": "x"},  # an application's own JSON line
])
def test_near_misses_of_the_log_store_records(obj):
    line = json.dumps(obj)
    assert read_fluentbit(line) is None
    assert detect_format([line] * 3) == "text"


# --- detection over a file's first lines --------------------------------------------------------------------

@pytest.mark.parametrize("lines", [
    # Python logging's asctime is no kubelet time (a space, a comma, no zone)
    ["2024-05-01 10:00:00,123 INFO rank 0 starting", "2024-05-01 10:00:01,456 INFO step 1 loss 2.1"] * 5,
    # a time without a zone names no instant
    ["2024-05-01T10:00:00 step 1", "2024-05-01T10:00:01 step 2"] * 5,
    # lines that begin with two lower-case words, different ones
    ["pre-training step 1 of 10", "data-loader worker 3 started", "warm-up done after 5 steps",
     "grad-norm clip 1.0", "loss-scale 65536 kept", "eval-loop batch 3"],
    # two lower-case words, no "-" in the first (no controller's pod)
    ["epoch done 1", "epoch done 2", "epoch done 3", "epoch done 4"],
    # a single line of stern's shape is not enough
    ["trainer-worker-0 pytorch Traceback (most recent call last):"],
    ["Epoch 1/10", "loss: 0.3"],
])
def test_ordinary_text_stays_text(lines):
    assert detect_format(lines) == "text"


def test_each_head_is_detected_and_the_old_envelopes_are_not_moved():
    assert detect_format([f"2024-05-01T10:00:0{i}.00000000{i}Z {t}" for i, t in enumerate(TRACE)]) == "kubectl"
    assert detect_format([f"[pod/w-0/pytorch] {t}" for t in TRACE]) == "kubectl-prefix"
    assert detect_format([f"w-{i % 2} pytorch {t}" for i, t in enumerate(TRACE * 2)]) == "stern"
    assert detect_format([f'2024-05-01T10:00:0{i}Z {{pod="w-0"}} {t.strip()}' for i, t in enumerate(TRACE)]) == "loki"
    # CRI lines are CRI (a time, then the stream and tag), Docker's and Fluent Bit's JSON theirs
    assert detect_format([f"2024-05-01T10:00:0{i}.0Z stderr F {t}" for i, t in enumerate(TRACE)]) == "cri"
    assert detect_format([json.dumps({"log": t + "\n", "stream": "stderr", "time": "2024-05-01T10:00:00Z"})
                          for t in TRACE]) == "docker"
    # lines of many pods, as `stern -l app=x` prints them
    many = [f"trainer-worker-{i % 8} pytorch step {i}" for i in range(40)]
    assert detect_format(many) == "stern"
    # a head on most lines, a few without (kubectl's own error lines): still the head's
    mixed = [f"[pod/w-0/pytorch] {t}" for t in TRACE] + ["error: unexpected EOF"]
    assert detect_format(mixed) == "kubectl-prefix"


# --- a whole file, through the pipeline ---------------------------------------------------------------------

def _diagnose(path: Path):
    result = replay.run(replay.ReplayOptions(paths=[str(path)]), lambda batch: None)
    assert result.failures.summary() == []
    return result


def _plain(tmp_path: Path):
    path = tmp_path / "plain" / "job.log"
    path.parent.mkdir()
    path.write_text("\n".join(["step 1 loss 2.3", *TRACE]) + "\n")
    result = _diagnose(path)
    return [(d.category, (d.first_failure or {}).get("rank")) for d in result.diagnoses]


@pytest.mark.parametrize("name", ["kubectl_timestamps.log", "kubectl_prefix.log", "stern.log", "logcli.log",
                                  "cloud_logging.jsonl"])
def test_the_fixtures_read_as_the_plain_log(tmp_path, name):
    result = _diagnose(FIXTURES / name)
    got = [(d.category, (d.first_failure or {}).get("rank")) for d in result.diagnoses
           if d.category not in ("success", "running")]
    assert got and got[0][0] == _plain(tmp_path)[0][0] == "cuda_oom"


def test_a_file_of_two_pods_is_two_containers(tmp_path):
    lines = []
    for i, t in enumerate(TRACE):
        lines.append(f"trainer-worker-1 pytorch {t}")
        lines.append(f"trainer-worker-0 pytorch RuntimeError: [{i}] is setting up NCCL communicator")
    path = tmp_path / "stern.log"
    path.write_text("\n".join(lines) + "\n")
    records = []
    replay.run(replay.ReplayOptions(paths=[str(path)]), records.extend)
    pods = {r.pod for r in records}
    assert "stern" not in pods and "trainer-worker-1" in pods  # the head's pods, not the file's
    traces = [r for r in records if r.kind == "trace"]
    assert traces and all(r.pod == "trainer-worker-1" and r.container == "pytorch" for r in traces)


def test_the_kubectl_time_is_the_records_time(tmp_path):
    path = tmp_path / "ts.log"
    path.write_text("\n".join(f"2024-05-01T10:00:0{i}.00000000{i}Z {t}" for i, t in enumerate(TRACE)) + "\n")
    records = []
    replay.run(replay.ReplayOptions(paths=[str(path)]), records.extend)
    traces = [r for r in records if r.kind == "trace"]
    assert traces and traces[0].time.startswith("2024-05-01T10:00:00")


def test_logcli_trimmed_traceback_gets_its_indentation_back():
    read = envelopes.reader("loki")
    head = '2024-05-01T10:00:03Z {pod="w-0"} '
    other = '2024-05-01T10:00:03Z {pod="w-1"} '
    got = [read(head + t).text for t in (
        "Traceback (most recent call last):", 'File "a.py", line 3, in f', "x = y[0]", "^^^^",
        'File "b.py", line 4, in g', "IndexError: list index out of range")]
    assert got == ["Traceback (most recent call last):", '  File "a.py", line 3, in f', "    x = y[0]", "    ^^^^",
                   '  File "b.py", line 4, in g', "IndexError: list index out of range"]
    # per stream: another pod's line between a frame and its source does not take the indentation
    read(head + 'File "a.py", line 3, in f')
    assert read(other + "step 3 loss 1.2").text == "step 3 loss 1.2"
    assert read(head + "main()").text == "    main()"
    # near misses: a line after a frame that a traceback goes on with is left as it is
    read(head + 'File "a.py", line 3, in f')
    assert read(head + "During handling of the above exception, another exception occurred:").text.startswith("During")
    assert read(head + "no frame before me").text == "no frame before me"


def _terminal(lines: list[str], width: int = 100) -> list[str]:
    rows = []
    for line in lines:
        while len(line) > width:
            rows.append(line[:width])
            line = line[width:]
        rows.append(line)
    return rows


WATCHDOG = ("[rank3]:[E818 21:07:33.604271952 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
            "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
            "collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog")


@pytest.mark.parametrize("head", ["[pod/trainer-worker-0/pytorch] ", "trainer-worker-0 pytorch ",
                                  "2024-05-01T10:00:03.000000000Z ", '2024-05-01T10:00:03Z {pod="trainer-worker-0"} '])
def test_a_terminals_copy_of_a_tools_output_is_joined_back(head):
    lines = [head + WATCHDOG.replace("rank3", f"rank{r}").replace("Rank 3", f"Rank {r}") for r in range(4)]
    rows = _terminal(lines)
    assert len(rows) > len(lines)
    assert envelopes.join_wrapped_heads(rows) == lines
    assert detect_format(rows) != "text"
    # near miss: the next line carries the tool's head of its own (another pod's line) and stays a line
    other = [head.replace("worker-0", "worker-1") + "x" * 10]
    rows = _terminal(lines[:1]) + other + _terminal(lines[1:])
    assert envelopes.join_wrapped_heads(rows) == lines[:1] + other + lines[1:]
