"""Log files on disk: find them, name the pod they belong to, and read them as lines.

Kubelet lays container logs out as `/var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log`,
rotating them to `<restart>.log.<YYYYMMDD-hhmmss>` and compressing older ones to `.gz`
(kubelet container log manager). `/var/log/containers/<pod>_<namespace>_<container>-<id>.log`
are links with the identity in the name (fluent-bit filter_kubernetes kube_regex.h).
Anything else is one pod named after the file's stem.
"""

from __future__ import annotations

import fcntl
import gzip
import heapq
import io
import os
import pickle
import re
import stat
import sys
import tarfile
import tempfile
import zlib
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

import msgspec
import yaml

from gangscope.pipeline.errors import InputError
from gangscope.pipeline.isolation import StageFailures, failures_of
from gangscope.pipeline.spill import private_directory

_POD_DIR = re.compile(r"^(?P<namespace>[^_/]+)_(?P<pod>[^_/]+)_(?P<uid>[0-9a-fA-F-]{8,})$")
_RESTART_FILE = re.compile(r"^(?P<restart>\d+)\.log(?:\.(?P<rotated>\d{8}-\d{6}(?:\.\d+)?))?(?P<gz>\.gz)?$")
_CONTAINERS_LINK = re.compile(
    r"^(?P<pod>[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)_(?P<namespace>[^_]+)_(?P<container>.+)-(?P<id>[a-z0-9]{64})\.log$"
)
_LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".json", ".ndjson", ".jsonl", ".gz", ".csv")  # [h28e] .csv


@dataclass(frozen=True)
class PodIdentity:
    """Who wrote a log: the coordinates every record carries."""

    namespace: str | None
    pod: str
    pod_uid: str | None = None
    container: str | None = None
    restart: int = 0
    node: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> tuple:
        return (self.namespace, self.pod_uid or self.pod, self.container, self.restart)


@dataclass
class LogSource:
    """One container's log as one stream of lines: its rotated files oldest first, then the live one."""

    identity: PodIdentity
    paths: list[str] = field(default_factory=list)  # "-" means stdin

    @property
    def display(self) -> str:
        return self.paths[-1] if self.paths else "?"


# [h27d] A tar (or tar.gz) archive of logs, as `tar czf pods.tgz /var/log/pods` or a support bundle makes one:
# each member that looks like a log is a file of its own, `<archive>!/<member>`, its pod and container named by
# the member's path as a file's are (`/var/log/pods/<ns>_<pod>_<uid>/<container>/<n>.log`, `/var/log/containers/...`,
# else the member's stem), so that several pods in one archive read as several containers. An archive cut short
# keeps the members listed before the cut (the cut is said in the run's problems, the member it falls in reads
# to its end and its failure is counted).
ARCHIVE_SEP = "!/"
_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")


def _is_archive(name: str) -> bool:
    return name.endswith(_ARCHIVE_SUFFIXES)


def _is_log_name(name: str) -> bool:
    """Whether a file of this name, met in a folder or an archive, is read as a log (not hidden, not a fixture's notes)."""
    return not name.startswith(".") and name not in ("manifest.json", "README.md") and _looks_like_log(name)


def _archive_members(archive: str, problems: list[str]) -> Iterator[str]:
    """The members of a tar archive that look like logs, as `<archive>!/<member>`, in the archive's order."""
    seen = 0
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                seen += 1
                name = member.name.rsplit("/", 1)[-1]
                if member.isfile() and _is_log_name(name) and not _is_archive(name):
                    yield archive + ARCHIVE_SEP + member.name.lstrip("/")
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        problems.append(f"{archive}: archive unreadable after {seen} members: {exc}")


_ARCHIVE_PATH = re.compile(r"(.*?(?:" + "|".join(re.escape(s) for s in _ARCHIVE_SUFFIXES) + r"))!/(.*)\Z", re.S)


def split_archive_path(path: str) -> tuple[str, str] | None:
    """(archive, member) of a `<archive>!/<member>` path, None when it is none."""
    m = _ARCHIVE_PATH.match(path)
    return (m.group(1), m.group(2)) if m else None


class _OpenArchive:
    """The archive last read from, kept open with its members by name: its members are read in the archive's order
    (discovery's), so that a compressed archive is decompressed once, forward, not once a member."""

    path: str | None = None
    tar: tarfile.TarFile | None = None
    members: dict[str, tarfile.TarInfo] = {}

    @classmethod
    def member(cls, archive: str, name: str):
        if cls.path != archive or cls.tar is None:
            cls.close()
            tar = tarfile.open(archive, "r:*")
            cls.members = {}
            try:
                for info in tar:
                    cls.members.setdefault(info.name.lstrip("/"), info)
            except (tarfile.TarError, EOFError, OSError, zlib.error):
                pass  # a cut archive: the members before the cut (discovery said where)
            cls.path, cls.tar = archive, tar
        info = cls.members.get(name)
        if info is None:
            raise InputError(f"{archive}{ARCHIVE_SEP}{name}: no such member in the archive")
        return cls.tar.extractfile(info)

    @classmethod
    def close(cls) -> None:
        if cls.tar is not None:
            cls.tar.close()
        cls.path, cls.tar, cls.members = None, None, {}


class _ArchiveMember(io.RawIOBase):
    """One member of a tar archive, read as a file."""

    def __init__(self, path: str):
        where = split_archive_path(path)
        if where is None:
            raise InputError(f"{path}: not a member of an archive")
        self._file = _OpenArchive.member(*where)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        data = self._file.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def identify(path: str) -> PodIdentity:
    where = split_archive_path(path) if ARCHIVE_SEP in path else None
    if where is not None and not os.path.exists(path):  # [h27d] a member of an archive: named by its own path
        path = "/" + where[1]
    p = Path(path)
    m = _RESTART_FILE.match(p.name)
    if m and len(p.parts) >= 3:
        pod_dir = _POD_DIR.match(p.parent.parent.name)
        if pod_dir:
            return PodIdentity(
                namespace=pod_dir["namespace"],
                pod=pod_dir["pod"],
                pod_uid=pod_dir["uid"],
                container=p.parent.name,
                restart=int(m["restart"]),
            )
    m = _CONTAINERS_LINK.match(p.name)
    if m:
        return PodIdentity(namespace=m["namespace"], pod=m["pod"], container=m["container"])
    stem = p.name
    for suffix in (".gz", ".log", ".txt", ".out", ".err", ".json", ".ndjson", ".jsonl", ".csv", ".yaml"):  # [h28e] the last two
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
    return PodIdentity(namespace=None, pod=stem or "stdin", container=None)


def _rotation_order(path: str) -> tuple:
    m = _RESTART_FILE.match(Path(path).name)
    if not m:
        return (1, "")
    # Rotated files (with a timestamp) come before the live file; among them, oldest first.
    return (0, m["rotated"]) if m["rotated"] else (1, "")


def discover(paths: list[str]) -> tuple[list[LogSource], list[str]]:
    """Log sources under the given paths, and one message per path that could not be used."""
    files, problems = _log_files(paths)
    return [LogSource(identity, paths) for identity, paths, _first in _sources_of(files)], problems


def _log_files(paths: list[str]) -> tuple[list[str], list[str]]:
    """The log files under the given paths in discovery order, and the paths that could not be used."""
    problems: list[str] = []
    return list(_each_log_file(paths, problems)), problems


def _each_log_file(paths: list[str], problems: list[str]) -> Iterator[str]:
    """The log files under the given paths in discovery order, one at a time; a path that cannot
    be used is said in `problems`."""
    for given in paths:
        if given == "-":
            yield "-"
            continue
        if not os.path.exists(given):
            problems.append(f"{given}: no such file or directory")
            continue
        if os.path.isdir(given):
            found = 0
            for root, dirs, names in os.walk(given):
                dirs.sort()
                for name in sorted(names):
                    if name.startswith(".") or name in ("manifest.json", "README.md"):
                        continue
                    full = os.path.join(root, name)
                    if _is_archive(name) and os.path.isfile(full):  # [h27d]
                        for member in _archive_members(full, problems):
                            found += 1
                            yield member
                        continue
                    if _is_log_name(name) and os.path.isfile(full) and _is_log_content(name, full):
                        found += 1
                        yield full
            if not found:
                problems.append(f"{given}: no log files found")
        elif not os.access(given, os.R_OK):
            problems.append(f"{given}: permission denied")
        elif _endless(given):
            problems.append(f"{given}: not a file (a device or socket has no end to read to)")
        elif _is_archive(given) and os.path.isfile(given):  # [h27d] its members, each a file
            found = 0
            for member in _archive_members(given, problems):
                found += 1
                yield member
            if not found:
                problems.append(f"{given}: no log files found in the archive")
        else:
            yield given


def _identity_of(path: str) -> PodIdentity:
    return PodIdentity(namespace=None, pod="stdin") if path == "-" else identify(path)


def _sources_of(files: list[str]) -> list[tuple[PodIdentity, list[str], str]]:
    """Each container's log: its identity, its files oldest first, and the file discovered first
    (the one its identity was read from), in the order of their first file."""
    sources: dict[tuple, tuple[PodIdentity, list[str], str]] = {}
    for path in files:
        identity = _identity_of(path)
        key = identity.key if identity.pod_uid else (identity.key, path)
        sources.setdefault(key, (identity, [], path))[1].append(path)
    for _identity, paths, _first in sources.values():
        paths.sort(key=_rotation_order)
    return list(sources.values())


class PodGroups:
    """The log sources under the given paths grouped by pod, in discovery order: the unit of work
    of a replay, so that everything a rank wrote (all its containers and restarts) is curated by
    one process, in order. Held as plain paths, a group's `LogSource`s made again when it is taken
    (100k tiny pod files kept ~75 MB of LogSources and identities, ~750 bytes a pod), and the paths
    wait in a temporary file, pickled group by group, with the offset of each in memory (as tuples
    of strings they were ~280 bytes a pod, 28 MB at 100k tiny pod files, to the end of the run).
    The files are grouped as they are found without holding them all: each file's path and keys
    go to a partition on disk by its group's key (`_Discovered`), each partition is grouped alone,
    and the groups are put in the order of their first file (every path, identity and group held
    at once, 100k tiny pod files raised the peak to 150 MB before the first line was read)."""

    def __init__(self, paths: list[str]):
        self.problems: list[str] = []
        self.files = 0
        self._file = tempfile.TemporaryFile(prefix="gangscope-groups-")
        self._offsets = array("Q")
        with _Discovered() as found:
            for path in _each_log_file(paths, self.problems):
                identity = _identity_of(path)
                source = identity.key if identity.pod_uid else (identity.key, path)
                # a source without a uid is one file (its key holds the path): the group of its last file
                group = (identity.namespace, identity.pod_uid or identity.pod) if identity.pod_uid or identity.namespace \
                    else (path,)
                found.add(self.files, group, source, path)
                self.files += 1
            # each partition's groups by their first file, written out; then all of them in that order
            firsts: list[array] = []
            offsets: list[array] = []
            for groups in found.partitions():
                first, offset = array("Q"), array("Q")
                for seq, group in groups:
                    first.append(seq)
                    offset.append(self._file.tell())
                    pickle.dump(group, self._file, protocol=pickle.HIGHEST_PROTOCOL)
                firsts.append(first)
                offsets.append(offset)
        for _seq, offset in heapq.merge(*(zip(f, o) for f, o in zip(firsts, offsets))):
            self._offsets.append(offset)
        self._file.flush()

    def __len__(self) -> int:
        return len(self._offsets)

    def __getitem__(self, index: int) -> list[LogSource]:
        self._file.seek(self._offsets[index])
        return [LogSource(_identity_of(first), list(paths)) for first, *paths in pickle.load(self._file)]

    def __iter__(self) -> Iterator[list[LogSource]]:
        for index in range(len(self._offsets)):
            yield self[index]


class _Discovered:
    """The files found, (seq, group key, source key, path), in partitions on disk by the CRC-32 of
    the group key's pickle; `partitions()` gives each partition's groups, as PodGroups holds them:
    (seq of its first file, [(first file of a source, its files oldest first), ...] in the order of
    the sources' first files), in the order of their first files."""

    PARTITIONS = 64
    BUFFER = 1 << 13  # files held before a spill

    def __init__(self) -> None:
        self._dir = private_directory("gangscope-discovery-")
        self._held: list[list[tuple]] = [[] for _ in range(self.PARTITIONS)]
        self._count = 0

    def __enter__(self) -> "_Discovered":
        return self

    def __exit__(self, *exc) -> None:
        self._dir.cleanup()

    def add(self, seq: int, group: tuple, source: tuple, path: str) -> None:
        n = zlib.crc32(pickle.dumps(group, protocol=pickle.HIGHEST_PROTOCOL)) % self.PARTITIONS
        self._held[n].append((seq, group, source, path))
        self._count += 1
        if self._count >= self.BUFFER:
            self._spill()

    def _spill(self) -> None:
        for n, held in enumerate(self._held):
            if held:
                with open(os.path.join(self._dir.name, str(n)), "ab") as f:
                    pickle.dump(held, f, protocol=pickle.HIGHEST_PROTOCOL)
        self._held = [[] for _ in range(self.PARTITIONS)]
        self._count = 0

    def partitions(self) -> Iterator[list[tuple[int, list[tuple[str, ...]]]]]:
        self._spill()
        for n in range(self.PARTITIONS):
            path = os.path.join(self._dir.name, str(n))
            if not os.path.exists(path):
                continue
            groups: dict[tuple, tuple[int, dict[tuple, list[str]]]] = {}
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                while f.tell() < size:
                    for seq, group, source, file in pickle.load(f):
                        sources = groups.setdefault(group, (seq, {}))[1]
                        sources.setdefault(source, []).append(file)
            os.unlink(path)
            # the file its identity is read from again (its first), then its files oldest first
            yield [(seq, [(files[0], *sorted(files, key=_rotation_order)) for files in sources.values()])
                   for seq, sources in groups.values()]
            del groups


def _endless(path: str) -> bool:
    """A character or block device or a socket: reading it may never end (/dev/zero). A FIFO is
    read (process substitution gives one); `open_binary` opens it without waiting for a writer."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode)


def _opener(path: str, flags: int) -> int:
    """Open without waiting: a FIFO with no writer would block `open` forever. Reads then block
    as usual (and a FIFO nobody writes to reads as empty)."""
    fd = os.open(path, flags | os.O_NONBLOCK)
    try:
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except OSError:
        pass
    return fd


# A pretty-printed JSON object met in a folder is read as a log only where its head names a key of the log forms that
# print so (CloudWatch's `"events"`, the Logging API's `"entries"`, journalctl -o json-pretty's `"__CURSOR"`/`"MESSAGE"`,
# stern's `"message"`, Elasticsearch's `"hits"`, Datadog's `"data"`, a record's `"log"`/`"textPayload"`/`"jsonPayload"`):
# a run's output folder holds objects that are no log (Hugging Face's config.json, trainer_state.json,
# generation_config.json; a DeepSpeed config), which would each read as a job of their own. JSON lines and arrays are
# read as before; a file named on the command line is read whatever it holds.
_PRETTY_OBJECT = re.compile(rb"\s*\{[ \t]*\r?\n")
_JSON_LOG_KEYS = re.compile(rb'"(?:events|entries|__CURSOR|MESSAGE|message|Message|msg|log|textPayload|jsonPayload|hits|data|'
                            rb'LogMessage|line|Line)"\s*:')

# The keys a JSON logger's record opens with (structlog's `event`, loguru's `text`, ECS's `@timestamp`, a time or a
# level): looked for in the first KB of a one-line object only, where a record's keys are and a vocabulary's words
# (a tokenizer's vocab maps words like "time" to ids) are not yet.
_JSON_LOGGER_KEYS = re.compile(rb'"(?:event|text|@timestamp|timestamp|time|ts|asctime|levelname|level|severity)"\s*:')
_ONE_LINE_KEYS_WITHIN = 1024


def _is_log_content(name: str, path: str) -> bool:
    """Whether a file met in a folder, of a log's name, holds a log (see _is_csv_export and _PRETTY_OBJECT)."""
    if name.endswith(".csv"):
        return _is_csv_export(path)
    if not name.endswith(".json"):
        return True
    head = _head(path)
    if head is None:
        return True  # the read fails again where it is read, and is counted there
    if _PRETTY_OBJECT.match(head):
        return bool(_JSON_LOG_KEYS.search(head))
    if head.lstrip()[:1] == b"{" and b"\n" not in head.rstrip():
        # one object on one line: a tokenizer.json / vocab.json / config.json saved compact; JSON lines of one
        # record are read where a logger's key (or a time or level) opens it
        return bool(_JSON_LOG_KEYS.search(head, 0, _ONE_LINE_KEYS_WITHIN) or
                    _JSON_LOGGER_KEYS.search(head, 0, _ONE_LINE_KEYS_WITHIN))
    return True


def _is_csv_export(path: str) -> bool:
    """Whether a `.csv` file met in a folder is a log store's export (its header names a log line's column: see
    csv_log_header), not a table a run writes beside its log (Lightning's CSVLogger `metrics.csv`, a results table),
    which would read as a pod of its own. A file named on the command line is read whatever it holds."""
    head = _head(path)
    if head is None:
        return True  # the read fails again where it is read, and is counted there
    end = head.find(b"\n")
    return csv_log_header(head[:end] if end > 0 else None) is not None


def _head(path: str) -> bytes | None:
    """The first HEADER_PEEK bytes of a file met in a folder, or None where it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read(HEADER_PEEK)
    except OSError:
        return None


def _looks_like_log(name: str) -> bool:
    return bool(_RESTART_FILE.match(name)) or name.endswith(_LOG_SUFFIXES) or "." not in name


def open_binary(path: str) -> BinaryIO:
    """The file's bytes, gunzipped when it is gzip (by its magic, not its name; stdin too).
    A read that fails while looking raises, as any read of the file (the caller counts it)."""
    if path == "-":
        raw = sys.stdin.buffer
    elif ARCHIVE_SEP in path and not os.path.exists(path):  # [h27d] a member of an archive
        try:
            raw = io.BufferedReader(_ArchiveMember(path), BLOCK)
        except (tarfile.TarError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: {exc}") from None
        except OSError as exc:
            raise InputError(f"{path}: {exc.strerror or exc}") from None
    else:
        try:
            raw = open(path, "rb", opener=_opener)
        except OSError as exc:
            raise InputError(f"{path}: {exc.strerror or exc}") from None
    try:
        head = raw.peek(3)[:3] if hasattr(raw, "peek") else b""
    except BaseException:
        if path != "-":
            raw.close()
        raise
    if head[:2] == b"\x1f\x8b":
        return _decoded(gzip.GzipFile(fileobj=raw, mode="rb"))  # type: ignore[arg-type]  # [h27d] a gzip'd UTF-16 or JSON document too
    return _decoded(raw)


def _decoded(raw: BinaryIO) -> BinaryIO:
    """The bytes of a (gunzipped) stream as lines: a UTF-16 file as UTF-8, a UTF-8 byte order mark
    dropped, [h27d] a JSON document (an indented array, a pretty-printed object) as one value a line."""
    try:
        head = raw.peek(3)[:3] if hasattr(raw, "peek") else b""
    except (EOFError, OSError, zlib.error):  # a gzip whose first block is bad: its reading counts it
        return raw
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raw = io.BufferedReader(Utf16AsUtf8(raw), BLOCK)  # type: ignore[arg-type]
    elif head == b"\xef\xbb\xbf":
        raw.read(3)  # a UTF-8 byte order mark (Notepad, PowerShell's utf8BOM) is no part of the first line
    try:
        start = raw.peek(DOCUMENT_PEEK)[:DOCUMENT_PEEK] if hasattr(raw, "peek") else b""
    except (EOFError, OSError, zlib.error):
        return raw
    if _JSON_DOCUMENT.match(start):
        return io.BufferedReader(JsonDocumentLines(raw), BLOCK)  # type: ignore[return-value]
    if start[:1] == b"-" and _YAML_LOG_ENTRY.match(start):  # [h28e] gcloud logging read's default (YAML) output
        return io.BufferedReader(YamlDocumentLines(raw), BLOCK)  # type: ignore[return-value]
    header = csv_log_header(_first_line(raw))  # [h28e] a log store's CSV export
    if header is not None:
        return io.BufferedReader(CsvRecordLines(raw, header), BLOCK)  # type: ignore[return-value]
    return raw


class Utf16AsUtf8(io.RawIOBase):
    """A UTF-16 file (its byte order mark first) read as UTF-8 bytes, a block at a time. Windows
    PowerShell 5.1 writes what `>` or `Out-File` redirects as UTF-16LE with a BOM ("Unicode", its
    default encoding), so a training log captured there is UTF-16 throughout; read as bytes, every line
    would be noise. Odd bytes become U+FFFD, as invalid UTF-8 does elsewhere."""

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self._text = io.TextIOWrapper(raw, encoding="utf-16", errors="replace", newline="")  # type: ignore[arg-type]
        self._pending = b""  # what readinto took from `read` and the buffer could not hold

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:  # type: ignore[override]
        return self._text.read(size // 2 if size and size > 1 else -1 if size < 0 else 1).encode("utf-8", "surrogatepass")

    def readinto(self, buffer) -> int:  # type: ignore[override]
        """[h27d] As `read`, into a buffer (io.BufferedReader reads so: a gzip'd UTF-16 file, a UTF-16 JSON document)."""
        pending = self._pending or self.read(max(2, len(buffer) // 2))
        n = min(len(buffer), len(pending))
        buffer[:n] = pending[:n]
        self._pending = pending[n:]
        return n

    def close(self) -> None:
        if not self.closed:
            self._text.detach()
            self._raw.close()
        super().close()


# [h27d] A JSON document a tool prints over many lines, read as one JSON value a line (then detected and decoded
# as any file of one JSON object a line is, parsers/envelopes.py):
# - an indented array of entries: `gcloud logging read --format=json` (the LogEntry list, google-cloud-sdk's
#   resource printer with `json.dumps(..., indent=2)`), `aws logs tail --format json` is not one (below);
# - a pretty-printed object whose arrays hold the entries: `aws logs get-log-events` / `filter-log-events`
#   (`{"events": [{"timestamp", "message", "ingestionTime", "logStreamName", "eventId"}], "nextForwardToken": ...}`,
#   botocore data logs/2014-03-28/service-2.json OutputLogEvent / FilteredLogEvent, printed by awscli's JSON
#   formatter with indent 4), `{"entries": [...]}` of the Logging REST API: each object of such an array is a line;
# - pretty-printed objects one after another: `journalctl -o json-pretty` (systemd src/shared/logs-show.c
#   output_json, OUTPUT_JSON_PRETTY: "{\n\t\"__CURSOR\" : ..."), stern `--output ppextjson` (stern/stern
#   cmd/cmd.go generateTemplate): each object is a line.
# Taken only where the file starts (after blanks) with `[` and then `{` or `]`, or with a `{` alone on its first
# line, which no one-object-a-line file and no plain log does. What follows the document that is no JSON value
# (a note pasted after it) is passed on as it is. A document cut short ends in an incomplete line (unreadable,
# counted) and the reading fails there (counted, stage "sources"), as a truncated gzip does.
_JSON_DOCUMENT = re.compile(rb"\s*(?:\[\s*[{\]]|\{[ \t]*\r?\n|\{\s*\"data\"\s*:\s*\[\s*[{\]])")  # [h28e] the last: Datadog's API
DOCUMENT_PEEK = 256
_JSON_STOPS = re.compile(rb'["\[\]{},\n\r]')
_STRING_STOPS = re.compile(rb'["\\]')


class _ConvertedLines(io.RawIOBase):
    """A file read through a converter, a block at a time: `_convert(chunk)` turns each block read into the bytes of
    whole lines (holding what it needs of the next), `_finish()` gives what is left at the end and sets `problem` when
    the file ended early. `problem`: why it did, None when it did not."""

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self._pending = b""
        self._eof = False
        self.problem: str | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        while not self._pending and not self._eof:
            chunk = self._raw.read(BLOCK)
            if chunk:
                self._pending = self._convert(chunk)
                continue
            self._eof = True
            self._pending = self._finish()
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def _convert(self, chunk: bytes) -> bytes:
        raise NotImplementedError

    def _finish(self) -> bytes:
        raise NotImplementedError

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class JsonDocumentLines(_ConvertedLines):
    """A JSON document's entries as lines of compact JSON (see `_JSON_DOCUMENT`), a block at a time:
    the bytes are passed through as they come (an entry of 10 MB is never held), the newlines between
    tokens turned into spaces, a newline written after each entry. Entries: the elements of a top-level
    array; of a top-level object, the objects of its arrays (`{"events": [...]}`), else the object itself.
    `problem`: why the document ended early (cut inside a value), None when it did not."""

    def __init__(self, raw: BinaryIO):
        super().__init__(raw)
        self._depth = 0  # brackets open
        self._in_string = False
        self._escape = False
        self._emit_depth = 0  # entries are the values opened at this depth (0: not known yet)
        self._outer = 0  # [h28e] the bracket last opened at depth 2
        self._held = bytearray()  # a top-level object's bytes, until it shows whether arrays of objects are in it
        self._holding = False
        self._in_entry = False
        self._passthrough = False

    def _finish(self) -> bytes:
        if not (self._depth or self._in_string):
            return b""
        self.problem = f"the JSON document ends inside a value ({self._depth} brackets open)"
        return (bytes(self._held) if self._holding else b"") + b"\n"

    def _convert(self, chunk: bytes) -> bytes:
        if self._passthrough:
            return chunk
        out = bytearray()
        pos, n = 0, len(chunk)
        while pos < n:
            if self._in_string:
                if self._escape:  # the byte after a backslash
                    self._escape = False
                    self._put(out, chunk[pos:pos + 1])
                    pos += 1
                    continue
                m = _STRING_STOPS.search(chunk, pos)
                end = m.end() if m else n
                self._put(out, chunk[pos:end].replace(b"\n", b" ").replace(b"\r", b" "))
                pos = end
                if m is not None:
                    if chunk[m.start()] == 0x5C:
                        self._escape = True
                    else:
                        self._in_string = False
                continue
            m = _JSON_STOPS.search(chunk, pos)
            end = m.start() if m else n
            if end > pos:
                text = chunk[pos:end]
                if self._depth == 0 and text.strip():  # no JSON value: the rest of the file as it is
                    self._passthrough = True
                    return bytes(out) + chunk[pos:]
                self._put(out, text)
            if m is None:
                break
            c = chunk[end]
            pos = end + 1
            if c == 0x22:  # "
                self._in_string = True
                self._put(out, b'"')
            elif c == 0x0A or c == 0x0D:
                self._put(out, b" ")
            elif c == 0x5B or c == 0x7B:  # [ {
                self._open(out, c)
            elif c == 0x5D or c == 0x7D:  # ] }
                self._close(out, c)
            else:  # ,
                self._put(out, b",")
        return bytes(out)

    def _put(self, out: bytearray, data: bytes) -> None:
        if self._in_entry:
            out += data
        elif self._holding:
            self._held += data

    def _open(self, out: bytearray, c: int) -> None:
        self._depth += 1
        d = self._depth
        if d == 2:
            self._outer = c  # [h28e] entries at depth 3 are the objects of an array, not of an object ({"meta": {...}})
        if self._in_entry:
            out.append(c)
        elif d == 1:
            if c == 0x5B:  # a top-level array: its elements are the entries
                self._emit_depth = 2
            else:  # a top-level object: held until it shows an array of objects
                self._holding, self._held, self._emit_depth = True, bytearray(b"{"), 0
        elif d == self._emit_depth and (d == 2 or c == 0x7B and self._outer == 0x5B):
            self._in_entry = True
            out.append(c)
        elif self._holding and d == 3 and c == 0x7B and self._held.rstrip().endswith(b"["):
            self._holding, self._held, self._emit_depth = False, bytearray(), 3  # its arrays' objects are the entries
            self._in_entry = True
            out.append(c)
        elif self._holding:
            self._held.append(c)

    def _close(self, out: bytearray, c: int) -> None:
        d = self._depth
        self._depth = max(0, d - 1)
        if self._in_entry:
            out.append(c)
            if d == self._emit_depth:
                out += b"\n"
                self._in_entry = False
        elif self._holding:
            self._held.append(c)
            if d == 1:
                out += self._held + b"\n"
                self._holding, self._held = False, bytearray()
        if d == 1:
            self._emit_depth = 0


def _document_problem(stream) -> str | None:
    """[h27d] Why a JSON document read as lines ended early, None if it did not (or is no document).
    [h28e] The same of a CSV export or a YAML stream."""
    raw = getattr(stream, "raw", None)
    return raw.problem if isinstance(raw, _ConvertedLines) else None


# [h28e] A log store's CSV export (Kibana / OpenSearch Dashboards Discover, Log Analytics, Datadog's Log Explorer,
# Grafana's CSV; parsers/envelopes.py TABLE_* cites each), read as one JSON object a row: {"<column>": "<cell>", ...}
# with envelopes.TABLE_ROW set to the row's number, then detected and decoded as any file of one JSON object a line
# (envelopes.table_row names its text, time and container by the columns' names). RFC 4180 as these tools write it:
# cells separated by `,`, a cell in double quotes may hold commas, newlines and `""` (a quote); a row ends at a
# newline outside quotes (`\r\n` too). Taken only where the file's first line is a header of such columns: two or
# more names, each a field's path (letters, digits, `@ _ . -`, a unit in brackets), one of them a log line's column
# (envelopes.TABLE_TEXT) and another a time's or a pod's: a plain log's first line never is one.
# Streamed: a cell's bytes are passed on as they come, escaped for JSON (a cell of 10 MB is a line of 10 MB, cut at
# --max-line-bytes and counted as any long line, never held). A file that ends inside a quoted cell counts a
# `sources` failure (as a truncated gzip) after the rows before it; the row it cut is an unreadable line.
_CSV_NAME = re.compile(r"[@A-Za-z_][\w@.\-]{0,99}(?: \[[A-Za-z]{1,10}\])?\Z")
_CSV_STOPS = re.compile(rb'[",\r\n]')
_CSV_QUOTED_STOPS = re.compile(rb'"')
_JSON_ESCAPES = re.compile(rb'[\x00-\x1f"\\]')
HEADER_PEEK = 8192


def _first_line(raw: BinaryIO) -> bytes | None:
    """The file's first line as it starts the buffer (within HEADER_PEEK bytes), None when it does not end there."""
    try:
        start = raw.peek(HEADER_PEEK)[:HEADER_PEEK] if hasattr(raw, "peek") else b""
    except (EOFError, OSError, zlib.error):
        return None
    end = start.find(b"\n")
    return start[:end] if end > 0 else None


def csv_log_header(line: bytes | None) -> list[str] | None:
    """The column names of a log store's CSV export whose header is `line`, None when it is none (see above)."""
    if not line or line[:1] not in b'"@ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_' or b"," not in line:
        return None
    try:
        text = line.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError:
        return None
    from gangscope.parsers import envelopes

    names = [c[1:-1] if len(c) >= 2 and c[0] == c[-1] == '"' else c for c in text.split(",")]
    if len(names) < 2 or not all(_CSV_NAME.match(n) for n in names):
        return None
    plain = {re.sub(r" \[.*\]\Z", "", n) for n in names}
    if not plain & set(envelopes.TABLE_TEXT):
        return None
    if not plain & set(envelopes.TABLE_TIME + envelopes.TABLE_POD + envelopes.TABLE_CONTAINER):
        return None
    return names


def _json_string(data: bytes) -> bytes:
    """`data` (a part of a cell) as the inside of a JSON string."""
    return _JSON_ESCAPES.sub(lambda m: b"\\u%04x" % m.group()[0], data)


class CsvRecordLines(_ConvertedLines):
    """A CSV export's rows as lines of JSON objects (see above), a block at a time. `problem`: why the file ended
    early (inside a quoted cell), None when it did not."""

    def __init__(self, raw: BinaryIO, header: list[str]):
        from gangscope.parsers import envelopes

        super().__init__(raw)
        self._keys = [b'"' + _json_string(n.encode()) + b'":"' for n in header]
        self._row_key = b'"' + _json_string(envelopes.TABLE_ROW.encode()) + b'":'
        self._row = 0
        self._cell = 0  # cells of the row begun
        self._in_row = False
        self._quoted = False  # inside a quoted cell
        self._quote_pending = False  # a `"` seen inside a quoted cell: a doubled one, or its end
        self._skipping = True  # the header line
        self._cell_start = True
        self._dropping = False  # a cell beyond the header's columns

    def _finish(self) -> bytes:
        if self._quoted and not self._quote_pending:
            self.problem = f"the CSV export ends inside a quoted cell (row {self._row})"
            return b"\n"  # the cut row: no closing, an unreadable line
        return self._end_row() if self._in_row else b""

    def _begin_cell(self, out: bytearray) -> None:
        if not self._in_row:
            self._in_row = True
            self._row += 1
            self._cell = 0
            out += b"{" + self._row_key + str(self._row).encode()
        self._dropping = self._cell >= len(self._keys)
        if not self._dropping:
            out += b"," + self._keys[self._cell]
        self._cell += 1
        self._cell_start = False

    def _end_cell(self, out: bytearray) -> None:
        if not self._dropping:
            out += b'"'
        self._cell_start = True

    def _end_row(self) -> bytes:
        out = bytearray()
        if self._cell_start and self._in_row:
            self._begin_cell(out)  # an empty last cell
        if not self._cell_start:
            self._end_cell(out)
        out += b"}\n"
        self._in_row = False
        return bytes(out)

    def _put(self, out: bytearray, data: bytes) -> None:
        if not self._dropping:
            out += _json_string(data)

    def _convert(self, chunk: bytes) -> bytes:
        out = bytearray()
        pos, n = 0, len(chunk)
        while pos < n:
            if self._skipping:
                end = chunk.find(b"\n", pos)
                if end < 0:
                    return bytes(out)
                self._skipping, pos = False, end + 1
                continue
            if self._quote_pending:
                self._quote_pending = False
                if chunk[pos] == 0x22:  # a doubled quote: one quote of the cell
                    self._put(out, b'"')
                    pos += 1
                    continue
                self._quoted = False  # the quote ended the cell's quoted part
            if self._quoted:
                m = _CSV_QUOTED_STOPS.search(chunk, pos)
                end = m.start() if m else n
                self._put(out, chunk[pos:end])
                if m is None:
                    return bytes(out)
                self._quote_pending, pos = True, end + 1
                continue
            if self._cell_start:
                if chunk[pos] == 0x0A:  # a blank line, or a row's end after a comma
                    if self._in_row:
                        out += self._end_row()
                    pos += 1
                    continue
                if chunk[pos] == 0x0D and (pos + 1 == n or chunk[pos + 1] == 0x0A) and not self._in_row:
                    pos += 1
                    continue
                self._begin_cell(out)
                if chunk[pos] == 0x22:
                    self._quoted, pos = True, pos + 1
                    continue
            m = _CSV_STOPS.search(chunk, pos)
            end = m.start() if m else n
            self._put(out, chunk[pos:end])
            if m is None:
                return bytes(out)
            c = chunk[end]
            pos = end + 1
            if c == 0x2C:  # ,
                self._end_cell(out)
                if pos < n and chunk[pos] in (0x0A, 0x0D):
                    self._begin_cell(out)  # an empty cell before the row's end (at a block's end: decided by the next)
            elif c == 0x0A:
                out += self._end_row()
            elif c == 0x0D:
                if pos < n and chunk[pos] != 0x0A:
                    self._put(out, b"\r")
            else:  # a quote inside an unquoted cell: kept
                self._put(out, b'"')
        return bytes(out)


# [h28e] `gcloud logging read` without --format: its YAML printer (google-cloud-sdk lib/googlecloudsdk/core/resource/
# yaml_printer.py YamlPrinter._AddRecord: ruamel's safe dumper, `explicit_start` so that every entry begins with a
# `---` line, block style, indent 2, a string with a newline in the literal style `|`) writes each LogEntry as a YAML
# document. Each document is read as one JSON line (the LogEntry, then read as h26c's Cloud Logging entries are).
# Taken only where the file starts with `---` and a LogEntry's key (YAML's own, 2-space keys are never at column 0
# inside a document). A document is held to its end (at most MAX_DOCUMENT bytes: a longer one is a line of its first
# bytes, unreadable and counted); a document YAML cannot read (cut in the middle) is such a line too, and the file
# counts a `sources` failure naming it.
_YAML_LOG_ENTRY = re.compile(rb"---[ \t]*\r?\n(?:insertId|jsonPayload|textPayload|protoPayload|labels|logName|"
                             rb"receiveTimestamp|resource|severity|timestamp|httpRequest|operation|sourceLocation|"
                             rb"spanId|trace|traceSampled|split|errorGroups):")
MAX_DOCUMENT = 1 << 20


class YamlDocumentLines(_ConvertedLines):
    """The documents of a YAML stream as lines of compact JSON, one document at a time (see above). `problem`: the
    documents that could not be read, None when all were."""

    def __init__(self, raw: BinaryIO):
        super().__init__(raw)
        self._doc = bytearray()
        self._cut = False
        self._carry = b""
        self._documents = 0
        self._unreadable = 0

    def _finish(self) -> bytes:
        tail, self._carry = self._carry, b""
        self._add_line(tail)
        last = self._document()
        if self._unreadable:
            self.problem = f"{self._unreadable} of {self._documents} YAML documents unreadable (cut, or not YAML)"
        return last

    def _add_line(self, line: bytes) -> None:
        if self._cut:
            return
        if len(self._doc) + len(line) > MAX_DOCUMENT:
            self._cut = True
            return
        self._doc += line

    def _convert(self, chunk: bytes) -> bytes:
        data = self._carry + chunk
        out = bytearray()
        pos = 0
        while True:
            end = data.find(b"\n", pos)
            if end < 0:
                self._carry = data[pos:]
                if len(self._carry) > MAX_DOCUMENT:  # a line longer than a document may be: cut
                    self._add_line(self._carry)
                    self._carry = b""
                return bytes(out)
            line = data[pos:end + 1]
            pos = end + 1
            if line.rstrip() == b"---":
                out += self._document()
                continue
            self._add_line(line)

    def _document(self) -> bytes:
        """The document held, as a line (b"" when none was)."""
        doc, cut = bytes(self._doc), self._cut
        self._doc, self._cut = bytearray(), False
        if not doc.strip() and not cut:
            return b""
        self._documents += 1
        if not cut:
            try:
                value = yaml.load(doc, Loader=_YAML_LOADER)
                if isinstance(value, dict):
                    return msgspec.json.encode(value, enc_hook=str) + b"\n"
            except (yaml.YAMLError, msgspec.EncodeError, ValueError, TypeError, RecursionError):
                pass
        self._unreadable += 1
        return b"# unreadable YAML document: " + doc[:200].replace(b"\n", b" ").replace(b"\r", b" ") + b"\n"


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # [h28e] libyaml's where built


@dataclass
class ReadStats:
    bytes: int = 0
    lines: int = 0
    invalid_utf8_lines: int = 0
    long_lines_cut: int = 0
    errors: list[str] = field(default_factory=list)
    failures: StageFailures = field(default_factory=StageFailures)  # files that failed (stage "sources")


BLOCK = 1 << 20


def read_blocks(path: str, stats: ReadStats, *, max_line_bytes: int = 1 << 20) -> Iterator[bytes]:
    """The file's bytes in large blocks of whole lines (a block never ends inside a line,
    and carries no trailing newline).

    Lines end at b"\\n" only (a bare \\r is part of the line, as containerd keeps it). A line
    longer than `max_line_bytes` is cut there and counted; a truncated gzip keeps what was
    read and records an error naming the file and the offset.

    The file is one unit of work: when it cannot be opened, or reading it fails on the way,
    what was read stays, the failure is counted in `stats.failures` (stage "sources", with the
    file and the byte offset) and the blocks end there; the caller goes on with the next file.
    """
    start = stats.bytes
    try:
        yield from _blocks(path, stats, max_line_bytes)
    except Exception as exc:
        failures_of(stats).add("sources", exc, file=path, position=f"byte {stats.bytes - start}")


def _blocks(path: str, stats: ReadStats, max_line_bytes: int) -> Iterator[bytes]:
    stream = open_binary(path)
    # read1 hands over what was decompressed so far, so a truncated gzip loses only its tail.
    read = stream.read1 if isinstance(stream, gzip.GzipFile) else stream.read
    carry = b""
    carry_cut = False
    try:
        while True:
            try:
                block = read(BLOCK)
            except (EOFError, OSError, zlib.error, gzip.BadGzipFile) as exc:
                offset = _compressed_offset(stream)
                stats.errors.append(f"{path}: unreadable after byte {offset}: {exc}")
                failures_of(stats).add("sources", exc, file=path, position=f"byte {offset}")
                block = b""
            if not block:
                break
            stats.bytes += len(block)
            last_nl = block.rfind(b"\n")
            if last_nl < 0:
                if not carry_cut:
                    carry += block
                    if len(carry) > max_line_bytes:
                        carry = carry[:max_line_bytes]
                        carry_cut = True
                continue
            head = block[:last_nl]
            if carry:
                first_nl = head.find(b"\n")
                first = carry if carry_cut else carry + (head if first_nl < 0 else head[:first_nl])
                if len(first) > max_line_bytes:
                    first, carry_cut = first[:max_line_bytes], True
                if carry_cut:
                    stats.long_lines_cut += 1
                head = first + (b"" if first_nl < 0 else head[first_nl:])
                carry_cut = False
            carry = block[last_nl + 1 :]
            if len(carry) > max_line_bytes:
                carry, carry_cut = carry[:max_line_bytes], True
            if len(head) > max_line_bytes and _has_long_line(head, max_line_bytes):
                head = _cut_long_lines(head, stats, max_line_bytes)
            yield head
        if carry:
            if carry_cut:
                stats.long_lines_cut += 1
            yield carry
        problem = _document_problem(stream)
        if problem is not None:  # [h27d] a JSON document cut short: counted as a truncated gzip is
            stats.errors.append(f"{path}: {problem}")
            failures_of(stats).add("sources", EOFError(problem), file=path, position=f"byte {stats.bytes}")
    finally:
        if path != "-":
            stream.close()


def _has_long_line(data: bytes, max_line_bytes: int) -> bool:
    """Whether a line of `data` is longer than `max_line_bytes`: a jump to the last newline
    within reach at a time, so a block of ordinary lines costs a few searches, not a split."""
    pos, size = 0, len(data)
    while size - pos > max_line_bytes:
        newline = data.rfind(b"\n", pos, pos + max_line_bytes + 1)
        if newline < 0:
            return True
        pos = newline + 1
    return False


def _cut_long_lines(data: bytes, stats: ReadStats, max_line_bytes: int) -> bytes:
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        if len(line) > max_line_bytes:
            lines[i] = line[:max_line_bytes]
            stats.long_lines_cut += 1
    return b"\n".join(lines)


def decode_block(data: bytes) -> tuple[list[str], int]:
    """The lines of a block as text, and how many of them were not valid UTF-8
    (those are decoded with replacement characters)."""
    try:
        return data.decode("utf-8").split("\n"), 0
    except UnicodeDecodeError:
        pass
    lines = []
    invalid = 0
    for raw in data.split(b"\n"):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            invalid += 1
            lines.append(raw.decode("utf-8", "replace"))
    return lines, invalid


def cut_character_tail(data: bytes) -> int:
    """Where the last character of `data` starts if its bytes are not all there (a UTF-8 sequence
    the runtime cut at its 16 KiB chunk size: containerd splits a long line into P chunks by
    bytes), else len(data)."""
    size = len(data)
    for back in range(1, min(4, size + 1)):
        byte = data[size - back]
        if byte < 0x80:
            break
        if byte >= 0xC0:  # a lead byte: how many bytes its character has
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return size - back if back < need else size
    return size


def whole_characters(tails: dict, stream, partial: bool, text: bytes) -> bytes:
    """A CRI chunk's text with the bytes of the character its stream's last P chunk began in front
    (`tails`: per stream, taken off), cut where its own last character is not all there if it is a
    P chunk (those bytes kept in `tails` for the stream's next chunk)."""
    tail = tails.pop(stream, None)
    if tail:
        text = tail + text
    if partial:
        end = cut_character_tail(text)
        if end < len(text):
            tails[stream] = text[end:]
            return text[:end]
    return text


def invalid_cri_lines(block: bytes, cut_tails: dict[bytes, bytes]) -> int:
    """How many lines of a CRI block are not valid UTF-8, where a character cut between a line's P
    chunk and the next chunk of its stream is whole again (`cut_tails`: per stream, the bytes of a
    character its last P chunk before the block began; the curator's `cut_tail`)."""
    if not cut_tails:
        try:
            block.decode("utf-8")
            return 0
        except UnicodeDecodeError:
            pass
    invalid = 0
    tails = dict(cut_tails)
    for raw in block.split(b"\n"):
        parts = raw.split(b" ", 3)
        if len(parts) != 4:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                invalid += 1
            continue
        text = whole_characters(tails, parts[1], parts[2] == b"P", parts[3])
        try:
            raw[: len(raw) - len(parts[3])].decode("utf-8")
            text.decode("utf-8")
        except UnicodeDecodeError:
            invalid += 1
    return invalid


def read_lines(path: str, stats: ReadStats, *, max_line_bytes: int = 1 << 20) -> Iterator[list[str]]:
    """The file's lines as text, in blocks (for small inputs such as event files)."""
    for block in read_blocks(path, stats, max_line_bytes=max_line_bytes):
        lines, invalid = decode_block(block)
        stats.invalid_utf8_lines += invalid
        stats.lines += len(lines)
        yield lines


def _compressed_offset(stream: BinaryIO) -> int:
    inner = getattr(stream, "fileobj", None)
    try:
        return (inner or stream).tell()
    except (OSError, ValueError, AttributeError):
        return -1
