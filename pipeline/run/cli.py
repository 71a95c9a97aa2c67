"""The `gangscope` command line: replay, diagnose, and (with their servers) consume, indices, dashboard."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Sequence

from gangscope import __version__
from gangscope.pipeline.errors import GangscopeError, UsageError
from gangscope.pipeline.run import opensearch_cli

if TYPE_CHECKING:
    from rich.console import Console

# What the pipeline (replay, rich, the parsers) imports is imported by the command that runs it:
# `gangscope --help` and `--version` stay at Python's start-up time (tests/test_cli.py measures).
DEFAULT_OUT = "gangscope-out"
FORMAT_HELP = ("log envelope: auto (detect per file, the default), cri, docker, fluentbit, text, or a tool's head on every line "
               "(kubectl, kubectl-prefix, stern, loki)")  # [h26c]
# ReplayOptions' defaults, for the help text without importing the pipeline (a test compares them)
DIGEST_MAX_BYTES = 16 << 20
MAX_CONTAINERS = 20_000
OUTPUTS = ("table", "wide", "json", "ndjson")
WORKERS_HELP = ("curate the pods in N worker processes (default 1: none; 0: one per usable CPU). A pod's logs "
                "stay in one process; diagnosis and output are made in this one; one pod uses no workers")


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors with exit code 2 in one line, as SPEC.md asks."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # main() says "gangscope: " once; a subcommand's own name follows it
        command = self.prog.removeprefix("gangscope").strip()
        raise UsageError(f"{command + ': ' if command else ''}{message} (see `{self.prog} --help`)")


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
    replay.add_argument("--no-progress", action="store_true", help="no progress bar (there is none unless stderr is a terminal)")
    replay.add_argument("--workers", type=int, default=1, metavar="N", help=WORKERS_HELP + "; not with --from-kafka")

    diagnose = sub.add_parser(
        "diagnose",
        help="print the diagnosis of every job attempt",
        description="Diagnose every job attempt in the logs at PATH: root cause, first failing rank and pod, "
        "a one-line summary. In a terminal the table fits its width (the summary on its own line when it must); "
        "-o wide prints every column uncut, -o json the diagnoses as a JSON array, -o ndjson one per line.",
    )
    _inputs(diagnose)
    diagnose.add_argument("-o", "--output", choices=OUTPUTS, default=None, metavar="FORMAT",
                          help="table (default), wide, json or ndjson")
    diagnose.add_argument("--json", action="store_true", help="the same as -o json: a JSON array of diagnoses on stdout")
    diagnose.add_argument("--wide", action="store_true", help="the same as -o wide: every column, one line each, uncut")
    diagnose.add_argument("--no-progress", action="store_true", help="no progress bar (there is none unless stderr is a terminal)")
    diagnose.add_argument("--workers", type=int, default=1, metavar="N", help=WORKERS_HELP)

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
    p.add_argument("--kafka-client", choices=("auto", "confluent", "kafka-python"),
                   default=os.environ.get("GANGSCOPE_KAFKA_CLIENT", "auto"),
                   help="--from-kafka: the Kafka client, as consume's (default auto: confluent where installed; "
                        "env GANGSCOPE_KAFKA_CLIENT)")


def _inputs(p: argparse.ArgumentParser, paths_required: bool = True) -> None:
    p.add_argument("paths", nargs="+" if paths_required else "*", metavar="PATH",
                   help="log file, folder, .gz file, or - for stdin")
    p.add_argument("--events", nargs="+", default=[], metavar="PATH", help="Kubernetes/Kueue event, workload or pod files")
    p.add_argument("--format", dest="fmt", default="auto", metavar="FORMAT", help=FORMAT_HELP)
    p.add_argument(
        "--max-line-bytes", type=int, default=1 << 20, metavar="N", help="cut longer lines here (default 1 MiB)"
    )
    p.add_argument("--digest-max-bytes", type=int, default=DIGEST_MAX_BYTES, metavar="N",
                   help="what the diagnosis keeps in memory, as JSON; past it long records are summarized, then the "
                        f"least useful records dropped, counted (default {DIGEST_MAX_BYTES >> 20} MiB)")
    p.add_argument("--max-containers", type=int, default=MAX_CONTAINERS, metavar="N",
                   help="Fluent Bit input: containers curated at once; past it the least recently fed are "
                        f"closed, counted (default {MAX_CONTAINERS:,})")
    p.add_argument("--redaction-patterns", default=os.environ.get("GANGSCOPE_REDACTION_PATTERNS"), metavar="FILE",
                   help="a site's own secret patterns, one `name: regex` a line, masked next to the built-in ones "
                        "(the group named secret, or the whole match; env GANGSCOPE_REDACTION_PATTERNS)")


def main(argv: Sequence[str] | None = None) -> int:
    from gangscope.pipeline.run import log_redaction

    # whatever a command writes on stderr passes the redactor: a server's error message, a
    # library's log record, a traceback (issue 20)
    log_redaction.install_excepthook()
    with log_redaction.redacted_stderr():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            build_parser().print_help()
            return 2
        return COMMANDS[args.command](args, console(stderr=True))
    except GangscopeError as exc:
        _say(f"gangscope: {exc}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say("gangscope: interrupted")
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 0


def _say(message: str) -> None:
    """One line on stderr, before or after rich is loaded (nothing if stderr's reader is gone)."""
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):
        _quiet(sys.stderr)


def _quiet_stdout() -> None:
    """After a closed pipe (`| head`), Python's own flush of stdout at exit must not complain."""
    _quiet(sys.stdout)


def _quiet(stream) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):
        pass


def console(stderr: bool = False, **kwargs) -> Console:
    """A rich Console that meets a closed pipe as Unix tools do. rich's own exits with status 1
    (Console.on_broken_pipe); here stdout's reader gone (`gangscope diagnose ... | head -1`)
    stops the command with status 0 and no message, and stderr's reader gone
    (`gangscope replay ... 2>&1 | head`) only silences what would have gone there: the run
    and its exit code are the same."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            _quiet(self.file)
            if not stderr:
                raise BrokenPipeError  # main(): exit 0, nothing said

    return PipeConsole(stderr=stderr, highlight=False, **kwargs)


def _options(args):
    from gangscope.pipeline.run import replay as replay_mod

    if args.redaction_patterns:
        from gangscope.pipeline.run.config import use_redaction_patterns

        use_redaction_patterns(args.redaction_patterns, "--redaction-patterns")

    _check_paths(args)
    workers = getattr(args, "workers", 1)
    if workers == 0:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return replay_mod.ReplayOptions(
        paths=args.paths, events=args.events, fmt=args.fmt, max_line_bytes=args.max_line_bytes, workers=workers,
        digest_max_bytes=args.digest_max_bytes, max_containers=args.max_containers, require_input=True,
    )


def _check_paths(args) -> None:
    """A PATH or an --events path that does not exist is a usage error (exit 2, SPEC.md), said
    before anything is written: no output folder that could pass for a run. A folder without a
    log file is found while the input is read (replay.run with require_input), also before."""
    for path in [*(args.paths or []), *(getattr(args, "events", None) or [])]:
        if path != "-" and not os.path.lexists(path):
            raise UsageError(f"{args.command}: {path}: no such file or directory")


def cmd_replay(args, err: Console) -> int:
    from gangscope.pipeline.run import replay as replay_mod
    from gangscope.pipeline.sinks.local import LocalFolderSink
    from gangscope.pipeline.spill import sweep_orphans

    if bool(args.paths) == bool(args.from_kafka):
        raise UsageError("replay: give PATH... or --from-kafka TOPIC (one of the two)")
    options = _options(args)
    sweep_orphans()  # spill folders of earlier runs killed with SIGKILL
    if args.reindex and not args.opensearch:
        raise UsageError("--reindex goes with --opensearch")
    if args.out is not None and opensearch_cli.url_from_environment(args):
        args.opensearch = None  # an explicit flag wins over the environment
    args.out = args.out if args.out is not None else DEFAULT_OUT
    sink = opensearch_cli.make_sink(args) if args.opensearch else LocalFolderSink(args.out)
    progress = _progress_bar(err, "replay", args)
    try:
        with progress:
            task = progress.add_task("replay", total=replay_mod.total_bytes(args.paths))
            if args.from_kafka:
                from gangscope.pipeline.run import kafka_replay

                result = kafka_replay.run(
                    options, sink.write, topic=args.from_kafka, bootstrap=args.bootstrap, group=args.group,
                    since=args.since, until=args.until, from_offset=args.from_offset, to_offset=args.to_offset,
                    kafka_client=args.kafka_client)
            else:
                result = replay_mod.run(options, sink.write, lambda n: progress.advance(task, n), sink=sink)
        if args.opensearch:
            stats = sink.close()
            result.failures.merge(stats.failures)  # records it could not encode
        else:
            _write_report(sink, result)
            result.digest.release()  # read for the last time: the sink's close has its room
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


def _progress_bar(err: Console, label: str, args):
    """The bar of a long run on stderr: bytes read, speed, time left. Shown only when stderr is
    a terminal and --no-progress was not given; it clears itself when done."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    return Progress(
        TextColumn(label, style="bold"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=args.no_progress or not err.is_terminal,
        transient=True,
    )


def _write_report(sink, result) -> None:
    from gangscope.pipeline.report.render import write_report_in_parts

    with sink.file_writer("report.html") as out:  # written as it renders: the page is never held whole
        # the digest's records and the diagnoses a part of the jobs at a time (both wait on disk at scale)
        write_report_in_parts(out, zip(result.digest.parts(), result.diagnoses.parts(), strict=True),
                              timelines=result.timelines, failures=result.failures)


def _output_format(args) -> str:
    """-o, or its older spellings --json and --wide (SPEC.md keeps --json); two that disagree are a usage error."""
    asked = {name for name, given in (("json", args.json), ("wide", args.wide)) if given}
    if args.output:
        asked.add(args.output)
    if len(asked) > 1:
        raise UsageError(f"diagnose: choose one output format, not {' and '.join(sorted(asked))}")
    return asked.pop() if asked else "table"


def cmd_diagnose(args, err: Console) -> int:
    from gangscope.pipeline.run import replay as replay_mod
    from gangscope.pipeline.spill import sweep_orphans

    output = _output_format(args)
    sweep_orphans()  # spill folders of earlier runs killed with SIGKILL
    progress = _progress_bar(err, "diagnose", args)
    with progress:
        task = progress.add_task("diagnose", total=replay_mod.total_bytes(args.paths))
        result = replay_mod.run(_options(args), lambda batch: None, lambda n: progress.advance(task, n))
    if output in ("json", "ndjson"):
        import json

        from gangscope.parsers.records import to_dict

        if output == "json":
            json.dump([to_dict(d) for d in result.diagnoses], sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            for d in result.diagnoses:
                sys.stdout.write(json.dumps(to_dict(d)) + "\n")
    elif result.diagnoses:
        _print_diagnoses(result.diagnoses, wide=output == "wide")
    else:
        err.print("gangscope: no job attempts in the logs given", markup=False, soft_wrap=True)
    sys.stdout.flush()
    _print_problems(err, result)
    return result.exit_code


def _print_diagnoses(diagnoses, wide: bool) -> None:
    """The table on stdout: fitted to a terminal's width; piped, uncut (COLUMNS, when set, still counts)."""
    from gangscope.pipeline.run import diagnose_table

    out = console()
    width = out.width if out.is_terminal or os.environ.get("COLUMNS") else None
    for line in diagnose_table.render(diagnoses, width=width, wide=wide):
        out.print(line, soft_wrap=True)


def _print_summary(err: Console, result, out_dir: str) -> None:
    from rich.table import Table

    table = Table(title="gangscope replay", caption=f"written to {out_dir}", show_header=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    summary = result.summary()
    for key in ("files", "pods", "lines"):
        table.add_row(key, f"{summary[key]:,}")
    for kind, count in summary["records"].items():
        table.add_row(f"{kind} records", f"{count:,}")
    for key in ("unreadable_lines", "invalid_utf8_lines", "long_lines_cut", "dangling_partials", "skipped_events",
                "open_records_flushed", "containers_evicted", "bar_steps_released_at_bound", "digest_records_dropped",
                "digest_records_summarized"):
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
