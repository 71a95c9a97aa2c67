"""report.html is written to its file as the template renders (pipeline/report/render.write_report),
never held whole, and its job sections wait on disk between being built and being rendered
(pipeline/report/section_spool.py): the file holds exactly the page `render_report` returns, a
section that fails while the page is being written included (the file starts again, that job
shown with its error), and each section is what `build_jobs` makes of its job."""

from __future__ import annotations

from gangscope.parsers.records import DiagnosisRecord
from gangscope.pipeline.isolation import StageFailures
from gangscope.pipeline.report import render

DIAGNOSES = [
    DiagnosisRecord(job="team-a/broken", attempt=1, outcome="failed", category="cuda_oom", summary="oom"),
    DiagnosisRecord(job="team-a/fine", attempt=1, outcome="succeeded", category="success", summary="ok"),
    DiagnosisRecord(job="team-b/late", attempt=1, outcome="failed", category="nccl_timeout", summary="timeout"),
]


def test_the_written_file_is_the_rendered_page(tmp_path):
    path = tmp_path / "report.html"
    with open(path, "w", encoding="utf-8") as out:
        render.write_report(out, [], DIAGNOSES)
    page = path.read_text(encoding="utf-8")
    assert page == render.render_report([], DIAGNOSES)
    assert page.count("<html") == 1 and "team-b/late" in page


class _Unrenderable:
    """A view-model value the template fails on while the page is half written."""

    def __iter__(self):
        raise RuntimeError("injected")


def test_a_section_failing_mid_page_starts_the_file_again_with_that_job_shown_failed(tmp_path, monkeypatch):
    real = render._job_section

    def job_section(name, *args):
        section = real(name, *args)
        if name == "team-b/late":  # the last section: the page above it is already written
            section["errors"] = _Unrenderable()
        return section

    monkeypatch.setattr(render, "_job_section", job_section)
    path, failures = tmp_path / "report.html", StageFailures()
    with open(path, "w", encoding="utf-8") as out:
        out.write("")  # the file as the sink hands it: empty, positioned at its start
        render.write_report(out, [], DIAGNOSES, failures=failures)
    page = path.read_text(encoding="utf-8")
    assert page == render.render_report([], DIAGNOSES, failures=StageFailures())
    assert page.count("<html") == 1 and page.count("</html>") == 1
    assert "gangscope could not show this job: RuntimeError" in page
    (failure,) = failures.summary()
    assert failure["stage"] == "report" and failure["examples"][0]["job"] == "team-b/late"


def test_the_spooled_sections_are_the_built_ones_in_order():
    from gangscope.pipeline.report.section_spool import SpooledSections

    built = render.build_jobs([], DIAGNOSES)
    spooled = SpooledSections(render.job_sections([], DIAGNOSES))
    try:
        assert len(spooled) == len(built) == 3
        assert list(spooled) == built and [spooled[i] for i in (2, 0, 1)] == [built[2], built[0], built[1]]
        assert render.overview(spooled.overview_parts) == render.overview(built)
        assert render.overview(spooled.overview_parts) == render.overview(built)  # read back again
        spooled[1] = render.failed_section(built[1]["name"], RuntimeError("x"))
        assert spooled[1]["error"] and spooled.overview_parts[1]["attempts"] == []
    finally:
        spooled.close()


def test_keyed_sections_sort_by_their_keys_with_their_overview_parts():
    from gangscope.pipeline.report.section_spool import SpooledSections

    built = render.build_jobs([], DIAGNOSES)
    keys = [(True, "z"), (False, "b"), (True, "a")]
    spooled = SpooledSections(zip(keys, built), keyed=True)
    try:
        spooled.sort()
        want = [built[1], built[2], built[0]]
        assert list(spooled) == want
        assert list(spooled.overview_parts) == [{k: s[k] for k in ("name", "attempts", "signals")} for s in want]
        assert render.overview(spooled.overview_parts) == render.overview(want)
    finally:
        spooled.close()


def test_the_overview_counts_attempts_by_outcome_as_the_page_says():
    page = render.render_report([], DIAGNOSES)
    assert "3 jobs, 3 attempts · " in page and ">2 failed<" in page and ">1 succeeded<" in page
