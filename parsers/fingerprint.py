"""Trace fingerprints: group the same bug across ranks, pods and runs.

Modelled on Sentry's grouping (getsentry/sentry, src/sentry/grouping/): a trace is
keyed by what stays the same between occurrences, the exception types of its chain
and the frames of the code that raised them (module + function, in-app frames
preferred), never by line numbers, memory addresses, pids, ranks or ids. A message
only counts where there is no frame to key on, and then with its variable parts
masked.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from gangscope.parsers.records import Frame

# Library code: site-packages, the standard library, frozen bootstrap modules. The rest is
# the job's own code ("in-app"), which tells bugs apart better than the shared library frames.
_LIBRARY = re.compile(r"/(?:site|dist)-packages/|/lib/python\d+(?:\.\d+)?/|^<frozen |^<string>$")
_MODULE_ROOT = re.compile(r".*/(?:site-packages|dist-packages|lib/python\d+(?:\.\d+)?)/")

# Variable parts of messages, most specific first.
_MASKS = (
    (re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"), "<uuid>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"(?:/[\w.@+-]+)+/?"), "<path>"),
    # tokens that mix letters and digits (pod names, temp dirs, hashes) as a whole
    (re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]+\b"), "<id>"),
    (re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"), "<n>"),
)

MAX_MESSAGE = 200


def is_in_app(file: str) -> bool:
    """True for the job's own code, False for installed libraries and the standard library."""
    return _LIBRARY.search(file) is None


def module_of(file: str) -> str:
    """A location that does not depend on where the code is installed.

    `/x/lib/python3.11/site-packages/torch/nn/modules/module.py` -> `torch.nn.modules.module`;
    `/workspace/train.py` -> `train` (the job's code moves between images and mounts).
    """
    if file.startswith("<"):
        return file
    m = _MODULE_ROOT.match(file)
    rel = file[m.end():] if m else file.rsplit("/", 1)[-1]
    if rel.endswith(".py"):
        rel = rel[:-3]
    return rel.replace("/", ".")


def normalize_message(message: str | None) -> str:
    """The first line of a message with ids, numbers, paths and addresses masked."""
    if not message:
        return ""
    first = message.strip().split("\n", 1)[0][:MAX_MESSAGE]
    for pattern, repl in _MASKS:
        first = pattern.sub(repl, first)
    return first


# A frame's file as (in-app, module), per file text: the same files come in every rank's trace
# (bounded: at most this many, this long).
_FILE_OF: dict[str, tuple[bool, str]] = {}
_FILES = 4096
_FILE_CHARS = 512


def _file_of(file: str) -> tuple[bool, str]:
    known = _FILE_OF.get(file)
    if known is None:
        known = (is_in_app(file), module_of(file))
        if len(file) <= _FILE_CHARS:
            if len(_FILE_OF) >= _FILES:
                _FILE_OF.clear()
            _FILE_OF[file] = known
    return known


def frame_keys(frames: Sequence[Frame]) -> list[str]:
    """`module:function` of the in-app frames (of all frames when none is in-app),
    with recursion collapsed so that the depth of a recursion does not matter."""
    chosen = [f for f in frames if _file_of(f.file)[0]] or list(frames)
    keys: list[str] = []
    for f in chosen:
        key = f"{_file_of(f.file)[1]}:{f.function or ''}"
        if key not in keys[-3:]:  # a repeated cycle of up to 3 frames is the same recursion
            keys.append(key)
    return keys


def fingerprint(parts: Iterable[str]) -> str:
    """A short stable hash of the grouping components."""
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()
