"""h19s: the back end's passes that no longer sort or loop per item give what the code they
replaced gave, kept here as the reference (pipeline/diagnose/root_cause.py and
pipeline/run/record_counts.py at 0eb4585): find_root's first cause and first effect by `min`
instead of sorting every failure, and summary.json's counts of each id's first kind by a dict of
the pairs taken backwards. (The digest's longest-series heap, now made when first asked for, is
pinned by test_digest's test_step_series_on_disk_are_the_series_thinned_in_memory_whatever_spills.)"""

import math
from array import array

from hypothesis import given, settings, strategies as st

from gangscope.parsers.records import ErrorRecord
from gangscope.pipeline.diagnose import root_cause
from gangscope.pipeline.diagnose.root_cause import Failure, find_root
from gangscope.pipeline.diagnose.rules import EFFECT_ORDER, EFFECT_SLACK_S
from gangscope.pipeline.run import record_counts


def _find_root_before(failures):
    """find_root at 0eb4585."""

    def key(f):
        order = EFFECT_ORDER.index(f.category) if f.category in EFFECT_ORDER else -1
        return (f.t, f.tier, f.box_t, f.seq, order)

    causes = sorted((f for f in failures if f.tier <= 1), key=key)
    effects = sorted((f for f in failures if f.tier == 2), key=key)
    if causes:
        root = causes[0]
        if effects and math.isfinite(root.t) and effects[0].t < root.t - EFFECT_SLACK_S:
            return effects[0], "effect"
        root = root_cause._sharpen(root, causes + [f for f in effects if f.error.pattern in root_cause.SHARPENING_FRAMES])
        root = root_cause._first_named_by_launcher(root, failures)
        return root, ("rank_report" if root.tier == 0 else "launcher")
    if effects:
        close = [f for f in effects if root_cause._near(f, effects[0])]
        return min(close, key=lambda f: (EFFECT_ORDER.index(f.category), f.t, f.seq)), "effect"
    rest = sorted(failures, key=key)
    return (rest[0], "unknown") if rest else (None, "unknown")


# few distinct values, so that ties (same time, same seq, same category) are common: the order
# among equals is what a min and a stable sort could disagree on
_times = st.sampled_from([0.0, 1.0, 1.0 + EFFECT_SLACK_S / 2, 5.0, 5.0 + 2 * EFFECT_SLACK_S, 100.0, math.inf])
_causes = ["unknown", "python_exception", "cuda_oom", "host_oom", "nccl_error"]


@st.composite
def _failure(draw, tiers):
    tier = draw(st.sampled_from(tiers))
    category = draw(st.sampled_from(EFFECT_ORDER if tier == 2 else _causes))
    message = draw(st.sampled_from(["", "NameError: name 'trainer' is not defined", "boom",
                                    "Signal 15 (SIGTERM) received by PID 7"]))
    error = ErrorRecord(id=str(draw(st.integers(0, 10**6))), category=category, message=message,
                        line=message, pod=draw(st.sampled_from(["p0", "p1"])), rank=draw(st.sampled_from([None, 0, 1])),
                        seq=draw(st.integers(0, 3)), pattern=draw(st.sampled_from([None, "crash_frame_nccl", "other"])))
    return Failure(error, tier, draw(_times), error.rank, draw(st.sampled_from([math.inf, 3.0, 7.0])))


# each branch of find_root: causes and effects, effects alone, launcher summaries alone
_failures = st.sampled_from([(0, 1, 2, 3), (1, 2), (2, 3), (2,), (3,)]).flatmap(lambda tiers: st.lists(_failure(tiers), max_size=25))


@settings(max_examples=500, deadline=None)
@given(_failures)
def test_find_root_is_the_sorting_find_root(failures):
    got, how = find_root(failures)
    want, want_how = _find_root_before(failures)
    assert how == want_how
    assert got is want  # the same failure object, not an equal one: ties broken the same way


def test_find_root_among_simultaneous_effects_takes_the_one_that_explains_the_others():
    def effect(category, seq, t=10.0):
        return Failure(ErrorRecord(category=category, seq=seq), 2, t, None)

    timeout, lost = effect("nccl_timeout", 0), effect("nccl_error", 5)
    assert find_root([timeout, lost, effect("nccl_timeout", 1, 9.0)]) == (lost, "effect")


def _count_before(pairs, totals):
    seen = set()
    for i in range(0, len(pairs), 2):
        fp = pairs[i]
        if fp not in seen:
            seen.add(fp)
            totals[pairs[i + 1]] += 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 12), st.integers(0, 4)), max_size=60))
def test_counts_of_a_partition_are_each_ids_first_kind_counted_once(pairs):
    words = array("Q", [w for pair in pairs for w in pair])
    got, want = [0] * 5, [0] * 5
    record_counts._count(words, got)
    _count_before(words, want)
    assert got == want
