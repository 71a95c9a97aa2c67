"""The local-folder sink: one NDJSON file per record kind, written so that a crash never
leaves a folder that looks complete.

Nothing is made on disk before the first record or file is written (a usage error found while
the input is read leaves no folder). Then the previous run's finished files are taken out of
`--out` (this run replaces them), and everything is written into a hidden staging folder beside
it, `.<name>.partial`: each kind to `<kind>.ndjson.partial`, the report, and at close
`summary.json`. At close every file is synced and given its final name inside the staging
folder, the folder is synced, and the staging folder is renamed to `--out` in one rename: a
kill at any moment leaves either no finished-looking folder or a complete one, never final-named
files without `summary.json`. Where `--out` cannot be replaced whole (it holds files of its own,
it is the working directory or a mount point, or its parent is read-only) the files are moved
into it one by one, `summary.json` last. Kinds whose records are updated as a stream advances
(epoch progress, diagnoses) keep only the newest record per id, as an index would.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import shutil
from pathlib import Path
from typing import IO, Iterable, Iterator

from gangscope.parsers.records import RECORD_KINDS, Record, encode, encode_lines
from gangscope.pipeline.errors import SinkError
from gangscope.pipeline.isolation import StageFailures, record_place
from gangscope.pipeline.sinks.newest_by_id import NewestById

UPDATED_IN_PLACE = frozenset({"epoch", "diagnosis"})


FINISHED = ("summary.json", "report.html", *(f"{kind}.ndjson" for kind in RECORD_KINDS))


class LocalFolderSink:
    def __init__(self, out_dir: str | os.PathLike, *, kinds: Iterable[str] = RECORD_KINDS, is_part: bool = False):
        self.out = Path(out_dir)
        self.is_part = is_part
        self.kinds = tuple(kinds)
        self.files: dict[str, IO[bytes]] = {}
        self.latest: dict[str, NewestById] = {kind: NewestById() for kind in UPDATED_IN_PLACE}
        self.counts: dict[str, int] = {kind: 0 for kind in self.kinds}
        self.extras: list[str] = []  # files of write_file, published at close
        self.failures = StageFailures()  # records that could not be encoded (stage "sinks"): skipped
        # Where the files are written until close: made at the first write (a worker's part: its folder).
        self.dir: Path | None = None
        if is_part:
            self._make(self.out)
            self.dir = self.out
            self._open_kinds()

    @property
    def staging(self) -> Path:
        """The hidden folder beside --out that the run is written into."""
        out = Path(os.path.abspath(self.out))
        return out.parent / f".{out.name}.partial"

    def _make(self, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SinkError(f"{self.out}: cannot create the output folder: {exc.strerror or exc}") from None

    def _ready(self) -> Path:
        """The staging folder, made on first use: the previous run's finished files are taken out of
        --out first (until this run closes, the folder must not look complete, not even in part)."""
        if self.dir is not None:
            return self.dir
        if self.out.exists() and not self.out.is_dir():
            raise SinkError(f"{self.out}: cannot create the output folder: a file of that name is in the way")
        if self.out.is_dir():
            for name in FINISHED:
                try:
                    (self.out / name).unlink()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise SinkError(f"{self.out / name}: cannot remove the previous run's file: "
                                    f"{exc.strerror or exc}") from None
        staging = self.staging
        try:
            staging.mkdir(parents=True, exist_ok=True)
        except OSError:
            staging = self.out / ".gangscope.partial"  # a read-only parent: staged inside --out
            self._make(staging)
        # What a killed run left there goes, but the partial files this run opens (truncated when opened).
        keep = {f"{kind}.ndjson.partial" for kind in self.kinds if kind not in UPDATED_IN_PLACE}
        for entry in staging.iterdir():
            if entry.name in keep:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    entry.unlink()
        self.dir = staging
        self._open_kinds()
        return staging

    def _open_kinds(self) -> None:
        for kind in self.kinds:
            if kind not in UPDATED_IN_PLACE and kind not in self.files:
                self.files[kind] = self._open(self.dir / f"{kind}.ndjson.partial")

    def _open(self, path: Path) -> IO[bytes]:
        try:
            return open(path, "wb", buffering=1 << 20)
        except OSError as exc:
            raise SinkError(f"{path}: cannot write: {exc.strerror or exc}") from None

    def write(self, records: Iterable[Record]) -> None:
        folder = self._ready()
        records = list(records)
        try:
            if not self._write_by_kind(folder, records):
                self._write_each(folder, records)
        except OSError as exc:
            raise self._failure(exc) from None

    def _write_by_kind(self, folder: Path, records: list[Record]) -> bool:
        """The records of each kind encoded as one NDJSON batch and written at once (the bytes the
        record-by-record path writes; the kinds updated in place one by one, kept by id); False, and
        nothing written, when one of them cannot be encoded: then `_write_each` takes the batch."""
        try:
            by_kind: dict[str, list[Record]] = {}
            for record in records:
                kind = record.kind
                batch = by_kind.get(kind)
                if batch is None:
                    batch = by_kind[kind] = []
                batch.append(record)
            encoded = [(kind, [(r.id, encode(r)) for r in batch] if kind in UPDATED_IN_PLACE else encode_lines(batch),
                        len(batch)) for kind, batch in by_kind.items()]
        except Exception:
            return False
        for kind, data, count in encoded:
            if kind in UPDATED_IN_PLACE:
                put = self.latest[kind].put
                for record_id, document in data:
                    put(record_id, document)  # counted once per id, at close
                continue
            handle = self.files.get(kind)
            if handle is None:
                handle = self.files[kind] = self._open(folder / f"{kind}.ndjson.partial")
            handle.write(data)
            self.counts[kind] = self.counts.get(kind, 0) + count
        return True

    def _write_each(self, folder: Path, records: list[Record]) -> None:
        """Record by record: one that cannot be encoded is counted and skipped; the kinds updated in
        place keep the newest record of each id."""
        for record in records:
            # One record is one unit of work: one that cannot be encoded is counted and skipped.
            try:
                kind = record.kind
                data = encode(record)
            except Exception as exc:
                self.failures.add("sinks", exc, **record_place(record))
                continue
            if kind in UPDATED_IN_PLACE:
                self.latest[kind].put(record.id, data)  # counted once per id, at close
                continue
            handle = self.files.get(kind)
            if handle is None:
                handle = self.files[kind] = self._open(folder / f"{kind}.ndjson.partial")
            handle.write(data)
            handle.write(b"\n")
            self.counts[kind] = self.counts.get(kind, 0) + 1

    def _failure(self, exc: OSError) -> SinkError:
        if exc.errno == errno.ENOSPC:
            return SinkError(f"{self.out}: disk full while writing; the output is incomplete (left in {self.dir or self.staging})")
        return SinkError(f"{self.out}: write failed: {exc.strerror or exc}; the output is incomplete (left in {self.dir or self.staging})")

    def write_file(self, name: str, text: str) -> None:
        """An extra file (the report): written now as `.<name>.partial`, named `<name>` at close."""
        folder = self._ready()
        try:
            self._write_synced(folder / f".{name}.partial", text)
        except OSError as exc:
            raise self._failure(exc) from None
        if name not in self.extras:
            self.extras.append(name)

    @contextlib.contextmanager
    def file_writer(self, name: str) -> Iterator[IO[str]]:
        """An extra file written piece by piece (the report, rendered as it is written): the text
        handle of `.<name>.partial`, synced when the block ends, named `<name>` at close."""
        folder = self._ready()
        try:
            with open(folder / f".{name}.partial", "w", encoding="utf-8") as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise self._failure(exc) from None
        if name not in self.extras:
            self.extras.append(name)

    @staticmethod
    def _write_synced(path: Path, text: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    def close(self, summary: dict | None = None) -> dict[str, int]:
        """Flush and sync everything, give the files their final names inside the staging folder,
        `summary.json` last, and rename the folder to --out (see the module's doc). A worker's
        part renames its files in place."""
        folder = self._ready()
        renames = [(folder / f"{kind}.ndjson.partial", folder / f"{kind}.ndjson")
                   for kind in (*self.files, *(k for k in self.latest if k not in self.files))]
        renames += [(folder / f".{name}.partial", folder / name) for name in self.extras]
        try:
            (folder / ".parts").rmdir()  # the workers' parts, absorbed by now
        except OSError:
            pass  # none were made, or a part was left behind by a failure: kept to be looked at
        try:
            for kind, newest in self.latest.items():
                handle = self._open(folder / f"{kind}.ndjson.partial")
                written = 0
                for data in newest.documents():
                    handle.write(data)
                    handle.write(b"\n")
                    written += 1
                self.counts[kind] = written
                self.files[kind] = handle
            for kind, handle in self.files.items():
                handle.flush()
                if not self.is_part:  # a worker's part is copied into the run's files, which are synced
                    os.fsync(handle.fileno())
                handle.close()
            if summary is not None:
                self._write_synced(folder / ".summary.json.partial", json.dumps(summary, indent=2, sort_keys=True) + "\n")
                renames.append((folder / ".summary.json.partial", folder / "summary.json"))
            if self.is_part:
                for partial, final in renames:
                    os.replace(partial, final)
                return dict(self.counts)
            for partial, final in renames:  # inside the hidden folder: nothing looks finished yet
                os.replace(partial, final)
            _sync_folder(folder)
            self._publish(folder, [final.name for _, final in renames])
        except OSError as exc:
            raise self._failure(exc) from None
        return dict(self.counts)

    def _publish(self, folder: Path, names: list[str]) -> None:
        """The staging folder becomes --out in one rename where --out can go (absent, or an empty
        folder of no other use); else its files are moved in one by one, `summary.json` last."""
        out = self.out
        if folder.parent == out:  # staged inside --out
            whole = False
        else:
            whole = not out.exists()
            if not whole and out.is_dir() and not out.is_symlink() and not any(out.iterdir()) \
                    and not os.path.ismount(out) and not _is_cwd(out):
                out.rmdir()
                whole = True
        if whole:
            os.rename(folder, out)
            _sync_folder(out.parent)
            return
        for name in sorted(names, key=lambda n: n == "summary.json"):
            os.replace(folder / name, out / name)
        _sync_folder(out)
        with contextlib.suppress(OSError):
            folder.rmdir()

    # -- parts written by worker processes -------------------------------------
    def part(self, index: int):
        """How a worker process makes the sink for its share: a hidden folder of this one."""
        return functools.partial(LocalFolderSink, self._ready() / ".parts" / f"{index:06d}", kinds=self.kinds, is_part=True)

    def handoff(self) -> tuple[str, dict[str, int], StageFailures]:
        """What a closed part tells the parent: where it is, what it holds and what it skipped."""
        return str(self.out), dict(self.counts), self.failures

    def absorb(self, handoff: tuple) -> None:
        """Append a closed part's files to this sink's, then remove the part."""
        part_out, part_counts = Path(handoff[0]), handoff[1]
        if len(handoff) > 2:
            self.failures.merge(handoff[2])
        try:
            for kind in self.kinds:
                path = part_out / f"{kind}.ndjson"
                if not path.exists():
                    continue
                with open(path, "rb") as src:
                    if kind in UPDATED_IN_PLACE:
                        for line in src:
                            self.latest[kind].put(json.loads(line).get("id") or "", line.rstrip(b"\n"))
                    else:
                        handle = self.files.get(kind)
                        if handle is None:
                            handle = self.files[kind] = self._open(self._ready() / f"{kind}.ndjson.partial")
                        shutil.copyfileobj(src, handle, 1 << 20)
                        self.counts[kind] = self.counts.get(kind, 0) + part_counts.get(kind, 0)
            # `.parts` itself stays until close: removed here, it raced a worker making its part
            shutil.rmtree(part_out, ignore_errors=True)
        except OSError as exc:
            raise self._failure(exc) from None

    def abort(self) -> None:
        """Close without publishing: the files stay in the hidden staging folder, named as incomplete."""
        for handle in self.files.values():
            try:
                handle.close()
            except OSError:
                pass


def _sync_folder(folder: Path) -> None:
    """fsync a folder, so that the renames in it are on disk (where folders can be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _is_cwd(folder: Path) -> bool:
    try:
        return os.path.samefile(folder, os.getcwd())
    except OSError:
        return False
