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
from gangscope.pipeline.run import opensearch_cli
from gangscope.pipeline.run import replay as replay_mod
from gangscope.pipeline.errors import GangscopeError, UsageError

DEFAULT_OUT = "gangscope-out"
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
    _inputs(replay, paths_required=False)
    _from_kafka(replay)
    replay.add_argument(
        "--out", default=None, metavar="DIR",
        help="output folder (default: ./gangscope-out); given explicitly, it wins over GANGSCOPE_OPENSEARCH_URL "
             "(--opensearch URL on the command line wins over both)")
    opensearch_cli.add_connection(replay)
    replay.add_argument(
        "--reindex",
        action="store_true",
        help="with --opensearch: fill new index versions and swap the aliases when done (no half-built panels)",
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

    consume = sub.add_parser(
        "consume",
        help="the Kafka consumer service: pod logs and events into OpenSearch",
        description="Curate Fluent Bit pod-log records and Kubernetes/Kueue events from Kafka into OpenSearch, "
        "committing offsets only after OpenSearch acknowledged what they produced. Settings: flags > --config "
        "file > GANGSCOPE_* environment variables > defaults.",
    )
    from gangscope.pipeline.run import config as service_config

    service_config.add_arguments(consume)
    opensearch_cli.add_parsers(sub)
    return parser


def _from_kafka(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from-kafka", metavar="TOPIC", help="read Fluent Bit records from this Kafka topic instead of PATH")
    p.add_argument("--bootstrap", default=os.environ.get("GANGSCOPE_KAFKA_BOOTSTRAP"), metavar="HOST:PORT",
                   help="Kafka bootstrap servers (env GANGSCOPE_KAFKA_BOOTSTRAP)")
    p.add_argument("--since", metavar="TIME", help="--from-kafka: first message time (RFC 3339 or epoch seconds)")
    p.add_argument("--until", metavar="TIME", help="--from-kafka: stop before this message time")
    p.add_argument("--from-offset", type=int, metavar="N", help="--from-kafka: first offset of every partition")
    p.add_argument("--to-offset", type=int, metavar="N", help="--from-kafka: stop before this offset")
    p.add_argument("--group", metavar="NAME", help="--from-kafka: consumer group (default gangscope-replay-<random>)")


def _inputs(p: argparse.ArgumentParser, paths_required: bool = True) -> None:
    p.add_argument("paths", nargs="+" if paths_required else "*", metavar="PATH",
                   help="log file, folder, .gz file, or - for stdin")
    p.add_argument("--events", nargs="+", default=[], metavar="PATH", help="Kubernetes/Kueue event, workload or pod files")
    p.add_argument("--format", dest="fmt", default="auto", metavar="FORMAT", help=FORMAT_HELP)
    p.add_argument(
        "--max-line-bytes", type=int, default=1 << 20, metavar="N", help="cut longer lines here (default 1 MiB)"
    )
    p.add_argument("--digest-max-bytes", type=int, default=replay_mod.ReplayOptions.digest_max_bytes, metavar="N",
                   help="what the diagnosis keeps in memory, as JSON; past it long records are summarized, then the "
                        f"least useful records dropped, counted (default {replay_mod.ReplayOptions.digest_max_bytes >> 20} MiB)")
    p.add_argument("--max-containers", type=int, default=replay_mod.ReplayOptions.max_containers, metavar="N",
                   help="Fluent Bit input: containers curated at once; past it the least recently fed are "
                        f"closed, counted (default {replay_mod.ReplayOptions.max_containers})")


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
        paths=args.paths, events=args.events, fmt=args.fmt, max_line_bytes=args.max_line_bytes, workers=workers,
        digest_max_bytes=args.digest_max_bytes, max_containers=args.max_containers,
    )


def cmd_replay(args, err: Console) -> int:
    from gangscope.pipeline.sinks.local import LocalFolderSink

    if bool(args.paths) == bool(args.from_kafka):
        raise UsageError("replay: give PATH... or --from-kafka TOPIC (one of the two)")
    options = _options(args)
    if args.reindex and not args.opensearch:
        raise UsageError("--reindex goes with --opensearch")
    if args.out is not None and opensearch_cli.url_from_environment(args):
        args.opensearch = None  # an explicit flag wins over the environment
    args.out = args.out if args.out is not None else DEFAULT_OUT
    sink = opensearch_cli.make_sink(args) if args.opensearch else LocalFolderSink(args.out)
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
            if args.from_kafka:
                from gangscope.pipeline.run import kafka_replay

                result = kafka_replay.run(
                    options, sink.write, topic=args.from_kafka, bootstrap=args.bootstrap, group=args.group,
                    since=args.since, until=args.until, from_offset=args.from_offset, to_offset=args.to_offset)
            else:
                result = replay_mod.run(options, sink.write, lambda n: progress.advance(task, n), sink=sink)
        if args.opensearch:
            stats = sink.close()
            result.failures.merge(stats.failures)  # records it could not encode
        else:
            _write_report(sink, result)
            result.failures.merge(sink.failures)  # records it could not encode
            sink.close(result.summary())
    except BaseException:
        sink.abort()
        raise
    if args.opensearch:
        _print_summary(err, result, opensearch_cli.redacted_url(args.opensearch))
        err.print(stats.summary(), markup=False, soft_wrap=True)
        return max(result.exit_code, 1 if stats.failed else 0)
    _print_summary(err, result, args.out)
    return result.exit_code


def _write_report(sink, result) -> None:
    from gangscope.pipeline.report.render import render_report

    sink.write_file("report.html", render_report(result.digest.all_records(), result.diagnoses,
                                                 timelines=result.timelines, failures=result.failures))


def cmd_diagnose(args, err: Console) -> int:
    result = replay_mod.run(_options(args), lambda batch: None)
    if args.json:
        json.dump([to_dict(d) for d in result.diagnoses], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        out = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
        table = Table(title="gangscope diagnoses")
        for col in ("job", "attempt", "outcome", "category", "first failure"):
            table.add_column(col, no_wrap=True)
        table.add_column("summary", overflow="fold", min_width=40)
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
    for key in ("unreadable_lines", "invalid_utf8_lines", "long_lines_cut", "dangling_partials", "skipped_events",
                "open_records_flushed", "containers_evicted", "digest_records_dropped", "digest_records_summarized"):
        if summary[key]:
            table.add_row(key.replace("_", " "), f"{summary[key]:,}")
    err.print(table)
    _print_problems(err, result)


def _print_problems(err: Console, result) -> None:
    for problem in result.problems + result.read.errors:
        err.print(f"gangscope: {problem}", markup=False, soft_wrap=True)
    if result.unreadable:
        err.print(f"gangscope: {result.unreadable:,} input records could not be read (counted and skipped)", markup=False, soft_wrap=True)
    for line in result.stage_failures.lines():  # one line per stage; summary.json has the examples
        err.print(f"gangscope: {line}", markup=False, soft_wrap=True)


def cmd_consume(args, err: Console) -> int:
    from gangscope.pipeline.run import config as service_config
    from gangscope.pipeline.run import service

    return service.main(service_config.from_args(args))


COMMANDS = {
    "replay": cmd_replay,
    "diagnose": cmd_diagnose,
    "consume": cmd_consume,
    "indices": opensearch_cli.cmd_indices,
    "dashboard": opensearch_cli.cmd_dashboard,
}
