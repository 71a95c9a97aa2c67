"""Step lines of many frameworks (fixtures/generate/dialect_corpus.py, formats from each framework's source,
values ours) read by the step parser as the pipeline feeds it; eval/validation/test/summary lines give nothing."""

from __future__ import annotations

import pytest

from bench.score_dialects import corpus, run_stream, score
from gangscope.parsers import dialects

CORPUS = corpus()


@pytest.mark.parametrize("variant", CORPUS.VARIANTS, ids=lambda v: f"{v.framework}/{v.name}")
@pytest.mark.parametrize("seed", [1, 2])
def test_every_training_line_is_read_right_and_nothing_else_is_a_step(variant, seed):
    stream = CORPUS.streams(variant, seed)
    right, spurious, notes = score(stream, run_stream(stream.lines))
    assert (right, spurious) == (len(stream.expect), 0), notes


def test_the_corpus_covers_frameworks_and_has_both_halves():
    frameworks = {v.framework for v in CORPUS.VARIANTS}
    assert len(frameworks) >= 25
    assert {v.split for v in CORPUS.VARIANTS} == {"build", "held"}
    assert all(v.source for v in CORPUS.VARIANTS)


def test_every_dialect_cites_its_source():
    for d in dialects.DIALECTS:
        assert d.source and (":" in d.source or d is dialects.GENERIC), d.name


def one_stream(*lines: str):
    return [r for r in run_stream(list(lines)) if type(r).__name__ == "StepRecord"]


def test_nanogpt_eval_line_does_not_overwrite_the_training_loss_of_its_step():
    recs = one_stream("iter 100: loss 2.5000, time 45.67ms, mfu 12.34%", "step 100: train loss 9.0000, val loss 9.5000")
    assert [(r.step, r.loss) for r in recs] == [(100, 2.5)]


def test_a_training_line_carrying_the_last_val_loss_stays_a_step_where_the_framework_prints_it_so():
    # NeMo's ProgressPrinter adds the logged val_loss to every training line after the first validation
    recs = one_stream("Training epoch 0, iteration 30/59 | lr: 0.0001766 | global_step: 30 | reduced_train_loss: 3.99 | val_loss: 4.294")
    assert [(r.step, r.loss, r.metrics.get("val_loss")) for r in recs] == [(31, 3.99, 4.294)]


@pytest.mark.parametrize("text,value", [("tokens_per_sec: 1.07M", 1.07e6), ("tokens_per_sec: 134K", 134e3), ("tokens_per_sec: 2.5G", 2.5e9)])
def test_si_suffixes_scale_the_value(text, value):
    (r,) = one_stream(f"iteration: 10 / 100 | lm_loss: 2.5 | {text}")
    assert r.throughput == pytest.approx(value) and r.throughput_unit == "tokens/s"


def test_memory_in_megabytes_keeps_its_number():
    (r,) = one_stream("[05/01 12:00:00 d2.utils.events]:  eta: 0:10:00  iter: 19  total_loss: 1.234  lr: 0.0001  max_mem: 1000M")
    assert r.metrics["max_mem"] == 1000


@pytest.mark.parametrize("prefix,rank", [("12: ", 12), ("[1,3]<stdout>:", 3), ("[1,3]<stderr>: ", 3)])
def test_launcher_prefixes_are_stripped_before_every_dialect(prefix, rank):
    (r,) = one_stream(prefix + " iteration       10/    1000 | lm loss: 7.123456E+00 | grad norm: 1.500 |")
    assert (r.step, r.loss, r.grad_norm, r.rank) == (10, 7.123456, 1.5, rank)


def test_megatron_nan_printed_by_the_e_format_is_nonfinite():
    (r,) = one_stream(" iteration       10/    1000 | lm loss: NAN | grad norm: nan | number of nan iterations:   1 |")
    assert (r.step, r.loss, r.grad_norm, r.nonfinite) == (10, None, None, ["loss", "grad_norm"])


def test_hub_and_datasets_bars_are_not_training_steps():
    assert one_stream("Fetching 9 files: 100%|##########| 9/9 [00:00<00:00, 12345.67it/s]") == []
    assert one_stream("Map: 100%|##########| 1000/1000 [00:00<00:00, 12345.67 examples/s]") == []


def test_a_later_state_of_the_same_step_with_a_number_clears_its_nonfinite_name():
    bar = "\r".join([
        "Epoch 0:  10%|#         | 5/50 [00:01<00:09,  4.80it/s, v_num=0, train_loss=nan]",
        "Epoch 0:  10%|#         | 5/50 [00:01<00:09,  4.80it/s, v_num=0, train_loss=2.340]",
        "Epoch 0:  12%|#         | 6/50 [00:01<00:09,  4.80it/s, v_num=0, train_loss=inf]",
    ])
    recs = one_stream(bar)
    assert [(r.step, r.loss, r.nonfinite) for r in recs] == [(5, 2.34, None), (6, None, ["loss"])]


# ---------------------------------------------------------------- Ultralytics / YOLO: the loss parts named after the header

YOLO_HEADER = ("%11s" * 7) % ("Epoch", "GPU_mem", "box_loss", "cls_loss", "dfl_loss", "Instances", "Size")
YOLO_ROW = ("%11s" * 2 + "%11.4g" * 5) % ("1/100", "3.21G", 1.284, 2.207, 1.312, 37, 640)


def test_ultralytics_loss_parts_take_the_names_of_the_epoch_header():
    (r,) = one_stream("", YOLO_HEADER, YOLO_ROW + ": 20%|██        | 10/50 [00:04<00:16,  2.43it/s]")
    assert {k: r.metrics[k] for k in ("box_loss", "cls_loss", "dfl_loss")} == {"box_loss": 1.284, "cls_loss": 2.207, "dfl_loss": 1.312}
    assert not any(k.startswith("loss_part") for k in r.metrics) and r.loss == pytest.approx(1.284 + 2.207 + 1.312)


def test_without_a_header_the_parts_keep_their_positions():
    (r,) = one_stream(YOLO_ROW + ": 20%|██        | 10/50 [00:04<00:16,  2.43it/s]")
    assert [k for k in r.metrics if "loss" in k] == ["loss_part0", "loss_part1", "loss_part2"]


def test_yolov7_total_column_is_the_loss_not_a_part_of_it():
    header = ("%10s" * 8) % ("Epoch", "gpu_mem", "box", "obj", "cls", "total", "labels", "img_size")
    row = ("%10s" * 2 + "%10.4g" * 6) % ("0/299", "4.12G", 0.05123, 0.02411, 0.01077, 0.08611, 64, 640)
    (r,) = one_stream(header, row + ": 20%|██        | 10/50 [00:04<00:16,  2.43it/s]")
    assert (r.loss, r.metrics["box"], r.metrics["obj"], r.metrics["cls"], "total" in r.metrics) == (0.08611, 0.05123, 0.02411, 0.01077, False)


def test_the_header_names_the_bar_of_another_stream_of_the_container():
    # ultralytics 8.x: LOGGER writes the header to stdout (utils/__init__.py set_logging), tqdm the bar to stderr
    from gangscope.parsers.records import StepRecord
    from gangscope.pipeline.curate.container import ContainerCurator
    from gangscope.pipeline.curate.stats import CurationStats
    from gangscope.pipeline.sources.files import PodIdentity

    cur = ContainerCurator(PodIdentity(namespace="vision", pod="yolo-train-0", container="trainer"), "cri", CurationStats())
    bar = "\r".join(YOLO_ROW + f": {n * 2:3d}%|█         | {n}/50 [00:0{n // 10}<00:16,  2.43it/s]" for n in (5, 10))
    out = cur.feed_lines([f"2026-12-01T09:00:00.100Z stdout F {YOLO_HEADER}", f"2026-12-01T09:00:04.200Z stderr F {bar}"]) + cur.close()
    steps = [r for r in out if isinstance(r, StepRecord)]
    assert [(r.step, r.stream, sorted(k for k in r.metrics if "loss" in k)) for r in steps] == [
        (5, "stderr", ["box_loss", "cls_loss", "dfl_loss"]), (10, "stderr", ["box_loss", "cls_loss", "dfl_loss"])]


def test_ultralytics_own_bar_scales_its_rate_and_reads_its_times():
    own = "\r\x1b[K" + YOLO_ROW + ": 20% ━━╸───────── 10/50 1.2Kit/s 8.4s<33.3s"
    (r,) = one_stream(YOLO_HEADER, own)
    assert (r.step, r.throughput, r.throughput_unit, r.metrics["elapsed_s"], r.metrics["eta_s"], r.metrics["box_loss"]) == (
        10, 1200.0, "it/s", 8.4, 33.3, 1.284)


def test_the_header_names_survive_a_snapshot_of_the_container():
    import msgspec

    from gangscope.parsers.records import StepRecord
    from gangscope.pipeline.curate.container import ContainerCurator
    from gangscope.pipeline.curate.snapshot import ContainerState
    from gangscope.pipeline.curate.stats import CurationStats
    from gangscope.pipeline.sources.files import PodIdentity

    pod = PodIdentity(namespace="vision", pod="yolo-train-0", container="trainer")
    first = ContainerCurator(pod, "cri", CurationStats())
    first.feed_lines([f"2026-12-01T09:00:00.100Z stdout F {YOLO_HEADER}"])
    state = msgspec.msgpack.decode(msgspec.msgpack.encode(first.snapshot()), type=ContainerState)
    second = ContainerCurator.from_snapshot(state, CurationStats())
    out = second.feed_lines([f"2026-12-01T09:00:04.200Z stderr F {YOLO_ROW}: 20%|██        | 10/50 [00:04<00:16,  2.43it/s]"])
    (r,) = [r for r in out + second.close() if isinstance(r, StepRecord)]
    assert sorted(k for k in r.metrics if "loss" in k) == ["box_loss", "cls_loss", "dfl_loss"]
