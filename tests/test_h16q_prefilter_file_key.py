"""ErrorDetector's prefilter admits IPython's "File <path>:N, in f(" frame lines (rule ultratb_location, batch h16o)
by their head, not by "File " alone: CPython's own frame lines ('  File "<path>", line N, in f'), which no rule of
the table reads (a traceback's frames are the trace parser's), stay out of the rule table (issue 16, helper h16q)."""

from __future__ import annotations

import glob
import re
from pathlib import Path

import pytest

from gangscope.parsers.errors import LINE_RULES, PREFILTER, detect

ROOT = Path(__file__).resolve().parents[1]
ULTRATB = next(r for r in LINE_RULES if r.name == "ultratb_location")


@pytest.mark.parametrize(
    "line",
    [
        '  File "/work/fit.py", line 214, in <module>',
        '[rank2]:  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1532, in _wrapped_call_impl',
        'File "<frozen runpy>", line 198, in _run_module_as_main',
        '    File "C:\\Users\\lab\\fit.py", line 3, in f',
    ],
)
def test_cpython_frame_lines_stay_out_of_the_rule_table(line):
    assert re.search(PREFILTER, line) is None
    assert detect(line) is None


@pytest.mark.parametrize("path", ["~/proj/fit.py", "/opt/conda/lib/python3.10/site-packages/torch/_tensor.py", "./fit.py",
                                  "C:\\Users\\lab\\fit.py", "fit.py", "[/srv/nb/fit.py:12](vscode-notebook-cell:/x)",
                                  "..\\src\\fit.py", "_pkg/fit.py"])
@pytest.mark.parametrize("func", ["<module>()", "main(cfg=None)", "forward(self, x)"])
def test_every_ipython_file_line_still_reaches_its_rule(path, func):
    line = f"File {path}:12, in {func}" if not path.startswith("[") else f"File {path}, in {func}"
    if ULTRATB.pattern.search(line):
        assert re.search(PREFILTER, line), line
        assert detect(line)[0].name == "ultratb_location"


def test_on_every_fixture_line_holding_file_the_table_finds_what_it_found_and_cpython_frames_are_out():
    lines = set()
    for name in glob.glob(str(ROOT / "fixtures" / "**" / "*.log"), recursive=True):
        for raw in Path(name).read_text(errors="replace").splitlines():
            if "File " in raw:
                lines.add(raw)
                lines.add(raw.split(" ", 3)[-1])
    frames = [t for t in lines if re.match(r'\s*(?:\[rank\d+\]:)?\s*File "', t)]
    # a frame line passes only by another key it holds (its head alone lets nothing by)
    assert frames and all(bool(re.search(PREFILTER, t)) == bool(re.search(PREFILTER, t.replace("File ", "Fxle ", 1))) for t in frames)
    assert all(re.search(PREFILTER, t) for t in lines if detect(t) is not None)
