"""Compiled Hyperscan databases kept on disk between runs, as Python keeps its bytecode.

Compiling the parsers' prefilters (the block scan's database and the exact hints') costs
0.15-0.4 s of CPU in every new process, ~5 % of a replay of 300k lines; loading a serialized
database costs ~30 us. A database is stored under the hash of everything it is compiled from
(the expressions, ids, flags, mode, the Hyperscan build and the machine), so a changed
pattern is a new file, never a stale one. What is read back is checked by its own SHA-256
before Hyperscan sees it, and Hyperscan refuses a database of another platform: any doubt,
and any error of the folder (read-only, full, missing), means compiling as without the cache.

The folder: $GANGSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/gangscope, else ~/.cache/gangscope;
GANGSCOPE_CACHE_DIR=off compiles every time.
"""

from __future__ import annotations

import hashlib
import os
import platform
import tempfile
from pathlib import Path

try:
    import hyperscan
except ImportError:  # the callers compile nothing without it
    hyperscan = None

_MAGIC = b"gangscope-hyperscan-1\n"


def cache_folder() -> Path | None:
    """Where compiled databases are kept; None when the cache is off."""
    chosen = os.environ.get("GANGSCOPE_CACHE_DIR")
    if chosen is not None:
        return None if chosen.strip().lower() in ("", "off", "0", "no") else Path(chosen) / "hyperscan"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gangscope" / "hyperscan"


def database_key(expressions: list[bytes], ids: list[int], flags: list[int], mode: int) -> str:
    """The hash of all a compile depends on."""
    h = hashlib.sha256()
    for part in (getattr(hyperscan, "__version__", "?"), platform.machine(), platform.system(), str(mode),
                 ",".join(map(str, ids)), ",".join(map(str, flags))):
        h.update(part.encode() + b"\x00")
    for expression in expressions:
        h.update(len(expression).to_bytes(4, "big") + expression)
    return h.hexdigest()


def compile_database(expressions: list[bytes], ids: list[int], flags: list[int], mode: int | None = None):
    """`hyperscan.Database(mode).compile(...)` of the expressions, from the cache where it holds
    them; raises hyperscan.error where the compile does (refusals are not cached). The expressions
    are compiled in sorted order: callers tell matches apart by id, never by an expression's place."""
    mode = hyperscan.HS_MODE_BLOCK if mode is None else mode
    # One order whatever order the expressions come in (a pattern built from a set differs from
    # process to process): a database reports ids, and the same ids match either way.
    expressions, ids, flags = (list(column) for column in zip(*sorted(zip(expressions, ids, flags)))) if expressions else ([], [], [])
    folder = cache_folder()
    path = None if folder is None else folder / f"{database_key(expressions, ids, flags, mode)}.hsdb"
    if path is not None:
        database = _load(path, mode)
        if database is not None:
            return database
    database = hyperscan.Database(mode=mode)
    database.compile(expressions=expressions, ids=ids, elements=len(expressions), flags=flags)
    if path is not None:
        _store(path, database)
    return database


def _load(path: Path, mode: int):
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC)
    payload = data[head + 32 :]
    if not data.startswith(_MAGIC) or hashlib.sha256(payload).digest() != data[head : head + 32]:
        return None
    try:
        database = hyperscan.loadb(payload, mode)
        database.scratch = hyperscan.Scratch(database)
    except hyperscan.error:  # another platform or Hyperscan build
        return None
    return database


def _store(path: Path, database) -> None:
    """Written whole under a temporary name, then renamed: a reader sees the old file, the new
    one or none, even with several processes at it."""
    try:
        payload = hyperscan.dumpb(database)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".hsdb")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except (OSError, hyperscan.error):
        pass  # no cache this time


def _hand_to_the_parsers() -> None:
    """parsers/ does no I/O of its own: the error rules' database (parsers/rule_literals.py) is
    compiled through this cache once the pipeline is loaded, and directly otherwise."""
    from gangscope.parsers import rule_literals

    rule_literals.compile_database = compile_database


_hand_to_the_parsers()
