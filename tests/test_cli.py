"""The command line as a user meets it: exit codes, one-line errors, the output folder."""

import gzip
import json
import subprocess
import sys

import pytest

from gangscope.pipeline.run.cli import main

UID = "0c6d1111-2222-3333-4444-555566667777"
TRACE = [
    "2024-05-01T12:00:00.100000000Z stderr F [rank1]: Traceback (most recent call last):",
    '2024-05-01T12:00:00.100000001Z stderr F [rank1]:   File "/workspace/train.py", line 12, in <module>',
    "2024-05-01T12:00:00.100000002Z stderr F [rank1]:     main()",
    "2024-05-01T12:00:00.100000003Z stderr F [rank1]: KeyError: 'labels'",
]


@pytest.fixture(autouse=True)
def no_servers(monkeypatch):
    """These commands write to the output folder, also where the environment names servers that
    run (the README's way to test against them): GANGSCOPE_OPENSEARCH_URL would send replay there."""
    for name in ("GANGSCOPE_OPENSEARCH_URL", "GANGSCOPE_KAFKA_BOOTSTRAP"):
        monkeypatch.delenv(name, raising=False)


def pod_log(root, lines, pod="llama-train-worker-1", name="0.log"):
    d = root / f"team-a_{pod}_{UID}" / "pytorch"
    d.mkdir(parents=True, exist_ok=True)
    f = d / name
    f.write_text("\n".join(lines) + "\n")
    return f


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "gangscope", *args], capture_output=True, text=True, timeout=120
    )


def test_replay_writes_one_ndjson_file_per_kind_and_a_summary(tmp_path):
    pod_log(tmp_path / "logs", ["2024-05-01T12:00:00Z stdout F hello"] + TRACE)
    out = tmp_path / "out"
    assert main(["replay", str(tmp_path / "logs"), "--out", str(out)]) == 0
    for kind in ("step", "epoch", "error", "trace", "event", "diagnosis"):
        assert (out / f"{kind}.ndjson").exists(), kind
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lines"] == 5
    assert not list(out.glob("*.partial"))


def test_missing_path_is_one_line_and_exit_code_1(tmp_path):
    proc = run_cli("replay", str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 1
    assert "no such file or directory" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_option_is_a_usage_error_with_exit_code_2(tmp_path):
    proc = run_cli("replay", str(tmp_path), "--bogus")
    assert proc.returncode == 2
    assert "unrecognized arguments" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_format_name_is_a_usage_error(tmp_path):
    pod_log(tmp_path, ["x"])
    proc = run_cli("replay", str(tmp_path), "--format", "xml", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "--format" in proc.stderr


def test_binary_junk_is_counted_and_the_rest_is_still_curated(tmp_path):
    f = pod_log(tmp_path / "logs", ["2024-05-01T12:00:00Z stdout F fine"] * 30)
    with open(f, "ab") as fh:
        fh.write(b"\x00\xff\xfe\x01garbage\n" + b"2024-05-01T12:00:01Z stdout F after junk\n")
    out = tmp_path / "out"
    code = main(["replay", str(tmp_path / "logs"), "--out", str(out)])
    assert code == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unreadable_lines"] == 1
    assert summary["invalid_utf8_lines"] == 1
    assert summary["lines"] == 32  # lines read, the unreadable one included


def test_truncated_gzip_reports_file_and_offset_with_exit_code_1(tmp_path):
    body = "".join(f"2024-05-01T12:00:00.{i:06d}Z stdout F line {i}\n" for i in range(50000)).encode()
    d = tmp_path / "logs" / f"team-a_p-0_{UID}" / "c"
    d.mkdir(parents=True)
    data = gzip.compress(body)
    (d / "0.log.20240501-120000.gz").write_bytes(data[: len(data) // 2])
    proc = run_cli("replay", str(tmp_path / "logs"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 1
    assert "0.log.20240501-120000.gz" in proc.stderr and "byte" in proc.stderr
    assert "Traceback (most recent" not in proc.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["lines"] > 1000


def test_stdin_is_read_with_a_dash(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "gangscope", "replay", "-", "--out", str(tmp_path / "o")],
        input="\n".join(TRACE) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["lines"] == 4


def test_diagnose_json_prints_a_json_array_of_the_diagnoses(tmp_path):
    pod_log(tmp_path, TRACE)
    proc = run_cli("diagnose", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    diagnoses = json.loads(proc.stdout)  # stdout is the array and nothing else
    assert [
        (d["kind"], d["job"], d["attempt"], d["outcome"], d["category"], d["exception_type"], d["first_failure"]["rank"])
        for d in diagnoses
    ] == [("diagnosis", "team-a/llama-train", 1, "failed", "python_exception", "KeyError", 1)]  # fmt: skip
    assert "KeyError: 'labels'" in diagnoses[0]["summary"]


def test_workers_give_the_same_records_as_one_process(tmp_path):
    from pathlib import Path

    fixtures = str(Path(__file__).parent.parent / "fixtures" / "runs")
    outputs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        main(["replay", fixtures, "--out", str(out), "--workers", str(workers), "--no-progress"])
        outputs[workers] = {
            kind: sorted((out / f"{kind}.ndjson").read_text().splitlines())
            for kind in ("step", "epoch", "error", "trace", "event", "signal", "diagnosis")
        }
        assert not (out / ".parts").exists()
    assert sum(len(v) for v in outputs[1].values()) > 50
    assert outputs[1] == outputs[2]


def test_a_ten_megabyte_line_is_cut_counted_and_the_trace_after_it_survives(tmp_path):
    big = "2024-05-01T11:59:59Z stdout F " + "x" * (10 << 20)
    pod_log(tmp_path / "logs", [big] + TRACE)
    out = tmp_path / "out"
    assert main(["replay", str(tmp_path / "logs"), "--out", str(out), "--no-progress"]) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["long_lines_cut"] == 1
    traces = [json.loads(l) for l in (out / "trace.ndjson").read_text().splitlines()]
    assert [t["exception_type"] for t in traces] == ["KeyError"]


def test_docker_json_file_is_read_with_its_partials_joined(tmp_path):
    lines = [
        {"log": "Traceback (most recent call last):\n", "stream": "stderr", "time": "2024-05-01T12:00:00.1Z"},
        {"log": '  File "/workspace/train.py", line 12, in <module>\n', "stream": "stderr", "time": "2024-05-01T12:00:00.2Z"},
        {"log": "    main()\n", "stream": "stderr", "time": "2024-05-01T12:00:00.3Z"},
        {"log": "ValueError: bad ", "stream": "stderr", "time": "2024-05-01T12:00:00.4Z"},
        {"log": "shard\n", "stream": "stderr", "time": "2024-05-01T12:00:00.5Z"},
    ]
    f = tmp_path / ("a" * 64 + "-json.log")
    f.write_text("".join(json.dumps(l) + "\n" for l in lines))
    out = tmp_path / "out"
    assert main(["replay", str(f), "--out", str(out), "--no-progress"]) == 0
    traces = [json.loads(l) for l in (out / "trace.ndjson").read_text().splitlines()]
    assert [(t["exception_type"], t["message"], t["source"]) for t in traces] == [("ValueError", "bad shard", "docker")]


def test_fluent_bit_file_takes_pod_identity_from_each_record(tmp_path):
    kube = {
        "pod_name": "llama-train-worker-3",
        "namespace_name": "team-a",
        "pod_id": UID,
        "container_name": "pytorch",
        "host": "ip-10-1-2-3",
        "labels": {"training.kubeflow.org/job-name": "llama-train"},
    }
    texts = [l.split(" F ", 1)[1] for l in TRACE]
    records = [
        {"@timestamp": 1714564800.1, "time": f"2024-05-01T12:00:00.{i}Z", "stream": "stderr", "_p": "F", "log": t, "kubernetes": kube}
        for i, t in enumerate(texts, start=1)
    ]
    f = tmp_path / "fluentbit.ndjson"
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "out"
    assert main(["replay", str(f), "--out", str(out), "--no-progress"]) == 0
    (trace,) = [json.loads(l) for l in (out / "trace.ndjson").read_text().splitlines()]
    assert (trace["job"], trace["pod"], trace["node"], trace["rank"], trace["exception_type"]) == (
        "team-a/llama-train",
        "llama-train-worker-3",
        "ip-10-1-2-3",
        1,
        "KeyError",
    )


def test_an_explicit_out_wins_over_the_environments_opensearch_url(tmp_path, monkeypatch):
    # nothing listens on port 1: a replay that went to OpenSearch would fail with exit 2
    monkeypatch.setenv("GANGSCOPE_OPENSEARCH_URL", "http://127.0.0.1:1")
    pod_log(tmp_path / "logs", TRACE)
    out = tmp_path / "out"
    assert main(["replay", str(tmp_path / "logs"), "--out", str(out), "--no-progress"]) == 0
    assert (out / "trace.ndjson").read_text().count("KeyError") >= 1


def test_the_opensearch_flag_wins_over_an_explicit_out(tmp_path):
    pod_log(tmp_path / "logs", TRACE)
    code = main(["replay", str(tmp_path / "logs"), "--out", str(tmp_path / "out"),
                 "--opensearch", "http://127.0.0.1:1", "--no-progress"])
    assert code == 2 and not (tmp_path / "out").exists()
