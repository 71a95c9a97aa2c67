"""The `gangscope` command line: replay, diagnose, and (with their servers) consume, indices, dashboard."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn
from rich.table import Table

from gangscope import __version__
from gangscope.parsers.records import to_dict
from gangscope.pipeline import replay as replay_mod
from gangscope.pipeline.errors import GangscopeError, UsageError

FORMAT_HELP = "log envelope: auto (detect per file, the default), cri, docker, fluentbit or text"


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors with exit code 2 in one line, as SPEC.md asks."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gangscope",
        description="Curate the raw logs of distributed training jobs on Kubernetes and diagnose why they fail.",
    )
    parser.add_argument("--version", action="version", version=f"gangscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    replay = sub.add_parser(
        "replay",
        help="curate log files into a local folder (or OpenSearch)",
        description=(
            "Curate the logs at PATH (a file, a folder walked recursively such as kubelet's /var/log/pods, "
            "a .gz file, or - for stdin) into one NDJSON file per record kind and report.html in --out."
        ),
    )
    _inputs(replay)
    replay.add_argument("--out", default="gangscope-out", metavar="DIR", help="output folder (default: ./gangscope-out)")
    replay.add_argument(
        "--opensearch",
        default=os.environ.get("GANGSCOPE_OPENSEARCH_URL"),
        metavar="URL",
        help="index into OpenSearch at URL instead of a folder (env GANGSCOPE_OPENSEARCH_URL)",
    )
    replay.add_argument("--no-progress", action="store_true", help="no progress bar")
    replay.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="curate with N processes, split by pod (default 1; 0 = one per core)",
    )

    diagnose = sub.add_parser(
        "diagnose",
        help="print the diagnosis of every job attempt",
        description="Diagnose every job attempt in the logs at PATH: root cause, first failing rank, evidence.",
    )
    _inputs(diagnose)
    diagnose.add_argument("--json", action="store_true", help="print a JSON array of diagnoses on stdout")
    return parser


def _inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="log file, folder, .gz file, or - for stdin")
    p.add_argument("--events", nargs="+", default=[], metavar="PATH", help="Kubernetes/Kueue event, workload or pod files")
    p.add_argument("--format", dest="fmt", default="auto", metavar="FORMAT", help=FORMAT_HELP)
    p.add_argument(
        "--max-line-bytes", type=int, default=1 << 20, metavar="N", help="cut longer lines here (default 1 MiB)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    err = Console(stderr=True, highlight=False)
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            build_parser().print_help()
            return 2
        return COMMANDS[args.command](args, err)
    except GangscopeError as exc:
        err.print(f"gangscope: {exc}", markup=False, soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        err.print("gangscope: interrupted", markup=False, soft_wrap=True)
        return 130
    except BrokenPipeError:
        return 0


def _options(args) -> replay_mod.ReplayOptions:
    workers = getattr(args, "workers", 1)
    if workers == 0:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return replay_mod.ReplayOptions(
        paths=args.paths, events=args.events, fmt=args.fmt, max_line_bytes=args.max_line_bytes, workers=workers
    )


def cmd_replay(args, err: Console) -> int:
    if args.opensearch:
        raise UsageError("--opensearch: this build writes to a local folder only; drop --opensearch or use --out")
    from gangscope.pipeline.sinks.local import LocalFolderSink

    options = _options(args)
    sink = LocalFolderSink(args.out)
    show = not args.no_progress and err.is_terminal
    total = replay_mod.total_bytes(args.paths)
    progress = Progress(
        TextColumn("[bold]replay"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not show,
        transient=True,
    )
    try:
        with progress:
            task = progress.add_task("replay", total=total)
            result = replay_mod.run(options, sink.write, lambda n: progress.advance(task, n), sink=sink)
        _write_report(sink, result)
        sink.close(result.summary())
    except BaseException:
        sink.abort()
        raise
    _print_summary(err, result, args.out)
    return result.exit_code


def _write_report(sink, result) -> None:
    try:
        from gangscope.pipeline.report import render_report
    except ImportError:
        return
    sink.write_file("report.html", render_report(result.digest.all_records(), result.diagnoses))


def cmd_diagnose(args, err: Console) -> int:
    result = replay_mod.run(_options(args), lambda batch: None)
    if args.json:
        json.dump([to_dict(d) for d in result.diagnoses], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        out = Console(highlight=False)
        table = Table(title="gangscope diagnoses")
        for col in ("job", "attempt", "outcome", "category", "first failure", "summary"):
            table.add_column(col, overflow="fold")
        for d in result.diagnoses:
            ff = d.first_failure or {}
            where = " ".join(str(x) for x in (ff.get("pod"), f"rank {ff['rank']}" if ff.get("rank") is not None else None) if x)
            table.add_row(d.job or "", str(d.attempt), d.outcome, d.category, where, d.summary)
        out.print(table)
    _print_problems(err, result)
    return result.exit_code


def _print_summary(err: Console, result, out_dir: str) -> None:
    table = Table(title="gangscope replay", caption=f"written to {out_dir}", show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    summary = result.summary()
    for key in ("files", "pods", "lines"):
        table.add_row(key, f"{summary[key]:,}")
    for kind, count in summary["records"].items():
        table.add_row(f"{kind} records", f"{count:,}")
    for key in ("unreadable_lines", "invalid_utf8_lines", "long_lines_cut", "dangling_partials", "skipped_events"):
        if summary[key]:
            table.add_row(key.replace("_", " "), f"{summary[key]:,}")
    err.print(table)
    _print_problems(err, result)


def _print_problems(err: Console, result) -> None:
    for problem in result.problems + result.read.errors:
        err.print(f"gangscope: {problem}", markup=False, soft_wrap=True)
    if result.unreadable:
        err.print(f"gangscope: {result.unreadable:,} input records could not be read (counted and skipped)", markup=False, soft_wrap=True)


COMMANDS = {"replay": cmd_replay, "diagnose": cmd_diagnose}
