"""Isolation at every stage boundary: one bad input never loses the run.

Each test injects an exception into one stage for one unit of work only (one file, one parser
on one line, one record, one job's correlation, one attempt's diagnosis, one record a sink
cannot encode, one job's report section), replays the fixtures, and checks that everything
else in the output folder is byte-identical to a clean run, that summary.json names the stage,
the exception type and where, and that the exit code is 1 (SPEC: records that could not be read
were counted and reported).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gangscope.pipeline.run.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
LOGS = ["runs/collective_timeout/pods", "runs/rank_raises/pods", "gang/d_preemption/pods", "gang/c_rendezvous_timeout/pods"]
EVENTS = ["gang/d_preemption/events.ndjson", "gang/d_preemption/workloads.json", "gang/c_rendezvous_timeout/events.ndjson",
          "gang/c_rendezvous_timeout/pods.json"]
KINDS = ("step", "epoch", "error", "trace", "event", "signal", "diagnosis")
RANK_RAISES_1 = FIXTURES / "runs/rank_raises/pods/team-a_rank-raises-worker-1_94ab7032-a84b-5c85-bc7e-e5a4091c1d80/pytorch/0.log"
KEY_ERROR_LINE_TIME = "2026-11-30T04:51:19.606544844Z"  # "[rank3]: KeyError: 'target_column'" in RANK_RAISES_1


def replay(out: Path) -> int:
    return main(["replay", *(str(FIXTURES / p) for p in LOGS), "--events", *(str(FIXTURES / p) for p in EVENTS),
                 "--out", str(out), "--no-progress"])


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("clean") / "out"
    assert replay(out) == 0
    assert not json.loads((out / "summary.json").read_text()).get("stage_failures")
    return out


def ndjson(out: Path, kind: str) -> list[str]:
    path = out / f"{kind}.ndjson"
    return path.read_text().splitlines() if path.exists() else []


def job_of(line: str) -> str | None:
    return json.loads(line).get("job")


def sections(out: Path) -> dict[str, str]:
    """report.html's job sections by job name (their anchors numbered by position left out)."""
    html = (out / "report.html").read_text()
    found = {}
    for part in html.split('<section class="job"')[1:]:
        name = re.search(r"<h2>(.*?)</h2>", part).group(1)
        found[name] = re.sub(r"job-\d+", "job-N", part.split("</section>")[0])
    return found


def assert_same_except(clean: Path, hurt: Path, *, jobs: set[str] = frozenset(), ids: set[str] = frozenset(),
                       report_jobs: set[str] | None = None) -> None:
    """Every record file equal to the clean run's, line for line and in order, once the records
    of `jobs` and the records `ids` are left out of both; the report's sections equal but
    for `report_jobs` (by default `jobs`). Something of the unit must really be missing."""
    missing = 0
    for kind in KINDS:
        a = [line for line in ndjson(clean, kind) if job_of(line) not in jobs and json.loads(line)["id"] not in ids]
        b = [line for line in ndjson(hurt, kind) if job_of(line) not in jobs and json.loads(line)["id"] not in ids]
        assert a == b, kind
        missing += len(ndjson(clean, kind)) - len(ndjson(hurt, kind)) + sum(
            1 for line in ndjson(hurt, kind) if line not in set(ndjson(clean, kind)))
    report_jobs = jobs if report_jobs is None else report_jobs
    a, b = sections(clean), sections(hurt)
    assert set(a) == set(b)
    for name in a:
        if name not in report_jobs:
            assert a[name] == b[name], name
    assert missing or report_jobs, "the injected failure changed nothing"


def failures_in(out: Path) -> list[dict]:
    return json.loads((out / "summary.json").read_text())["stage_failures"]


def the_failure(out: Path, stage: str, error: str) -> dict:
    found = [f for f in failures_in(out) if f["stage"] == stage]
    assert [(f["stage"], f["error"], f["count"]) for f in found] == [(stage, error, 1)], failures_in(out)
    assert len(failures_in(out)) == 1, failures_in(out)
    return found[0]["examples"][0]


# -- sources: one file --------------------------------------------------------------------------


def test_a_file_that_cannot_be_read_is_counted_and_the_rest_of_the_folder_goes_on(clean, tmp_path, monkeypatch, capsys):
    from gangscope.pipeline.sources import files

    real_open = files.open_binary

    def open_binary(path):
        if path == str(RANK_RAISES_1):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path)

    monkeypatch.setattr(files, "open_binary", open_binary)
    out = tmp_path / "out"
    assert replay(out) == 1
    assert_same_except(clean, out, jobs={"team-a/rank-raises"})
    example = the_failure(out, "sources", "PermissionError")
    assert example["file"] == str(RANK_RAISES_1) and example["position"] == "byte 0"
    assert "sources: 1 failure" in capsys.readouterr().err


# -- curate: one parser on one line, one record ----------------------------------------------------


def test_a_parser_that_raises_on_one_line_skips_that_line_only(clean, tmp_path, monkeypatch):
    from gangscope.parsers.traces import TraceParser

    real_feed = TraceParser.feed

    def feed(self, line):
        if line.time == KEY_ERROR_LINE_TIME:
            raise IndexError("injected")
        return real_feed(self, line)

    monkeypatch.setattr(TraceParser, "feed", feed)
    out = tmp_path / "out"
    assert replay(out) == 1
    assert_same_except(clean, out, jobs={"team-a/rank-raises"})
    example = the_failure(out, "curate", "IndexError")
    assert example["file"] == str(RANK_RAISES_1)
    assert example["position"] == f"line at {KEY_ERROR_LINE_TIME} (stderr #0)"
    assert example["parser"] == "TraceParser" and example["job"] == "team-a/rank-raises"
    # The other parsers still read the line, the trace parser read the lines after it
    traces = [json.loads(line) for line in ndjson(out, "trace") if job_of(line) == "team-a/rank-raises"]
    assert traces and len(traces) >= len([1 for line in ndjson(clean, "trace") if job_of(line) == "team-a/rank-raises"]) - 1


def test_a_record_that_cannot_be_stamped_is_dropped_alone(clean, tmp_path, monkeypatch):
    from gangscope.pipeline.curate.identity import Stamper

    real_stamp = Stamper.stamp
    seen = []

    def stamp(self, record, stream):
        if record.kind == "trace" and self.identity.pod == "collective-timeout-worker-0":
            seen.append(record)
            if len(seen) == 1:
                raise TypeError("injected")
        return real_stamp(self, record, stream)

    monkeypatch.setattr(Stamper, "stamp", stamp)
    out = tmp_path / "out"
    assert replay(out) == 1
    assert_same_except(clean, out, jobs={"team-a/collective-timeout"})
    example = the_failure(out, "curate", "TypeError")
    assert example["record"] == "trace" and example["job"] == "team-a/collective-timeout"
    assert example["file"].endswith("pytorch/0.log") and example["position"].startswith("line at 20")
    # exactly one trace fewer for that job
    count = lambda o: sum(1 for line in ndjson(o, "trace") if job_of(line) == "team-a/collective-timeout")  # noqa: E731
    assert count(out) == count(clean) - 1


# -- correlate: one job's attempts from events ----------------------------------------------------------


def test_a_job_whose_attempts_cannot_be_cut_falls_back_to_no_gang_attempts(clean, tmp_path, monkeypatch):
    from gangscope.pipeline.correlate import attempts

    real = attempts._job_attempts

    def job_attempts(job, *args):
        if job == "team-c/gpt-neox":
            raise KeyError("injected")
        return real(job, *args)

    monkeypatch.setattr(attempts, "_job_attempts", job_attempts)
    out = tmp_path / "out"
    assert replay(out) == 1
    assert_same_except(clean, out, jobs={"team-c/gpt-neox"})
    example = the_failure(out, "correlate", "KeyError")
    assert example["job"] == "team-c/gpt-neox" and example["position"] == "team-c/gpt-neox"
    # the job is still diagnosed, without gang attempts
    assert [json.loads(line)["job"] for line in ndjson(out, "diagnosis")].count("team-c/gpt-neox") >= 1


# -- diagnose: one attempt --------------------------------------------------------------------------


def test_an_attempt_whose_diagnosis_raises_is_unknown_with_the_error_named(clean, tmp_path, monkeypatch):
    from gangscope.pipeline.diagnose import root_cause

    real = root_cause._sharpen

    def sharpen(root, causes):
        if root.error.job == "team-a/rank-raises":
            return min(f for f in causes if f is None)  # the min() over nothing of issue 15
        return real(root, causes)

    monkeypatch.setattr(root_cause, "_sharpen", sharpen)
    out = tmp_path / "out"
    assert replay(out) == 1
    diagnosis_ids = {json.loads(line)["id"] for line in ndjson(clean, "diagnosis") if job_of(line) == "team-a/rank-raises"}
    assert_same_except(clean, out, ids=diagnosis_ids, report_jobs={"team-a/rank-raises"})
    (diagnosis,) = [json.loads(line) for line in ndjson(out, "diagnosis") if job_of(line) == "team-a/rank-raises"]
    assert diagnosis["id"] in diagnosis_ids and diagnosis["attempt"] == 1
    assert diagnosis["category"] == "unknown" and diagnosis["confidence"] == 0
    assert diagnosis["summary"] == "gangscope could not diagnose this attempt: ValueError in root-cause selection"
    example = the_failure(out, "diagnose", "ValueError")
    assert example["job"] == "team-a/rank-raises" and example["attempt"] == 1
    assert example["step"] == "root-cause selection" and "empty" in example["message"]


def test_diagnose_gives_every_attempt_a_diagnosis_even_when_one_raises(monkeypatch):
    from gangscope.parsers.records import ErrorRecord
    from gangscope.pipeline.diagnose import attempt, root_cause
    from gangscope.pipeline.isolation import StageFailures

    def find_root(failures):
        if failures and failures[0].error.job == "ns/bad":
            raise ZeroDivisionError("injected")
        return root_cause.find_root(failures)

    monkeypatch.setattr(attempt, "find_root", find_root)
    errors = [ErrorRecord(job=job, category="cuda_oom", message="CUDA out of memory", line="torch.OutOfMemoryError",
                          time="2024-05-01T12:00:00Z", pattern="cuda_oom") for job in ("ns/bad", "ns/good")]
    failures = StageFailures()
    by_job = {d.job: d for d in attempt.diagnose(errors, None, failures)}
    assert set(by_job) == {"ns/bad", "ns/good"}
    assert by_job["ns/bad"].category == "unknown" and by_job["ns/bad"].confidence == 0.0
    assert "ZeroDivisionError" in by_job["ns/bad"].summary
    assert by_job["ns/good"].category != "unknown"
    assert [(e["stage"], e["error"], e["count"]) for e in failures.summary()] == [("diagnose", "ZeroDivisionError", 1)]


# -- sinks: one record ----------------------------------------------------------------------------------


def test_a_record_the_sink_cannot_encode_is_skipped_alone(clean, tmp_path, monkeypatch):
    from gangscope.pipeline.sinks import local

    victim = json.loads(next(line for line in ndjson(clean, "trace") if job_of(line) == "team-a/collective-timeout"))
    real_encode = local.encode

    def encode(record):
        if record.id == victim["id"]:
            raise TypeError("injected")
        return real_encode(record)

    real_encode_lines = local.encode_lines

    def encode_lines(records):  # the sink's batch of a kind fails as msgspec's does: whole
        if any(record.id == victim["id"] for record in records):
            raise TypeError("injected")
        return real_encode_lines(records)

    monkeypatch.setattr(local, "encode", encode)
    monkeypatch.setattr(local, "encode_lines", encode_lines)
    out = tmp_path / "out"
    assert replay(out) == 1
    assert_same_except(clean, out, ids={victim["id"]}, report_jobs=set())
    assert len(ndjson(out, "trace")) == len(ndjson(clean, "trace")) - 1
    example = the_failure(out, "sinks", "TypeError")
    assert example["id"] == victim["id"] and example["record"] == "trace"
    assert example["pod"] == f"{victim['namespace']}/{victim['pod']}" and example["job"] == victim["job"]
    assert example["position"] == f"line at {victim['time']} ({victim['stream']} #{victim['seq']})"


# -- report: one job's section ----------------------------------------------------------------------


def test_a_report_section_that_fails_shows_its_job_with_the_error(clean, tmp_path, monkeypatch):
    from gangscope.pipeline.report import render

    real = render.trace_groups

    def trace_groups(traces):
        if traces and traces[0].job == "team-a/rank-raises":
            raise AttributeError("injected")
        return real(traces)

    monkeypatch.setattr(render, "trace_groups", trace_groups)
    out = tmp_path / "out"
    assert replay(out) == 1
    assert_same_except(clean, out, report_jobs={"team-a/rank-raises"})
    assert "gangscope could not show this job: AttributeError" in sections(out)["team-a/rank-raises"]
    example = the_failure(out, "report", "AttributeError")
    assert example["job"] == "team-a/rank-raises"


# -- the consumer service's path ------------------------------------------------------------------------


def fluentbit_line(text: str, time: str, pod: str = "trainer-0") -> object:
    from gangscope.parsers.envelopes import Envelope

    kube = {"namespace_name": "team-k", "pod_name": pod, "pod_id": f"uid-{pod}", "container_name": "pytorch",
            "labels": {"job-name": "kjob"}}
    return Envelope(time=time, stream="stderr", text=text, partial=False, kubernetes=kube)


def test_a_partition_counts_a_parser_failure_and_curates_the_rest(monkeypatch):
    from gangscope.parsers.errors import ErrorDetector
    from gangscope.pipeline.curate.partition import LogPartition

    real_feed = ErrorDetector.feed

    def feed(self, line):
        if "poisoned" in line.text:
            raise RuntimeError("injected")
        return real_feed(self, line)

    monkeypatch.setattr(ErrorDetector, "feed", feed)
    lines = ["RuntimeError: CUDA error: an illegal memory access was encountered (poisoned)",
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    partition = LogPartition(None)
    out = []
    for offset, text in enumerate(lines):
        partition.feed(100 + offset, fluentbit_line(text, f"2024-05-01T12:00:0{offset}Z"), out)
    errors = [r for r in out if r.kind == "error"]
    assert [e.category for e in errors] == ["cuda_oom"]
    (entry,) = partition.stats.failures.summary()
    assert (entry["stage"], entry["error"], entry["count"]) == ("curate", "RuntimeError", 1)
    assert entry["examples"][0]["position"] == 100 and entry["examples"][0]["parser"] == "ErrorDetector"


def test_the_service_counts_failures_in_metrics_and_its_log_and_goes_on(monkeypatch):
    from types import SimpleNamespace

    from structlog.testing import capture_logs

    from gangscope.parsers.errors import ErrorDetector
    from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
    from gangscope.pipeline.curate.partition import LogPartition
    from gangscope.pipeline.run import config
    from gangscope.pipeline.run.service import Service
    from gangscope.pipeline.sources import kafka as ksrc

    real_feed, real_decode = ErrorDetector.feed, ksrc.decode_log

    def feed(self, line):
        if "poisoned" in line.text:
            raise RuntimeError("injected")
        return real_feed(self, line)

    def decode_log(value):
        if b"undecodable" in value:
            raise LookupError("injected")
        return real_decode(value)

    monkeypatch.setattr(ErrorDetector, "feed", feed)
    monkeypatch.setattr(ksrc, "decode_log", decode_log)
    service = Service(config.load({"bootstrap": "127.0.0.1:1", "opensearch": "http://127.0.0.1:1"}, environ={}),
                      install_signals=False)
    from kafka.structs import TopicPartition

    tp = TopicPartition("pod-logs", 0)
    service.states[tp] = LogPartition(AttemptOf(service.book))
    kube = {"namespace_name": "team-k", "pod_name": "trainer-0", "pod_id": "uid-0", "container_name": "pytorch"}
    texts = ["RuntimeError: CUDA error: an illegal memory access was encountered (poisoned)", "undecodable",
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    messages = [SimpleNamespace(topic="pod-logs", partition=0, offset=10 + i, key=None, value=json.dumps(
        {"log": text, "stream": "stderr", "time": f"2024-05-01T12:00:0{i}Z", "kubernetes": kube}).encode())
        for i, text in enumerate(texts)]
    service._consume({tp: messages})
    assert [r.category for r in service.pending[tp] if r.kind == "error"] == ["cuda_oom"]
    with capture_logs() as logs:
        service._count_failures()
    metrics = service.metrics.render().decode()
    assert 'gangscope_stage_failures_total{error="RuntimeError",stage="curate"} 1.0' in metrics
    assert 'gangscope_stage_failures_total{error="LookupError",stage="sources"} 1.0' in metrics
    warned = {(e["stage"], e["error"]): e for e in logs if e["event"] == "unit of work failed and was skipped"}
    assert set(warned) == {("curate", "RuntimeError"), ("sources", "LookupError")}
    assert warned["curate", "RuntimeError"]["position"] == 10 and warned["sources", "LookupError"]["position"] == 11
    with capture_logs() as logs:
        service._count_failures()  # counted once
    assert not logs


# -- correlate: progress and stragglers of one job --------------------------------------------------


@pytest.fixture(scope="module")
def straggling(tmp_path_factory) -> tuple[list[str], Path]:
    """Two jobs whose ranks straggle and stall (test_one_back_half's), the replay's arguments and its clean output."""
    import shutil

    from test_one_back_half import straggling_job

    root = tmp_path_factory.mktemp("straggling")
    pods = straggling_job(root / "a")
    for pod in sorted(pods.iterdir()):  # the same logs again as another job, team-s/lagging
        shutil.copytree(pod, pods / pod.name.replace("straggle", "lagging").replace("aaaa", "dddd"))
    args = ["replay", str(pods), *(str(FIXTURES / p) for p in LOGS[:2])]
    out = root / "clean"
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    assert {job_of(line) for line in ndjson(out, "signal")} >= {"team-s/straggle", "team-s/lagging"}
    return args, out


def test_a_job_whose_stragglers_cannot_be_found_leaves_the_other_jobs_stragglers(straggling, tmp_path, monkeypatch):
    from gangscope.pipeline.diagnose import back_half

    args, clean_out = straggling
    real = back_half.find_stragglers

    def find_stragglers(steps):
        if steps and steps[0].job == "team-s/lagging":
            raise FloatingPointError("injected")
        return real(steps)

    monkeypatch.setattr(back_half, "find_stragglers", find_stragglers)
    out = tmp_path / "out"
    assert main([*args, "--out", str(out), "--no-progress"]) == 1
    assert_same_except(clean_out, out, jobs={"team-s/lagging"})
    assert {json.loads(line)["signal"] for line in ndjson(out, "signal") if job_of(line) == "team-s/lagging"} == {"stall"}
    example = the_failure(out, "correlate", "FloatingPointError")
    assert example["job"] == "team-s/lagging" and example["step"] == "stragglers"


def test_a_step_the_progress_tracker_raises_on_gives_no_progress_and_the_rest_goes_on(straggling, tmp_path,
                                                                                      monkeypatch):
    from gangscope.parsers.progress import ProgressTracker

    args, clean_out = straggling
    real = ProgressTracker.add

    def add(self, record):
        if record.job == "team-s/lagging" and record.rank == 1 and record.step == 5:
            raise OverflowError("injected")
        return real(self, record)

    monkeypatch.setattr(ProgressTracker, "add", add)
    out = tmp_path / "out"
    assert main([*args, "--out", str(out), "--no-progress"]) == 1
    assert_same_except(clean_out, out, jobs={"team-s/lagging"}, report_jobs={"team-s/lagging"})
    example = the_failure(out, "correlate", "OverflowError")
    assert example["job"] == "team-s/lagging" and example["step"] == "progress" and example["record"] == "step"
    assert example["pod"].endswith("/lagging-worker-1") and example["position"].startswith("line at 2026-11-30T04:00")
