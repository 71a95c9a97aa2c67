"""The root cause of a failed attempt: the failures its error records stand for, and which came first.

How the root cause is found (cause -> effect is data, in `rules.py`):

1. Every error record becomes a *failure* with a tier. Tier 0: a failure a rank
   reports about itself (an OOM, an exception, a crash). Tier 1: a launcher saying a
   worker died of a signal that names a cause (SIGKILL -> host memory). Tier 2: the
   categories that are usually the EFFECT of another rank's failure (`EFFECTS`:
   collective timeouts, lost peers, torchrun's SIGTERM, a lost rendezvous store).
   Tier 3: launcher summaries that say nothing new (exit code 1, ChildFailedError).
   Warnings (NCCL WARN, skipped fp16 steps) are never failures.
2. The root is the earliest failure of tiers 0-1. An effect can be reported before
   its cause (peers see a closed socket before the killed rank's launcher notices),
   so a tier-2 failure only wins when it is more than `EFFECT_SLACK_S` earlier.
   With no tier 0-1 failure, the earliest tier-2 failure is the root, or among effects
   close in time the one that explains the others (`EFFECT_ORDER`).
   Where the lines carry no time (plain text, glog stamps without a year), causality
   decides first (a cause beats any effect, an explaining effect the others) and then
   the order of appearance (`seq`, the line's position in its stream).
3. When the root is a collective timeout and some known ranks never reported one,
   those silent ranks are the suspects: `first_failure` names the first of them.
4. Everything else that failed becomes a symptom, by category, with its ranks.

torchrun's "Root Cause (first observed failure)" entry is used as evidence and to
find the global rank of a launcher-level failure, never as the answer.
[h28g] Nor as the answer where two ranks raised the same exception with no time: it
only says which of them exited on it first (first_exit_of_same_error).
"""

from __future__ import annotations

from bisect import bisect_left
import math
import re
from dataclasses import dataclass

from msgspec.structs import replace
from typing import Any

from gangscope.parsers import times
from gangscope.parsers.errors import (
    END, SUMMARY, WARNING, child_failures, exception_category, failure_category, first_trace_rule, frame_key, groups_of,
    rule_role,
)
from gangscope.parsers.records import ErrorRecord
from gangscope.pipeline.diagnose.ranks import RankMap, box_of_pod, is_box
from gangscope.pipeline.diagnose.rules import (
    AGENT_CLOSING_EXITCODES, BARE_STACK_CRASHES, BOX_OUTSIDE_KILL_EXITCODES, CANN_REPORTS, CAUSE_BELOW_MESSAGES, CRASH_EXPLAINED_BY_EARLIER,
    ECHO_OF_ANOTHER_FAILURE, EFFECT_ORDER,
    EFFECT_SLACK_S, EFFECTS, EXPLAINED_WHEN_LATER, EXPLAINING_TIMEOUT, FIRST_FAILURE_REPORTS, INFORMATIVE_SUMMARY,
    LAUNCHER_OWN_KILL, NPU_CALL_FAILED, OOM_SKIP_NOTICES, TEARDOWN_ONLY, UNRAISABLE_REPORTS, UNRAISABLE_STILL_FAILS,
    WATCHDOG_TEARDOWN_ABORT,
)
from gangscope.pipeline.diagnose.rules import PEER_NAMING_CHECKS  # h34d
from gangscope.pipeline.diagnose.views import AttemptView


@dataclass(slots=True)
class Failure:
    """One error record as diagnosis sees it."""

    error: ErrorRecord
    tier: int
    t: float  # seconds since the epoch (inf when the line had no time)
    rank: int | None
    # A torchrun box's own `time` field (agent-local time): it orders boxes among themselves (two
    # agents, two restarts), never against the times of other lines.
    box_t: float = math.inf

    @property
    def seq(self) -> int:
        """The line's position in its stream: the order of appearance where times are missing."""
        return self.error.seq or 0

    @property
    def category(self) -> str:
        return self.error.category


def failure_tier(error: ErrorRecord, box: bool | None = None) -> int | None:
    """The tier of the failure an error record stands for (module doc); None for a warning or
    a line that says training ended. `box`: `is_box(error)` where the caller has it."""
    role = rule_role(error.pattern)
    if role == WARNING or role == END:
        return None
    if role == SUMMARY or (is_box(error) if box is None else box):
        return 1 if error.category in INFORMATIVE_SUMMARY else 3
    return 2 if error.category in EFFECTS else 0


def failure_of(error: ErrorRecord, ranks: RankMap) -> Failure | None:
    """The failure an error record stands for, with its tier, time and global rank; None for a warning."""
    box = is_box(error)  # once an error: the tier, the box's time and the rank all ask
    tier = failure_tier(error, box)
    if tier is None:
        return None
    t = times.seconds(error.time)
    box_t = times.seconds(ranks.box_time(error)) if box else None
    return Failure(error, tier, t if t is not None else math.inf, ranks.rank_of(error, box),
                   box_t if box_t is not None else math.inf)


def box_outside_kills(view: AttemptView, ranks: RankMap) -> list[Failure]:
    """[h31d] Workers a torchrun box lists, not as its root cause, as killed by a signal from outside the agent
    (rules.BOX_OUTSIDE_KILL_EXITCODES: no "Sending process <pid> closing signal" line of the pod names their pid), where the
    box's root cause is itself an effect of another rank's failure (`EFFECTS`: a lost peer, a collective timeout): each is a
    launcher's report of that death (tier 1), at the box's time, with the entry's global rank. A root cause that is a
    failure of its own (an exception, a crash) stands."""
    out: list[Failure] = []
    closed: dict[str | None, set[str]] | None = None
    for error in view.errors:
        if not error.trace_id or not is_box(error):
            continue
        entries = ranks.box_of_trace.get(error.trace_id) or []
        roots = [e for e in entries if e.get("root_cause")]
        if len(roots) != 1 or failure_category(roots[0])[0] not in EFFECTS:
            continue  # the box's root cause is a failure of its own (or the box lists none): it stands
        kills = [e for e in entries if not e.get("root_cause") and e.get("exitcode") in BOX_OUTSIDE_KILL_EXITCODES
                 and isinstance(e.get("rank"), int)]  # fmt: skip
        if not kills:
            continue
        if closed is None:
            closed = {}
            for e in view.errors:
                if e.pattern == "agent_closing" and (pid := groups_of(e).get("pid")):
                    closed.setdefault(e.pod, set()).add(pid)
        t = times.seconds(error.time)
        box_t = times.seconds(ranks.box_time(error))
        for entry in kills:
            if str(entry.get("pid")) in closed.get(error.pod, set()):
                continue
            category, said = failure_category(entry)
            report = replace(error, category=category, message=f"torchrun's failure box: {said}")
            out.append(Failure(report, 1, t if t is not None else math.inf, entry["rank"],
                               box_t if box_t is not None else math.inf))
    return out


def without_handled(failures: list[Failure], view: AttemptView) -> list[Failure]:
    """Tracebacks a rank printed and survived (traceback.print_exc, logging.exception; CPython's own report of an
    exception it could not raise, h27f) are not failures. Where torch's excepthook is on (a trace of the pod carries a [rankN]: prefix, as
    uncaught exceptions then do), an unprefixed Python exception of that pod was such a print."""
    hooked = {t.pod for t in view.traces if t.rank is not None}
    ignored = _unraisable_traces(view)  # h27f
    skipped = _skipped_ooms(view, failures)  # h28d
    kept = []
    for f in failures:
        e = f.error
        if skipped and id(e) in skipped:
            continue
        if (f.tier == 0 and e.trace_id and e.category == "python_exception" and e.rank is None
                and e.pod in hooked and not is_box(e)):  # fmt: skip
            continue
        if ignored and e.trace_id in ignored:
            continue
        kept.append(f)
    return kept


def _skipped_ooms(view: AttemptView, failures: list[Failure]) -> set[int]:
    """[h28d] The CUDA OOMs (their error records' id()) a run went on from: in its pod, a framework's notice that it skips
    the batch (rules.OOM_SKIP_NOTICES) comes after the OOM, and a step or epoch record comes after the notice, with no failure of
    another category in between (the OOM then the notice then the step, in the order they were read)."""
    if not any(e.pattern in OOM_SKIP_NOTICES for e in view.errors):
        return set()
    failing = {id(f.error): f.category for f in failures}
    by_pod: dict[Any, list] = {}
    for r in view.errors:
        if r.pattern in OOM_SKIP_NOTICES or id(r) in failing:
            by_pod.setdefault(r.pod, []).append(r)
    for s in (*view.steps, *view.epochs):
        if s.pod in by_pod:
            by_pod[s.pod].append(s)
    went_on: set[int] = set()
    for records in by_pod.values():
        records.sort(key=lambda r: (r.time or "", r.seq or 0))
        ooms: list[int] = []
        noticed: list[int] = []
        for r in records:
            if getattr(r, "kind", None) != "error":  # a step or an epoch record: the run went on after the notice
                went_on.update(noticed)
                ooms, noticed = [], []
            elif r.pattern in OOM_SKIP_NOTICES:
                noticed += ooms
                ooms = []
            elif failing.get(id(r)) == "cuda_oom":
                ooms.append(id(r))
            else:  # another failure before the run went on
                ooms, noticed = [], []
    return went_on


def _unraisable_traces(view: AttemptView) -> set[str]:
    """[h27f] The ids of the traces CPython printed under its "Exception ignored ..." line (rules.UNRAISABLE_REPORTS): the
    interpreter swallowed the exception and went on. The traceback starts on the next line of the same stream; a copy that
    put a blank line inside it splits it into traces one after the other (a cut one, then one that starts at a frame): they
    belong to the report up to the first with an exception line, each starting at most one line after the one before."""
    reports = [u for u in view.errors if u.pattern in UNRAISABLE_REPORTS and u.seq is not None]
    if not reports:
        return set()
    by_stream: dict[tuple, list] = {}  # each stream's traces in order, sorted once (not once a report)
    for t in view.traces:
        if t.seq is not None:
            by_stream.setdefault((t.pod, t.container, t.stream), []).append(t)
    starts: dict[tuple, list[int]] = {}
    for key, traces in by_stream.items():
        traces.sort(key=lambda t: t.seq)
        starts[key] = [t.seq for t in traces]
    ids: set[str] = set()
    for u in reports:
        key = (u.pod, u.container, u.stream)
        traces = by_stream.get(key)
        if not traces:
            continue
        pos = u.seq + 1  # type: ignore[operator]
        for t in traces[bisect_left(starts[key], pos):]:
            if t.seq - pos > 1:
                break
            if t.exception_type:
                if not _still_fails(t):  # h28a
                    ids.add(t.id)
                break
            ids.add(t.id)
            pos = t.seq + max(t.line_count or 0, 1)
    return ids


def _still_fails(trace: Any) -> bool:
    """[h28a] Whether a swallowed exception still stands for a failure of the run (rules.UNRAISABLE_STILL_FAILS: a
    DataLoader worker's death, reported from wherever the main thread was)."""
    frames = [frame_key(f.file, f.function) for f in trace.frames or ()]
    rule = first_trace_rule(trace.exception_type or "", trace.message or "", frames)
    return rule is not None and rule.name in UNRAISABLE_STILL_FAILS


# LAUNCHER_OWN_KILL read the other way: an explaining rule -> the stops it explains, in the table's order
_OWN_KILL_OF: dict[str, tuple[str, ...]] = {}
for _name, _before in LAUNCHER_OWN_KILL.items():
    for _rule in _before:
        _OWN_KILL_OF[_rule] = (*_OWN_KILL_OF.get(_rule, ()), _name)


def without_own_kills(failures: list[Failure]) -> list[Failure]:
    """A stop with no reason given that comes after the failure its launcher answered by killing the
    step (`LAUNCHER_OWN_KILL`, same pod, earlier in time or, without times, in order of appearance)
    is a launcher summary (tier 3), not a stop from outside."""
    first: dict[tuple[str, str | None], tuple[float, int]] = {}  # (explained rule, pod) -> earliest explaining failure
    for g in failures:
        explained = _OWN_KILL_OF.get(g.error.pattern)  # one look-up a failure, not one per entry of the table
        if explained is not None:
            for name in explained:
                key = (name, g.error.pod)
                first[key] = min(first.get(key, (math.inf, 1 << 62)), (g.t, g.seq))
    if not first:
        return failures
    kept = []
    for f in failures:
        earliest = first.get((f.error.pattern or "", f.error.pod))
        if earliest is not None and earliest < (f.t, f.seq) and "DUE TO" not in (f.error.line or ""):
            f = Failure(f.error, 3, f.t, f.rank, f.box_t)
        kept.append(f)
    return kept


def find_root(failures: list[Failure]) -> tuple[Failure | None, str]:
    """The earliest cause; effects only when nothing else explains them (see module doc).
    The first of a kind is a `min` (the first of equals, as a stable sort's first), not a sort
    of all of them: an attempt of 512 ranks timing out holds tens of thousands of effects."""
    causes = sorted((f for f in failures if f.tier <= 1), key=_earliest)  # _sharpen reads them in this order
    effects = [f for f in failures if f.tier == 2]
    first_effect = min(effects, key=_earliest) if effects else None
    if causes:
        root = causes[0]
        if first_effect is not None and math.isfinite(root.t) and first_effect.t < root.t - EFFECT_SLACK_S:
            return first_effect, "effect"
        root = _sharpen(root, causes + sorted((f for f in effects if f.error.pattern in SHARPENING_FRAMES), key=_earliest))
        root = _crash_explained_by_earlier(root, effects)
        root = _stack_of_its_own_timeout(root, effects)  # [h20a]
        root = _abort_of_its_own_watchdog(root, effects)  # [h26b]
        root = _npu_call_of_its_own_report(root, failures)  # [h28f]
        root = _message_on_the_lines_below(root, failures)  # [h31c]
        root = _first_named_by_launcher(root, failures)
        root = _odd_rank_named_by_peers(root, failures)  # [h34d]
        return root, ("rank_report" if root.tier == 0 else "launcher")
    if first_effect is not None:
        # Simultaneous effects: the one that explains the others (a lost peer explains a timeout).
        close = [f for f in effects if _near(f, first_effect)]
        root = min(close, key=_explaining)
        return _explained_by_earlier(root, close), "effect"
    # [h32b] a teardown's first words (rules.TEARDOWN_ONLY) only where nothing else failed
    said = [f for f in failures if f.error.pattern not in TEARDOWN_ONLY] or failures
    return (min(said, key=_earliest), "unknown") if said else (None, "unknown")


_EFFECT_RANK = {category: i for i, category in enumerate(EFFECT_ORDER)}


def _earliest(f: Failure) -> tuple:
    """The order of failures: time, tier, box time, order of appearance, then the effect that
    explains the others (a category that is no effect first)."""
    error = f.error
    return (f.t, f.tier, f.box_t, error.seq or 0, _EFFECT_RANK.get(error.category, -1))


def _explaining(f: Failure) -> tuple:
    """Among simultaneous effects, the one that explains the others first (`EFFECT_ORDER`), then
    the earliest; ties as `_earliest` orders them (the effects are all of one tier)."""
    error = f.error
    return (_EFFECT_RANK[error.category], f.t, error.seq or 0, f.box_t)


#: Frames of a crash's own backtrace that say where it crashed (parsers/errors.py): an effect
#: category by itself, the crash's category when they follow it.
SHARPENING_FRAMES = frozenset({"crash_frame_nccl"})


#: Exceptions that are the echo of an earlier failure in the same process: a name the failed
#: block never assigned, read by the script's own cleanup (`except`/`finally`: the latent-diffusion
#: family's `if trainer.global_rank == 0:` -> "NameError: name 'trainer' is not defined"), CPython
#: Python/ceval.c (NameError "name '%.200s' is not defined", UnboundLocalError "cannot access local
#: variable '%s' where it is not associated with a value" / "local variable '%.200s' referenced
#: before assignment"). Printed as a separate traceback (its "During handling" line lost, or
#: pasted first), it never outranks the failure beside it.
SECONDARY_EXCEPTION = re.compile(r"^(?:NameError|UnboundLocalError): ")


def _sharpen(root: Failure, causes: list[Failure]) -> Failure:
    """A crash with no category of its own ('Fatal Python error: Aborted'), or a secondary
    exception (SECONDARY_EXCEPTION), next to another failure of the same pod: the other one says
    what happened (for a secondary exception, only another failure of the same process)."""
    secondary = root.category == "python_exception" and root.tier == 0 and SECONDARY_EXCEPTION.match(root.error.message or "")
    if root.category != "unknown" and not secondary:
        return root
    for other in causes:
        if other is root or other.category == "unknown" or other.error.pod != root.error.pod:
            continue
        if secondary and (other.tier != 0 or other.rank != root.rank or SECONDARY_EXCEPTION.match(other.error.message or "")):
            continue
        if _near(other, root) and (other.rank is None or root.rank in (None, other.rank)):
            return other
    return root


def _crash_explained_by_earlier(root: Failure, effects: list[Failure]) -> Failure:
    """A crash with no category of its own (`unknown`, tier 0) after which nothing else said more: the earliest effect of
    a category in `CRASH_EXPLAINED_BY_EARLIER` that the same process reported before it (same pod and container, the
    same rank where both name one, close in time) is what happened; else the crash."""
    if root.category != "unknown" or root.tier != 0:
        return root
    before = [f for f in effects if f.category in CRASH_EXPLAINED_BY_EARLIER and f.error.pod == root.error.pod
              and (f.rank is None or root.rank is None or f.rank == root.rank)
              and _comes_before(f, root) and (_near(f, root) or not (math.isfinite(f.t) and math.isfinite(root.t)))]
    return min(before, key=_earliest) if before else root


def _stack_of_its_own_timeout(root: Failure, effects: list[Failure]) -> Failure:
    """[h20a] A crash that is only a native stack (rules.BARE_STACK_CRASHES) of a known rank, with that same rank's own
    collective timeout (rules.EXPLAINING_TIMEOUT) in the same pod close to it, before or after it: the timeout."""
    if root.category != "unknown" or root.tier != 0 or root.rank is None or root.error.pattern not in BARE_STACK_CRASHES:
        return root
    own = [f for f in effects if f.category == "nccl_timeout" and f.rank == root.rank and f.error.pod == root.error.pod
           and EXPLAINING_TIMEOUT.search(f.error.line or f.error.message or "")
           and (_near(f, root) or not (math.isfinite(f.t) and math.isfinite(root.t)))]
    return min(own, key=_earliest) if own else root


def _abort_of_its_own_watchdog(root: Failure, effects: list[Failure]) -> Failure:
    """[h26b] A crash that is only an abort (rules.WATCHDOG_TEARDOWN_ABORT) after which the same process's collective timeout
    (rules.EXPLAINING_TIMEOUT, same pod, the same rank where both name one) was reported before it: the watchdog took the
    process down, so the earliest such timeout is what happened; else the crash."""
    if root.category != "unknown" or root.tier != 0:
        return root
    if not (WATCHDOG_TEARDOWN_ABORT.search(root.error.message or "") or WATCHDOG_TEARDOWN_ABORT.search(root.error.line or "")):
        return root
    own = [f for f in effects if f.category == "nccl_timeout" and f.error.pod == root.error.pod
           and (f.rank is None or root.rank is None or f.rank == root.rank)
           and EXPLAINING_TIMEOUT.search(f.error.line or f.error.message or "") and _comes_before(f, root)
           and (_near(f, root) or not (math.isfinite(f.t) and math.isfinite(root.t)))]
    return min(own, key=_earliest) if own else root


def _npu_call_of_its_own_report(root: Failure, failures: list[Failure]) -> Failure:
    """[h28f] An exception that is torch_npu's report of a failed CANN call (rules.NPU_CALL_FAILED: it names the call and its
    return code, or says the inner error was reported above): the earliest line of CANN's own report that says what failed
    (rules.CANN_REPORTS) from the same pod, the same rank where both name one, close in time, is what happened; else the
    exception."""
    if root.category != "python_exception" or root.tier != 0:
        return root
    if not (NPU_CALL_FAILED.search(root.error.message or "") or NPU_CALL_FAILED.search(root.error.line or "")):
        return root
    own = [f for f in failures if f.error.pattern in CANN_REPORTS and f.error.pod == root.error.pod
           and (f.rank is None or root.rank is None or f.rank == root.rank)
           and (_near(f, root) or not (math.isfinite(f.t) and math.isfinite(root.t)))]
    return min(own, key=_earliest) if own else root


#: [h31c] An exception line that carries no message of its own: its class alone ("MemoryError", "ResourceExhaustedError:"),
#: optionally with a rank prefix. CPython prints "Type: " + str(e) and "Type" alone for an empty str: a class with nothing
#: after it printed a message that began with a newline (PaddlePaddle's enforce errors: "\n\n---...C++ Traceback...Error
#: Message Summary:...ResourceExhaustedError: \n\nOut of memory error on GPU N. ..."), its words on the lines below it.
_BARE_EXCEPTION_LINE = re.compile(r"^\s*(?:\[rank\d+\]:\s*)?(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)):?\s*$")
#: [h32c] An exception line whose message says its words are below it (rules.CAUSE_BELOW_MESSAGES), read as a bare one.
_ANNOUNCING_EXCEPTION_LINE = re.compile(r"^\s*(?:\[rank\d+\]:\s*)?(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)): (?P<message>.+)$")
#: How far below it (lines of its stream) the words of such a message are read: a C++ traceback and a summary's rules.
MESSAGE_BELOW_LINES = 40


def _message_on_the_lines_below(root: Failure, failures: list[Failure]) -> Failure:
    """[h31c] An exception whose line carries no message (`_BARE_EXCEPTION_LINE`), whose category is its class's alone (the
    trace rules that read no words: `python_exception`, MemoryError's host_oom): the first failure of a category of its own
    (not `unknown`, not `python_exception`) read on the lines just below it in the same stream (same pod and container,
    within MESSAGE_BELOW_LINES) is that message's words, what happened; else the exception. Sample: batch h31c's
    paddle_summary_gpu_oom (Paddle's MemoryError with its GPU allocator's "Out of memory error on GPU N" in the summary)."""
    if root.tier != 0:
        return root
    m = _BARE_EXCEPTION_LINE.match(root.error.line or "") or _BARE_EXCEPTION_LINE.match(root.error.message or "")
    if m is None:  # [h32c] or one whose message announces them below
        m = _announcing_line(root.error.line or "") or _announcing_line(root.error.message or "")
    if m is None or root.category != (exception_category(m["type"], "") or "python_exception"):
        return root
    e = root.error
    below = [f for f in failures if f.tier == 0 and f.category not in ("unknown", "python_exception", root.category)
             and f.error.pod == e.pod and f.error.container == e.container and 0 < f.seq - root.seq <= MESSAGE_BELOW_LINES]
    return min(below, key=lambda f: f.seq) if below else root


def _announcing_line(text: str) -> re.Match[str] | None:
    """[h32c] `text` as an exception line whose message says its words follow on the lines below (CAUSE_BELOW_MESSAGES)."""
    m = _ANNOUNCING_EXCEPTION_LINE.match(text)
    return m if m is not None and CAUSE_BELOW_MESSAGES.match(m["message"]) else None


def _first_named_by_launcher(root: Failure, failures: list[Failure]) -> Failure:
    """An `unknown` root that says it echoes another process's failure (rules.ECHO_OF_ANOTHER_FAILURE): the
    earliest launcher report of the same pod naming the process that failed first, if any, is the answer."""
    if root.category != "unknown" or not ECHO_OF_ANOTHER_FAILURE.search(root.error.message or root.error.line or ""):
        return root
    reports = [f for f in failures if f.error.pattern in FIRST_FAILURE_REPORTS and f.rank is not None and f.error.pod == root.error.pod]
    return min(reports, key=lambda f: (f.t, f.seq)) if reports else root


def _peer_check(f: Failure) -> re.Match[str] | None:
    """[h34d] `f`'s words as one of rules.PEER_NAMING_CHECKS (own rank, the rank it names), if they are."""
    for text in (f.error.line, f.error.message):  # the message may be cut short of the rank it names
        if not text or "Rank " not in text:
            continue
        for pattern in PEER_NAMING_CHECKS:
            m = pattern.search(text)
            if m is not None:
                return m
    return None


def _odd_rank_named_by_peers(root: Failure, failures: list[Failure]) -> Failure:
    """[h34d] A root that is a rank's report of a cross-rank check naming the first rank that differs from it
    (rules.PEER_NAMING_CHECKS): where one rank is named by every other rank that reported the same check (at least
    two of them) and reported it too, that rank's report is the first failure (its own rank: the one that differs).
    Two ranks name each other: nothing says which differs, `root` stays. Anything else: `root`."""
    if root.tier != 0 or _peer_check(root) is None:
        return root
    named: dict[int, int] = {}
    own_report: dict[int, Failure] = {}
    for f in sorted((f for f in failures if f.tier == 0), key=_earliest):
        m = _peer_check(f)
        if m is None:
            continue
        own, other = int(m["own"]), int(m["other"])
        if own == other:
            continue
        named.setdefault(own, other)
        own_report.setdefault(own, f)
    for odd in sorted(set(named.values())):
        others = [r for r in named if r != odd]
        if len(others) >= 2 and odd in own_report and all(named[r] == odd for r in others):
            f = own_report[odd]
            return f if f.rank == odd else Failure(f.error, f.tier, f.t, odd, f.box_t)
    return root


def _explained_by_earlier(root: Failure, close: list[Failure]) -> Failure:
    """The effect that explains `root`'s category when it was reported before every failure of that category
    (`EXPLAINED_WHEN_LATER`: NCCL errors after a collective timeout are the abort's), else `root`."""
    explainers = [f for f in close if root.category in EXPLAINED_WHEN_LATER.get(f.category, ())
                  and EXPLAINING_TIMEOUT.search(f.error.line or f.error.message or "")]
    if not explainers:
        return root
    first = min(explainers, key=_earliest)
    later = [f for f in close if f.category == root.category]
    return first if all(_comes_before(first, f) for f in later) else root


def _comes_before(a: Failure, b: Failure) -> bool:
    """Whether `a` was reported before `b`: by time where both lines carry one and they differ, else by order of
    appearance when both come from the same stream (one pod's container); otherwise nothing says so."""
    if math.isfinite(a.t) and math.isfinite(b.t) and a.t != b.t:
        return a.t < b.t
    ea, eb = a.error, b.error
    return ea.pod == eb.pod and ea.container == eb.container and a.seq < b.seq


def _near(a: Failure, b: Failure) -> bool:
    """Whether two failures are close enough in time to be one event; without times
    (inf, inf) nothing says they are apart."""
    if a.t == b.t:
        return True
    return abs(a.t - b.t) <= EFFECT_SLACK_S  # inf - finite is inf: never near


def silent_ranks(failures: list[Failure], ranks: RankMap) -> list[int]:
    """Known ranks that never reported a timeout nor a failure of their own."""
    reported = {f.rank for f in failures if f.rank is not None and f.tier in (0, 2)}
    timed_out = {f.rank for f in failures if f.category == "nccl_timeout" and f.rank is not None}
    known = ranks.known()
    silent = sorted(known - reported)
    if not timed_out or not silent or len(silent) >= len(known) / 2 + (len(known) == 2):
        return []
    return silent


def first_failure(root: Failure, ranks: RankMap) -> dict[str, Any]:
    """The root's pod, rank, node and time (pod and node from the rank map when the line lacks them)."""
    error = root.error
    rank = root.rank
    pod = error.pod or (ranks.pod_of(rank) if rank is not None else None)
    node = error.node or (ranks.node_of(rank) if rank is not None else None)
    return {"pod": pod, "rank": rank, "node": node, "time": error.time}


def first_exit_of_same_error(view: AttemptView, root: Failure, failures: list[Failure]) -> Failure:
    """[h28g] A rank's exception with no time, whose pod's torchrun box lists that rank as stopped by the agent
    (rules.AGENT_CLOSING_EXITCODES) and names another rank as its root cause that raised the same exception (the same
    line, word for word, no time either): the rank that exited on it first, by the box, is the answer; the order the two
    tracebacks appear in is the order their streams were merged. Anything else: `root`."""
    if root.tier != 0 or math.isfinite(root.t) or root.rank is None or root.error.trace_id is None:
        return root
    box = box_of_pod(view, root.error.pod)
    if box is None:
        return root
    entries = child_failures(box)
    own = [f for f in entries if f.get("rank") == root.rank]
    first = next((f for f in entries if f.get("root_cause")), None)
    if (not own or first is None or first.get("rank") in (None, root.rank)
            or any(f.get("exitcode") not in AGENT_CLOSING_EXITCODES for f in own)):  # fmt: skip
        return root
    said = (root.error.message or "").strip()
    same = [f for f in failures if f.tier == 0 and f.rank == first["rank"] and f.error.pod == root.error.pod
            and not math.isfinite(f.t) and f.error.trace_id is not None and f.category == root.category
            and said and (f.error.message or "").strip() == said]  # fmt: skip
    return min(same, key=_earliest) if same else root


def box_agrees(view: AttemptView, root: Failure, ranks: RankMap) -> bool:
    """Whether torchrun's box in the root's pod names the root's rank as its root cause."""
    box = box_of_pod(view, root.error.pod)
    if box is None or root.rank is None:
        return False
    return any(f.get("root_cause") and f.get("rank") == root.rank for f in child_failures(box))
