"""The OpenSearch sink: records in, bulk requests out, idempotent by record id.

Each record is indexed with its `id` as `_id` into the alias `<prefix>gangscope-<kind>`, so a replay
or a retry overwrites instead of duplicating. Records are batched by count and bytes; a batch that
meets 429 or 5xx (whole request or single documents) is retried with exponential backoff; a document
the server rejects for good is counted and written, with the reason, to a dead-letter NDJSON file.
A server that stays unreachable raises `OpenSearchUnavailable`, one that still answers 429 after
every retry `OpenSearchBusy` (one line each, saying how much is unsent) — a busy server is not a
rejection, so a 429 is never dead-lettered. Nothing is dropped silently: the error holds the documents
still unsent (`unsent`), which `requeue` takes back, so that a caller retrying later sends only those,
not again what the server acknowledged already.

A bulk of more than one document the server refuses whole for its size is not sent again as it was: a 429
of the node's indexing memory (`indexing_pressure.memory.limit`: a request alone over it is refused at
every try) or a 413 (a body over `http.max_content_length`) cuts it in two halves of about the same
bytes, sent in their turn with the same retry policy (a 429 is a try, waited for; a 413 only says the
size), and so on down to one document, which ends as before (`OpenSearchBusy`, or `OpenSearchError` for
a 413). The sink remembers half the refused size as a cap on the bytes of its next bulks, raised by an
eighth after each bulk taken that came near it, forgotten once it is `batch_bytes` again; the halving
is counted (`SinkStats.bulk_splits`, in the summary line). The documents keep the batch's order: a
half goes before the next, a retry before the pieces after it, and a flush given up on leaves them
unsent in that order.
"""

from __future__ import annotations

import functools
import json
import time
from json.encoder import encode_basestring_ascii as _json_string
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Iterable, Mapping

import msgspec
from opensearchpy import exceptions as os_exc

from gangscope.parsers.records import Record, encode
from gangscope.pipeline.isolation import StageFailures, record_place
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.sinks.indices import IndexSettings, OpenSearchError, OpenSearchUnavailable

__all__ = ["OpenSearchSink", "SinkStats", "OpenSearchError", "OpenSearchUnavailable", "OpenSearchBusy"]

DEFAULT_DEAD_LETTER = "gangscope-dead-letter.ndjson"


class OpenSearchBusy(OpenSearchError):
    """The server still answered 429 (too many requests) after every retry; the documents are unsent."""


def _unsent(error: OpenSearchError, docs: list) -> OpenSearchError:
    """`error`, holding the documents a flush leaves unsent (for `OpenSearchSink.requeue`)."""
    error.unsent = docs
    return error


@dataclass
class SinkStats:
    """What a sink did: documents written per kind, failures, retries."""

    written: dict[str, int] = field(default_factory=dict)
    created: int = 0
    updated: int = 0
    failed: int = 0
    retries: int = 0
    # documents sent again because the server answered 429: for the whole request, or for the document
    throttled_requests: int = 0
    throttled_documents: int = 0
    batches: int = 0
    bytes: int = 0
    # bulks refused whole (413, or 429 with more than one document) and sent again in two halves; bulks a batch was
    # cut into beyond one because an earlier refusal taught a cap (bytes per bulk, None while none was learnt)
    bulk_splits: int = 0
    bulks_cut: int = 0
    bulk_cap: int | None = None
    dead_letter: str | None = None
    failure_reasons: dict[str, int] = field(default_factory=dict)
    aliases_swapped: dict[str, str] = field(default_factory=dict)
    failures: StageFailures = field(default_factory=StageFailures)  # records that could not be encoded: skipped

    @property
    def total(self) -> int:
        return sum(self.written.values())

    def summary(self) -> str:
        """One line for the CLI."""
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.written.items())) or "nothing"
        line = f"opensearch: {self.total} documents ({kinds}); {self.created} new, {self.updated} overwritten"
        if self.retries:
            line += f"; {self.retries} retried"
        if self.throttled_requests or self.throttled_documents:
            line += f" ({self.throttled_requests + self.throttled_documents} after a 429)"
        if self.bulk_splits:
            line += f"; {self.bulk_splits} bulks refused whole sent again in halves"
        if self.failed:
            reasons = ", ".join(f"{r} x{n}" for r, n in sorted(self.failure_reasons.items()))
            line += f"; {self.failed} FAILED ({reasons}) -> {self.dead_letter}"
        return line


class _DeadLetter:
    """Rejected documents with the server's reason, one JSON object per line, opened on first use."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._file: IO[str] | None = None

    def write(self, index: str, doc_id: str, status: Any, error: Any, source: str) -> None:
        self._open()
        entry = {"index": index, "id": doc_id, "status": status, "error": error, "record": json.loads(source)}
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")  # type: ignore[union-attr]

    def take(self, other: Path) -> None:
        """Append another dead-letter file (a worker's) to this one and remove it."""
        self._open()
        with other.open(encoding="utf-8") as src:
            for line in src:
                self._file.write(line)  # type: ignore[union-attr]
        other.unlink()

    def _open(self) -> None:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class _BulkDoc(msgspec.Struct, gc=False):
    """One document ready for the bulk body: its two NDJSON lines (the action, the source), as bytes.
    A msgspec Struct, made in C by `_Doc` (a class whose Python __init__ built the lines was 28 % of
    write's instructions) and left out of the cycle collector (it holds strings and bytes only)."""

    kind: str
    index: str
    id: str
    lines: bytes
    size: int

    @property
    def source(self) -> bytes:
        """The record's JSON (the second line: the action line's JSON holds no raw newline)."""
        return self.lines[self.lines.index(b"\n") + 1:-1]


def _Doc(kind: str, index: str, doc_id: str, source: bytes, head: bytes, tail: bytes) -> _BulkDoc:
    """The document of a record's JSON `source` in `index` (head, tail: `_action_parts`)."""
    lines = b"".join((head, _json_string(doc_id).encode("ascii"), tail, source, b"\n"))
    return _BulkDoc(kind, index, doc_id, lines, len(lines))


def _action_parts(index: str, require_alias: bool) -> tuple[bytes, bytes]:
    """The action line of a document of `index` before and after its JSON-quoted id:
    json.dumps({"index": {"_index": index, "_id": doc_id, "require_alias": True}}) written out, ASCII.
    require_alias never lets a missing alias auto-create a concrete index under the alias's name."""
    head = ('{"index": {"_index": ' + _json_string(index) + ', "_id": ').encode("ascii")
    return head, (b', "require_alias": true}}\n' if require_alias else b"}}\n")


def _reason(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("type", "error"))
    return str(error).split(":", 1)[0][:80]


class OpenSearchSink:
    """Index records into OpenSearch, one alias per record kind.

    url: `http[s]://[user:password@]host:port`. prefix: put before every index name (tests,
    tenants). batch_docs / batch_bytes: flush when either is reached (a bulk refused whole for its size is
    sent in halves, and the next ones below a cap learnt from it: see the module's doc). max_retries,
    initial_backoff, max_backoff: the retry policy for 429 and 5xx (seconds, doubling). dead_letter: NDJSON file for
    rejected documents (created only when one is). refresh: make documents searchable on close.
    reindex: write into a new version of each index and swap the aliases on close (see
    `indices.Reindex`). username, password, ca_certs, client_cert, client_key, verify_certs,
    timeout: connection options for real clusters. install: create the templates and the alias of a
    kind when its first record comes and the alias is missing (without it, such records fail).
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "",
        batch_docs: int = 2000,
        batch_bytes: int = 8 * 1024 * 1024,
        max_retries: int = 5,
        initial_backoff: float = 0.5,
        max_backoff: float = 30.0,
        dead_letter: str | Path | None = DEFAULT_DEAD_LETTER,
        refresh: bool = False,
        reindex: bool = False,
        install: bool = True,
        settings: IndexSettings = IndexSettings(),
        username: str | None = None,
        password: str | None = None,
        ca_certs: str | None = None,
        client_cert: str | None = None,
        client_key: str | None = None,
        verify_certs: bool = True,
        timeout: float = 30.0,
        compress: bool = False,
        targets: Mapping[str, str] | None = None,
    ):
        # Everything but the targets, so that `part` can make the same sink in a worker process.
        self._options = {k: v for k, v in locals().items() if k not in ("self", "targets", "__class__")}
        self.url = url
        self.prefix = prefix
        self.batch_docs = max(1, batch_docs)
        self.batch_bytes = max(1, batch_bytes)
        self.max_retries = max(0, max_retries)
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.refresh = refresh
        self.stats = SinkStats()
        self.client = indices.connect(
            url, username=username, password=password, ca_certs=ca_certs, client_cert=client_cert,
            client_key=client_key, verify_certs=verify_certs, timeout=timeout, compress=compress,
        )
        self._dead = _DeadLetter(dead_letter or DEFAULT_DEAD_LETTER)
        self.stats.dead_letter = str(self._dead.path)
        self._buffer: list[_BulkDoc] = []
        self._buffered_bytes = 0
        self._cap: int | None = None  # bytes per bulk learnt from bulks refused whole (`_lower_cap`)
        self._actions: dict[str, tuple[bytes, bytes]] = {}  # index -> its action line around the id
        self._closed = False
        self._settings = settings
        self._install = install
        self._reindex = indices.Reindex(self.client, prefix, settings=settings) if reindex and not targets else None
        self._require_alias = self._reindex is None and not targets
        if targets:
            # A part of a parent sink: the parent made every index; only check the server is there.
            indices._call(url, self.client.info)
            self._targets = dict(targets)
            return
        # First contact (fails fast with one line: a wrong URL should not look like a slow server);
        # kinds without an alias yet get one when their first record comes.
        states = self._reindex.states if self._reindex else indices.kind_states(self.client, prefix)
        self._targets = {} if self._reindex else {
            k: indices.alias_name(k, prefix) for k, state in states.items() if state.live}

    # --- Sink interface ---------------------------------------------------------------------

    def write(self, records: Iterable[Record]) -> None:
        """Queue records; full batches are sent at once."""
        targets = self._targets
        actions = self._actions
        make_doc = _Doc
        for record in records:
            kind = record.kind
            index = targets.get(kind) or self._target(kind)
            # One record is one unit of work: one that cannot be encoded is counted and skipped.
            try:
                source = encode(record)
            except Exception as exc:
                self.stats.failures.add("sinks", exc, **record_place(record))
                continue
            parts = actions.get(index)
            if parts is None:
                parts = actions[index] = _action_parts(index, self._require_alias)
            doc = make_doc(kind, index, record.id, source, *parts)
            if not doc.id:
                # An empty _id would make the server refuse the whole bulk request, not one document.
                self._reject(doc, {"status": None, "error": {"type": "missing_id", "reason": "record has no id"}})
                continue
            self._buffer.append(doc)
            self._buffered_bytes += doc.size
            if len(self._buffer) >= self.batch_docs or self._buffered_bytes >= self.batch_bytes:
                self.flush()

    def prepare(self, kinds: Iterable[str] = indices.KINDS) -> None:
        """Make now the aliases of `kinds` still missing (one install for all of them), so that no
        record waits for its index to be made when it comes. A service does this at start: made on
        the first record of each kind, an install per kind stood in its loop (16 s before the first
        line was indexed on a busy cluster, python -m bench.kafka_consume --only delay)."""
        if self._reindex is not None or not self._install:
            return
        missing = [kind for kind in kinds if kind not in self._targets]
        if missing:
            indices.ensure(self.client, self.prefix, missing, self._settings)
            for kind in missing:
                self._targets[kind] = indices.alias_name(kind, self.prefix)

    def _target(self, kind: str) -> str:
        """Where a kind seen for the first time goes: its new version, or its (created) alias."""
        if kind not in indices.KINDS:
            raise OpenSearchError(f"no index for record kind {kind!r}")
        if self._reindex is not None:
            index = self._reindex.target(kind)
        else:
            if self._install:
                indices.ensure(self.client, self.prefix, (kind,), self._settings)
            index = indices.alias_name(kind, self.prefix)
        self._targets[kind] = index
        return index

    def flush(self) -> None:
        """Send what is queued; returns when every document is indexed or dead-lettered."""
        if not self._buffer:
            return
        batch, self._buffer, self._buffered_bytes = self._buffer, [], 0
        self._send(batch)

    def requeue(self, docs: list) -> None:
        """Documents a failed flush left unsent (its error's `unsent`) back in front of the queue, to go
        with the next flush: a retry sends only what the server did not acknowledge."""
        if docs:
            self._buffer[:0] = docs
            self._buffered_bytes += sum(doc.size for doc in docs)

    def close(self) -> SinkStats:
        """Flush, then (reindex) swap the aliases or (refresh) make documents searchable."""
        if self._closed:
            return self.stats
        try:
            self.flush()
            if self._reindex is not None:
                self.stats.aliases_swapped = self._reindex.commit()
            elif self.refresh and self.stats.written:
                names = ",".join(self._targets[k] for k in self.stats.written)
                indices._call(self.url, self.client.indices.refresh, index=names)
        finally:
            self._dead.close()
            self._closed = True
        return self.stats

    def abort(self) -> None:
        """Stop without committing: a reindex leaves the aliases where they were."""
        if self._reindex is not None and not self._reindex.done:
            self._reindex.abort()
        self._dead.close()
        self._closed = True

    # --- worker processes (replay --workers) ------------------------------------------------

    def part(self, index: int):
        """A picklable factory of the sink a worker process writes through: same server, same
        indices (all made here first, so workers never race to create one), its own dead letter."""
        for kind in indices.KINDS:
            self._targets.get(kind) or self._target(kind)
        options = dict(self._options, reindex=False, install=False, refresh=False,
                       dead_letter=f"{self._dead.path}.part{index:06d}")
        return functools.partial(OpenSearchSink, targets=dict(self._targets), **options)

    def handoff(self) -> SinkStats:
        """What a closed part tells the parent: its counts."""
        return self.stats

    def absorb(self, part: SinkStats) -> None:
        """Add a closed part's counts to this sink's and take over its dead letters."""
        mine = self.stats
        for kind, n in part.written.items():
            mine.written[kind] = mine.written.get(kind, 0) + n
        for reason, n in part.failure_reasons.items():
            mine.failure_reasons[reason] = mine.failure_reasons.get(reason, 0) + n
        mine.created += part.created
        mine.updated += part.updated
        mine.failed += part.failed
        mine.failures.merge(getattr(part, "failures", None))
        mine.retries += part.retries
        mine.throttled_requests += part.throttled_requests
        mine.throttled_documents += part.throttled_documents
        mine.batches += part.batches
        mine.bytes += part.bytes
        mine.bulk_splits += getattr(part, "bulk_splits", 0)
        mine.bulks_cut += getattr(part, "bulks_cut", 0)
        if part.dead_letter and Path(part.dead_letter).exists():
            self._dead.take(Path(part.dead_letter))

    def __enter__(self) -> "OpenSearchSink":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    # --- sending ----------------------------------------------------------------------------

    def _send(self, batch: list[_BulkDoc]) -> None:
        # Pieces still to send, the next one last (a stack): each with the tries its documents had. A bulk the server
        # refuses whole for its size (413, or a 429 of its indexing memory) is cut in two halves that take its place;
        # the documents of a piece go before those of the pieces after it, so the order the batch had is kept.
        pieces: list[tuple[list[_BulkDoc], int]] = [(batch, 0)]
        wait = 0  # the backoff before the next request: 0 after an answer that took every document
        while pieces:
            pending, attempt = pieces.pop()
            if self._cap is not None and len(pending) > 1:
                cut = self._cut(pending)  # over the cap learnt (in this flush or an earlier one): cut first
                if len(cut) > 1:
                    pieces.extend((piece, attempt) for piece in reversed(cut))
                    continue
            if wait:
                self.stats.retries += len(pending)
                time.sleep(min(self.max_backoff, self.initial_backoff * 2 ** (wait - 1)))
            last = attempt >= self.max_retries
            # the body from the documents' bytes as they are (opensearch-py's bulk helper encoded every line again to
            # measure it, then the whole body); the answer's JSON is decoded by the client, only what `_BULK_ANSWER`
            # keeps of it
            body = b"".join([doc.lines for doc in pending])
            try:
                answer = self.client.bulk(body=body, filter_path=_BULK_ANSWER)
            except os_exc.ConnectionError as exc:
                if last:
                    raise _unsent(OpenSearchUnavailable(
                        f"{indices.describe(exc, self.url)}; gave up after {attempt + 1} tries "
                        f"with {len(pending) + _count(pieces)} documents unsent"), _rest(pending, pieces)) from None
                pieces.append((pending, attempt + 1))
                wait = attempt + 1
                continue
            except os_exc.TransportError as exc:
                status = exc.status_code
                if status in _REFUSED_WHOLE and len(pending) > 1 and not (last and status == 429):
                    # Refused whole: in halves, each with the retry policy. A 429 (the node's indexing memory, which
                    # the body alone may exceed) is a try, waited for; a 413 (the body over http.max_content_length)
                    # says the size only: the halves go at once. The cap learnt keeps the next bulks below it.
                    half = _middle(pending, len(body))
                    tries = attempt + 1 if status == 429 else attempt
                    pieces.append((pending[half:], tries))
                    pieces.append((pending[:half], tries))
                    self.stats.bulk_splits += 1
                    self._lower_cap(len(body))
                    if status == 429:
                        self.stats.throttled_requests += len(pending)
                        wait = tries
                    continue
                if status == 429 and len(pending) > 1:
                    self._lower_cap(len(body))  # given up on at its last try: the next flush starts below it
                if _retryable(status) and not last:
                    if status == 429:
                        self.stats.throttled_requests += len(pending)
                    pieces.append((pending, attempt + 1))
                    wait = attempt + 1
                    continue
                error = OpenSearchBusy if status == 429 else OpenSearchError
                said = indices.describe(exc, self.url)
                if status == 413:  # the HTTP layer's 413 has no body to describe
                    said = (f"{said.rstrip(': ')} (request entity too large: a bulk of {len(pending)} document(s), "
                            f"{len(body):,} bytes, over the server's http.max_content_length)")
                raise _unsent(error(f"{said}; {len(pending) + _count(pieces)} documents unsent"),
                              _rest(pending, pieces)) from None
            items = answer.get("items") if isinstance(answer, dict) else None
            if not isinstance(items, list) or len(items) != len(pending):
                # an answer that does not say what became of each document: none is taken as indexed
                raise _unsent(OpenSearchError(
                    f"OpenSearch at {indices.redact(self.url)} answered a bulk request of {len(pending)} documents "
                    f"with {len(items) if isinstance(items, list) else 'no'} items; "
                    f"{len(pending) + _count(pieces)} documents unsent"), _rest(pending, pieces))
            self.stats.batches += 1
            self._raise_cap(len(body))
            retry: list[_BulkDoc] = []
            busy: list[_BulkDoc] = []
            for doc, item in zip(pending, items):
                info = next(iter(item.values()), None) if isinstance(item, dict) else None
                if not isinstance(info, dict):
                    info = {"status": None, "error": {"type": "no_answer", "reason": f"bulk item {item!r:.200}"}}
                status = info.get("status", 500)
                if isinstance(status, int) and 200 <= status < 300:
                    self.stats.written[doc.kind] = self.stats.written.get(doc.kind, 0) + 1
                    self.stats.bytes += doc.size
                    if info.get("result") == "created":
                        self.stats.created += 1
                    else:
                        self.stats.updated += 1
                elif _retryable(info.get("status")) and not last:
                    retry.append(doc)
                    if info.get("status") == 429:
                        self.stats.throttled_documents += 1
                elif info.get("status") == 429:
                    busy.append(doc)
                else:
                    self._reject(doc, info)
            if busy:
                raise _unsent(OpenSearchBusy(
                    f"OpenSearch at {indices.redact(self.url)} still answers 429 (too many requests) after "
                    f"{attempt + 1} tries; {len(busy) + _count(pieces)} documents unsent"), _rest(busy, pieces))
            if retry:
                pieces.append((retry, attempt + 1))
            wait = attempt + 1 if retry else 0

    # --- the bulk size learnt from whole refusals --------------------------------------------------

    def _cut(self, batch: list[_BulkDoc]) -> list[list[_BulkDoc]]:
        """The documents in bulks of at most the learnt cap's bytes (a document over it alone in its own). Called
        only once a bulk was refused whole: the normal path looks at the cap and nothing else."""
        cap = self._cap or self.batch_bytes
        pieces, piece, size = [], [], 0
        for doc in batch:
            if piece and size + doc.size > cap:
                pieces.append(piece)
                piece, size = [], 0
            piece.append(doc)
            size += doc.size
        if piece:
            pieces.append(piece)
        if len(pieces) > 1:
            self.stats.bulks_cut += len(pieces) - 1
        return pieces

    def _lower_cap(self, refused: int) -> None:
        """A bulk of `refused` bytes was refused whole: the next bulks of this sink are at most half of it."""
        cap = max(1, refused // 2)
        if self._cap is None or cap < self._cap:
            self._cap = cap
            self.stats.bulk_cap = cap

    def _raise_cap(self, taken: int) -> None:
        """A bulk of `taken` bytes was taken (answered item by item): a cap it came near is raised by an eighth
        (slowly, as a refusal halves it), and forgotten once it is the batch's own bound again."""
        cap = self._cap
        if cap is None or taken * 2 < cap:
            return
        cap += max(1, cap // 8)
        self._cap = None if cap >= self.batch_bytes else cap
        self.stats.bulk_cap = self._cap

    def _reject(self, doc: _BulkDoc, info: dict[str, Any]) -> None:
        error = info.get("error")
        reason = _reason(error)
        self.stats.failed += 1
        self.stats.failure_reasons[reason] = self.stats.failure_reasons.get(reason, 0) + 1
        self._dead.write(doc.index, doc.id, info.get("status"), error, doc.source)


# What of the bulk answer is read (each item's status, result and error): a quarter of its bytes to
# decode (the answer's JSON decoding was 3 % of the consumer's CPU, bench.honest --consume-only).
_BULK_ANSWER = "errors,items.*.status,items.*.result,items.*.error"


# Whole-request refusals a smaller bulk may pass. 429: OpenSearch's IndexingPressure.markCoordinatingOperationStarted
# (server/src/main/java/org/opensearch/index/IndexingPressure.java) throws OpenSearchRejectedExecutionException
# "rejected execution of coordinating operation [... coordinating_operation_bytes=N,
# max_coordinating_and_primary_bytes=L]" when the bytes in flight with this request's are over
# indexing_pressure.memory.limit: a request alone over it is refused at every try. 413: the HTTP layer's answer to a
# body over http.max_content_length (100mb by default).
_REFUSED_WHOLE = (413, 429)


def _middle(docs: list, size: int) -> int:
    """Where `docs` (more than one, `size` bytes together) are cut in two halves of about the same bytes (not the same
    count: one large trace among short progress lines would leave a half as large as the whole)."""
    seen = 0
    for i, doc in enumerate(docs):
        before, seen = seen, seen + doc.size
        if seen * 2 >= size:  # the document that holds the middle byte: in the half it has more of itself in
            return min(max(1, i + 1 if seen * 2 - size <= size - before * 2 else i), len(docs) - 1)
    return len(docs) // 2


def _count(pieces: list) -> int:
    return sum(len(docs) for docs, _ in pieces)


def _rest(first: list, pieces: list) -> list:
    """`first`, then the documents of the pieces still to send, in the batch's order (the next piece is last)."""
    return [*first, *(doc for docs, _ in reversed(pieces) for doc in docs)]


def _retryable(status: Any) -> bool:
    return isinstance(status, int) and (status == 429 or status >= 500)
