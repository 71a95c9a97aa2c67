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
