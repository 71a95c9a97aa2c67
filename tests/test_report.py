"""report.html: renders offline, shows the diagnosis, and shows log text as text."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
import subprocess

import pytest

from gangscope.parsers.records import ErrorRecord, StepRecord, TraceRecord, to_dict
from gangscope.pipeline.diagnose.attempt import diagnose
from gangscope.pipeline.report.render import render_report

JOB = "team-a/web"
HOSTILE = '<script>alert("x")</script> KeyError: \'<b>col</b>\''


def records():
    trace = TraceRecord(id="t1", job=JOB, attempt=1, namespace="team-a", pod="web-worker-0", rank=1,
                        time="2026-11-30T04:10:00Z", exception_type="KeyError", message="'<b>col</b>'",
                        fingerprint="f" * 24, text="Traceback (most recent call last):\n" + HOSTILE)  # fmt: skip
    error = ErrorRecord(id="e1", job=JOB, attempt=1, namespace="team-a", pod="web-worker-0", rank=1,
                        time="2026-11-30T04:10:00Z", category="python_exception", line=HOSTILE,
                        message="KeyError: '<b>col</b>'", pattern="trace", trace_id="t1")  # fmt: skip
    steps = [StepRecord(id=f"s{n}", job=JOB, attempt=1, namespace="team-a", pod="web-worker-0", rank=0,
                        time=f"2026-11-30T04:0{n}:00Z", step=n, loss=2.0 - n / 10, step_time_s=0.5 + n / 100)
             for n in range(1, 6)]  # fmt: skip
    return [trace, error, *steps]


def test_report_shows_the_diagnosis_and_charts():
    recs = records()
    html = render_report(recs, diagnose(recs))
    assert "team-a/web" in html
    assert "python_exception" in html and "rank 1" in html
    assert html.count("<polyline") == 2  # loss and step time


def test_log_text_is_escaped():
    recs = records()
    html = render_report(recs, diagnose(recs))
    assert "<script>" not in html
    assert "&lt;script&gt;alert(" in html
    assert "<b>col</b>" not in html


def test_report_is_self_contained():
    recs = records()
    html = render_report(recs, diagnose(recs))
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html and "<link" not in html and "<script" not in html


def test_report_renders_from_decoded_json():
    recs = records()
    assert render_report([to_dict(r) for r in recs], [to_dict(d) for d in diagnose(recs)]) == render_report(
        recs, diagnose(recs)
    )


def test_report_of_nothing_renders():
    assert "0 jobs" in render_report([], [])


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt-get install -y chromium) for the browser check")
def test_browser_renders_the_report_with_the_script_line_as_text(tmp_path):
    recs = records()
    path = tmp_path / "report.html"
    path.write_text(render_report(recs, diagnose(recs)), encoding="utf-8")
    run = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    dom = run.stdout
    assert "rank 1 in pod web-worker-0 raised" in dom
    # The DOM (as parsed by the browser) holds the log line as text, not as an element.
    assert "&lt;script&gt;alert" in dom
    assert "<script>" not in dom


def test_gang_timeline_shows_the_failure_diagnosed_from_the_logs(tmp_path):
    """Scenario c: the gang never became ready because a pod's rendezvous timed out; the
    timeline draws that log-derived failure beside Kueue's events."""
    from gangscope.pipeline.run.cli import main

    root = Path(__file__).resolve().parents[1] / "fixtures" / "gang" / "c_rendezvous_timeout"
    out = tmp_path / "out"
    main(["replay", str(root / "pods"), "--events", str(root / "events.ndjson"), "--out", str(out), "--no-progress"])
    html = (out / "report.html").read_text()
    timeline = html[html.index("Failures on the timeline"):]
    timeline = timeline[: timeline.index("</details>")]
    from_logs = [row for row in re.findall(r"<tr><td>.*?</tr>", timeline, re.S) if row.endswith("<td>logs</td></tr>")]
    assert len(from_logs) == 1
    assert "gpt-neox-node-0-0-bz7m5" in from_logs[0] and "pods_ready_timeout" in from_logs[0]


def test_jobs_whose_latest_attempt_failed_come_first():
    from gangscope.parsers.records import DiagnosisRecord

    diagnoses = [
        DiagnosisRecord(job="team-a/aaa-fine", attempt=1, outcome="succeeded", category="success", summary="ok"),
        DiagnosisRecord(job="team-a/zzz-broken", attempt=1, outcome="failed", category="cuda_oom", summary="oom"),
        DiagnosisRecord(job="team-a/mmm-recovered", attempt=1, outcome="failed", category="cuda_oom", summary="oom"),
        DiagnosisRecord(job="team-a/mmm-recovered", attempt=2, outcome="succeeded", category="success", summary="ok"),
    ]
    html = render_report([], diagnoses)
    order = sorted(("team-a/aaa-fine", "team-a/zzz-broken", "team-a/mmm-recovered"), key=html.index)
    assert order == ["team-a/zzz-broken", "team-a/aaa-fine", "team-a/mmm-recovered"]


# --- a report that answers at a glance (issue 21) --------------------------------------------

import json
import os

from gangscope.parsers.records import DiagnosisRecord, EpochRecord

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"  # git-ignored: screenshots a person looks at


def overview_rows(html: str) -> list[str]:
    table = html[html.index('<table class="overview"'):]
    return re.findall(r"<tr class=.*?</tr>", table[: table.index("</table>")], re.S)


def test_the_overview_comes_first_with_one_row_per_attempt_linking_down():
    recs = records()
    diagnoses = [*diagnose(recs), DiagnosisRecord(job="team-b/ok", attempt=1, outcome="succeeded", category="success",
                                                  summary="finished cleanly")]
    html = render_report(recs, diagnoses)
    assert html.index('class="overview"') < html.index("<section")
    rows = overview_rows(html)
    assert len(rows) == 2
    failed = rows[0]
    assert 'data-job="team-a/web"' in failed and ">failed<" in failed and "python_exception" in failed
    assert "rank 1 · web-worker-0" in failed
    anchor = re.search(r'href="#(job-\d+-attempt-1)"', failed).group(1)
    assert f'id="{anchor}"' in html  # the link goes down to the attempt's diagnosis
    assert "9 m 00 s" in failed  # its records span 04:01 (the first step) to 04:10 (the trace)
    assert re.search(r'class="num gpu-h">.*?\d', failed, re.S)  # a failed attempt's estimated GPU-hours


def test_the_overview_takes_duration_and_gpu_hours_from_the_gang_timeline():
    recs = records()
    timeline = {"job": JOB, "attempts": [{"number": 1, "start": "2026-11-30T04:00:00Z", "end": "2026-11-30T05:30:00Z",
                                          "accelerator_s_lost": 16 * 5400.0, "x0": 0, "x1": 1, "end_reason": "Failed",
                                          "label": "Failed", "pods_ready": 2, "pods_expected": 2, "queued_x0": None, "pending": False}],
                "marks": [], "failures": [], "ticks": [], "start": "2026-11-30T04:00:00Z", "end": "2026-11-30T05:30:00Z",
                "span_s": 5400, "accelerator_s_lost": 16 * 5400.0}  # fmt: skip
    (row,) = overview_rows(render_report(recs, diagnose(recs), timelines={JOB: timeline}))
    assert "1 h 30 m" in row and ">24.00<" in row and "≈" not in row


def test_evidence_is_capped_and_the_rest_is_behind_details():
    long_line = "missing keys: " + ", ".join(f"'layer.{i}.weight'" for i in range(3000))
    evidence = [{"record_id": f"e{i}", "kind": "error", "pod": "p", "rank": 0, "time": None,
                 "text": "\n".join(f"line {i}.{n}" for n in range(40)) if i else long_line} for i in range(6)]
    d = DiagnosisRecord(job=JOB, attempt=1, outcome="failed", category="checkpoint_error", summary="s", evidence=evidence)
    html = render_report([], [d])
    shown = html[: html.index('<details class="evidence-more"')]
    assert shown.count('<div class="evidence">') == 3
    assert "3 more pieces of evidence" in html
    assert "layer.2999.weight" not in shown[: shown.index('<details class="evidence-rest"')]
    assert "layer.2999.weight" in html  # nothing is lost, it is folded
    assert "line 1.7" in shown and "32 more lines" in shown and "line 1.39" in html


def test_progress_and_eta_only_for_running_attempts_a_crash_shows_where_it_stopped():
    def epoch(attempt, progress, eta):
        return EpochRecord(id=f"p{attempt}", job=JOB, attempt=attempt, namespace="team-a", pod="web-worker-0", rank=0,
                           time="2026-11-30T04:05:00Z", epoch=1, total_epochs=2, step=30, total_steps=100,
                           progress=progress, eta_s=eta)  # fmt: skip
    diagnoses = [DiagnosisRecord(job=JOB, attempt=1, outcome="failed", category="cuda_oom", summary="oom"),
                 DiagnosisRecord(job=JOB, attempt=2, outcome="running", category="running", summary="going")]
    html = render_report([epoch(1, 0.3, 4000.0), epoch(2, 0.3, 4000.0)], diagnoses)
    crashed, running = re.findall(r'<tr class="progress.*?</tr>', html, re.S)
    assert 'class="stopped"' in crashed and "stopped at 30.0%" in crashed
    assert 'class="bar"' not in crashed and "1 h 06 m" not in crashed  # no bar, no ETA
    assert 'class="bar"' in running and "1 h 06 m" in running


def test_chart_axes_have_round_readable_ticks_on_a_step_axis():
    from gangscope.pipeline.report.render import format_number, line_chart

    steps = [StepRecord(id=f"s{n}", job=JOB, attempt=1, rank=0, time=f"2026-11-30T04:00:{n % 60:02d}Z", step=n * 1000,
                        loss=9.5 - n / 20, throughput=1.1e8 + n * 1e6) for n in range(1, 60)]  # fmt: skip
    chart = line_chart(steps, "throughput", "throughput", unit="tokens/s")
    texts = [t["text"] for t in chart["x_ticks"] + chart["y_ticks"]]
    assert chart["x_label"] == "step"
    assert all("e+" not in t and not re.search(r"\d[kMGT][kMGT]", t) for t in texts), texts
    assert [t["text"] for t in chart["x_ticks"]] == ["0", "20k", "40k", "60k"]  # steps 1k..59k
    assert all(t.endswith("M") for t in (x["text"] for x in chart["y_ticks"]))
    xs = [t["at"] for t in chart["x_ticks"]]
    assert min(b - a for a, b in zip(xs, xs[1:])) > 40  # labels 40+ px apart: no overlap
    assert format_number(1e8) == "100M" and format_number(0.25, 0.05) == "0.25" and format_number(3e-5) == "3e-5"


def _headless_chromium(driver_path: str):
    """The system's Chromium, headless, in a 1366x900 window (the caller has checked selenium is there)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--window-size=1366,900"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver_path), options=options)


def test_the_demo_report_in_chromium_at_1366_pixels(tmp_path):
    """The README's demo, in headless Chromium at 1366 px: the overview on the first screen,
    no sideways scrolling, no attempt taller than a screen and a half; screenshots in artifacts/."""
    pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

    driver_path = shutil.which("chromedriver")
    if CHROMIUM is None or driver_path is None:
        pytest.skip("needs chromium and chromium-driver (apt-get install -y chromium chromium-driver)")
    from gangscope.pipeline.run.cli import main

    gang = sorted((ROOT / "fixtures" / "gang").glob("[a-g]_*"))
    events = [str(p) for g in gang for p in sorted(g.glob("*.json*")) if p.name != "manifest.json"]
    out = tmp_path / "out"
    main(["replay", str(ROOT / "fixtures" / "runs"), str(ROOT / "fixtures" / "public"),
          *[str(g / "pods") for g in gang if (g / "pods").exists()], "--events", *events, "--out", str(out), "--no-progress"])
    browser = _headless_chromium(driver_path)
    try:
        browser.get((out / "report.html").as_uri())
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "report-1366-overview.png"))
        js = browser.execute_script
        assert js("return document.documentElement.scrollWidth") <= 1366
        overview = browser.find_element("css selector", "table.overview")
        assert overview.location["y"] < 200
        attempts = len((out / "diagnosis.ndjson").read_text().splitlines())
        assert len(browser.find_elements("css selector", "table.overview tr[data-job]")) == attempts
        # the overview is the page: every job below it folded (74,473 px before, all unfolded: ~800 px an
        # attempt); folded, an attempt costs its overview row and its folded line (~80 px: 8,336 px for 106)
        assert js("return document.documentElement.scrollHeight") < 1500 + 100 * attempts
        assert js("return [...document.querySelectorAll('details.job')].filter(d => d.open).length") == 0
        assert len(browser.find_elements("css selector", "details.job")) == len(set(
            json.loads(l)["job"] for l in (out / "diagnosis.ndjson").read_text().splitlines()))
        first = browser.find_element("css selector", "table.overview tr.failed a[href*='attempt']")
        target = first.get_attribute("href").split("#")[1]
        first.click()  # the link unfolds its job (the browser opens a <details> around a fragment's target)
        assert abs(js(f"return document.getElementById('{target}').getBoundingClientRect().top")) < 5
        assert js(f"return document.getElementById('{target}').closest('details.job').open")
        browser.save_screenshot(str(ARTIFACTS / "report-1366-attempt.png"))
        js("const c = document.querySelector('.charts');"
           "for (let d = c.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;"
           "c.scrollIntoView()")
        browser.save_screenshot(str(ARTIFACTS / "report-1366-charts.png"))
        for label in js("return [...document.querySelectorAll('svg text.x-tick, svg text.y-tick')].map(t => t.textContent)"):
            assert "e+" not in label, label
        js("document.querySelectorAll('details.job').forEach(d => d.open = true)")
        assert js("return Math.max(...[...document.querySelectorAll('.diagnosis')].map(d => d.offsetHeight))") < 1350
    finally:
        browser.quit()


def test_stalls_and_stragglers_are_listed_under_training_progress():
    from gangscope.parsers.records import SignalRecord

    stall = SignalRecord(id="g1", job=JOB, attempt=1, namespace="team-a", pod="web-worker-0", rank=1,
                         time="2026-11-30T04:20:00Z", signal="stall", step=5, value=650.0, baseline=30.0,
                         message="no new step for 650.0 s after step 5 until the end of the log <b>")  # fmt: skip
    html = render_report([*records(), stall], diagnose(records()))
    progress = html[html.index("Training progress"):]
    row = re.search(r'<tr data-signal="stall">.*?</tr>', progress, re.S).group(0)
    assert "no new step for 650.0 s after step 5" in row and "web-worker-0" in row and "&lt;b&gt;" in row


def test_the_overview_says_an_attempt_had_a_straggler_and_a_stall(tmp_path):
    """fixtures/runs/straggler succeeded, slowly: the overview says so beside 'success', since its
    job is folded below."""
    from gangscope.pipeline.run.cli import main

    out = tmp_path / "out"
    assert main(["replay", str(ROOT / "fixtures" / "runs" / "straggler"), "--out", str(out), "--no-progress"]) == 0
    html = (out / "report.html").read_text()
    row = re.search(r'<tr class="succeeded" data-job="team-a/straggler".*?</tr>', html, re.S).group(0)
    assert "straggler rank 3 · stall of 4 ranks" in row


def test_a_logged_text_without_spaces_does_not_widen_the_report_at_1366_pixels(tmp_path):
    """A failure whose message is a 3,000-character path (an object-store key, a hash, base64), a
    traceback frame as long and a job named with 250 characters: every <details> opened in Chromium at 1366 px, the page still has no
    sideways scrolling (the summary under the attempt was 1,494 px wide)."""
    pytest.importorskip("selenium.webdriver", reason="selenium is not installed")

    driver_path = shutil.which("chromedriver")
    if CHROMIUM is None or driver_path is None:
        pytest.skip("needs chromium and chromium-driver (apt-get install -y chromium chromium-driver)")
    from gangscope.pipeline.run.cli import main

    key = "Z" * 3000
    log = tmp_path / "longjob.log"
    # a job named as long as Kubernetes lets a pod be named (the overview's job column never wrapped: a 42-character
    # name already made the demo 1,373 px wide)
    long_name = "-".join(["llama3-70b-context-extension-sweep-lr3e-5-warmup2000-seed17"] * 3) + "-" + "x" * 70
    (tmp_path / f"{long_name}.log").write_text("step 1 loss 2.3\nValueError: bad batch\n")
    log.write_text("\n".join([
        "step 1 loss 2.3", "step 2 loss 2.2", "Traceback (most recent call last):",
        f'  File "/workspace/{key[:400]}/train.py", line 10, in <module>', "    main()",
        f"RuntimeError: storage failed for s3://bucket/{key}",
        f"ERROR: No space left on device /fsx/{key}"]) + "\n")
    out = tmp_path / "out"
    main(["replay", str(log), str(tmp_path / f"{long_name}.log"), "--out", str(out), "--no-progress"])
    assert key in (out / "report.html").read_text() and long_name in (out / "report.html").read_text()
    browser = _headless_chromium(driver_path)
    try:
        browser.set_window_size(1366, 900)
        browser.get((out / "report.html").as_uri())
        browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
        summaries = [e.text for e in browser.find_elements("css selector", ".summary")]
        assert any("RuntimeError: storage failed for s3://bucket/ZZZZ" in text for text in summaries), summaries
        assert browser.execute_script("return document.documentElement.scrollWidth") <= 1366
    finally:
        browser.quit()
