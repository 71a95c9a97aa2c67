"""The command line as a user meets it: exit codes, one-line errors, the output folder."""

import gzip
import json
import subprocess
import sys

import pytest

from gangscope.pipeline.run.cli import main

UID = "0c6d1111-2222-3333-4444-555566667777"
TRACE = [
    "2024-05-01T12:00:00.100000000Z stderr F [rank1]: Traceback (most recent call last):",
    '2024-05-01T12:00:00.100000001Z stderr F [rank1]:   File "/workspace/train.py", line 12, in <module>',
    "2024-05-01T12:00:00.100000002Z stderr F [rank1]:     main()",
    "2024-05-01T12:00:00.100000003Z stderr F [rank1]: KeyError: 'labels'",
]


@pytest.fixture(autouse=True)
def no_servers(monkeypatch):
    """These commands write to the output folder, also where the environment names servers that
    run (the README's way to test against them): GANGSCOPE_OPENSEARCH_URL would send replay there."""
    for name in ("GANGSCOPE_OPENSEARCH_URL", "GANGSCOPE_KAFKA_BOOTSTRAP"):
        monkeypatch.delenv(name, raising=False)


def pod_log(root, lines, pod="llama-train-worker-1", name="0.log"):
    d = root / f"team-a_{pod}_{UID}" / "pytorch"
    d.mkdir(parents=True, exist_ok=True)
    f = d / name
    f.write_text("\n".join(lines) + "\n")
    return f


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "gangscope", *args], capture_output=True, text=True, timeout=120
    )


def test_replay_writes_one_ndjson_file_per_kind_and_a_summary(tmp_path):
    pod_log(tmp_path / "logs", ["2024-05-01T12:00:00Z stdout F hello"] + TRACE)
    out = tmp_path / "out"
    assert main(["replay", str(tmp_path / "logs"), "--out", str(out)]) == 0
    for kind in ("step", "epoch", "error", "trace", "event", "diagnosis"):
        assert (out / f"{kind}.ndjson").exists(), kind
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lines"] == 5
    assert not list(out.glob("*.partial"))


def test_missing_path_is_a_usage_error_before_any_output_folder(tmp_path):
    """SPEC.md: exit 2 for a usage error, and nothing that looks like a finished run (it exited 1
    with a complete-looking folder). Nothing at all is made: no --out, no staging folder."""
    logs = tmp_path / "logs"
    pod_log(logs, ["2024-05-01T12:00:00Z stdout F hello"])
    for args in ([str(tmp_path / "nope")], [str(logs), str(tmp_path / "nope")],
                 [str(logs), "--events", str(tmp_path / "no-events.ndjson")]):
        for command in ("replay", "diagnose"):
            out = ["--out", str(tmp_path / "o")] if command == "replay" else []
            proc = run_cli(command, *args, *out)
            assert proc.returncode == 2, (command, args, proc.stderr)
            assert proc.stderr.count("\n") == 1 and "no such file or directory" in proc.stderr, proc.stderr
            assert "Traceback" not in proc.stderr
            assert sorted(p.name for p in tmp_path.iterdir()) == ["logs"]


def test_a_folder_without_logs_is_a_usage_error_before_any_output_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "only-a-readme").mkdir()
    (tmp_path / "only-a-readme" / "README.md").write_text("no logs here\n")
    for folder in ("empty", "only-a-readme"):
        proc = run_cli("replay", str(tmp_path / folder), "--out", str(tmp_path / "o"))
        assert proc.returncode == 2, proc.stderr
        assert "no log files found" in proc.stderr and "Traceback" not in proc.stderr
        assert not (tmp_path / "o").exists() and not (tmp_path / ".o.partial").exists()
        proc = run_cli("diagnose", str(tmp_path / folder))
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr


# Runs the command line with the k-th rename of a file or folder killing the process right after it
# (os._exit: no clean-up runs, as with SIGKILL), to see what a kill at that moment leaves.
DIE_AT_RENAME = """
import os, sys
k = int(sys.argv[1])
done = [0]
def dying(real):
    def rename(*a, **kw):
        real(*a, **kw)
        done[0] += 1
        if done[0] == k:
            os._exit(137)
    return rename
os.replace, os.rename = dying(os.replace), dying(os.rename)
from gangscope.pipeline.run.cli import main
raise SystemExit(main(sys.argv[2:]))
"""


def test_a_kill_at_any_rename_never_leaves_finished_files_without_their_summary(tmp_path):
    """A kill after the first rename left step.ndjson & co. under their final names and no
    summary.json (issue 17): now the run is written into a hidden staging folder that becomes
    --out in one rename. Killed at every rename in turn, --out is absent or complete; a rerun
    over the previous run's folder too."""
    logs = tmp_path / "logs"
    pod_log(logs, ["2024-05-01T12:00:00Z stdout F step 1 loss 2.0"] + TRACE)
    finished = None
    for rerun in (False, True):
        out = tmp_path / ("again" if rerun else "out")
        if rerun:
            assert main(["replay", str(logs), "--out", str(out), "--no-progress"]) == 0
        for k in range(1, 40):
            proc = subprocess.run([sys.executable, "-c", DIE_AT_RENAME, str(k), "replay", str(logs), "--out", str(out),
                                   "--no-progress"], capture_output=True, text=True, timeout=120)
            names = sorted(p.name for p in out.iterdir()) if out.exists() else []
            if proc.returncode != 137:  # the run ended before a k-th rename
                assert proc.returncode == 0, proc.stderr
                assert "summary.json" in names
                break
            final = [n for n in names if not n.startswith(".") and not n.endswith(".partial")]
            assert final == [] or "summary.json" in final, (k, names)
            finished = finished or (k if "summary.json" in final else None)
        else:
            pytest.fail("the run never ended")
    assert finished is not None  # the last rename is the one that makes the folder complete


def test_unknown_option_is_a_usage_error_with_exit_code_2(tmp_path):
    proc = run_cli("replay", str(tmp_path), "--bogus")
    assert proc.returncode == 2
    assert "unrecognized arguments" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_format_name_is_a_usage_error(tmp_path):
    pod_log(tmp_path, ["x"])
    proc = run_cli("replay", str(tmp_path), "--format", "xml", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "--format" in proc.stderr


def test_binary_junk_is_counted_and_the_rest_is_still_curated(tmp_path):
    f = pod_log(tmp_path / "logs", ["2024-05-01T12:00:00Z stdout F fine"] * 30)
    with open(f, "ab") as fh:
        fh.write(b"\x00\xff\xfe\x01garbage\n" + b"2024-05-01T12:00:01Z stdout F after junk\n")
    out = tmp_path / "out"
    code = main(["replay", str(tmp_path / "logs"), "--out", str(out)])
    assert code == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unreadable_lines"] == 1
    assert summary["invalid_utf8_lines"] == 1
    assert summary["lines"] == 32  # lines read, the unreadable one included


def test_truncated_gzip_reports_file_and_offset_with_exit_code_1(tmp_path):
    body = "".join(f"2024-05-01T12:00:00.{i:06d}Z stdout F line {i}\n" for i in range(50000)).encode()
    d = tmp_path / "logs" / f"team-a_p-0_{UID}" / "c"
    d.mkdir(parents=True)
    data = gzip.compress(body)
    (d / "0.log.20240501-120000.gz").write_bytes(data[: len(data) // 2])
    proc = run_cli("replay", str(tmp_path / "logs"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 1
    assert "0.log.20240501-120000.gz" in proc.stderr and "byte" in proc.stderr
    assert "Traceback (most recent" not in proc.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["lines"] > 1000


def test_stdin_is_read_with_a_dash(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "gangscope", "replay", "-", "--out", str(tmp_path / "o")],
        input="\n".join(TRACE) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["lines"] == 4


def test_diagnose_json_prints_a_json_array_of_the_diagnoses(tmp_path):
    pod_log(tmp_path, TRACE)
    proc = run_cli("diagnose", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    diagnoses = json.loads(proc.stdout)  # stdout is the array and nothing else
    assert [
        (d["kind"], d["job"], d["attempt"], d["outcome"], d["category"], d["exception_type"], d["first_failure"]["rank"])
        for d in diagnoses
    ] == [("diagnosis", "team-a/llama-train", 1, "failed", "python_exception", "KeyError", 1)]  # fmt: skip
    assert "KeyError: 'labels'" in diagnoses[0]["summary"]


def test_workers_give_the_same_records_as_one_process(tmp_path):
    from pathlib import Path

    fixtures = str(Path(__file__).parent.parent / "fixtures" / "runs")
    outputs = {}
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        main(["replay", fixtures, "--out", str(out), "--workers", str(workers), "--no-progress"])
        outputs[workers] = {
            kind: sorted((out / f"{kind}.ndjson").read_text().splitlines())
            for kind in ("step", "epoch", "error", "trace", "event", "signal", "diagnosis")
        }
        assert not (out / ".parts").exists()
    assert sum(len(v) for v in outputs[1].values()) > 50
    assert outputs[1] == outputs[2]


def test_a_ten_megabyte_line_is_cut_counted_and_the_trace_after_it_survives(tmp_path):
    big = "2024-05-01T11:59:59Z stdout F " + "x" * (10 << 20)
    pod_log(tmp_path / "logs", [big] + TRACE)
    out = tmp_path / "out"
    assert main(["replay", str(tmp_path / "logs"), "--out", str(out), "--no-progress"]) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["long_lines_cut"] == 1
    traces = [json.loads(l) for l in (out / "trace.ndjson").read_text().splitlines()]
    assert [t["exception_type"] for t in traces] == ["KeyError"]


def test_docker_json_file_is_read_with_its_partials_joined(tmp_path):
    lines = [
        {"log": "Traceback (most recent call last):\n", "stream": "stderr", "time": "2024-05-01T12:00:00.1Z"},
        {"log": '  File "/workspace/train.py", line 12, in <module>\n', "stream": "stderr", "time": "2024-05-01T12:00:00.2Z"},
        {"log": "    main()\n", "stream": "stderr", "time": "2024-05-01T12:00:00.3Z"},
        {"log": "ValueError: bad ", "stream": "stderr", "time": "2024-05-01T12:00:00.4Z"},
        {"log": "shard\n", "stream": "stderr", "time": "2024-05-01T12:00:00.5Z"},
    ]
    f = tmp_path / ("a" * 64 + "-json.log")
    f.write_text("".join(json.dumps(l) + "\n" for l in lines))
    out = tmp_path / "out"
    assert main(["replay", str(f), "--out", str(out), "--no-progress"]) == 0
    traces = [json.loads(l) for l in (out / "trace.ndjson").read_text().splitlines()]
    assert [(t["exception_type"], t["message"], t["source"]) for t in traces] == [("ValueError", "bad shard", "docker")]


def test_fluent_bit_file_takes_pod_identity_from_each_record(tmp_path):
    kube = {
        "pod_name": "llama-train-worker-3",
        "namespace_name": "team-a",
        "pod_id": UID,
        "container_name": "pytorch",
        "host": "ip-10-1-2-3",
        "labels": {"training.kubeflow.org/job-name": "llama-train"},
    }
    texts = [l.split(" F ", 1)[1] for l in TRACE]
    records = [
        {"@timestamp": 1714564800.1, "time": f"2024-05-01T12:00:00.{i}Z", "stream": "stderr", "_p": "F", "log": t, "kubernetes": kube}
        for i, t in enumerate(texts, start=1)
    ]
    f = tmp_path / "fluentbit.ndjson"
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "out"
    assert main(["replay", str(f), "--out", str(out), "--no-progress"]) == 0
    (trace,) = [json.loads(l) for l in (out / "trace.ndjson").read_text().splitlines()]
    assert (trace["job"], trace["pod"], trace["node"], trace["rank"], trace["exception_type"]) == (
        "team-a/llama-train",
        "llama-train-worker-3",
        "ip-10-1-2-3",
        1,
        "KeyError",
    )


def test_an_explicit_out_wins_over_the_environments_opensearch_url(tmp_path, monkeypatch):
    # nothing listens on port 1: a replay that went to OpenSearch would fail with exit 2
    monkeypatch.setenv("GANGSCOPE_OPENSEARCH_URL", "http://127.0.0.1:1")
    pod_log(tmp_path / "logs", TRACE)
    out = tmp_path / "out"
    assert main(["replay", str(tmp_path / "logs"), "--out", str(out), "--no-progress"]) == 0
    assert (out / "trace.ndjson").read_text().count("KeyError") >= 1


def test_the_opensearch_flag_wins_over_an_explicit_out(tmp_path):
    pod_log(tmp_path / "logs", TRACE)
    code = main(["replay", str(tmp_path / "logs"), "--out", str(tmp_path / "out"),
                 "--opensearch", "http://127.0.0.1:1", "--no-progress"])
    assert code == 2 and not (tmp_path / "out").exists()


# --- diagnose as a user reads it (issue 21) ---------------------------------------------------

import os
import re
import shutil
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "artifacts"  # git-ignored: captures a person looks at
GANG = ROOT / "fixtures" / "gang"
# Every bundled run and gang scenario, with its events: 59 attempts, names up to 34 characters
EVERYTHING = [str(ROOT / "fixtures" / "runs"), str(ROOT / "fixtures" / "dialects"), *sorted(str(p) for p in GANG.glob("*/pods")), "--events",
              *sorted(str(p) for p in GANG.glob("[a-g]_*/*.json*") if p.name != "manifest.json")]
MARKUP = "[/INST] [bold red]boom[/bold red] \x1b[31mred"


def cells(line: str) -> int:
    from rich.cells import cell_len

    return cell_len(line)


def diagnose_lines(*args, env=None):
    proc = subprocess.run([sys.executable, "-m", "gangscope", "diagnose", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.splitlines(), proc


def test_diagnose_table_fits_80_columns_and_names_every_attempt():
    lines, _ = diagnose_lines(*EVERYTHING, env={"COLUMNS": "80"})
    assert max(cells(l) for l in lines) <= 80
    rows = [l for l in lines[1:] if not l.startswith(" ")]
    diagnoses = json.loads("\n".join(diagnose_lines(*EVERYTHING, "--json")[0]))
    assert len(rows) == len(diagnoses) > 40
    for row, d in zip(rows, diagnoses):  # one row per attempt, in the same order, columns whole
        assert row.split()[1:4] == [str(d["attempt"]), d["outcome"], d["category"]], row
    assert lines[0].split() == ["JOB", "#", "OUTCOME", "CATEGORY", "RANK", "POD"]


def test_diagnose_at_100_columns_keeps_whole_job_names_and_cuts_each_summary_to_one_line():
    lines, _ = diagnose_lines(*EVERYTHING, env={"COLUMNS": "100"})
    assert max(cells(l) for l in lines) <= 100
    assert any(l.startswith("team-a/dataloader-worker-exception ") for l in lines)
    summaries = [l for l in lines if l.startswith("  ")]
    assert summaries and all(l.endswith("…") or cells(l) < 100 for l in summaries)


def test_diagnose_piped_without_columns_cuts_nothing():
    lines, _ = diagnose_lines(str(ROOT / "fixtures" / "runs" / "rank_raises"), env={"COLUMNS": ""})
    (d,) = json.loads("\n".join(diagnose_lines(str(ROOT / "fixtures" / "runs" / "rank_raises"), "-o", "json")[0]))
    assert lines[0].split()[-1] == "SUMMARY" and d["summary"] in lines[1]


def test_log_text_with_rich_markup_and_escapes_is_printed_as_written(tmp_path):
    trace = [l.replace("KeyError: 'labels'", f"KeyError: '{MARKUP}'") for l in TRACE]
    pod_log(tmp_path, trace)
    for width in ("80", "200"):
        lines, proc = diagnose_lines(str(tmp_path), env={"COLUMNS": width})
        assert "MarkupError" not in proc.stderr and "Traceback" not in proc.stderr
        assert "\x1b" not in proc.stdout and max(cells(l) for l in lines) <= int(width)
    text = "\n".join(lines)  # at 200 columns the summary is whole
    assert "[/INST] [bold red]boom" in text  # markup shown, not applied
    wide, _ = diagnose_lines(str(tmp_path), "--wide")
    assert "[/INST] [bold red]boom[/bold red]" in wide[1] and "\x1b" not in "\n".join(wide)


def test_the_table_renders_markup_literally_at_every_width():
    from rich.console import Console

    from gangscope.parsers.records import DiagnosisRecord
    from gangscope.pipeline.run import diagnose_table

    d = DiagnosisRecord(job=f"team-a/{MARKUP}", attempt=1, outcome="failed", category="python_exception",
                        first_failure={"pod": "[red]pod-0", "rank": 3}, summary=f"rank 3 raised KeyError: {MARKUP}")
    for width in (40, 80, 100, 160):
        console = Console(width=width, record=True, highlight=False, color_system=None)
        for line in diagnose_table.render([d], width=width):
            console.print(line, soft_wrap=True)
        text = console.export_text()
        assert max(cells(l) for l in text.splitlines()) <= max(width, 60)
        assert "[/INST]" in text or "…" in text
        assert "\x1b" not in text
    wide = "".join(line.plain for line in diagnose_table.render([d], wide=True))
    assert wide.count("[/INST] [bold red]boom[/bold red] \\x1b[31mred") == 2  # job and summary, as written


def test_output_formats_json_ndjson_and_wide_agree(tmp_path):
    pod_log(tmp_path, TRACE)
    as_json = json.loads("\n".join(diagnose_lines(str(tmp_path), "-o", "json")[0]))
    assert as_json == json.loads("\n".join(diagnose_lines(str(tmp_path), "--json")[0]))  # SPEC.md's --json stays
    ndjson = [json.loads(l) for l in diagnose_lines(str(tmp_path), "-o", "ndjson")[0]]
    assert ndjson == as_json
    wide, _ = diagnose_lines(str(tmp_path), "-o", "wide", env={"COLUMNS": "80"})
    assert wide[0].split()[:5] == ["JOB", "#", "OUTCOME", "CATEGORY", "EXCEPTION"]
    assert as_json[0]["summary"] in wide[1] and "KeyError" in wide[1].split()  # uncut, even at 80 columns
    assert wide == diagnose_lines(str(tmp_path), "--wide", env={"COLUMNS": "80"})[0]


def test_two_output_formats_are_a_usage_error(tmp_path):
    pod_log(tmp_path, TRACE)
    proc = run_cli("diagnose", str(tmp_path), "--json", "-o", "ndjson")
    assert proc.returncode == 2 and "json and ndjson" in proc.stderr


def test_no_attempts_is_said_on_stderr_not_drawn_as_an_empty_table(tmp_path):
    (tmp_path / "empty.log").write_text("")
    lines, proc = diagnose_lines(str(tmp_path / "empty.log"))
    assert lines == [] and "gangscope: no job attempts" in proc.stderr


def test_usage_errors_say_gangscope_once():
    proc = run_cli("diagnose")
    assert proc.returncode == 2
    assert proc.stderr.startswith("gangscope: diagnose: the following arguments are required: PATH")
    assert proc.stderr.count("gangscope:") == 1 and "gangscope diagnose --help" in proc.stderr
    top = run_cli("--bogus")
    assert top.returncode == 2 and top.stderr.startswith("gangscope: unrecognized arguments: --bogus")


def test_version():
    from gangscope import __version__

    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"gangscope {__version__}"


def test_help_loads_neither_rich_nor_the_pipeline():
    probe = ("import sys; from gangscope.pipeline.run.cli import build_parser; build_parser(); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'msgspec', 'pyparsing') "
             "or m.startswith(('gangscope.parsers', 'gangscope.pipeline.run.replay', 'gangscope.pipeline.curate'))))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stdout


# What `gangscope --help` must not import: each costs tens to hundreds of milliseconds of start-up
# (the target is < 0.3 s; `python -m bench.honest` measures it in CPU time, never a test).
HEAVY_FOR_HELP = ("hyperscan", "msgspec", "jinja2", "rich", "opensearchpy", "kafka", "confluent_kafka", "structlog",
                  "flask", "waitress", "urllib3", "hypothesis", "gangscope.parsers", "gangscope.pipeline.curate")


def test_help_imports_nothing_heavy():
    """--help answers from argparse alone: the commands import their libraries when they run."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "gangscope", "--help"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "diagnose" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "gangscope.pipeline.run.cli" in imported  # the -X importtime listing was read
    heavy = sorted(m for m in imported if m.split(".")[0] in HEAVY_FOR_HELP or m.startswith(HEAVY_FOR_HELP))
    assert not heavy, heavy


def test_help_defaults_are_the_pipelines_own():
    from gangscope.pipeline.run import cli
    from gangscope.pipeline.run.replay import ReplayOptions

    assert (cli.DIGEST_MAX_BYTES, cli.MAX_CONTAINERS) == (ReplayOptions.digest_max_bytes, ReplayOptions.max_containers)


def test_diagnose_with_workers_gives_the_same_diagnoses():
    one = diagnose_lines(*EVERYTHING, "-o", "ndjson")[0]
    two = diagnose_lines(*EVERYTHING, "-o", "ndjson", "--workers", "2")[0]
    assert len(one) > 40 and one == two


def test_workers_help_says_what_workers_do():
    text = run_cli("diagnose", "--help").stdout + run_cli("replay", "--help").stdout
    flat = " ".join(text.split())
    assert "one per usable CPU" in flat and "one pod uses no workers" in flat and "not with --from-kafka" in flat


def _in_a_pty(args, columns=80):
    """Run gangscope with stdout and stderr on a pseudo-terminal of `columns`; what it drew."""
    import pty
    import select
    import struct
    import fcntl
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([sys.executable, "-m", "gangscope", *args], stdout=slave, stderr=slave,
                            env={**env, "TERM": "xterm-256color"})
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(master)
    return out.decode("utf-8", "replace")


def test_diagnose_shows_a_progress_bar_on_a_terminal(tmp_path):
    drawn = _in_a_pty(["diagnose", *EVERYTHING])
    assert "diagnose" in drawn and "━" in drawn  # rich's bar, drawn on stderr, then cleared
    piped = subprocess.run([sys.executable, "-m", "gangscope", "diagnose", *EVERYTHING], capture_output=True,
                           text=True, timeout=120)
    assert "━" not in piped.stderr


TMUX = shutil.which("tmux")


@pytest.mark.skipif(TMUX is None, reason="needs tmux (apt-get install -y tmux) for the real-terminal check")
def test_diagnose_in_a_real_80_column_terminal(tmp_path):
    """tmux gives the command a real 80x50 terminal; its screen is saved in artifacts/."""
    socket = f"gangscope-test-{os.getpid()}"
    tmux = [TMUX, "-L", socket, "-f", "/dev/null"]
    done = tmp_path / "done"
    command = " ".join([sys.executable, "-m", "gangscope", "diagnose", *EVERYTHING, "--no-progress",
                        f"> {tmp_path / 'screen.txt'}; touch {done}; sleep 60"])
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
    subprocess.run([*tmux, "new-session", "-d", "-x", "80", "-y", "50", "sh", "-c",
                    command.replace(f"> {tmp_path / 'screen.txt'}; ", "; ")], check=True, env=env)
    try:
        for _ in range(600):
            if done.exists():
                break
            time.sleep(0.1)
        # [h34d] the whole output: 107 runs' rows and summaries are ~275 lines, past 200 lines of history + 50 on screen
        screen = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-S", "-600"], capture_output=True, text=True,
                                check=True).stdout
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    lines = [l for l in screen.splitlines() if l.strip()]
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "diagnose-80-columns.txt").write_text(screen)
    assert lines[0].split() == ["JOB", "#", "OUTCOME", "CATEGORY", "RANK", "POD"]
    assert max(cells(l) for l in lines) <= 80
    assert "team-a/rank-raises" in screen and "team-g/vit-small" in screen  # names whole, not a letter a line
    assert sum(1 for l in lines if re.match(r"\S+\s+\d+\s+(failed|evicted|succeeded|running)\s", l)) > 40


def test_the_readmes_first_command_shows_every_bundled_scenario(tmp_path, monkeypatch):
    """The README's first command, as the shell expands it: every labeled run, public case and
    gang scenario (events from files of every name, workloads and pods) is in its output, with
    the gang scenarios' attempts and verdicts, and the stalls of the public cases."""
    import glob
    import shlex

    readme = (ROOT / "README.md").read_text()
    first = re.search(r"```sh\n(.*?)\n```", readme, re.S).group(1)
    words = shlex.split(first.split("gangscope replay", 1)[1].split("&&", 1)[0])
    monkeypatch.chdir(ROOT)
    args = [m for w in words for m in (sorted(glob.glob(w)) if any(c in w for c in "*?[") else [w])]
    assert all(Path(a).exists() for a in args if not a.startswith("-") and a != "gangscope-out"), args
    args[args.index("--out") + 1] = str(tmp_path / "out")
    assert main(["replay", *args, "--no-progress"]) == 0
    out = tmp_path / "out"
    diagnoses = [json.loads(l) for l in (out / "diagnosis.ndjson").read_text().splitlines()]
    seen = {(d["job"], d["attempt"]): d for d in diagnoses}
    pods = {json.loads(l)["pod"] for f in out.glob("*.ndjson") for l in f.read_text().splitlines()}
    labeled = sorted(ROOT.glob("fixtures/runs/*/manifest.json")) + sorted(ROOT.glob("fixtures/public/*/manifest.json"))
    assert len(labeled) > 20
    for path in labeled:  # every labeled run and public case
        assert set(json.loads(path.read_text())["pods"]) & pods, path.parent.name
    gang = sorted(GANG.glob("[a-g]_*/manifest.json"))
    assert len(gang) == 7
    for path in gang:
        for job, want in json.loads(path.read_text())["jobs"].items():
            assert max(a for j, a in seen if j == job) == want["attempts"], (path.parent.name, job)
            for verdict in want.get("verdicts", []):
                if verdict["category"] is None:  # the gang's verdict is "no gang failure"
                    continue
                assert seen[(job, verdict["attempt"])]["category"] == verdict["category"], (path.parent.name, job)
    signals = [json.loads(l) for l in (out / "signal.ndjson").read_text().splitlines()]
    assert any(s["signal"] == "stall" for s in signals)
    # fixtures/runs/straggler, a real torchrun capture: rank 3 slow at every step, one 35 s pause of all
    straggler = json.loads((ROOT / "fixtures/runs/straggler/manifest.json").read_text())
    found = {(s["pod"], s["rank"]) for s in signals if s["signal"] == "straggler" and s["job"] == straggler["job"]}
    assert found == {(x["pod"], x["rank"]) for x in straggler["label"]["stragglers"]}
    assert {s["rank"] for s in signals if s["signal"] == "stall" and s["job"] == straggler["job"]} == {0, 1, 2, 3}
    assert seen[(straggler["job"], 1)]["category"] == "success"  # the stall was recovered from


def _with_reader_gone(args, stream="stdout"):
    """Run gangscope with the reading end of its stdout (or stderr) closed before it writes:
    what `| head -1` does once it has its line, without the race of when head exits."""
    pipe = {stream: subprocess.PIPE}
    other = "stderr" if stream == "stdout" else "stdout"
    proc = subprocess.Popen([sys.executable, "-m", "gangscope", *args], **pipe, **{other: subprocess.PIPE})
    getattr(proc, stream).close()
    _, said = proc.communicate(timeout=120) if stream == "stdout" else (proc.communicate(timeout=120)[0], b"")
    return proc.returncode, said


@pytest.mark.parametrize("output", ["table", "wide", "json", "ndjson"])
def test_diagnose_into_a_closed_pipe_exits_0_quietly(output):
    code, stderr = _with_reader_gone(["diagnose", *EVERYTHING, "-o", output, "--no-progress"])
    assert code == 0 and stderr == b"", stderr.decode()


def test_diagnose_piped_into_head_exits_0_in_a_real_shell():
    command = " ".join(["set -o pipefail;", sys.executable, "-m", "gangscope", "diagnose", *EVERYTHING, "| head -1"])
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.split() == ["JOB", "#", "OUTCOME", "CATEGORY", "RANK", "POD"]


def test_replay_with_its_stderr_reader_gone_still_writes_everything_and_keeps_its_exit_code(tmp_path):
    out = tmp_path / "out"
    code, _ = _with_reader_gone(["replay", str(ROOT / "fixtures" / "runs" / "rank_raises"), "--out", str(out)], "stderr")
    assert code == 0 and (out / "summary.json").exists() and (out / "report.html").exists()
    code, _ = _with_reader_gone(["replay", str(tmp_path / "nope"), "--out", str(tmp_path / "o")], "stderr")
    assert code == 2  # a missing path is a usage error (SPEC.md), whoever reads stderr
