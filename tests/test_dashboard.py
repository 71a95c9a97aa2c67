"""The dashboard against the real OpenSearch: panel numbers, the pages in headless Chromium, escaping.

The records are two training jobs as the pipeline curates them: team-a/llama-train (4 ranks,
rank 3 slow, then a CUDA OOM on rank 3 that leaves ranks 0-2 in NCCL watchdog timeouts) and
team-b/bert-finetune (evicted once for PodsReadyTimeout by Kueue, requeued, now running).
"""

from __future__ import annotations

import os
import re
import socket
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from gangscope.parsers.records import (
    DiagnosisRecord,
    EpochRecord,
    ErrorRecord,
    EventRecord,
    Frame,
    StepRecord,
    TraceRecord,
    stable_id,
)
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.dashboard import create_app
from gangscope.pipeline.sinks.opensearch import OpenSearchSink

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
T0 = datetime(2026, 3, 2, 10, 0, 0, tzinfo=timezone.utc)
LLAMA, BERT = "team-a/llama-train", "team-b/bert-finetune"
SCRIPT_LINE = 'ValueError: bad sample "<script>alert(\'gangscope\')</script>" in shard 7'
OOM_TEXT = """Traceback (most recent call last):
  File "/workspace/train.py", line 211, in <module>
    main()
  File "/workspace/train.py", line 187, in main
    loss.backward()
  File "/usr/local/lib/python3.11/site-packages/torch/_tensor.py", line 581, in backward
    torch.autograd.backward(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB of which 1.06 GiB is free."""
NCCL_TEXT = """Traceback (most recent call last):
  File "/workspace/train.py", line 187, in main
    loss.backward()
torch.distributed.DistBackendError: [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5021, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for 600045 milliseconds before timing out."""


def ts(seconds: float) -> str:
    """RFC 3339 with nanoseconds, as CRI logs carry them."""
    t = T0 + timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond * 1000 + 417:09d}Z"


def common(job: str, rank: int | None, seconds: float, attempt: int = 1, seq: int = 0) -> dict:
    ns, name = job.split("/")
    pod = f"{name}-worker-{rank}" if rank is not None else f"{name}-worker-0"
    return {"id": stable_id(job, attempt, pod, ts(seconds), seq), "job": job, "attempt": attempt, "namespace": ns,
            "pod": pod, "container": "pytorch", "node": f"gpu-node-{(rank or 0) // 2}", "rank": rank,
            "time": ts(seconds), "source": f"/var/log/pods/{ns}_{pod}_uid/pytorch/0.log", "stream": "stdout",
            "seq": seq}


def demo_records() -> list:
    out: list = []
    # llama-train: 4 ranks, 50 steps each, rank 3 at 1.9 s/step against 1.0 s for the others.
    for rank in range(4):
        slow = rank == 3
        for step in range(1, 51):
            out.append(StepRecord(
                **common(LLAMA, rank, step * 2 + rank * 0.01), step=step, total_steps=75, epoch=step / 25,
                loss=round(2.5 - 0.02 * step + 0.001 * rank, 4), learning_rate=3e-4, grad_norm=1.2,
                throughput=1700.0 if slow else 3200.0, throughput_unit="tokens/s",
                step_time_s=1.9 if slow else 1.0, metrics={"mfu": 0.21 if slow else 0.41, "train.tokens": 4096.0},
                dialect="hf_trainer"))
    for epoch, step in ((1, 25), (2, 50)):
        out.append(EpochRecord(**common(LLAMA, 0, step * 2 + 0.5, seq=1), epoch=float(epoch), total_epochs=3,
                               step=step, total_steps=75, progress=step / 75, eta_s=(75 - step) * 2.0))
    # bert-finetune attempt 2: halfway.
    for step in range(10, 101, 10):
        out.append(StepRecord(**common(BERT, 0, 400 + step, attempt=2), step=step, total_steps=200, epoch=step / 100,
                              loss=0.9 - step / 1000, throughput=88.0, throughput_unit="samples/s", step_time_s=0.36,
                              dialect="hf_trainer"))
    out.append(EpochRecord(**common(BERT, 0, 501, attempt=2, seq=1), epoch=1.0, total_epochs=2, step=100,
                           total_steps=200, progress=0.5, eta_s=600.0))
    # The failure of llama-train: OOM on rank 3, then the watchdog on ranks 0-2.
    out.append(TraceRecord(**common(LLAMA, 3, 101), exception_type="torch.OutOfMemoryError",
                           message="CUDA out of memory. Tried to allocate 2.00 GiB.", fingerprint="fp-cuda-oom-backward",
                           text=OOM_TEXT, line_count=8,
                           frames=[Frame("/workspace/train.py", 187, "main", "loss.backward()")]))
    out.append(ErrorRecord(**common(LLAMA, 3, 101, seq=1), category="cuda_oom", message="CUDA out of memory",
                           line=OOM_TEXT.splitlines()[-1]))
    for rank in range(3):
        text = NCCL_TEXT.format(rank=rank)
        out.append(TraceRecord(**common(LLAMA, rank, 701 + rank), exception_type="torch.distributed.DistBackendError",
                               message="Watchdog caught collective operation timeout", fingerprint="fp-nccl-watchdog",
                               text=text, line_count=4))
        out.append(ErrorRecord(**common(LLAMA, rank, 701 + rank, seq=1), category="nccl_timeout",
                               message="Watchdog caught collective operation timeout", line=text.splitlines()[-1]))
    # A log line with markup in it: must stay text on every page.
    out.append(ErrorRecord(**common(BERT, 0, 380, attempt=1), category="dataloader_error", message="bad sample",
                           line=SCRIPT_LINE))
    out.append(ErrorRecord(**common(BERT, 0, 381, attempt=1), category="dataloader_error",
                           message="DataLoader worker (pid 4121) is killed by signal: Killed.",
                           line="RuntimeError: DataLoader worker (pid 4121) is killed by signal: Killed."))
    out.append(TraceRecord(**common(BERT, 0, 380, attempt=1, seq=2), exception_type="ValueError",
                           message=SCRIPT_LINE.split(": ", 1)[1], fingerprint="fp-bad-sample",
                           text="Traceback (most recent call last):\n  File \"/app/data.py\", line 9, in __getitem__\n"
                                "    raise ValueError(msg)\n" + SCRIPT_LINE, line_count=4))
    # Kueue's story of bert-finetune (FORMATS.md 2.4): admitted, evicted for PodsReadyTimeout, requeued.
    for i, (reason, kind, name, message) in enumerate((
        ("CreatedWorkload", "Job", "bert-finetune", "Created Workload: team-b/job-bert-finetune-3b1e2"),
        ("QuotaReserved", "Workload", "job-bert-finetune-3b1e2",
         "Quota reserved in ClusterQueue cluster-queue, wait time since queued was 0s"),
        ("Admitted", "Workload", "job-bert-finetune-3b1e2",
         "Admitted by ClusterQueue cluster-queue, wait time since reservation was 0s"),
        ("EvictedDueToPodsReadyTimeout", "Workload", "job-bert-finetune-3b1e2",
         "Exceeded the PodsReady timeout team-b/job-bert-finetune-3b1e2"),
        ("Stopped", "Job", "bert-finetune", "Exceeded the PodsReady timeout team-b/job-bert-finetune-3b1e2"),
        ("BackoffFinished", "Workload", "job-bert-finetune-3b1e2", "The workload backoff was finished"),
        ("Admitted", "Workload", "job-bert-finetune-3b1e2",
         "Admitted by ClusterQueue cluster-queue, wait time since reservation was 0s"),
    )):
        out.append(EventRecord(**{**common(BERT, None, 60 * i, attempt=1 if i < 5 else 2, seq=i), "rank": None,
                                  "pod": None, "container": None, "stream": None},
                               reason=reason, type="Normal", object_kind=kind, object_name=name, message=message))
    out.append(DiagnosisRecord(
        **common(LLAMA, 3, 101, seq=9), outcome="failed", category="cuda_oom", exception_type="torch.OutOfMemoryError",
        first_failure={"pod": "llama-train-worker-3", "rank": 3, "node": "gpu-node-1", "time": ts(101)},
        summary="Rank 3 ran out of GPU memory in loss.backward() at step 50; the NCCL watchdog timeouts on ranks 0-2 "
                "ten minutes later follow from it. Lower the micro-batch size or enable activation checkpointing.",
        evidence=[{"record_id": "t-oom", "kind": "trace", "pod": "llama-train-worker-3", "rank": 3, "time": ts(101),
                   "text": OOM_TEXT}],
        symptoms=[{"category": "nccl_timeout", "ranks": [0, 1, 2], "pods": ["llama-train-worker-0"], "count": 3}],
        confidence=0.92))
    out.append(DiagnosisRecord(
        **common(BERT, None, 240, seq=9), outcome="evicted", category="pods_ready_timeout",
        summary="Kueue evicted attempt 1 after the PodsReady timeout; the data loader failed on a bad sample: "
                + SCRIPT_LINE, evidence=[{"record_id": "e1", "kind": "error", "pod": "bert-finetune-worker-0",
                                          "rank": 0, "time": ts(380), "text": SCRIPT_LINE}], confidence=0.7))
    out.append(DiagnosisRecord(**common("team-c/resnet", 0, 900, seq=9), outcome="succeeded", category="success",
                               summary="Finished all 90 epochs.", confidence=1.0))
    return out


@pytest.fixture
def loaded(opensearch_url, index_prefix):
    """The demo records indexed under this test's prefix; yields the prefix the app must use."""
    prefix = index_prefix + "-"
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(demo_records())
    assert sink.stats.failed == 0
    yield prefix
    indices.delete_all(indices.connect(opensearch_url), prefix)


@pytest.fixture
def api(opensearch_url, loaded):
    client = create_app(opensearch_url, prefix=loaded).test_client()

    def get(panel: str, **params) -> dict:
        answer = client.get(f"/api/{panel}", query_string=params)
        assert answer.status_code == 200, answer.get_data(as_text=True)
        return answer.get_json()["data"]

    return get


# --- the panel queries: the numbers the records imply ---------------------------------------


def test_progress_shows_the_latest_epoch_and_step_of_each_job(api):
    rows = {r["job"]: r for r in api("progress")["jobs"]}
    llama, bert = rows[LLAMA], rows[BERT]
    assert (llama["epoch"], llama["total_epochs"], llama["step"], llama["total_steps"]) == (2, 3, 50, 75)
    assert llama["progress"] == pytest.approx(50 / 75)
    assert llama["eta_s"] == 50.0
    assert (bert["epoch"], bert["total_epochs"], bert["step"], bert["total_steps"], bert["attempt"]) == (1, 2, 100, 200, 2)
    assert bert["last_update"] == ts(501)


def test_progress_lists_the_most_recently_updated_job_first(api):
    assert [r["job"] for r in api("progress")["jobs"]] == [BERT, LLAMA]


def test_the_rank_panel_finds_the_straggler_rank(api):
    assert api("steps", job=LLAMA)["records"] == 200
    data = api("ranks", job=LLAMA)
    assert data["rank_job"] == LLAMA and data["stragglers"] == [3]
    assert data["median_step_time_s"] == pytest.approx(1.0)
    assert {r["rank"]: r["step_time_s"] for r in data["ranks"]} == pytest.approx({0: 1.0, 1: 1.0, 2: 1.0, 3: 1.9})
    assert all(p["slowest_rank"] == 3 and p["spread_s"] == pytest.approx(0.9) for p in data["spread"])


def test_step_metrics_follow_the_loss_of_each_job(api):
    jobs = {j["job"]: j for j in api("steps")["jobs"]}
    assert jobs[LLAMA]["last_step"] == 50
    assert jobs[BERT]["latest_loss"] == pytest.approx(0.8)
    losses = [p["loss"] for p in jobs[LLAMA]["series"]]
    assert losses == sorted(losses, reverse=True)


def test_errors_are_counted_per_category(api):
    data = api("errors")
    assert data["by_category"] == {"nccl_timeout": 3, "dataloader_error": 2, "cuda_oom": 1}
    assert data["total"] == 6
    assert sum(sum(b["counts"].values()) for b in data["over_time"]) == 6


def test_the_latest_error_comes_first(api):
    latest = api("errors")["latest"]
    assert [e["rank"] for e in latest[:3]] == [2, 1, 0]
    assert latest[-1]["category"] == "cuda_oom"


def test_traces_are_grouped_by_fingerprint_with_their_ranks_and_pods(api):
    groups = {g["fingerprint"]: g for g in api("traces")["groups"]}
    assert {f: g["count"] for f, g in groups.items()} == {
        "fp-nccl-watchdog": 3, "fp-cuda-oom-backward": 1, "fp-bad-sample": 1}
    nccl = groups["fp-nccl-watchdog"]
    assert nccl["ranks"] == [0, 1, 2]
    assert nccl["pods"] == ["llama-train-worker-0", "llama-train-worker-1", "llama-train-worker-2"]
    assert nccl["exception_type"] == "torch.distributed.DistBackendError"
    assert nccl["example"]["rank"] == 0  # the first one seen
    assert nccl["first_seen"].startswith("2026-03-02T10:11:41")
    assert nccl["last_seen"].startswith("2026-03-02T10:11:43")


def test_gang_events_put_evictions_with_their_cause_on_the_timeline(api):
    data = api("events")
    assert data["lanes"]["admission"] == 4
    assert data["lanes"]["eviction"] == 2
    assert data["lanes"]["requeue"] == 1
    evicted = [e for e in data["events"] if e["reason"] == "EvictedDueToPodsReadyTimeout"]
    assert evicted[0]["cause"] == "PodsReadyTimeout"
    assert [e["reason"] for e in data["events"]][:3] == ["CreatedWorkload", "QuotaReserved", "Admitted"]


def test_diagnoses_list_failed_attempts_with_their_evidence(api):
    data = api("diagnoses")
    assert {(d["job"], d["category"]) for d in data["diagnoses"]} == {
        (LLAMA, "cuda_oom"), (BERT, "pods_ready_timeout")}
    assert data["outcomes"] == {"failed": 1, "evicted": 1, "succeeded": 1}
    llama = next(d for d in data["diagnoses"] if d["job"] == LLAMA)
    assert llama["first_failure"]["rank"] == 3
    assert "torch.OutOfMemoryError" in llama["evidence"][0]["text"]


def test_the_job_filter_narrows_every_panel(api):
    assert api("errors", job=BERT)["by_category"] == {"dataloader_error": 2}
    assert [g["fingerprint"] for g in api("traces", job=BERT)["groups"]] == ["fp-bad-sample"]
    assert [r["job"] for r in api("progress", job=BERT)["jobs"]] == [BERT]
    assert api("events", job=LLAMA)["events"] == []


def test_the_time_filter_keeps_only_records_in_the_range(api):
    # llama-train's steps run from 10:00:02 to 10:01:40; the first minute holds steps 1-29 of 4 ranks.
    data = api("steps", job=LLAMA, since="2026-03-02T10:00:00", until="2026-03-02T10:00:59.999")
    assert data["records"] == 29 * 4
    assert api("errors", since="2026-03-02T10:10:00Z")["by_category"] == {"nccl_timeout": 3}


def test_a_time_filter_that_is_not_a_time_is_reported_and_ignored(opensearch_url, loaded):
    client = create_app(opensearch_url, prefix=loaded).test_client()
    answer = client.get("/api/errors", query_string={"since": "yesterday; DROP"})
    assert answer.status_code == 200
    body = answer.get_json()
    assert body["problems"] == ["since: not a time (use now-6h or 2026-01-31T12:00), ignored"]
    assert body["data"]["total"] == 6


# --- the app: auth, failure, escaping --------------------------------------------------------


def test_with_a_token_every_page_wants_it(opensearch_url, loaded):
    client = create_app(opensearch_url, prefix=loaded, token="t0ken-123").test_client()
    assert client.get("/").status_code == 401
    assert client.get("/api/errors", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/api/errors", headers={"Authorization": "Bearer t0ken-123"}).status_code == 200
    assert client.get("/healthz").status_code == 200


def test_a_token_in_the_link_is_swapped_for_a_cookie(opensearch_url, loaded):
    client = create_app(opensearch_url, prefix=loaded, token="t0ken-123").test_client()
    first = client.get("/panel/errors?job=x&token=t0ken-123")
    assert first.status_code == 302
    assert first.headers["Location"].endswith("/panel/errors?job=x")
    assert client.get("/panel/errors?job=x").status_code == 200


def test_a_server_that_is_down_shows_one_line_not_a_traceback():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = create_app(f"http://127.0.0.1:{port}").test_client()
    page = client.get("/")
    assert page.status_code == 503
    assert f"OpenSearch at http://127.0.0.1:{port} is not reachable (connection refused)" in page.get_data(as_text=True)
    assert "Traceback" not in page.get_data(as_text=True)
    assert client.get("/api/steps").get_json() == {
        "error": f"OpenSearch at http://127.0.0.1:{port} is not reachable (connection refused)"}


def test_a_cluster_without_gangscope_indices_shows_empty_panels(opensearch_url, index_prefix):
    client = create_app(opensearch_url, prefix=index_prefix + "-").test_client()
    page = client.get("/")
    assert page.status_code == 200
    assert "no epoch or step records" in page.get_data(as_text=True)
    assert client.get("/api/traces").get_json()["data"] == {"groups": [], "total": 0}


def test_log_text_is_escaped_in_the_html(opensearch_url, loaded):
    html = create_app(opensearch_url, prefix=loaded).test_client().get("/").get_data(as_text=True)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#39;gangscope&#39;)&lt;/script&gt;" in html


def test_an_unknown_panel_is_a_404(opensearch_url, loaded):
    client = create_app(opensearch_url, prefix=loaded).test_client()
    assert client.get("/panel/nope").status_code == 404
    assert client.get("/api/nope").status_code == 404


# --- in a real browser -----------------------------------------------------------------------

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@pytest.fixture
def browser():
    """Debian's headless Chromium driven by selenium; skipped, saying why, where it is not installed."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            pytest.skip(f"{path} missing: apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


@pytest.fixture
def served(opensearch_url, loaded):
    """The dashboard on a free loopback port, as `gangscope dashboard` serves it (waitress)."""
    import io

    from gangscope.pipeline.dashboard.server import make_server as production_server

    server = production_server(create_app(opensearch_url, prefix=loaded, refresh_s=0), "127.0.0.1", 0,
                               stream=io.StringIO())
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.effective_port}"
    server.close()
    thread.join(10)


def text_of(driver, css: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, css)]


def full_page_png(driver) -> bytes:
    """The whole page, not just the window."""
    import base64

    width, height = driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    return base64.b64decode(shot["data"])


def test_the_browser_shows_the_numbers_the_records_imply(browser, served):
    browser.get(served + "/")
    assert text_of(browser, f'#panel-progress tr[data-job="{LLAMA}"] td.epoch') == ["2/3"]
    assert text_of(browser, f'#panel-progress tr[data-job="{LLAMA}"] td.step') == ["50/75"]
    assert text_of(browser, f'#panel-progress tr[data-job="{LLAMA}"] .pct') == ["66.7%"]
    assert text_of(browser, '#panel-ranks .stragglers') == ["3"]
    assert text_of(browser, '#panel-errors [data-category="nccl_timeout"] .category-count') == ["3"]
    assert text_of(browser, '#panel-errors [data-category="cuda_oom"] .category-count') == ["1"]
    assert text_of(browser, '#panel-traces tr[data-fingerprint="fp-nccl-watchdog"] td.count') == ["3"]
    assert text_of(browser, '#panel-traces tr[data-fingerprint="fp-nccl-watchdog"] td.ranks') == ["0, 1, 2"]
    assert text_of(browser, '#panel-events [data-lane="eviction"] .lane-count') == ["2"]
    assert len(browser.find_elements("css selector", "#panel-diagnoses article.diagnosis")) == 2
    assert len(browser.find_elements("css selector", "#panel-steps svg polyline")) >= 3
    assert len(browser.find_elements("css selector", "#panel-ranks svg polyline")) == 1  # the spread
    assert len(browser.find_elements("css selector", "#panel-ranks svg rect:not(.plot)")) == 4  # a bar a rank


def test_the_job_picker_filters_the_page(browser, served):
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get(served + "/")
    Select(browser.find_element("id", "job-filter")).select_by_value(BERT)
    browser.find_element("css selector", "form.filters button").click()
    WebDriverWait(browser, 30).until(expected_conditions.url_contains("job=team-b%2Fbert-finetune"))
    assert text_of(browser, "#panel-progress tbody tr td:first-child") == [BERT]
    assert text_of(browser, '#panel-errors .error-total') == ["2"]


def test_a_log_line_with_a_script_tag_stays_text_in_the_browser(browser, served):
    browser.get(served + f"/panel/errors?job={BERT}")
    lines = text_of(browser, "#panel-errors pre.line")
    assert SCRIPT_LINE in lines
    assert browser.execute_script("return document.scripts.length") == 0
    assert browser.execute_script("return document.title") == "gangscope · Pipeline errors"


def test_every_panel_renders_in_chromium_as_a_screenshot(browser, served, tmp_path):
    """GANGSCOPE_SCREENSHOTS=docs keeps them as docs/dashboard-<panel>.png (the README shows those)."""
    from gangscope.pipeline.dashboard.panels import PANELS

    folder = DOCS if os.environ.get("GANGSCOPE_SCREENSHOTS") == "docs" else tmp_path
    for name, panel in PANELS.items():
        browser.get(f"{served}/panel/{name}")
        assert text_of(browser, f"#panel-{name} h2") == [panel.TITLE]
        assert not browser.find_elements("css selector", "#error")
        png = full_page_png(browser)
        assert png.startswith(b"\x89PNG") and len(png) > 10_000
        (folder / f"dashboard-{name}.png").write_bytes(png)


def test_the_dashboard_command_serves_with_waitress_and_logs_no_token(tmp_path):
    """`gangscope dashboard` in one command, on a production WSGI server (not Flask's development
    server): its Server header, one access-log line per request, the token's value masked.
    /healthz needs no OpenSearch, so nothing listens at the URL given."""
    import subprocess
    import sys
    import urllib.request

    token = "tok-3f9a1c"
    env = {**os.environ, "GANGSCOPE_DASHBOARD_TOKEN": token}
    env.pop("GANGSCOPE_OPENSEARCH_URL", None)
    # port 0: the system picks a free one; the dashboard names it once it listens
    proc = subprocess.Popen([sys.executable, "-m", "gangscope", "dashboard", "--opensearch", "http://127.0.0.1:1",
                             "--port", "0"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    try:
        said = proc.stderr.readline()  # the first line, or "" if it died
        listening = re.search(r"dashboard on http://127\.0\.0\.1:(\d+)/", said)
        assert listening, f"the dashboard did not say where it listens: {said!r}"
        response = urllib.request.urlopen(f"http://127.0.0.1:{listening.group(1)}/healthz?token={token}", timeout=30)
        assert response.status == 200 and response.headers["Server"] == "waitress"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "development server" not in err
    assert '"GET /healthz?token=[REDACTED] HTTP/1.1" 200' in err
    assert token not in err


def test_flasks_development_server_is_not_reachable_from_the_code():
    """waitress is the one server: no module of the pipeline can start Werkzeug's (app.serve,
    run_simple, Flask.run and Werkzeug's request handler are gone)."""
    import gangscope.pipeline.dashboard as dashboard_pkg
    from gangscope.pipeline.dashboard import app as app_module
    from gangscope.pipeline.dashboard import server

    assert not hasattr(app_module, "serve") and dashboard_pkg.serve is server.serve
    root = Path(__file__).resolve().parents[1] / "pipeline"
    for path in root.rglob("*.py"):
        source = path.read_text()
        for word in ("run_simple", "werkzeug.serving", "WSGIRequestHandler", ".run(host", "app.run("):
            assert word not in source, (path, word)


@pytest.fixture
def days_apart(opensearch_url, index_prefix):
    """Two jobs logged five days apart: a single-process run with more step records but no rank
    or step time (as most of the bundled dialect fixtures), and a 4-rank run whose rank 2 is slow."""
    prefix = index_prefix + "-apart-"
    records = []
    for n in range(1, 301):
        records.append(StepRecord(id=stable_id("solo", n), job="ml/solo", attempt=1, namespace="ml", pod="solo-0",
                                  time=(T0 - timedelta(days=5) + timedelta(seconds=n)).isoformat().replace("+00:00", "Z"),
                                  step=n * 100, loss=3.0 - n / 200, throughput=1.2e8 + n * 1e5))  # fmt: skip
    for rank in range(4):
        for n in range(1, 41):
            records.append(StepRecord(id=stable_id("gang", rank, n), job="team-z/gang", attempt=1, namespace="team-z",
                                      pod=f"gang-worker-{rank // 2}", rank=rank, time=ts(n * 2),
                                      step=n, loss=2.0 - n / 100, step_time_s=2.0 if rank == 2 else 1.0))  # fmt: skip
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(records)
    yield create_app(opensearch_url, prefix=prefix).test_client()
    indices.delete_all(indices.connect(opensearch_url), prefix)


def test_the_rank_panel_compares_the_ranks_of_the_job_that_has_them(days_apart):
    data = days_apart.get("/api/ranks").get_json()["data"]
    assert data["rank_job"] == "team-z/gang" and data["stragglers"] == [2]
    assert [r["rank"] for r in data["ranks"]] == [0, 1, 2, 3]


def test_the_step_charts_are_on_a_step_axis_with_readable_labels(days_apart):
    from gangscope.pipeline.dashboard.panels import steps

    data = days_apart.get("/api/steps").get_json()["data"]
    series = {j["job"]: j["series"] for j in data["jobs"]}
    assert len(series["ml/solo"]) > 20 and len(series["team-z/gang"]) > 5  # jobs days apart, each a line
    assert max(p["step"] for p in series["ml/solo"]) <= 30000
    charts = {c.title: c for c in steps.view(data)["charts"]}
    for title in ("Loss by step", "Throughput by step"):
        labels = [t.label for t in charts[title].x_ticks + charts[title].y_ticks]
        assert not any("e+" in l or ":" in l for l in labels), labels  # numbers, not times, never 1e+08G
    assert [t.label for t in charts["Loss by step"].x_ticks][:3] == ["0", "10k", "20k"]  # steps 100..30,000
    assert all(t.label.endswith("M") for t in charts["Throughput by step"].y_ticks[1:])
    xs = [t.pos for t in charts["Loss by step"].x_ticks]
    assert min(b - a for a, b in zip(xs, xs[1:])) > 50  # labels far enough apart not to overlap
    html = days_apart.get("/panel/steps").get_data(as_text=True)
    assert "1e+" not in html


def test_axis_numbers_read_as_people_write_them():
    from gangscope.pipeline.dashboard.charts import fmt_num

    assert [fmt_num(v) for v in (1e17, 999_999, 123_456, 12_345, 0.25, 1.23e-4, 2.5e9)] == [
        "100P", "1M", "123k", "12.3k", "0.25", "1.23e-4", "2.5G"]


def test_progress_has_a_status_and_an_eta_only_for_running_attempts(api, browser, served):
    rows = {r["job"]: r for r in api("progress")["jobs"]}
    assert (rows[LLAMA]["status"], rows[LLAMA]["running"]) == ("failed", False)
    browser.get(served + "/panel/progress?refresh=0")
    assert text_of(browser, f'#panel-progress tr[data-job="{LLAMA}"] td.status .status-failed') == ["failed"]
    assert text_of(browser, f'#panel-progress tr[data-job="{LLAMA}"] td.eta') == ["–"]  # crashed: no ETA
    assert text_of(browser, f'#panel-progress tr[data-job="{LLAMA}"] .stopped .pct') == ["66.7%"]
    assert not browser.find_elements("css selector", f'#panel-progress tr[data-job="{LLAMA}"] .bar')


def test_events_are_newest_first_in_attempt_bands(browser, served):
    browser.get(served + "/panel/events?refresh=0")
    bands = browser.find_elements("css selector", "#panel-events tbody.attempt-band")
    assert len(bands) >= 2
    keys = [(b.get_attribute("data-job"), b.get_attribute("data-attempt")) for b in bands]
    assert keys[0] != keys[1]
    times = browser.execute_script(
        "return [...document.querySelectorAll('#panel-events tbody.attempt-band tr[data-lane] td:first-child')]"
        ".map(td => td.textContent.trim())")
    assert times == sorted(times, reverse=True)


def test_every_panel_fits_1366_pixels_with_screenshots(browser, served):
    """Each panel alone in Chromium at 1366 px: no sideways scrolling; screenshots in artifacts/."""
    from gangscope.pipeline.dashboard.panels import PANELS

    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    browser.set_window_size(1366, 900)
    for name in PANELS:
        browser.get(served + f"/panel/{name}?refresh=0")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 1366, name
        browser.save_screenshot(str(artifacts / f"dashboard-{name}-1366.png"))


@pytest.fixture
def many_failures(opensearch_url, index_prefix):
    """30 failed attempts of 30 jobs, each with an error line and a trace of its own."""
    prefix = index_prefix + "-many-"
    records = []
    for n in range(30):
        job = f"team-m/job-{n:02d}"
        records.append(DiagnosisRecord(id=stable_id("d", n), job=job, attempt=1, namespace="team-m", time=ts(n),
                                       outcome="failed", category="python_exception", summary=f"rank 0 raised {n}"))
        records.append(ErrorRecord(id=stable_id("e", n), job=job, attempt=1, namespace="team-m", pod=f"p-{n}", rank=0,
                                   time=ts(n), category="python_exception", line=f"KeyError: {n}",
                                   message=f"KeyError: {n}"))  # fmt: skip
        records.append(TraceRecord(id=stable_id("t", n), job=job, attempt=1, namespace="team-m", pod=f"p-{n}", rank=0,
                                   time=ts(n), exception_type="KeyError", message=str(n), fingerprint=f"fp-{n:02d}",
                                   text=f"Traceback (most recent call last):\nKeyError: {n}"))  # fmt: skip
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(records)
    yield create_app(opensearch_url, prefix=prefix, refresh_s=0).test_client()
    indices.delete_all(indices.connect(opensearch_url), prefix)


def test_the_page_of_every_panel_lists_the_first_rows_and_links_to_the_rest(many_failures):
    import re

    index = many_failures.get("/").get_data(as_text=True)
    assert index.count('<article class="diagnosis"') == 10
    assert index.count('<tr data-fingerprint=') == 10
    assert re.search(r'<a href="/panel/diagnoses\?[^"]*">all 30 diagnoses', index)
    assert re.search(r'<a href="/panel/traces\?[^"]*">all 30 trace groups', index)
    own = many_failures.get("/panel/diagnoses").get_data(as_text=True)
    assert own.count('<article class="diagnosis"') == 30 and 'class="more"' not in own


@pytest.fixture
def paused(opensearch_url, index_prefix):
    """4 ranks: rank 3 1.9x slower at every step (a straggler), rank 1 once 40 s at step 10 (one
    pause of all, the others waited in their collective: a stall, not a slow rank); the pipeline's
    signals for both, as fixtures/runs/straggler gives them."""
    from gangscope.parsers.records import SignalRecord

    prefix = index_prefix + "-paused-"
    records = []
    for rank in range(4):
        for n in range(1, 21):
            took = 1.9 if rank == 3 else (40.0 if (rank, n) == (1, 10) else 1.0)
            records.append(StepRecord(**common("team-p/paused", rank, n * 2 + (40 if n > 10 else 0)), step=n,
                                      loss=2.0 - n / 100, step_time_s=took))
    records.append(SignalRecord(**common("team-p/paused", 3, 2, seq=1), signal="straggler", step=1, value=1.9,
                                baseline=1.0, message="rank 3 was slower than its peers at 20 of 20 steps"))
    records.append(SignalRecord(**common("team-p/paused", 1, 20, seq=1), signal="stall", step=10, value=40.0,
                                baseline=2.0, message="no new step for 40.0 s after step 10 before step 11"))
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(records)
    yield prefix
    indices.delete_all(indices.connect(opensearch_url), prefix)


def test_a_rank_that_paused_once_is_no_straggler_but_the_slow_one_is(opensearch_url, paused):
    data = create_app(opensearch_url, prefix=paused).test_client().get("/api/ranks").get_json()["data"]
    assert data["stragglers"] == [3]  # by each rank's median step time: rank 1's mean is 2.95 s
    assert {r["rank"]: r["step_time_s"] for r in data["ranks"]} == pytest.approx({0: 1.0, 1: 1.0, 2: 1.0, 3: 1.9})
    signals = data["signals"]
    assert signals["by_kind"] == {"straggler": 1, "stall": 1}
    assert [(s["signal"], s["rank"]) for s in signals["latest"]] == [("stall", 1), ("straggler", 3)]  # newest first


def test_the_rank_panel_lists_the_pipelines_stragglers_and_stalls_in_the_browser(browser, opensearch_url, paused):
    import io

    from gangscope.pipeline.dashboard.server import make_server as production_server

    server = production_server(create_app(opensearch_url, prefix=paused, refresh_s=0), "127.0.0.1", 0,
                               stream=io.StringIO())
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        browser.set_window_size(1366, 900)
        browser.get(f"http://127.0.0.1:{server.effective_port}/panel/ranks")
        assert text_of(browser, '#panel-ranks tr[data-signal="straggler"] td.rank') == ["3"]
        assert text_of(browser, '#panel-ranks tr[data-signal="stall"] td.rank') == ["1"]
        assert text_of(browser, '#panel-ranks [data-signal="straggler"] .signal-count') == ["1"]
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 1366
        (ROOT / "artifacts").mkdir(exist_ok=True)
        (ROOT / "artifacts" / "dashboard-ranks-signals.png").write_bytes(full_page_png(browser))
    finally:
        server.close()
        thread.join(10)


def test_time_ticks_never_overlap_whatever_the_span():
    from gangscope.pipeline.dashboard import charts

    day = 86_400_000
    start = 1_772_064_000_000  # 2026-02-26: nine months of errors, in weekly buckets (the bundled fixtures)
    for span_days, width in ((270, 1240), (270, 640), (1.9, 640), (0.01, 640), (800, 640)):
        buckets = [(start + i * span_days * day / 40, {"nccl_error": 1 + i % 3}) for i in range(41)]
        chart = charts.stacked_bars("errors", buckets, span_days * day / 40, width=width)
        ticks = chart.x_ticks
        assert 2 <= len(ticks) <= 8, (span_days, [t.label for t in ticks])
        for a, b in zip(ticks, ticks[1:]):  # each label's width, 10 px type, apart
            assert b.pos - a.pos >= len(a.label) * 6, (span_days, width, a.label, b.label)


def test_a_long_logged_line_is_cut_to_three_lines_with_the_whole_behind_details():
    from gangscope.pipeline.dashboard.panels import errors

    box = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n" + "=" * 60 + "\n" + "x\n" * 50
    long = "RuntimeError: " + "y" * 1000
    data = {"total": 2, "interval_ms": 1000, "by_category": {}, "over_time": [],
            "latest": [{"line": box, "category": "python_exception"}, {"line": long, "category": "nccl_error"}]}
    for e in data["latest"]:
        e.update(time="2026-11-30T04:51:27.705Z", job="team-a/rank-raises", pod="rank-raises-worker-0", rank=None, message="")
    shown = errors.view(data)["latest"]
    assert shown[0]["short"]["text"].count("\n") == 2 and shown[0]["short"]["cut"] and shown[0]["short"]["lines"] == 52
    assert len(shown[1]["short"]["text"]) == 241 and shown[1]["short"]["cut"]
    from gangscope.pipeline.dashboard.app import environment

    html = environment().get_template("errors.html.j2").render(data=errors.view(data), limit=None, more_href="")
    assert html.count("<details>") == 2 and box.strip().splitlines()[-1] in html  # the whole is still on the page


# Markup in every free-text field a panel shows (as a log line, a Kubernetes event message or a
# file stem can carry it), with a run of 1,500 characters no browser can wrap at a space.
MARKUP = '<img src=x onerror="window.pwned=1"><b class="injected">bold'  # no "/": a job name carries it too
UNBROKEN = "A" * 1500


@pytest.fixture
def hostile(opensearch_url, index_prefix):
    """One job whose every logged text is markup and a long unbroken run: steps of 4 ranks (rank 3
    slow), an epoch, an error, a trace, a gang event, a straggler signal and a diagnosis."""
    from gangscope.parsers.records import SignalRecord

    prefix = index_prefix + "-hostile-"
    job = f"team-h/{MARKUP}"
    marked = f"{MARKUP}</b><script>window.pwned=2</script> {UNBROKEN}"
    records: list = []
    for rank in range(4):
        for n in range(1, 11):
            records.append(StepRecord(**common(job, rank, n * 2), step=n, total_steps=20, loss=2.0 - n / 100,
                                      step_time_s=1.9 if rank == 3 else 1.0, dialect=MARKUP))
    records += [
        EpochRecord(**common(job, 0, 21, seq=1), epoch=1.0, total_epochs=2, step=10, total_steps=20, progress=0.5),
        ErrorRecord(**common(job, 3, 22, seq=1), category="python_exception", message=marked, line=marked),
        TraceRecord(**common(job, 3, 22, seq=2), exception_type=f"bad.{MARKUP}", message=marked,
                    fingerprint="fp-hostile", text=f"Traceback (most recent call last):\n  {UNBROKEN}\n{marked}",
                    line_count=3),
        EventRecord(**{**common(job, None, 1, seq=3), "rank": None, "pod": None}, reason="EvictedDueToPodsReadyTimeout",
                    type="Warning", object_kind="Workload", object_name=MARKUP, message=marked),
        SignalRecord(**common(job, 3, 20, seq=4), signal="straggler", step=1, value=1.9, baseline=1.0, message=marked),
        DiagnosisRecord(**common(job, 3, 22, seq=9), outcome="failed", category="python_exception",
                        exception_type=f"bad.{MARKUP}", summary=marked,
                        evidence=[{"record_id": "x", "kind": "error", "pod": "p", "rank": 3, "time": ts(22),
                                   "text": marked}],
                        symptoms=[{"category": "nccl_timeout", "ranks": [0], "pods": [MARKUP], "count": 1}]),
    ]
    with OpenSearchSink(opensearch_url, prefix=prefix, refresh=True) as sink:
        sink.write(records)
    assert sink.stats.failed == 0
    yield prefix
    indices.delete_all(indices.connect(opensearch_url), prefix)


def test_each_panel_shows_logged_markup_as_text_and_still_fits_1366_pixels(browser, opensearch_url, hostile):
    """Each panel alone in Chromium: it lists the job's data, the markup of its logged text is on
    the screen as characters (nothing it would make: no image, no bold, no script ran), and a
    1,500-character run without a space does not push the page wider than a 1366 px screen."""
    import io

    from gangscope.pipeline.dashboard.panels import PANELS
    from gangscope.pipeline.dashboard.server import make_server as production_server

    server = production_server(create_app(opensearch_url, prefix=hostile, refresh_s=0), "127.0.0.1", 0,
                               stream=io.StringIO())
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wrong: dict[str, list[str]] = {}
    try:
        browser.set_window_size(1366, 900)
        (ROOT / "artifacts").mkdir(exist_ok=True)
        for panel in PANELS:
            browser.get(f"http://127.0.0.1:{server.effective_port}/panel/{panel}?refresh=0")
            root = f"#panel-{panel}"
            shown = browser.execute_script(f"return document.querySelector('{root}').textContent") or ""
            checks = {
                "an error instead of the panel": not browser.find_elements("css selector", "#error"),
                "the markup is not shown as text": MARKUP in shown,  # the job's name (progress) or a logged text
                # whole or cut; progress and the step lines show the job's name, no logged text
                "the logged text is not shown": panel in ("progress", "steps") or "A" * 200 in shown,
                "a script ran": browser.execute_script("return window.pwned === undefined"),
                "the markup made elements": not browser.find_elements("css selector", f"{root} img, {root} b.injected"),
                "a script element": browser.execute_script("return document.scripts.length") == 0,
                "wider than 1366 px": browser.execute_script("return document.documentElement.scrollWidth") <= 1366,
            }
            wrong[panel] = [what for what, fine in checks.items() if not fine]
            browser.save_screenshot(str(ROOT / "artifacts" / f"dashboard-{panel}-markup-1366.png"))
        browser.get(f"http://127.0.0.1:{server.effective_port}/?refresh=0")  # the page of all panels
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 1366
        assert browser.execute_script("return window.pwned === undefined")
    finally:
        server.close()
        thread.join(10)
    assert set(wrong) == {"progress", "steps", "ranks", "errors", "traces", "events", "diagnoses"}  # every panel was seen
    assert {panel: found for panel, found in wrong.items() if found} == {}


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "dashboard.example.org"])
def test_listening_beyond_loopback_without_a_token_is_refused(host, monkeypatch, capsys):
    """Anyone who reaches the port would read the logs: no token, no serving (exit 2, said once,
    before any socket is bound); on loopback a token stays optional."""
    from gangscope.pipeline.run.cli import main
    from gangscope.pipeline.run.opensearch_cli import loopback

    for name in ("GANGSCOPE_DASHBOARD_TOKEN", "GANGSCOPE_DASHBOARD_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    assert main(["dashboard", "--opensearch", "http://127.0.0.1:9", "--host", host, "--port", "0"]) == 2
    said = capsys.readouterr().err
    assert said.count("gangscope:") == 1 and f"--host {host}" in said and "needs a token" in said
    assert not loopback(host)
    assert all(loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"))


@pytest.mark.parametrize("proxy, forwarded, secure", [
    ("127.0.0.1", "https", True),  # TLS ended by the proxy in front: the cookie never goes out in clear
    ("127.0.0.1", None, False),  # plain http to the dashboard itself
    (None, "https", False),  # a header from a client nobody said to trust changes nothing
    ("10.9.9.9", "https", False),  # nor one from another address than the proxy's
])
def test_the_token_cookie_is_secure_behind_https(proxy, forwarded, secure):
    """The `?token=` login's cookie, as waitress serves it: Secure exactly when the request came over
    https (X-Forwarded-Proto of the --trusted-proxy); HttpOnly and SameSite=Strict always."""
    import io
    import urllib.error
    import urllib.request

    from gangscope.pipeline.dashboard.server import make_server as production_server

    token = "tok-8c1e55"
    server = production_server(create_app("http://127.0.0.1:9", token=token), "127.0.0.1", 0, stream=io.StringIO(),
                               trusted_proxy=proxy)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    try:
        request = urllib.request.Request(f"http://127.0.0.1:{server.effective_port}/panel/errors?token={token}",
                                         headers={"X-Forwarded-Proto": forwarded} if forwarded else {})
        try:
            urllib.request.build_opener(NoRedirect).open(request, timeout=30)
            raise AssertionError("the login did not redirect")
        except urllib.error.HTTPError as answer:
            assert answer.code == 302
            cookie = answer.headers["Set-Cookie"]
    finally:
        server.task_dispatcher.shutdown(cancel_pending=False, timeout=10)  # its worker done before the socket goes
        server.close()
        thread.join(10)
    attributes = {a.strip().split("=")[0].lower() for a in cookie.split(";")[1:]}
    assert cookie.startswith("gangscope_token=") and {"httponly", "samesite"} <= attributes
    assert ("secure" in attributes) == secure


def test_a_jobs_lines_are_its_lowest_ranks_and_the_ranks_are_compared_beside_them(api):
    """The loss, throughput and step-time lines read one rank's steps (rank 0's, as its log shows
    them), not all 32 ranks' of a gang: rank 3's 1.9 s steps show in the rank charts, not in the line."""
    data = api("steps")
    assert set(data) == {"records", "jobs"}  # which rank is slow is the rank panel's question
    llama = next(j for j in data["jobs"] if j["job"] == LLAMA)
    assert llama["line_rank"] == 0 and llama["records"] == 200 and llama["last_step"] == 50
    assert {p["step_time_s"] for p in llama["series"]} == {1.0}  # all ranks' mean would be 1.225
    assert llama["series"][0]["loss"] == pytest.approx(2.5 - 0.02 * 1)
    data = api("ranks")
    assert data["rank_job"] == LLAMA and data["stragglers"] == [3]
    assert all(p["slowest_rank"] == 3 and p["spread_s"] == pytest.approx(0.9) for p in data["spread"])


def test_the_rank_spread_stays_under_opensearchs_bucket_limit_for_a_large_gang():
    from gangscope.pipeline.dashboard.panels import ranks as steps

    for ranks, max_step in ((4, 50), (32, 703), (1024, 30_000), (4096, 500_000), (20_000, 100)):
        job = {"key": "j", "max_step": {"value": float(max_step)}, "min_rank": {"value": 0.0},
               "max_rank": {"value": float(ranks - 1)}}
        width = steps._spread_interval(job)
        assert ranks * (max_step // width + 1) <= 65_535, (ranks, max_step, width)
    assert steps._spread_interval({"key": "j", "max_step": {"value": 50.0}, "min_rank": {"value": 0.0},
                                   "max_rank": {"value": 3.0}}) == 1  # a small gang: a bucket a step
