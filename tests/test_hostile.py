"""The standing attack suite (issue 17): what a log or an event can contain never loses the run.

Each test generates a whole family of hostile input (hypothesis), not one example: fields of
the wrong type anywhere in a Fluent Bit `kubernetes` block or a Kubernetes object, numbers
out of what the index mappings hold, rich markup in log lines, files that fail to read, a
FIFO, gzip on stdin, junk before a CRI log, malformed CRI timestamps, event files cut or
broken in the middle. Each must end with no traceback and no hang, its good neighbours kept,
and what was lost counted by kind with its file and position (summary.json `skips`).
Examples are derandomized (reproducible in CI) and few; bench/fuzz_parsers.py goes further.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangscope.parsers import times
from gangscope.parsers.events import Skip, decode_event_stream
from gangscope.parsers.records import StepRecord
from gangscope.pipeline.curate.fluentbit import FluentBitCurator
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.run import cli
from gangscope.pipeline.sources.files import PodIdentity

HOSTILE = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
FEW = settings(HOSTILE, max_examples=8)

LONG_MAX = 2**63 - 1  # OpenSearch `long`
TS = "2026-03-01T10:00:00.000000000Z"
FALLBACK = PodIdentity(namespace=None, pod="stdin")


class Hung(BaseException):
    """Not an Exception: the pipeline's isolation must not catch it as one bad unit of work."""


@contextlib.contextmanager
def deadline(seconds: int):
    """A hang is a failure: the block must end within `seconds`."""

    def hung(signum, frame):
        raise Hung(f"hung for more than {seconds} s")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


_OUTS: list[Path] = []  # each replay's --out folder, removed when the module's tests end


@pytest.fixture(autouse=True, scope="module")
def _remove_outs():
    yield
    while _OUTS:
        shutil.rmtree(_OUTS.pop(), ignore_errors=True)


def replay(paths: list[str], *more: str, events: list[str] | None = None, seconds: int = 20) -> tuple[int, Path]:
    """`gangscope replay` in this process (an exception here is the traceback a user would see)."""
    out = Path(tempfile.mkdtemp(prefix="hostile-out-"))
    _OUTS.append(out)
    argv = ["replay", *paths, "--out", str(out), *more]
    if events:
        argv += ["--events", *events]
    with deadline(seconds), contextlib.redirect_stderr(io.StringIO()):
        rc = cli.main(argv)
    return rc, out


def records(out: Path, kind: str) -> list[dict]:
    path = out / f"{kind}.ndjson"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def skip_kinds(out: Path) -> dict[str, int]:
    """summary.json `skips`: {kind: count}, each entry with examples naming file and position."""
    found: dict[str, int] = {}
    for entry in summary(out).get("skips", []):
        assert entry["examples"] and all("file" in x and "position" in x for x in entry["examples"]), entry
        found[entry["kind"]] = found.get(entry["kind"], 0) + entry["count"]
    return found


def bounded(value) -> bool:
    """Every number of a document fits the index mappings (long, double)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, int):
        return -LONG_MAX - 1 <= value <= LONG_MAX
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    if isinstance(value, dict):
        return all(bounded(v) for v in value.values())
    if isinstance(value, list):
        return all(bounded(v) for v in value)
    return True


def write(tmp: Path, name: str, lines: list[str]) -> str:
    path = tmp / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return str(path)


# -- any JSON value, of any type ---------------------------------------------------------------

JSON_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
ANY_JSON = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)
NOT_A_STRING = ANY_JSON.filter(lambda v: not isinstance(v, str))


def paths_of(obj, prefix=()) -> list[tuple]:
    """Every path to a value inside a JSON object (dict keys and list indices)."""
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(paths_of(v, prefix + (k,)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.extend(paths_of(v, prefix + (i,)))
    return out


def replaced(obj, path: tuple, value):
    obj = json.loads(json.dumps(obj))
    at = obj
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return obj


@st.composite
def mutated(draw, template: dict):
    """`template` with one to three values, anywhere in it, replaced by JSON values of any type
    (most often not the type the field has)."""
    obj = template
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = paths_of(obj)
        if not paths:
            break
        obj = replaced(obj, draw(st.sampled_from(paths)), draw(NOT_A_STRING | ANY_JSON))
    return obj


# -- Fluent Bit records: the `kubernetes` block --------------------------------------------------

KUBE = {
    "pod_name": "llama-worker-0", "namespace_name": "team-a", "pod_id": "0c6d1111-2222-3333-4444-555566667777",
    "container_name": "pytorch", "host": "node-1", "container_image": "img:1",
    "labels": {"training.kubeflow.org/job-name": "llama", "app": "x"},
    "annotations": {"kueue.x-k8s.io/workload": "pytorchjob-llama-1a2b3"},
}

NEIGHBOUR = {**KUBE, "pod_name": "llama-worker-7", "pod_id": "7c6d1111-2222-3333-4444-555566667777"}


def fluentbit_line(kube, text: str) -> str:
    return json.dumps({"log": text + "\n", "stream": "stdout", "time": "2026-03-01T10:00:00.5Z", "kubernetes": kube})


@settings(HOSTILE, max_examples=60)
@given(st.one_of(mutated(KUBE), ANY_JSON))
def test_a_kubernetes_block_of_any_shape_is_read_or_skipped_and_its_neighbours_kept(kube):
    stats = CurationStats()
    curator = FluentBitCurator(stats, FALLBACK)
    lines = [fluentbit_line(kube, "step 5 loss 0.25"), fluentbit_line(NEIGHBOUR, "step 6 loss 0.5")]
    out = curator.feed_lines(lines) + curator.close()
    steps = {r.step: r for r in out if isinstance(r, StepRecord)}
    assert 6 in steps and steps[6].pod == "llama-worker-7"  # the good neighbour, under its own identity
    for record in out:  # whatever the block held, identities are text
        assert all(v is None or isinstance(v, str) for v in (record.namespace, record.pod, record.container, record.node))
        assert isinstance(record.job, str)


def test_kubernetes_fields_of_the_wrong_type_are_counted_by_replay_with_file_and_line(tmp_path):
    bad = fluentbit_line({**KUBE, "pod_name": ["a", "b"], "namespace_name": 7}, "step 1 loss 0.5")
    path = write(tmp_path, "fb.json", [bad, fluentbit_line(KUBE, "step 2 loss 0.5")])
    rc, out = replay([path])
    assert rc == 1
    assert not summary(out)["stage_failures"]  # a skip by design, not a caught crash
    assert skip_kinds(out).get("wrong_type", 0) >= 1
    assert [r["step"] for r in records(out, "step")] == [2] or 2 in [r["step"] for r in records(out, "step")]


# -- Kubernetes objects: Events, Pods, Workloads -------------------------------------------------

EVENT = {
    "kind": "Event", "apiVersion": "v1",
    "metadata": {"name": "llama-worker-0.17a", "namespace": "team-a", "uid": "e-1"},
    "involvedObject": {"kind": "Pod", "name": "llama-worker-0", "namespace": "team-a", "uid": "p-1",
                       "fieldPath": "spec.containers{pytorch}", "labels": {"job-name": "llama"}},
    "reason": "BackOff", "message": "Back-off restarting failed container", "type": "Warning",
    "source": {"component": "kubelet", "host": "node-1"}, "count": 3,
    "firstTimestamp": "2026-03-01T10:00:00Z", "lastTimestamp": "2026-03-01T10:05:00Z",
    "series": {"count": 3, "lastObservedTime": "2026-03-01T10:05:00Z"},
}
POD = {
    "kind": "Pod", "apiVersion": "v1",
    "metadata": {"name": "llama-worker-1", "namespace": "team-a", "uid": "p-2", "creationTimestamp": "2026-03-01T09:59:00Z",
                 "labels": {"job-name": "llama"}, "ownerReferences": [{"kind": "Job", "name": "llama", "controller": True}]},
    "spec": {"nodeName": "node-2", "containers": [{"name": "pytorch", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]},
    "status": {"phase": "Failed",
               "conditions": [{"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": "2026-03-01T10:01:00Z"}],
               "containerStatuses": [{"name": "pytorch", "restartCount": 1,
                                      "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                                               "finishedAt": "2026-03-01T10:02:00Z"}}}]},
}
WORKLOAD = {
    "kind": "Workload", "apiVersion": "kueue.x-k8s.io/v1beta1",
    "metadata": {"name": "pytorchjob-llama-1a2b3", "namespace": "team-a", "uid": "w-1", "creationTimestamp": "2026-03-01T09:58:00Z"},
    "spec": {"podSets": [{"name": "worker", "count": 2}], "queueName": "q"},
    "status": {"conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted", "lastTransitionTime": "2026-03-01T09:58:30Z"}],
               "requeueState": {"count": 1, "requeueAt": "2026-03-01T10:10:00Z"}},
}
GOOD = {**EVENT, "metadata": {**EVENT["metadata"], "uid": "e-good"}, "reason": "Started"}


@settings(HOSTILE, max_examples=150)
@given(st.one_of(mutated(EVENT), mutated(POD), mutated(WORKLOAD)))
def test_a_kubernetes_object_with_a_value_of_any_type_anywhere_is_read_or_skipped(obj):
    items = list(decode_event_stream([json.dumps(obj), json.dumps(GOOD)]))
    kept = [i for i in items if not isinstance(i, Skip)]
    assert any(r.reason == "Started" for r in kept)  # the neighbour
    for record in kept:
        assert record.container is None or isinstance(record.container, str)
        assert record.time is None or times.parse(record.time) is not None
        assert bounded(record.count)


@FEW
@given(st.sampled_from(["conditions", "containerStatuses", "initContainerStatuses"]),
       st.text(min_size=2, max_size=40) | st.integers() | st.dictionaries(st.text(max_size=3), st.integers(), max_size=3))
def test_a_string_where_a_list_was_expected_is_one_skip_not_one_per_character(key, value):
    obj = replaced(POD, ("status", key), value)
    skips = [i for i in decode_event_stream([json.dumps(obj)]) if isinstance(i, Skip)]
    assert len(skips) == 1 and skips[0].reason == "wrong_type" and key in skips[0].detail


# -- Event files that break in the middle -------------------------------------------------------

def event_number(i: int) -> dict:
    return {**EVENT, "metadata": {**EVENT["metadata"], "uid": f"e-{i}", "name": f"ev-{i}"}, "count": 1}


@HOSTILE
@given(st.integers(min_value=3, max_value=30), st.data(), st.booleans())
def test_an_event_file_cut_or_broken_in_one_document_keeps_every_other_document(n, data, pretty):
    docs = [json.dumps(event_number(i), indent=2 if pretty else None) for i in range(n)]
    broken = data.draw(st.integers(min_value=0, max_value=n - 1), label="broken")
    cut = data.draw(st.integers(min_value=1, max_value=len(docs[broken]) - 2), label="cut")
    docs[broken] = docs[broken][:cut]
    lines = "\n".join(docs).split("\n")
    items = list(decode_event_stream(lines))
    kept = {r.id for r in items if not isinstance(r, Skip)}
    assert len(kept) >= n - 1, f"kept {len(kept)} of {n}"
    assert any(isinstance(i, Skip) and i.reason == "bad_json" for i in items)


# -- numbers out of range -----------------------------------------------------------------------

HUGE = st.one_of(st.integers(min_value=2**63, max_value=2**64 + 5), st.integers(min_value=10**300, max_value=10**420),
                 st.integers(min_value=-(10**330), max_value=-(2**63) - 1),
                 st.integers(min_value=2**62, max_value=2**63 - 1),  # within a long: kept, and every sum over them too
                 st.sampled_from(["1e308", "1.7976931348623157e308", "1e-320", "0.0", "-0"]))
STEP_LINES = [
    "step {n} loss 0.5", "global_step={n} loss=0.25", "Epoch 1: {n}/{n}0 loss 1.0",
    "{{'loss': 0.5, 'learning_rate': 1e-05, 'epoch': {n}}}", "Step {n}/{n} | loss 0.5 | lr 1e-4",
    " 50%|#####     | {n}/{n} [00:01<00:01, 1.00it/s]", "iteration {n}/ {n} | loss 0.5",
    "Epoch {n}/{n}", "loss {n}.5 step 3",
]


@settings(HOSTILE, max_examples=16)
@given(HUGE, st.lists(st.sampled_from(STEP_LINES), min_size=1, max_size=4))
def test_numbers_out_of_range_never_end_the_run_and_no_document_holds_one(tmp_path_factory, n, templates):
    tmp = tmp_path_factory.mktemp("huge")
    lines = [f"{TS} stdout F step 1 loss 0.5"] + [f"{TS} stdout F {t.format(n=n)}" for t in templates]
    lines.append(f"{TS} stdout F step 2 loss 0.5")
    rc, out = replay([write(tmp, "huge.log", lines)], seconds=20)
    assert rc in (0, 1)
    assert not summary(out)["stage_failures"]
    for kind in ("step", "epoch", "signal", "diagnosis"):
        for doc in records(out, kind):
            assert bounded(doc), doc


def test_a_progress_total_of_2_64_with_trainer_logs_ends_in_seconds(tmp_path):
    total = 2**64
    lines = [f"{TS} stderr F  {i}%|#   | {i}/{total} [00:01<00:01, 1.00it/s]" for i in range(1, 4)]
    lines += [f"{TS} stdout F {{'loss': 0.5, 'grad_norm': 1.0, 'learning_rate': 1e-05, 'epoch': 0.{i}}}" for i in range(1, 4)]
    rc, out = replay([write(tmp_path, "bar.log", lines)], seconds=10)
    assert rc in (0, 1)
    assert not summary(out)["stage_failures"]


# -- text that a library interprets -------------------------------------------------------------

MARKUP = st.sampled_from(["[/INST]", "[bold red]", "[/bold red]", "[link=http://x]", "[/]", "[", "]", "\\[", "[b]x[/i]",
                          "\x1b[31m", "[red on white]", ":warning:", "%s", "{0}"])


@FEW
@given(st.lists(MARKUP, min_size=1, max_size=5).map("".join))
def test_rich_markup_in_log_lines_reaches_the_diagnose_table_as_literal_text(tmp_path_factory, markup):
    tmp = tmp_path_factory.mktemp("markup")
    lines = [f"{TS} stdout F Traceback (most recent call last):",
             f'{TS} stdout F   File "/w/train.py", line 3, in main',
             f"{TS} stdout F ValueError: {markup} bad config {markup}"]
    path = write(tmp, f"mk{abs(hash(markup)) % 1000}-worker-0.log", lines)
    buf = io.StringIO()
    with deadline(20), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        rc = cli.main(["diagnose", path, "-o", "wide"])
    assert rc in (0, 1)
    rc, out = replay([path])
    assert rc in (0, 1) and not summary(out)["stage_failures"]


# -- files ---------------------------------------------------------------------------------------

def test_a_file_whose_read_fails_is_counted_and_the_folder_goes_on(tmp_path, monkeypatch):
    (tmp_path / "a.log").write_text(f"{TS} stdout F step 1 loss 0.5\n")
    (tmp_path / "b.log").write_text(f"{TS} stdout F step 2 loss 0.5\n")
    import builtins

    real_open = builtins.open

    class Failing(io.BufferedReader):
        def peek(self, *a):
            raise OSError(5, "Input/output error")

        def read(self, *a):
            raise OSError(5, "Input/output error")

    def open_(file, mode="r", *a, **k):
        if str(file).endswith("a.log") and "b" in mode:
            return Failing(io.BytesIO(b"x"))
        return real_open(file, mode, *a, **k)

    monkeypatch.setattr(builtins, "open", open_)
    rc, out = replay([str(tmp_path)])
    monkeypatch.setattr(builtins, "open", real_open)
    assert rc == 1
    assert [r["step"] for r in records(out, "step")] == [2]
    failures = summary(out)["stage_failures"]
    assert failures and failures[0]["examples"][0]["file"].endswith("a.log")


def test_a_fifo_given_as_a_path_does_not_hang(tmp_path):
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    rc, out = replay([str(fifo)], seconds=10)
    assert rc in (0, 1, 2)


def test_gzip_on_stdin_is_decompressed(monkeypatch):
    data = gzip.compress(f"{TS} stdout F step 7 loss 0.5\n".encode())
    fake = io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)))
    monkeypatch.setattr(sys, "stdin", fake)
    rc, out = replay(["-"])
    assert rc == 0
    assert [r["step"] for r in records(out, "step")] == [7]


JUNK = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60).filter(
    lambda s: s.strip() and not s.startswith(("2", "{")))


@HOSTILE
@given(st.lists(JUNK, min_size=1, max_size=6), st.integers(min_value=0, max_value=80))
def test_a_banner_of_junk_lines_before_a_cri_log_does_not_make_it_text(tmp_path_factory, junk, size):
    tmp = tmp_path_factory.mktemp("banner")
    banner = [junk[i % len(junk)] for i in range(size)]
    lines = banner + [f"2026-03-01T10:00:{i:02d}.000000000Z stdout F step {i} loss 0.5" for i in range(1, 31)]
    rc, out = replay([write(tmp, "banner.log", lines)])
    steps = records(out, "step")
    assert sorted(r["step"] for r in steps) == list(range(1, 31))
    assert all(r["source"] == "cri" and r["time"].startswith("2026-03-01T10:00:") for r in steps)


BAD_TIMES = st.sampled_from([
    "2026-13-45T99:99:99.0Z", "2026-02-30T10:00:00Z", "2026-01-01T25:00:00Z", "2026-01-01T10:00:00.Z",
    "2026-01-01T10:00:60Z", "9999-99-99T99:99:99.999999999Z", "2026-01-01T10:00:00+99:99", "0000-00-00T00:00:00Z",
])


@FEW
@given(BAD_TIMES)
def test_malformed_cri_timestamps_are_counted_and_never_written_as_record_times(tmp_path_factory, bad):
    tmp = tmp_path_factory.mktemp("badts")
    lines = [f"{bad} stdout F step 1 loss 0.5", f"{TS} stdout F step 2 loss 0.5"]
    rc, out = replay([write(tmp, "badts.log", lines)])
    assert rc == 1
    for doc in records(out, "step"):
        assert doc["time"] is None or times.parse(doc["time"]) is not None, doc["time"]
    assert skip_kinds(out).get("bad_timestamp", 0) >= 1
    assert 2 in [r["step"] for r in records(out, "step")]


# -- the number of workers changes nothing ----------------------------------------------------------

@settings(HOSTILE, max_examples=3)
@given(st.integers(min_value=0, max_value=3), st.integers(min_value=1, max_value=20), st.integers(min_value=21, max_value=60))
def test_workers_1_and_2_give_identical_diagnoses_with_the_step_of_the_failing_pod(tmp_path_factory, failing, at, others):
    import uuid

    tmp = tmp_path_factory.mktemp("workers")
    for rank in range(4):
        pod = f"wjob-worker-{rank}"
        folder = tmp / f"team-a_{pod}_{uuid.uuid5(uuid.NAMESPACE_URL, pod)}" / "pytorch"
        folder.mkdir(parents=True)
        last = at if rank == failing else others
        lines = [f"2026-03-01T10:{s // 60:02d}:{s % 60:02d}.000000000Z stdout F step {s} loss 1.0" for s in range(1, last + 1)]
        if rank == failing:
            t = f"2026-03-01T10:{at // 60:02d}:{at % 60:02d}.500000000Z"
            lines += [f"{t} stderr F Traceback (most recent call last):", f'{t} stderr F   File "/w/a.py", line 1, in f',
                      f"{t} stderr F KeyError: 'lr'"]
        write(folder, "0.log", lines)
    found = []
    for workers in ("1", "2"):
        rc, out = replay([str(tmp)], "--workers", workers)
        found.append([{k: d[k] for k in ("job", "attempt", "category", "first_failure", "summary")}
                      for d in records(out, "diagnosis")])
    assert found[0] == found[1]
    (diagnosis,) = found[0]
    assert diagnosis["first_failure"]["pod"] == f"wjob-worker-{failing}"
    assert f"step {at}" in diagnosis["summary"]


# -- lines not read as written: exit 1 (README); a last line without its newline is read whole ------

@settings(HOSTILE, max_examples=3)
@given(st.integers(min_value=1, max_value=3), st.booleans())
def test_an_overlong_partial_chain_is_cut_counted_and_exits_1_a_dangling_one_is_counted(tmp_path_factory, chunks, dangling):
    # A dangling chain is the container's last line without its newline (containerd writes it with the P tag at EOF:
    # a progress bar's last state when the process died): read whole, counted in summary.json, exit 0. An overlong
    # chain is cut at max_partial_bytes: not read as written, exit 1.
    tmp = tmp_path_factory.mktemp("partial")
    piece = "x" * (1 << 18)
    lines = [f"{TS} stdout P {piece}" for _ in range(chunks * (1 if dangling else 5))]
    if not dangling:
        lines.append(f"{TS} stdout F end")
    lines.append(f"{TS} stderr F step 3 loss 0.5")
    rc, out = replay([write(tmp, "partial.log", lines)])
    counted = summary(out)
    assert rc == (0 if dangling else 1)
    assert counted["dangling_partials"] if dangling else counted["partial_lines_cut"]
    assert [r["step"] for r in records(out, "step")] == [3]


# -- cost: no per-record work that loops over what came before ---------------------------------
# Counted, not timed: the work a record costs is the number of things looked at for it.

class CountingSeries(dict):
    """JobDigest._series (each job's place) that counts how often a job's series is looked up."""

    looked = 0

    def __getitem__(self, job):
        CountingSeries.looked += 1
        return super().__getitem__(job)

    def get(self, job, default=None):
        CountingSeries.looked += 1
        return super().get(job, default)


@settings(HOSTILE, max_examples=6)
@given(st.integers(min_value=100, max_value=400), st.integers(min_value=1, max_value=4), st.integers(min_value=20, max_value=60))
def test_many_small_jobs_cost_the_digest_constant_work_per_step_and_keep_the_longest_series_thinned(jobs, steps, cap):
    """Once the series of all jobs together hold `max_steps`, each new step thins the longest
    series. It was found by a max over every job's series per step: many small jobs made the
    digest quadratic (8k one-pod jobs 13 s, 16k 109 s). Now a step costs a bounded number of
    look-ups whatever the number of jobs, and the series thinned are the ones max() picked."""
    from gangscope.pipeline.diagnose.digest import JobDigest

    def step(job: int, s: int) -> StepRecord:
        return StepRecord(id=f"{job}-{s}", job=f"ns/job{job}", attempt=1, pod=f"job{job}-0", rank=0, step=s,
                          time=TS)

    digest = JobDigest(max_steps=cap)
    digest._series = CountingSeries()
    reference = JobDigest(max_steps=cap)  # thinned the old way, by a max over every series
    reference._longest_series = lambda: max(range(len(reference._lengths)), key=lambda p: reference._lengths[p])
    CountingSeries.looked = 0
    for s in range(steps):
        for job in range(jobs):
            digest.add(step(job, s))
            reference.add(step(job, s))
    per_step = CountingSeries.looked / (jobs * steps)
    assert per_step < 8, f"{per_step:.1f} series looked up per step ({jobs} jobs): work grows with the jobs"
    assert {j: [r.id for r in v] for j, v in digest.step_series()} == \
        {j: [r.id for r in v] for j, v in reference.step_series()}


# -- events: the run's events in bounded memory, the same attempts ---------------------------------

GANG = Path(__file__).resolve().parent.parent / "fixtures" / "gang"
GANG_SCENARIOS = sorted(p for p in GANG.iterdir() if p.is_dir() and list(p.glob("*.*json")))


def _event_records(scenario: Path) -> list:
    from gangscope.pipeline.curate.events import events_of_lines

    out = []
    for path in sorted(scenario.glob("*.*json")):
        if path.name != "manifest.json":
            out += [r for r in events_of_lines(path.read_text().splitlines()) if not isinstance(r, Skip)]
    return out


@settings(HOSTILE, max_examples=40)
@given(st.sampled_from(GANG_SCENARIOS), st.randoms(use_true_random=False), st.booleans())
def test_the_event_stream_cuts_the_attempts_and_stamps_the_records_the_book_did(scenario, rnd, twice):
    """Replay reads events through EventStream (Pod records on disk unless their job has
    attempts); the consumer's EventBook holds them all. In any order, read once or twice, both
    give the same attempts and every record the same job and attempt, in the same order."""
    from gangscope.pipeline.correlate.event_book import EventBook, EventStream

    order = list(range(len(_event_records(scenario))))
    rnd.shuffle(order)
    order = order + order if twice else order

    def fed() -> list:
        recs = _event_records(scenario)  # fresh copies: correlation sets their job and attempt
        return [recs[i] for i in order]

    book = EventBook(max_events=None)
    stamped, _ended = book.add(fed())
    stream = EventStream()
    for r in fed():
        stream.add(r)
    attempts = stream.cut()
    streamed = list(stream.stamped())
    stream.close()
    assert repr(attempts) == repr(book.attempts)
    assert [(r.id, r.job, r.attempt) for r in streamed] == [(r.id, r.job, r.attempt) for r in stamped]


def test_pod_events_of_jobs_without_attempts_stay_on_disk():
    """A million kubelet Events about pods whose jobs Kueue never admitted cut no attempt: the
    stream keeps none of them in memory (the book held every record: 1.1 GB for 400k)."""
    from gangscope.pipeline.correlate.event_book import EventStream
    from gangscope.pipeline.curate.events import events_of_lines

    lines = [json.dumps({"kind": "Event", "apiVersion": "v1",
                         "metadata": {"name": f"w-{i % 8}.{i:x}", "namespace": "a", "uid": f"u{i}"},
                         "involvedObject": {"kind": "Pod", "name": f"w-{i % 8}", "namespace": "a",
                                            "labels": {"job-name": "j"}},
                         "reason": ["Scheduled", "Pulled", "Started", "BackOff"][i % 4], "message": f"m {i}",
                         "type": "Normal", "count": 1, "firstTimestamp": TS, "lastTimestamp": TS})
             for i in range(2000)]
    stream = EventStream()
    for r in events_of_lines(lines):
        stream.add(r)
    stream.settle()
    assert stream.count == 2000
    assert stream.cut() == {} and stream.kept == {}
    assert sum(1 for r in stream.stamped() if r.job == "a/j") == 2000
    stream.close()


HEX_IDS = st.text("0123456789abcdef", min_size=15, max_size=32)


@HOSTILE
@given(st.lists(st.one_of(HEX_IDS, st.text(max_size=20)), max_size=400), st.data())
def test_the_id_set_agrees_with_a_set_of_strings(ids, data):
    """The decoder's repeat check and the stream's: 16 bytes an id instead of a dict of strings;
    any id (hex or not, empty, any Unicode) is found again, marked or not, as a set would."""
    from gangscope.parsers.id_set import IdSet

    seen, marked = IdSet(capacity=1), set()
    reference: set[str] = set()
    for i in ids:
        assert seen.add(i) == (i not in reference)
        reference.add(i)
        if data.draw(st.booleans()):
            seen.mark(i)
            marked.add(i)
    assert len(seen) == len(reference)
    assert all(i in seen and seen.marked(i) == (i in marked) for i in reference)
    assert all(x not in seen for x in data.draw(st.lists(HEX_IDS, max_size=20)) if x not in reference
               and x[:15] not in {r[:15] for r in reference})


@settings(HOSTILE, max_examples=4)
@given(st.integers(min_value=60, max_value=240))
def test_many_admitted_jobs_cost_linking_work_linear_in_the_jobs(n):
    """Each job's latest Workload was found by a scan of every workload (and its owner's name)
    per job: n jobs cost n**2 look-ups. Counted: the look-ups grow with n, not n**2."""
    from gangscope.pipeline.correlate import linking
    from gangscope.pipeline.correlate.attempts import build_attempts
    from gangscope.pipeline.curate.events import events_of_lines

    def workload(i: int) -> str:
        return json.dumps({
            "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": f"pytorchjob-j{i}-abcde", "namespace": "t", "uid": f"w-{i}", "resourceVersion": "1",
                         "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": f"j{i}",
                                              "uid": f"j-{i}", "controller": True}]},
            "spec": {"podSets": [{"name": "worker", "count": 2}], "queueName": "q"},
            "status": {"conditions": [{"type": "Admitted", "status": "True", "reason": "Admitted", "message": "ok",
                                       "lastTransitionTime": "2026-03-05T11:50:01Z"}]}})

    records = [r for r in events_of_lines([workload(i) for i in range(n)]) if not isinstance(r, Skip)]
    calls = [0]
    real = linking.Index.workload_job

    def counted(self, ns, name):
        calls[0] += 1
        return real(self, ns, name)

    linking.Index.workload_job = counted
    try:
        attempts = build_attempts(records)
    finally:
        linking.Index.workload_job = real
    assert len(attempts) == n and all(a[0].start for a in attempts.values())
    assert calls[0] <= 4 * n, f"{calls[0]} workload look-ups for {n} jobs"
