"""The block scan reads an ASCII block once (scan.one_pass_database: the prefilter-mode patterns,
ALWAYS and the exact ones with their leftmost starts in one database) and answers what its two
scans answered (the `rest` database, then the `exact` one): the same lines, bits and exact_from, on
generated blocks of mixed CRI lines (partials, non-CRI lines, rank prefixes, separators only
Python's \\s matches, newlines inside matches) and on every fixture line. So does a Kafka poll's batch
of texts (partition.TextScanner.hints: the same databases without ALWAYS).
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from gangscope.pipeline.curate import scan as scan_module
from gangscope.pipeline.curate.block_lines import scanner_for
from gangscope.pipeline.curate.partition import TextScanner
from gangscope.pipeline.curate.scan import BlockScanner
from gangscope.pipeline.curate.substream import LINE_PARSERS
from fixture_text import fixture_lines

PREFIXES = ["", "[rank0]:", "[rank3]: ", "[default1]:", "[default0]:[rank0]: ", "[1,3]<stdout>:", "  7: ", "[rank: 2] ",
            "2024-05-01 10:00:00 [rank3]: ", "[step 1]:", "Step 3 [rank1]:", "(Worker pid=12, ip=1.2.3.4) "]
PIECES = ["step", "Step", "iter", "Iteration", "iteration ", "batch", "Batch", "loss", "Loss", "'loss'", '"loss"', "=", ": ",
          ":", "/", "[", "]", "(", ")", "|", "0", "7", "12", "?", "K", "it/s", "s/it", "ms/step", "Epoch ", "Epochs = ",
          "ETA: ", "Total steps = ", "Error", "Exception", " grad norm: ", "NAN |", "x", " ", "\t", "\r", "\x1c", "\x1f",
          "Rendezvous complete for workers", "Traceback (most recent call last):", '  File "a.py", line 3, in f',
          "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99).",
          "CUDA out of memory", "NCCL INFO Channel 00/32", "Watchdog caught collective operation timeout", "Killed", "\\"]
HEADS = ["2024-05-01T12:00:00.{i:09d}Z stdout F ", "2024-05-01T12:00:00.{i:09d}Z stderr F ",
         "2024-05-01T12:00:00.{i:09d}Z stdout P ", "2024-05-01T12:00:00.{i:09d}Z other F ", "", "garbage "]

texts = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
lines = st.tuples(st.sampled_from(HEADS), st.sampled_from(PREFIXES), texts)
blocks = st.lists(lines, min_size=1, max_size=40)


def scanner() -> BlockScanner:
    found = scanner_for(LINE_PARSERS)
    assert found is not None and found.exact is not None and found.one_pass is not None
    return found


def two_scans(one: BlockScanner) -> BlockScanner:
    """The same scanner reading a block with its two databases."""
    return BlockScanner(one.database, one.exact, one.rest, one.exact_mask, one._unsafe_id)


def block_of(drawn) -> bytes:
    return "\n".join(head.format(i=i) + prefix + text for i, (head, prefix, text) in enumerate(drawn)).encode("ascii")


@settings(max_examples=300, deadline=None)
@given(blocks)
def test_one_pass_answers_what_the_two_scans_answer(drawn):
    one = scanner()
    block = block_of(drawn)
    assert one.exact_candidates(block) == two_scans(one).exact_candidates(block)


def test_one_pass_answers_what_the_two_scans_answer_on_every_fixture_line():
    one = scanner()
    two = two_scans(one)
    lines = [t for t in fixture_lines() if t.isascii() and "\n" not in t]
    hit = 0
    for start in range(0, len(lines), 5000):
        block = "\n".join(lines[start : start + 5000]).encode("ascii")
        found = one.exact_candidates(block)
        assert found == two.exact_candidates(block)
        hit += len(found[0])
    assert hit > 1000


def test_exact_ids_stay_apart_from_the_others():
    # the exact patterns' ids are moved past every id of the table (parsers, UNSAFE_BYTES, ALWAYS)
    assert scan_module.EXACT_ID_BASE > len(LINE_PARSERS) + 1
    block = block_of([(HEADS[0], "[rank1]:", "Traceback (most recent call last):"), (HEADS[1], "", "step 3 loss 0.5"),
                      (HEADS[0], "", "a\x1fstep 3")])
    lines, exact_from = scanner().exact_candidates(block)
    names = [cls.__name__ for cls in LINE_PARSERS]
    trace, step = 1 << names.index("TraceParser"), 1 << names.index("StepParser")
    second = block.index(b"\n") + 1
    third = block.index(b"\n", second) + 1
    assert lines[0] & trace and lines[second] == step and lines[third] == step  # (a trace is an error's key too)
    assert exact_from[second] == len("2024-05-01T12:00:00.000000001Z stderr F ") and exact_from[third] == -1


def two_scan_texts(one: TextScanner) -> TextScanner:
    """The same text scanner reading a batch with its two databases."""
    return TextScanner(one.database, one.exact, one.rest, one._unsafe_id, one.parser_classes)


batches = st.lists(st.tuples(st.sampled_from(PREFIXES), texts, st.sampled_from(["", "", "", "\n", "é"])).map("".join),
                   min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(batches)
def test_a_kafka_batch_read_once_answers_what_the_two_scans_answer(drawn):
    one = TextScanner.build(LINE_PARSERS)
    assert one is not None and one.one_pass is not None
    assert one.hints(drawn) == two_scan_texts(one).hints(drawn)


def test_a_kafka_batch_of_fixture_texts_read_once_answers_what_the_two_scans_answer():
    one = TextScanner.build(LINE_PARSERS)
    two = two_scan_texts(one)
    messages = [t.split(" ", 3)[-1] if t[:4].isdigit() and t.count(" ") >= 3 else t for t in fixture_lines()]
    hit = 0
    for start in range(0, len(messages), 5000):
        found = one.hints(messages[start : start + 5000])
        assert found == two.hints(messages[start : start + 5000])
        hit += len(found)
    assert hit > 1000
