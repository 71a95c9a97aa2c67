"""Rule from batch h33a of issue 16 (fixtures/eval README, "Batch h33a"): an 11th blind draw from GitHub issue threads
shaped like the judged set, older threads (2020-2023).

One class of its misses as it came: a copy cut inside CPython's traceback header itself ("Traceback (m", dev 1477,
after mmcls epoch records). gangscope read a whole header at the end of a log as a traceback cut before its exception
line (unknown), but a header cut mid-word as nothing (running). Line rule traceback_header_cut: a strict prefix of
"Traceback (most recent call last):" ending the line (CPython Lib/traceback.py, Python/traceback.c; Sacred's header
shares the head up to "call"), optionally behind torch's `[rankN]:` prefix; a warning read through
rules.RENDERED_TRACEBACK_LINES (endings.cut_traceback_at_the_end: only when it is its pod's last record). The lines below
are rebuilt with our values, not copied from a fixture."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

from gangscope.parsers import errors

HEADER = "Traceback (most recent call last):"

PROGRESS = {
    "mmcv": "".join(f"2024-03-11 14:22:{10 + i},512 - mmdet - INFO - Epoch [3][{i * 50}/7330]\tlr: 2.000e-02, eta: 1 day, "
                    f"2:11:03, time: 0.412, data_time: 0.031, memory: 6120, loss: {1.9 - i / 10:.4f}\n" for i in range(1, 5)),
    # step numbers of unequal width, as real step records print them
    "steps": "".join(f"step {i * 450} | loss {3.2 - i / 7:.4f} | lr 1.0e-04 | 0.91 s/it\n" for i in range(1, 6)),
    "ticks": "".join(f"tick {i}     kimg {i * 4}.0      time {i * 25}m 10s     sec/tick 1503.2  sec/kimg 375.80  "
                     f"maintenance 0.4    cpumem 2.11   gpumem 7.30   augment 0.011\n" for i in range(1, 4)),
}


@pytest.mark.parametrize("cut", [11, 12, 15, 20, 27, 33])
def test_a_header_cut_inside_itself_is_the_rule(cut):
    line = HEADER[:cut]
    found = errors.detect(line)
    assert found and found[0].name == "traceback_header_cut" and found[1] == "unknown", (line, found)


@pytest.mark.parametrize("line", [HEADER, HEADER + "  ", "Traceback", "Traceback:", "Traceback (x", "see Traceback (m",
                                  "Traceback (most recent calls WITHOUT Sacred internals):", "Traceback (most recent call last):x",
                                  "an error, Traceback (most rec"])
def test_other_lines_are_not_the_rule(line):
    found = errors.detect(line)
    assert not found or found[0].name != "traceback_header_cut", (line, found)


@pytest.mark.parametrize("progress", sorted(PROGRESS))
@pytest.mark.parametrize("cut", [11, 12, 19, 30])
def test_a_log_that_ends_in_a_cut_header_failed_without_saying_why(tmp_path, progress, cut):
    d = the_diagnosis(tmp_path, PROGRESS[progress] + HEADER[:cut] + "\n")
    assert d.category == "unknown", (d.category, d.summary)
    assert "cut before its exception line" in d.summary and HEADER[:cut] in d.summary, d.summary


@pytest.mark.parametrize("rank", [0, 3])
def test_a_rank_prefixed_cut_header(tmp_path, rank):
    text = "".join(f"[rank{rank}]: step {i} loss 2.{i}1 lr 3e-4\n" for i in range(1, 4)) + f"[rank{rank}]: Traceback (most recen\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category == "unknown", (d.category, d.summary)


def test_a_cut_header_followed_by_more_progress_is_no_failure(tmp_path):
    # a copy that wrapped inside a header and went on printing progress: not the end of the text
    more = "step 2700 | loss 2.1012 | lr 1.0e-04 | 0.90 s/it\nstep 3150 | loss 2.0871 | lr 1.0e-04 | 0.91 s/it\n"
    d = the_diagnosis(tmp_path, PROGRESS["steps"] + "Traceback (most rec\n" + more)
    assert d.category == "running", (d.category, d.summary)


def test_a_cut_header_after_a_named_failure_keeps_the_failure(tmp_path):
    text = (PROGRESS["steps"]
            + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity; "
              "20.91 GiB already allocated; 1.03 GiB free; 21.88 GiB reserved in total by PyTorch)\n"
            + "Traceback (most recent\n")
    d = the_diagnosis(tmp_path, text)
    assert d.category == "cuda_oom", (d.category, d.summary)


@pytest.mark.parametrize("tail", ["Traceback", "see Traceback (m", "Traceback (x"])
def test_near_misses_at_the_end_stay_running(tmp_path, tail):
    d = the_diagnosis(tmp_path, PROGRESS["mmcv"] + tail + "\n")
    assert d.category == "running", (tail, d.category, d.summary)


def test_a_whole_header_at_the_end_reads_as_before(tmp_path):
    d = the_diagnosis(tmp_path, PROGRESS["ticks"] + HEADER + "\n")
    assert d.category == "unknown" and "cut before its exception line" in d.summary, (d.category, d.summary)
