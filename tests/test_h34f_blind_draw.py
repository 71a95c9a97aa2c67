"""Rules from batch h34f of issue 16 (fixtures/eval README, "Batch h34f"): a blind draw of long multi-process pastes.

One class of its misses is ruled here: NCCL's IB transport WARNs every asynchronous event the verbs library reports but
"communication established" and goes on (NVIDIA/nccl src/transport/net_ib.cc ncclIbAsyncThreadMain: WARN("NET/IB : Got
async event : %s", ibv_event_type_str(event)), 2.4-2.18; the nccl-rdma-sharp plugin's p2p_plugin.c the same). The port
and subnet-manager events ("port active", "LID change", "P_Key change", "SM change", "client reregistration", "GID table
change"; rdma-core libibverbs/enum_strs.c) say the fabric was reconfigured under a port that is up. A log that ended in
them was read as a job whose communication broke (dev 1641); now they are read past as NCCL's fallback warnings are
(pipeline/diagnose/rules.IB_PORT_NOTICES inside FALLBACK_NCCL_WARNINGS, endings.warnings_at_the_end), and a notice cut
by the copy counts only where its cut text can begin no other event. "port error", "local catastrophic error" and the
queue errors stay the last word of a broken job.
The lines below are rebuilt from the libraries' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

from gangscope.pipeline.diagnose import rules


def _init(host: str = "dgx-b12", base_pid: int = 7301, ranks: int = 8) -> str:
    """NCCL's Init COMPLETE line of every rank of one host, in a shuffled order, as they interleave."""
    order = [3, 0, 5, 1, 7, 2, 6, 4][:ranks] if ranks == 8 else list(range(ranks))
    return "".join(f"{host}:{base_pid + r}:{base_pid + 400 + r} [{r}] NCCL INFO comm 0x5{r}a7c0e0 rank {r} nranks {ranks} "
                   f"cudaDev {r} busId {0x18000 + r * 0x1000:x} - Init COMPLETE\n" for r in order)


def _notice(event: str, host: str = "dgx-b12", pid: int = 7301, where: str = "transport/net_ib.cc:93",
            prefix: str = "") -> str:
    return f"\n{prefix}{host}:{pid}:{pid + 455} [0] {where} NCCL WARN NET/IB : Got async event : {event}\n"


STEPS = "".join(f"iteration {i:>6}/ 40000 | consumed samples: {i * 512:>9} | lm loss: {9.6 - i / 900:.6E} | "
                f"grad norm: {1.2 + i / 3000:.3f} |\n" for i in range(100, 700, 100))


PORT_EVENTS = ("port active", "LID change", "P_Key change", "SM change", "client reregistration", "GID table change")


@pytest.mark.parametrize("event", PORT_EVENTS)
def test_port_notices_from_every_process_at_the_end_are_no_failure(tmp_path, event):
    text = _init() + "".join(_notice(event, pid=7301 + r) for r in (0, 2, 1, 3, 5))
    d = the_diagnosis(tmp_path, text)
    assert d.category == "running", d.summary


@pytest.mark.parametrize("cut", ["client reregistr", "client re", "port a", "port activ", "GID tab", "P_K", "SM chan", "LID c"])
def test_a_notice_cut_by_the_copy_where_only_a_port_event_begins_so(tmp_path, cut):
    text = _init() + _notice("client reregistration", pid=7302) + _notice(cut, pid=7305)
    d = the_diagnosis(tmp_path, text)
    assert d.category == "running", d.summary


def test_the_sharp_plugins_notice_and_launcher_prefixes(tmp_path):
    text = "".join(f"[default{r}]:" + line for r, line in zip(range(8), _init().splitlines(keepends=True)))
    text += "".join(_notice("SM change", pid=7301 + r, where="p2p_plugin.c:141", prefix=f"[default{r}]:") for r in (4, 6))
    d = the_diagnosis(tmp_path, text)
    assert d.category == "running", d.summary


def test_notices_after_training_records(tmp_path):
    d = the_diagnosis(tmp_path, _init(ranks=4) + STEPS + _notice("port active") + _notice("LID change", pid=7303))
    assert d.category == "running", d.summary


@pytest.mark.parametrize(
    "event",
    ["port error", "local catastrophic error", "CQ error", "WQ fatal", "local work queue catastrophic error",
     "path migration request error", "SRQ catastrophic error", "unknown",
     # a cut that could begin a failure event as well is not read as a notice
     "port ", "port", "S", "local"],
)  # fmt: skip
def test_near_misses_other_events_stay_the_last_word(tmp_path, event):
    d = the_diagnosis(tmp_path, _init() + _notice("client reregistration") + _notice(event, pid=7304))
    assert d.category == "nccl_error", d.summary
    assert "Got async event" in d.summary


def test_near_miss_a_failure_warning_after_the_notices_is_named(tmp_path):
    completion = ("\ndgx-b12:7306:7771 [6] transport/net_ib.cc:1287 NCCL WARN NET/IB : Got completion from peer "
                  "10.52.0.19<48114> with error 12, opcode 0, len 0, vendor err 129 (Send)\n")
    d = the_diagnosis(tmp_path, _init() + _notice("SM change") + completion)
    assert d.category == "nccl_error", d.summary
    assert "Got completion from peer" in d.summary


def test_near_miss_a_timeout_after_the_notices_is_the_answer(tmp_path):
    timeout = ("[rank5]:[E1129 03:12:44.318024917 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operation "
               "timeout: WorkNCCL(SeqNum=88412, OpType=ALLREDUCE, NumelIn=2048, NumelOut=2048, Timeout(ms)=600000) ran for "
               "600043 milliseconds before timing out.\n")
    d = the_diagnosis(tmp_path, _init() + STEPS + _notice("client reregistration") + timeout)
    assert d.category == "nccl_timeout", d.summary


def test_near_miss_a_notice_whose_words_go_on_is_not_read_past(tmp_path):
    d = the_diagnosis(tmp_path, _init() + _notice("port active, resetting the link"))
    assert d.category == "nccl_error", d.summary


def test_the_prefixes_are_those_no_other_event_begins():
    assert rules.IB_PORT_NOTICE_EVENTS == PORT_EVENTS
    prefixes = rules._unambiguous_prefixes(rules.IB_PORT_NOTICE_EVENTS, rules.IB_OTHER_EVENTS)
    assert set(PORT_EVENTS) <= set(prefixes)
    assert not any(other.startswith(p) for p in prefixes for other in rules.IB_OTHER_EVENTS)
    assert "port a" in prefixes and "port" not in prefixes and "S" not in prefixes and "SM" in prefixes
