"""The block scan of an ASCII block answers the step, error and rendezvous prefilters exactly
(scan.BlockScanner.exact_candidates): a line's bit for one of them is what `re.search` says of the
line's text (after its CRI header and rank prefixes) wherever the scan says its matches lie in the
text, and a line it does not report matches none of them. These tests hold that answer to
`re.search` on every fixture line and on generated lines made of what the prefilters look for, and
the records of a curator that trusts it to those of one that scans each text itself.
"""

from __future__ import annotations

import random
import re

from gangscope.parsers.lines import strip_rank_prefixes
from gangscope.parsers.records import encode
from gangscope.pipeline.curate.block_lines import scanner_for
from gangscope.pipeline.curate.container import ContainerCurator
from gangscope.pipeline.curate.scan import block_exact
from gangscope.pipeline.curate.stats import CurationStats
from gangscope.pipeline.curate.substream import LINE_PARSERS
from gangscope.pipeline.sources.files import PodIdentity
from fixture_text import fixture_lines

PATTERNS = [cls.PREFILTER for cls in LINE_PARSERS]
SEARCHES = [re.compile(p).search for p in PATTERNS]
POD = PodIdentity(namespace="team-a", pod="llama-train-worker-1", pod_uid="0c6d1111-2222-3333-4444-555566667777",
                  container="pytorch")
PREFIXES = ["", "[rank0]:", "[rank3]: ", "[default1]:", "[default0]:[rank0]: ", "[1,3]<stdout>:", "  7: ", "[rank: 2] ",
            "rank:  3 | ", "2024-05-01 10:00:00 [rank3]: ", "[step 1]:", "Step 3 [rank1]:", "[E ", "(Worker pid=12, ip=1.2.3.4) "]
PIECES = ["step", "Step", "STEP", "iter", "Iteration", "iteration ", "batch", "Batch", "loss", "Loss", "'loss'", '"loss"',
          "=", ": ", ":", "/", "[", "]", "(", ")", "|", " | ", "0", "7", "12", "?", "K", "it/s", "s/it", "ms/step", "Epoch ",
          "Epochs = ", "ETA: ", "Total steps = ", "[Rank ", "[PG ", "Error", "Exception", " grad norm: ", "NAN |", "x", "_",
          " ", "  ", "\t", "\r", "\x0b", "\x0c", ", ", "\x1c", "\x1f", "Rendezvous complete for workers", "Traceback",
          "[rank1]:", "Watchdog caught collective operation timeout", "FAILED", "\\"]


def scanner():
    found = scanner_for(LINE_PARSERS)
    assert found is not None and found.exact is not None
    return found


def cri(texts: list[str]) -> bytes:
    return "\n".join(f"2024-05-01T12:00:00.{i:09d}Z {'stderr' if i % 3 == 0 else 'stdout'} F {t}"
                     for i, t in enumerate(texts)).encode("ascii")


def disagreements(texts: list[str]) -> tuple[list[str], int]:
    """The texts whose exact answer differs from re's, and how many were judged exactly."""
    scan = scanner()
    block = cri(texts)
    lines, exact_from = scan.exact_candidates(block)
    wrong, judged, pos = [], 0, 0
    for raw in block.decode("ascii").split("\n"):
        message = raw.split(" ", 3)[3]
        text = strip_rank_prefixes(message)[0]
        start = len(raw) - len(text)  # the rank prefixes are a head of the message
        if exact_from.get(pos, len(raw)) >= start:
            judged += 1
            bits = lines.get(pos, 0)
            for i, search in enumerate(SEARCHES):
                if scan.exact_mask >> i & 1 and bool(bits >> i & 1) != (search(text) is not None):
                    wrong.append(raw)
        pos += len(raw) + 1
    return wrong, judged


def test_the_step_error_and_rendezvous_prefilters_are_exact_and_the_anchored_trace_one_is_not():
    scan = scanner()
    for i, cls in enumerate(LINE_PARSERS):
        assert bool(scan.exact_mask >> i & 1) == block_exact(cls.PREFILTER), cls.__name__
    # anchored, so left to `re` at one position of each text: the trace parser's and the container tools' exit lines'
    assert scan.exact_mask == sum(1 << i for i, cls in enumerate(LINE_PARSERS) if cls.__name__ not in ("TraceParser", "ToolExitDetector"))
    assert not block_exact(r"^step") and not block_exact(r"\bstep") and not block_exact(r"(?<!x)step")
    assert block_exact(r"[^0-9]step\s*$")


def test_a_match_in_the_header_or_the_prefix_leaves_the_line_to_its_text():
    scan = scanner()
    step = 1 << [c.__name__ for c in LINE_PARSERS].index("StepParser")
    block = cri(["[step 1]:hello", "Step 3 [rank1]:hello", "hello", "a step 3\x1f b"])
    lines, exact_from = scan.exact_candidates(block)
    starts = [0] + [i + 1 for i, c in enumerate(block) if c == 10]
    header = len("2024-05-01T12:00:00.000000000Z stderr F ")
    assert lines[starts[0]] & step and exact_from[starts[0]] >= header  # "[step 1]:" is no rank prefix: text
    assert lines[starts[1]] & step and exact_from[starts[1]] < len("2024-05-01T12:00:00.000000001Z stdout F Step 3 [rank1]:")
    assert starts[2] not in lines and starts[2] not in exact_from
    assert exact_from[starts[3]] == -1  # a separator only Python's \s matches


def test_every_fixture_line_gets_the_answer_of_re():
    texts = [t for t in fixture_lines() if t.isascii() and "\n" not in t]
    messages = [t.split(" ", 3)[-1] if t[:4].isdigit() and t.count(" ") >= 3 else t for t in texts]
    judged = 0
    for start in range(0, len(messages), 5000):
        wrong, n = disagreements(messages[start : start + 5000])
        assert not wrong, wrong[:3]
        judged += n
    assert judged > 10_000


def test_generated_lines_get_the_answer_of_re():
    rng = random.Random(7)
    texts = [rng.choice(PREFIXES) + "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(30_000)]
    wrong, judged = disagreements(texts)
    assert not wrong, wrong[:3]
    assert judged > 15_000


def curate(data: bytes, exact: bool) -> list[bytes]:
    cur = ContainerCurator(POD, "cri", CurationStats())
    if not exact:
        cur.exact_mask = 0  # every text scanned by itself (SubStream's ExactHints), as before the exact block scan
    out = []
    lines = data.split(b"\n")
    for start in range(0, len(lines), 700):  # blocks as read_blocks hands them over
        out.extend(cur.feed_block(b"\n".join(lines[start : start + 700])))
    out.extend(cur.close())
    return [encode(r) for r in out]


def test_a_curator_gives_the_records_it_gave_scanning_each_text():
    rng = random.Random(11)
    real = [t for t in fixture_lines() if t.isascii() and "\n" not in t]
    real = [t.split(" ", 3)[-1] if t[:4].isdigit() and t.count(" ") >= 3 else t for t in real][:40_000]
    made = [rng.choice(PREFIXES) + "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(10_000)]
    mixed = real + made
    rng.shuffle(made)
    for texts in (real, made, mixed):
        data = cri([t.replace("\r", " ") for t in texts])
        fast = curate(data, exact=True)
        assert fast == curate(data, exact=False)
    assert len(fast) > 500


def test_what_a_curator_tells_a_sub_stream_is_re_s_answer_on_the_text(monkeypatch):
    """The bits the curator passes as known (the block scan's, its rank prefixes taken off the
    line) are those of re.search on the text each sub-stream is fed."""
    from gangscope.pipeline.curate.substream import SubStream

    told = []
    feed = SubStream.feed

    def checked(self, line, hints=-1, known=0):
        told.append((line.text, hints, known))
        return feed(self, line, hints, known)

    monkeypatch.setattr(SubStream, "feed", checked)
    rng = random.Random(5)
    texts = [rng.choice(PREFIXES) + "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(20_000)]
    curate(cri(texts), exact=True)
    judged = 0
    for text, hints, known in told:
        for i, search in enumerate(SEARCHES):
            if known >> i & 1:
                judged += 1
                assert bool(hints >> i & 1) == (search(text) is not None), repr(text)
    assert judged > 5_000


# ----------------------------------------------------------------------------- the consumer's batches of texts


def test_a_batch_of_texts_gets_the_answer_of_re_for_each_ascii_text():
    """TextScanner.hints (a poll batch's message texts, no CRI header): the same exact answer, and
    the texts it cannot judge (non-ASCII, a newline) left to the curator's own scan."""
    from gangscope.pipeline.curate import partition

    scanner = partition.text_scanner()
    assert scanner is not None and scanner.exact is not None
    rng = random.Random(3)
    texts = [rng.choice(PREFIXES) + "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(20_000)]
    texts = [t.replace("\x1c", "").replace("\x1f", "") for t in texts] + ["step 3 \u00e9", "a\nstep 3", "", "nothing here"]
    texts += [t for t in fixture_lines() if t][:20_000]
    mask = scanner_for(LINE_PARSERS).exact_mask
    found = scanner.hints(texts)
    judged = 0
    for i, text in enumerate(texts):
        hints, exact_from = found.get(i, (0, len(text)))
        if not (text.isascii() and "\n" not in text):
            assert hints == -1 and exact_from == -1 or i not in found, repr(text)
            continue
        stripped = strip_rank_prefixes(text)[0]
        if 0 <= len(text) - len(stripped) <= exact_from:
            judged += 1
            for b, search in enumerate(SEARCHES):
                if mask >> b & 1:
                    assert bool(hints >> b & 1) == (search(stripped) is not None), repr(text)
    assert judged > 20_000
    with_separator = scanner.hints(["step 3", "step\x1f 3"])
    assert with_separator == {0: (-1, -1), 1: (-1, -1)}  # the batch's texts are then all scanned by the curator


def test_a_partition_gives_the_records_it_gave_scanning_each_text():
    import json

    from gangscope.pipeline.correlate.event_book import AttemptOf, EventBook
    from gangscope.pipeline.correlate.progress import DerivedProgress
    from gangscope.pipeline.curate import partition
    from gangscope.pipeline.sources import kafka as ksrc

    rng = random.Random(13)
    real = [t for t in fixture_lines() if t and "\n" not in t][:30_000]
    made = [rng.choice(PREFIXES) + "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(10_000)]
    texts = real + made
    rng.shuffle(texts)
    kube = {"pod_name": "w-0", "namespace_name": "team-a", "pod_id": "0c6d1111-2222-3333-4444-555566667777",
            "container_name": "pytorch", "labels": {}}
    values = [json.dumps({"time": f"2024-05-01T12:00:{i // 1000 % 60:02d}.{i:09d}Z", "stream": "stderr" if i % 3 else "stdout",
                          "_p": "F", "log": t, "kubernetes": kube}).encode() for i, t in enumerate(texts)]
    fast = partition.text_scanner()
    slow = partition.TextScanner(fast.database)  # no exact scan: hints -1, every text scanned by the curator

    def curate_all(scanner) -> list[bytes]:
        state = partition.LogPartition(AttemptOf(EventBook()), progress=DerivedProgress())
        out: list = []
        for start in range(0, len(values), 3000):
            items = [(start + i, ksrc.decode_log(v)) for i, v in enumerate(values[start : start + 3000])]
            state.feed_batch(items, out, scanner)
        state.close_all(out)
        return [encode(r) for r in out]

    records = curate_all(fast)
    assert records == curate_all(slow)
    assert len(records) > 500
