"""[h27d] Logs as users fetch them, second part (issue 16): `aws logs tail` and CloudWatch's JSON, stern -A and -o json,
argo logs, journalctl (short, short-iso, json, json-pretty), Beats/Elasticsearch documents, gcloud's JSON array,
gzip'd UTF-16, tar archives of /var/log/pods. Each is read as the plain log, its time and pod/container from the
tool's head or fields; ordinary lines are not taken for such heads (near misses); bad input (a truncated tar, a JSON
array cut in the middle, a 10 MB line inside an array) is counted, never a traceback."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from gangscope.parsers import envelopes
from gangscope.parsers.envelopes import detect_format, read_fluentbit
from gangscope.pipeline.run import replay
from gangscope.pipeline.sources import files

TRACE = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 412, in <module>',
    "    main()",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.14 GiB",
]
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "envelopes_h27d"
CID = "5f0c" * 16
STREAM = f"ip-10-3-7-21.ec2.internal-application.var.log.containers.llama-train-worker-1_team-a_pytorch-{CID}.log"


def _records(path: Path, **options):
    records = []
    result = replay.run(replay.ReplayOptions(paths=[str(path)], **options), records.extend)
    return result, records


def _oom(result) -> list:
    return [d for d in result.diagnoses if d.category not in ("success", "running")]


# --- one line each ------------------------------------------------------------------------------------------

def test_aws_logs_tail_gives_the_time_and_the_streams_container():
    env = envelopes.decode_aws_tail(f"2024-05-01T10:00:03.017000+00:00 {STREAM} step 1 loss 2.3")
    assert env.time == "2024-05-01T10:00:03.017000+00:00"
    assert env.text == "step 1 loss 2.3"
    assert env.kubernetes == {"pod_name": "llama-train-worker-1", "container_name": "pytorch", "namespace_name": "team-a"}
    # a Container Insights message (a Fluent Bit record) is read as the record: its text, stream, block
    record = json.dumps({"log": "boom\n", "stream": "stderr", "kubernetes": {"pod_name": "p-0", "container_name": "c"}})
    env = envelopes.decode_aws_tail(f"2024-05-01T10:00:03.017000+00:00 {STREAM} {record}")
    assert (env.text, env.stream, env.kubernetes["pod_name"], env.time) == ("boom", "stderr", "p-0",
                                                                           "2024-05-01T10:00:03.017000+00:00")
    # a stream that names no container (Lambda's): the line's time and text, the file's own pod
    env = envelopes.decode_aws_tail("2024-05-01T10:00:03.017000+00:00 2024/05/01/[$LATEST]0a1b2c step 2")
    assert env.kubernetes is None and env.text == "step 2"


def test_a_cloudwatch_event_of_several_lines_continues_its_container():
    read = envelopes.reader("aws-tail")
    first = read(f"2024-05-01T10:00:04.017000+00:00 {STREAM} {TRACE[0]}")
    rest = [read(line) for line in TRACE[1:]]
    assert all(e.kubernetes == first.kubernetes and e.time == first.time for e in rest)
    assert [e.text for e in rest] == TRACE[1:]  # its own indentation kept


def test_stern_all_namespaces_and_json():
    env = envelopes.decode_stern_ns("team-a llama-train-worker-1 pytorch 2024-05-01T10:00:03.000000017Z step 1")
    assert env.kubernetes == {"pod_name": "llama-train-worker-1", "container_name": "pytorch", "namespace_name": "team-a"}
    assert (env.time, env.text) == ("2024-05-01T10:00:03.000000017Z", "step 1")
    line = json.dumps({"message": TRACE[3], "nodeName": "n-7", "namespace": "team-a", "podName": "w-1",
                       "containerName": "pytorch", "labels": {"app": "x"}, "annotations": {}})
    env = read_fluentbit(line)
    assert env.text == TRACE[3]
    assert env.kubernetes == {"pod_name": "w-1", "container_name": "pytorch", "namespace_name": "team-a", "host": "n-7",
                              "labels": {"app": "x"}}


def test_argo_logs_name_the_pod_its_colour_taken_off():
    env = envelopes.decode_argo("\x1b[33mtrain-wf-x7kq2-train-2915367441: " + TRACE[3] + "\x1b[0m")
    assert env.kubernetes == {"pod_name": "train-wf-x7kq2-train-2915367441"} and env.text == TRACE[3]
    assert envelopes.decode_argo("train-wf-x7kq2: step 1").kubernetes == {"pod_name": "train-wf-x7kq2"}


def test_journalctl_short_and_short_iso_and_json():
    env = envelopes.decode_journal("May 01 10:00:03 gpu-node-7 torchrun[48213]: step 1")
    assert (env.time, env.text, env.kubernetes) == (None, "step 1", {"pod_name": "gpu-node-7", "container_name": "torchrun"})
    env = envelopes.decode_journal("2024-05-01T10:00:03+0000 gpu-node-7 python3[48213]: step 1")
    assert env.time == "2024-05-01T10:00:03+0000" and env.kubernetes["container_name"] == "python3"
    entry = {"__REALTIME_TIMESTAMP": "1714557603017000", "_HOSTNAME": "gpu-node-7", "SYSLOG_IDENTIFIER": "torchrun",
             "MESSAGE": list(TRACE[3].encode())}  # not printable UTF-8 to journalctl: an array of bytes
    env = read_fluentbit(json.dumps(entry))
    assert env.text == TRACE[3] and env.time.startswith("2024-05-01T10:00:03.017") and env.kubernetes["pod_name"] == "gpu-node-7"


def test_beats_documents_and_elasticsearch_hits():
    doc = {"@timestamp": "2024-05-01T10:00:03.017Z", "message": TRACE[3], "stream": "stderr",
           "kubernetes": {"pod": {"name": "w-1", "uid": "7d3e2a10"}, "namespace": "team-a", "container": {"name": "pytorch"},
                          "node": {"name": "n-7"}, "labels": {"app": "x"}}}
    for line in (json.dumps(doc), json.dumps({"_index": "logs", "_id": "1", "_source": doc})):
        env = read_fluentbit(line)
        assert env.time == "2024-05-01T10:00:03.017Z" and env.stream == "stderr" and env.text == TRACE[3]
        assert env.kubernetes["pod_name"] == "w-1" and env.kubernetes["container_name"] == "pytorch"
        assert env.kubernetes["namespace_name"] == "team-a" and env.kubernetes["pod_id"] == "7d3e2a10"


def test_cloudwatch_events_time_and_stream():
    env = read_fluentbit(json.dumps({"logStreamName": STREAM, "timestamp": 1714557603017, "message": "step 1",
                                     "ingestionTime": 1714557603400, "eventId": "1"}))
    assert env.time.startswith("2024-05-01T10:00:03.017") and env.kubernetes["pod_name"] == "llama-train-worker-1"


# --- detection ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt,lines", [
    ("aws-tail", [f"2024-05-01T10:00:0{i}.017000+00:00 {STREAM} step {i}" for i in range(5)]),
    ("stern-ns", [f"team-a llama-train-worker-{i % 2} pytorch step {i}" for i in range(6)]),
    ("argo", [f"train-wf-x7kq2-train-291536744{i % 2}: step {i}" for i in range(8)]),
    ("journal", [f"May 01 10:00:0{i} gpu-node-7 torchrun[48213]: step {i}" for i in range(5)]),
    ("journal", [f"2024-05-01T10:00:0{i}+0000 gpu-node-7 torchrun[48213]: step {i}" for i in range(5)]),
])
def test_each_head_is_detected(fmt, lines):
    assert detect_format(lines) == fmt


@pytest.mark.parametrize("lines", [
    # pdsh's / DeepSpeed's "host: " before every line: not an argo pod's name (no fnv32 or generateName suffix)
    [f"worker-{i % 3}: [rank{i}]: Traceback (most recent call last):" for i in range(8)],
    [f"gpu-st-p4d-03{i % 2}: step {i}" for i in range(8)],
    # a Python log of isoformat times and a level: no CloudWatch stream
    [f"2024-05-01T10:00:0{i}.017000+00:00 INFO step {i}" for i in range(5)],
    # stern's default two names, the message's first words differing
    [f"trainer-worker-{i % 2} pytorch {w} {i}" for i, w in enumerate(["step", "loss", "epoch", "eval", "save", "load"])],
])
def test_near_misses_stay_what_they_were(lines):
    assert detect_format(lines) not in ("aws-tail", "stern-ns", "argo", "journal")


# --- files --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,pod,container", [
    ("aws_tail.log", "llama-train-worker-1", "pytorch"),
    ("cloudwatch_get_log_events.json", "llama-train-worker-1", "pytorch"),
    ("cloudwatch_filter_log_events.json", "llama-train-worker-1", "pytorch"),
    ("gcloud_read.json", "llama-train-worker-1", "pytorch"),
    ("stern_all_namespaces.log", "llama-train-worker-1", "pytorch"),
    ("stern_json.log", "llama-train-worker-1", "pytorch"),
    ("argo.log", "llama-train-x7kq2-train-2915367441", None),
    ("journal_short.log", "gpu-node-7", "torchrun"),
    ("journal_short_iso.log", "gpu-node-7", "torchrun"),
    ("journal.json", "gpu-node-7", "torchrun"),
    ("journal_pretty.json", "gpu-node-7", "torchrun"),
    ("elastic_export.ndjson", "llama-train-worker-1", "pytorch"),
    ("pods.tar.gz", "llama-train-worker-1", "pytorch"),
])
def test_the_fixtures_name_the_pod_and_read_the_failure(name, pod, container):
    result, records = _records(FIXTURES / name)
    assert result.stage_failures.summary() == []
    traces = [r for r in records if r.kind == "trace"]
    assert traces and all(r.pod == pod and r.container == container for r in traces)
    assert [d.category for d in _oom(result)] == ["cuda_oom"]


def test_a_gzipped_utf16_capture_reads_as_text():
    result, records = _records(FIXTURES / "powershell_utf16.log.gz")
    assert [d.category for d in _oom(result)] == ["cuda_oom"]
    assert result.read.invalid_utf8_lines == 0


def test_times_come_from_the_head_or_fields():
    for name in ("aws_tail.log", "cloudwatch_filter_log_events.json", "gcloud_read.json", "journal.json",
                 "journal_short_iso.log", "elastic_export.ndjson"):
        _result, records = _records(FIXTURES / name)
        traces = [r for r in records if r.kind == "trace"]
        assert traces and traces[0].time.startswith("2024-05-01T10:00:0"), name


def _tar(members: list[tuple[str, str]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in members:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _cri(lines: list[str]) -> str:
    return "".join(f"2024-05-01T10:00:0{i}.000000000Z stderr F {line}\n" for i, line in enumerate(lines))


def test_a_tar_of_pods_is_one_container_each_named_by_its_member(tmp_path):
    path = tmp_path / "bundle.tgz"
    path.write_bytes(_tar([
        ("var/log/pods/team-a_trainer-worker-0_0b6c3e1a-2f4d-4b8e-9c1a-7e5d3f2b1a00/pytorch/0.log", _cri([f"epoch 0 step {i} loss 2.3{i}" for i in range(3)])),
        ("var/log/pods/team-a_trainer-worker-1_7d3e2a10-5b1c-4e0f-9a8b-2c4d6e8f0a1b/pytorch/0.log", _cri(TRACE)),
        ("README.md", "not a log\n"),
    ]))
    sources, problems = files.discover([str(path)])
    assert problems == [] and sorted(s.identity.pod for s in sources) == ["trainer-worker-0", "trainer-worker-1"]
    result, records = _records(path)
    assert {r.pod for r in records} >= {"trainer-worker-0", "trainer-worker-1"}
    assert [(d.category, d.first_failure["pod"]) for d in _oom(result)] == [("cuda_oom", "trainer-worker-1")]


def test_a_truncated_tar_keeps_what_it_read_and_counts_the_cut(tmp_path):
    whole = gzip.decompress(_tar([("logs/worker-1.log", "\n".join(TRACE) + "\n"), ("logs/worker-2.log", "x" * 5000)]))
    path = tmp_path / "cut.tar"
    path.write_bytes(whole[:2048])  # the second member's header read, its data cut
    result, records = _records(path)
    assert any("cut.tar" in p for p in result.problems + result.read.errors) or result.stage_failures.summary()
    assert [d.category for d in _oom(result)] == ["cuda_oom"]


def test_a_json_array_cut_in_the_middle_is_counted(tmp_path):
    entries = [{"textPayload": line, "timestamp": f"2024-05-01T10:00:0{i}Z",
                "resource": {"type": "k8s_container", "labels": {"pod_name": "w-1", "container_name": "pytorch"}}}
               for i, line in enumerate(TRACE * 2)]
    text = json.dumps(entries, indent=2)
    path = tmp_path / "read.json"
    path.write_text(text[: text.index(TRACE[0], len(text) // 2) + 10])  # inside the sixth entry's text
    result, records = _records(path)
    failures = result.stage_failures.summary()
    assert failures and failures[0]["stage"] == "sources"
    assert [d.category for d in _oom(result)] == ["cuda_oom"]  # the first four entries read


def test_a_10_mb_line_inside_an_array_is_cut_and_counted(tmp_path):
    entries = [{"textPayload": "x" * (10 << 20), "timestamp": "2024-05-01T10:00:00Z"}]
    entries += [{"textPayload": line, "timestamp": f"2024-05-01T10:00:0{i + 1}Z"} for i, line in enumerate(TRACE)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(entries, indent=2))
    result, records = _records(path)
    assert result.read.long_lines_cut == 1
    assert [d.category for d in _oom(result)] == ["cuda_oom"]


def test_a_plain_log_that_starts_like_json_is_not_a_document(tmp_path):
    path = tmp_path / "plain.log"
    path.write_text("[2024-05-01 10:00:00] starting\n{'lr': 0.1}\n" + "\n".join(TRACE) + "\n")
    stream = files.open_binary(str(path))
    try:
        assert stream.read() == path.read_bytes()
    finally:
        stream.close()


def test_stern_extjson_names_the_pod(tmp_path):
    line = json.dumps({"namespace": "team-a", "pod": "w-1", "container": "pytorch", "message": TRACE[3]})
    env = read_fluentbit(line)
    assert env.kubernetes == {"pod_name": "w-1", "container_name": "pytorch", "namespace_name": "team-a"}
    # ppextjson: the same object over lines, one after another
    path = tmp_path / "pp.log"
    path.write_text("".join(json.dumps({"pod": "w-1", "container": "pytorch", "message": t}, indent=2) + "\n"
                            for t in TRACE))
    result, records = _records(path)
    traces = [r for r in records if r.kind == "trace"]
    assert traces and all(r.pod == "w-1" for r in traces) and [d.category for d in _oom(result)] == ["cuda_oom"]
