"""Tracebacks as renderers draw them, read as traces (helper h16w, issue 16). fixtures/renderers/matrix was made by
running each library at two or more versions (regenerate.py --matrix; README.md there): six step lines, then
torch.OutOfMemoryError (or ValueError) raised as the direct cause of `RuntimeError: step 120 failed on rank 3`; the same
behind `[rank3]:` prefixes; the same cut at a random line and column. gangscope reads the chain (the wrapper, its cause,
the frames where the renderer shows them) from rich's panel, IPython's ultratb, stackprinter and loguru's backtrace as
it does from CPython's own, and a box cut short never loses the run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from diagnose_in_process import diagnoses_of, the_diagnosis
from gangscope.parsers.lines import Line
from gangscope.parsers.records import TraceRecord
from gangscope.parsers import trace_blocks
from gangscope.parsers.trace_blocks import parse_block
from gangscope.parsers.traces import TraceParser
from gangscope.pipeline.run import replay

MATRIX = Path(__file__).resolve().parent.parent / "fixtures" / "renderers" / "matrix"
DRAWN = ("rich", "ipython", "ipython_color", "stackprinter", "loguru")  # no trace record for any of these before
ALL = sorted(p.name for p in MATRIX.glob("*.log"))
WHOLE = [n for n in ALL if not n.endswith("_cut.log") and not n.startswith("pretty_errors")]
WANTS = re.compile(TraceParser.PREFILTER).search


def _renderer(name: str) -> str:
    return name.split("-", 1)[0]


def _traces(path: Path) -> tuple[list[TraceRecord], object]:
    records: list = []
    result = replay.run(replay.ReplayOptions(paths=[str(path)], fmt="text"), records.extend)
    assert result.failures.summary() == []
    return [r for r in records if isinstance(r, TraceRecord)], result


def test_the_matrix_holds_every_renderer_at_two_versions_or_more():
    versions: dict[str, set[str]] = {}
    for name in ALL:
        renderer, rest = name.split("-", 1)
        versions.setdefault(renderer, set()).add(rest.split("_")[0])
    for renderer in ("rich", "loguru", "better_exceptions", "stackprinter", "pretty_errors", "ipython", "cpython"):
        assert len(versions[renderer]) >= 2, (renderer, versions.get(renderer))


@pytest.mark.parametrize("name", WHOLE)
def test_a_whole_rendered_traceback_is_one_trace_with_its_chain(name):
    traces, result = _traces(MATRIX / name)
    assert len(traces) == 1, [t.exception_type for t in traces]
    [t] = traces
    assert t.exception_type == "RuntimeError" and t.message == "step 120 failed on rank 3"
    cause = t.chain[0]
    oom = "_oom_" in name
    assert cause.exception_type.rsplit(".", 1)[-1] == ("OutOfMemoryError" if oom else "ValueError")
    assert cause.message.startswith("CUDA out of memory" if oom else "shard 1 has a negative size")
    assert [lk.connector for lk in t.chain] == ["cause", None]
    assert [f.function for f in t.frames] == ["<module>", "train_step"]
    assert t.frames[-1].file == "/srv/train/jobs/loader.py" and t.frames[-1].line == 22
    if _renderer(name) != "ipython_color" and not name.startswith("ipython-"):  # ultratb's line: the arrow's
        assert "raise RuntimeError" in (t.frames[-1].code or "")
    assert not t.truncated
    [d] = result.diagnoses
    assert d.category == ("cuda_oom" if oom else "python_exception")
    assert d.exception_type.rsplit(".", 1)[-1] == ("OutOfMemoryError" if oom else "ValueError")
    assert d.rank == (3 if name.endswith("_rank.log") else None)


@pytest.mark.parametrize("name", [n for n in ALL if n.endswith("_cut.log")])
def test_a_cut_rendered_traceback_never_loses_the_run(name):
    traces, result = _traces(MATRIX / name)
    [d] = result.diagnoses
    assert d.outcome == "failed" or _renderer(name).startswith("pretty_errors")  # its cut copies hold no exception line
    assert d.category in ("cuda_oom", "python_exception", "unknown", "running")
    if _renderer(name) in DRAWN and traces:
        assert all(t.frames or t.exception_type or t.chain for t in traces)


@pytest.mark.parametrize("name", [n for n in WHOLE if _renderer(n) in ("rich", "stackprinter", "loguru") and "_plain" in n])
def test_every_cut_of_a_drawn_box_reads_without_a_crash(name):
    """Every line and a column inside it: the parser and the block reader end where the copy ends."""
    lines = (MATRIX / name).read_text().splitlines()
    full = [f.function for f in _parse(lines)[-1].frames]
    for at in range(6, len(lines)):
        for col in {0, len(lines[at]) // 2}:
            got = _parse(lines[:at] + [lines[at][:col]])
            for t in got:
                assert isinstance(t, TraceRecord)
                assert len(t.frames) <= max(len(full), 2)


def _parse(lines: list[str]) -> list[TraceRecord]:
    parser = TraceParser()
    out: list[TraceRecord] = []
    for i, text in enumerate(lines):
        line = Line(None, i, text)
        if parser.open or WANTS(text):
            out.extend(parser.feed(line)[1])
    return out + parser.close()


RICH_CUT = """\
╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮
│ /srv/train/jobs/loader.py:19 in train_step                                                       │
│                                                                                                  │
│ ❱ 19 │   │   │   return allocate(step)                                                           │
│                                                                                                  │
│ /srv/train/jobs/loader.py:12 in all"""


def test_a_rich_box_cut_inside_gives_its_frames_and_no_type():
    [t] = _parse(RICH_CUT.splitlines())
    assert t.exception_type is None and t.truncated
    assert [(f.file, f.line, f.function) for f in t.frames] == [("/srv/train/jobs/loader.py", 19, "train_step")]
    assert t.frames[0].code == "return allocate(step)"


def test_derender_gives_cpython_lines():
    assert trace_blocks.derender(RICH_CUT.splitlines()) == [
        "Traceback (most recent call last):",
        '  File "/srv/train/jobs/loader.py", line 19, in train_step',
        "    return allocate(step)",
    ]


def test_a_plain_cpython_block_is_not_derendered():
    lines = ["Traceback (most recent call last):", '  File "a.py", line 1, in f', "    g()", "KeyError: 'x'"]
    t = parse_block(lines)
    assert (t.exception_type, t.message, t.frames[0].code) == ("KeyError", "'x'", "g()")


VIEWER_BOX = """\
│     backend_executor.start()                                                              │
│   File "/opt/ray/train/_internal/backend_executor.py", line 190, in start                  │
│     self._backend.on_start(self.worker_group, self._backend_config)                         │
│   File "/opt/ray/train/torch/config.py", line 198, in on_start                             │
│     ray.get(setup_futures)                                                                  │
│ ray.exceptions.RayTaskError(RuntimeError): ray::_RayTrainWorker__execute._setup_torch_process_group() (pid=3"""


def test_a_traceback_inside_a_viewers_box_is_read_without_its_border():
    [t] = _parse(VIEWER_BOX.splitlines())
    assert t.exception_type == "ray.exceptions.RayTaskError(RuntimeError)"
    assert [f.function for f in t.frames] == ["start", "on_start"]
    assert t.frames[-1].code == "ray.get(setup_futures)"


def test_a_viewers_box_cut_before_its_message_still_answers_unknown(tmp_path):
    d = the_diagnosis(tmp_path, VIEWER_BOX + "\n")
    assert d.category == "unknown"


def test_stackprinters_context_separator_joins_the_chain():
    text = """\
File "/srv/train/jobs/loader.py", line 7, in read_shard
--> 7    raise ValueError("bad")
ValueError: bad

While handling the above exception, another exception occurred:

File "/srv/train/jobs/train.py", line 3, in <module>
--> 3    raise KeyError("k")
KeyError: 'k'
"""
    [t] = _parse(text.splitlines())
    assert [lk.exception_type for lk in t.chain] == ["ValueError", "KeyError"]
    assert t.chain[0].connector == "context"


def test_a_header_then_a_blank_line_with_nothing_after_is_no_trace_change(tmp_path):
    """CPython never prints a blank line after its header: a header alone, a blank line, then a log line."""
    text = "step 1 loss 2.0\nTraceback (most recent call last):\n\nINFO training resumed\n"
    [t] = _parse(text.splitlines())
    assert t.exception_type is None and t.frames == [] and t.truncated
    assert t.text == "Traceback (most recent call last):"


def test_the_steps_stay_with_a_rendered_traceback(tmp_path):
    [d] = diagnoses_of(tmp_path, (MATRIX / "rich-14.2.0-py3.13_oom_rank.log").read_text())
    assert (d.category, d.rank) == ("cuda_oom", 3)


@pytest.mark.parametrize("name", ["cpython-py3.11_oom_plain.log", "loguru-0.7.3-py3.11_oom_plain.log",
                                  "rich-14.2.0-py3.13_oom_plain.log", "rich-12.6.0-py3.11_value_plain.log"])
def test_a_logger_head_on_every_line_keeps_the_chain_whole(tmp_path, name):
    """A log collector's head on each line, the blank lines of the chain being the head alone (trailing space trimmed):
    one trace with its cause, as without the head."""
    lines = (MATRIX / name).read_text().splitlines()
    text = "".join(f"[2026-11-30 07:41:12,{i:03d}] [INFO] {t}".rstrip() + "\n" for i, t in enumerate(lines))
    path = tmp_path / "headed.log"
    path.write_text(text)
    traces, result = _traces(path)
    assert [(t.exception_type, [lk.exception_type.rsplit(".", 1)[-1] for lk in t.chain]) for t in traces] == [
        ("RuntimeError", ["OutOfMemoryError" if "_oom_" in name else "ValueError", "RuntimeError"])]
    assert len(traces[0].frames) == 2
