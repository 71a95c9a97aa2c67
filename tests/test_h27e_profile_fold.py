"""bench.profile_replay.fold: `under` keeps the stacks through one function, `by_line` keys self time by line."""

from bench.profile_replay import fold

RAW = "\n".join([
    "<module> (run.py:1);_find_and_load (<frozen importlib._bootstrap>:1);exec_module (x.py:3) 40",
    "<module> (run.py:1);Replay.run (gangscope/pipeline/run/replay.py:124);_scan (c.py:10) 30",
    "<module> (run.py:1);Replay.run (gangscope/pipeline/run/replay.py:124);_scan (c.py:12) 20",
    "<module> (run.py:1);Replay.run_more (r.py:5) 10",
    "garbage line",
])


def test_whole_process_by_default(tmp_path):
    raw = tmp_path / "stacks.txt"
    raw.write_text(RAW)
    total, self_time, inclusive = fold(raw)
    assert total == 100
    assert self_time["_scan (c.py)"] == 50 and inclusive["<module> (run.py)"] == 100


def test_under_counts_only_the_stacks_through_that_function(tmp_path):
    raw = tmp_path / "stacks.txt"
    raw.write_text(RAW)
    total, self_time, inclusive = fold(raw, under="Replay.run")
    assert total == 50  # not the import's 40, nor Replay.run_more's 10 (a name that only starts alike)
    assert inclusive["Replay.run (gangscope/pipeline/run/replay.py)"] == 50
    assert "exec_module (x.py)" not in self_time


def test_by_line_keys_self_time_by_source_line(tmp_path):
    raw = tmp_path / "stacks.txt"
    raw.write_text(RAW)
    _total, self_time, _inclusive = fold(raw, under="Replay.run", by_line=True)
    assert self_time == {"_scan (c.py:10)": 30, "_scan (c.py:12)": 20}
