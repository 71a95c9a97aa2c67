"""The local-folder sink: one NDJSON file per record kind, written so that a crash never
leaves a file that looks complete.

Each kind is written to `<kind>.ndjson.partial` and renamed to `<kind>.ndjson` only when
the run closes the sink; `summary.json` is written last. Everything that takes disk space
(the files, the report, the summary) is written and synced under a `.partial` name before
the first rename, so a full disk or a failed write leaves no final-named file: the folder
never looks complete when it is not. Kinds whose records are updated as a stream advances
(epoch progress, diagnoses) keep only the newest record per id, as an index would.
"""

from __future__ import annotations

import errno
import functools
import json
import os
from pathlib import Path
from typing import IO, Iterable

from gangscope.parsers.records import RECORD_KINDS, Record, encode
from gangscope.pipeline.errors import SinkError
from gangscope.pipeline.isolation import StageFailures, record_place

UPDATED_IN_PLACE = frozenset({"epoch", "diagnosis"})


class LocalFolderSink:
    def __init__(self, out_dir: str | os.PathLike, *, kinds: Iterable[str] = RECORD_KINDS, is_part: bool = False):
        self.out = Path(out_dir)
        self.is_part = is_part
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SinkError(f"{self.out}: cannot create the output folder: {exc.strerror or exc}") from None
        self.kinds = tuple(kinds)
        self.files: dict[str, IO[bytes]] = {}
        self.latest: dict[str, dict[str, bytes]] = {kind: {} for kind in UPDATED_IN_PLACE}
        self.counts: dict[str, int] = {kind: 0 for kind in self.kinds}
        self.extras: list[str] = []  # files of write_file, published at close
        self.failures = StageFailures()  # records that could not be encoded (stage "sinks"): skipped
        # Remove a previous run's finished files first (this run replaces them): until this
        # run closes, the folder must not look complete, not even in part.
        for name in ("summary.json", "report.html", *(f"{kind}.ndjson" for kind in RECORD_KINDS)):
            try:
                (self.out / name).unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise SinkError(f"{self.out / name}: cannot remove the previous run's file: "
                                f"{exc.strerror or exc}") from None
        for kind in self.kinds:
            if kind not in UPDATED_IN_PLACE:
                self.files[kind] = self._open(self.out / f"{kind}.ndjson.partial")

    def _open(self, path: Path) -> IO[bytes]:
        try:
            return open(path, "wb", buffering=1 << 20)
        except OSError as exc:
            raise SinkError(f"{path}: cannot write: {exc.strerror or exc}") from None

    def write(self, records: Iterable[Record]) -> None:
        try:
            for record in records:
                # One record is one unit of work: one that cannot be encoded is counted and skipped.
                try:
                    kind = record.kind
                    data = encode(record)
                except Exception as exc:
                    self.failures.add("sinks", exc, **record_place(record))
                    continue
                if kind in UPDATED_IN_PLACE:
                    bucket = self.latest[kind]
                    if record.id not in bucket:
                        self.counts[kind] = self.counts.get(kind, 0) + 1
                    bucket[record.id] = data
                    continue
                handle = self.files.get(kind)
                if handle is None:
                    handle = self.files[kind] = self._open(self.out / f"{kind}.ndjson.partial")
                handle.write(data)
                handle.write(b"\n")
                self.counts[kind] = self.counts.get(kind, 0) + 1
        except OSError as exc:
            raise self._failure(exc) from None

    def _failure(self, exc: OSError) -> SinkError:
        if exc.errno == errno.ENOSPC:
            return SinkError(f"{self.out}: disk full while writing; the output is incomplete (left as .partial files)")
        return SinkError(f"{self.out}: write failed: {exc.strerror or exc}; the output is incomplete")

    def write_file(self, name: str, text: str) -> None:
        """An extra file (the report): written now as `.<name>.partial`, named `<name>` at close."""
        try:
            self._write_synced(self.out / f".{name}.partial", text)
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
        """Flush and sync everything under `.partial` names, then give the files their final
        names, `summary.json` last. A failure on the way takes back the names already given."""
        renames = [(self.out / f"{kind}.ndjson.partial", self.out / f"{kind}.ndjson")
                   for kind in (*self.files, *(k for k in self.latest if k not in self.files))]
        renames += [(self.out / f".{name}.partial", self.out / name) for name in self.extras]
        done: list[tuple[Path, Path]] = []
        try:
            (self.out / ".parts").rmdir()  # the workers' parts, absorbed by now
        except OSError:
            pass  # none were made, or a part was left behind by a failure: kept to be looked at
        try:
            for kind, bucket in self.latest.items():
                handle = self._open(self.out / f"{kind}.ndjson.partial")
                for data in bucket.values():
                    handle.write(data)
                    handle.write(b"\n")
                self.files[kind] = handle
            for kind, handle in self.files.items():
                handle.flush()
                if not self.is_part:  # a worker's part is copied into the run's files, which are synced
                    os.fsync(handle.fileno())
                handle.close()
            if summary is not None:
                self._write_synced(self.out / ".summary.json.partial",
                                   json.dumps(summary, indent=2, sort_keys=True) + "\n")
                renames.append((self.out / ".summary.json.partial", self.out / "summary.json"))
            for partial, final in renames:
                os.replace(partial, final)
                done.append((partial, final))
        except OSError as exc:
            for partial, final in reversed(done):
                try:
                    os.replace(final, partial)
                except OSError:
                    pass
            raise self._failure(exc) from None
        return dict(self.counts)

    # -- parts written by worker processes -------------------------------------
    def part(self, index: int):
        """How a worker process makes the sink for its share: a hidden folder of this one."""
        return functools.partial(LocalFolderSink, self.out / ".parts" / f"{index:06d}", kinds=self.kinds, is_part=True)

    def handoff(self) -> tuple[str, dict[str, int], StageFailures]:
        """What a closed part tells the parent: where it is, what it holds and what it skipped."""
        return str(self.out), dict(self.counts), self.failures

    def absorb(self, handoff: tuple) -> None:
        """Append a closed part's files to this sink's, then remove the part."""
        import shutil

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
                            record_id = json.loads(line).get("id")
                            if record_id not in self.latest[kind]:
                                self.counts[kind] = self.counts.get(kind, 0) + 1
                            self.latest[kind][record_id] = line.rstrip(b"\n")
                    else:
                        handle = self.files.get(kind)
                        if handle is None:
                            handle = self.files[kind] = self._open(self.out / f"{kind}.ndjson.partial")
                        shutil.copyfileobj(src, handle, 1 << 20)
                        self.counts[kind] = self.counts.get(kind, 0) + part_counts.get(kind, 0)
            # `.parts` itself stays until close: removed here, it raced a worker making its part
            shutil.rmtree(part_out, ignore_errors=True)
        except OSError as exc:
            raise self._failure(exc) from None

    def abort(self) -> None:
        """Close without publishing: the .partial files stay, named as incomplete."""
        for handle in self.files.values():
            try:
                handle.close()
            except OSError:
                pass
