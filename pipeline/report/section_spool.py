"""The report's job sections between being built and being rendered, on disk.

Each job's view model (its attempts, progress rows, chart geometry, trace groups) is built once
and pickled to a temporary file as it is made, and beside it what the overview table at the top
of the page reads of it (the job's name, attempts and signals); the template takes them back one
at a time as it writes the page. In memory stay each job's place in the file and its sort key.
20k tiny pod files made 31 MB of view models, ~12 KB a job, all held until the page was written;
then the overview's parts were held, ~1 KB a job (12.5 MB at 100k tiny pod files).
"""

from __future__ import annotations

import pickle
import tempfile
from array import array
from typing import Any, Iterable, Iterator

OVERVIEW_KEYS = ("name", "attempts", "signals")  # what render.overview reads of a section


def overview_part(section: dict[str, Any]) -> dict[str, Any]:
    return {key: section.get(key) for key in OVERVIEW_KEYS}


class SpooledSections:
    """A sequence of job sections (dicts) kept in a temporary file, each with its overview part.

    sections: the sections, or (sort key, section) pairs with `keyed`; `sort()` puts them in the
    order of their keys (stable), before any is replaced."""

    def __init__(self, sections: Iterable[Any], keyed: bool = False):
        self._file = tempfile.TemporaryFile(prefix="gangscope-report-")
        self._offsets = array("Q")  # each section's
        self._overview_offsets = array("Q")  # each section's overview part's
        self._keys: list[Any] = []
        self._replaced: dict[int, dict[str, Any]] = {}
        for item in sections:
            key, section = item if keyed else (None, item)
            self._offsets.append(self._file.tell())
            pickle.dump(section, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._overview_offsets.append(self._file.tell())
            pickle.dump(overview_part(section), self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self._keys.append(key)
        self._file.flush()

    def sort(self) -> None:
        """The sections in the order of their sort keys (stable: equal keys keep their order)."""
        order = sorted(range(len(self._offsets)), key=self._keys.__getitem__)
        self._offsets = array("Q", (self._offsets[i] for i in order))
        self._overview_offsets = array("Q", (self._overview_offsets[i] for i in order))
        self._keys = []

    def __len__(self) -> int:
        return len(self._offsets)

    def __bool__(self) -> bool:
        return bool(self._offsets)

    def __getitem__(self, index: int) -> dict[str, Any]:
        if index in self._replaced:
            return self._replaced[index]
        self._file.seek(self._offsets[index])
        return pickle.load(self._file)

    def __setitem__(self, index: int, section: dict[str, Any]) -> None:
        self._replaced[index] = section

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for index in range(len(self._offsets)):
            yield self[index]

    def overview_part(self, index: int) -> dict[str, Any]:
        """What the overview reads of section `index`."""
        if index in self._replaced:
            return overview_part(self._replaced[index])
        self._file.seek(self._overview_offsets[index])
        return pickle.load(self._file)

    @property
    def overview_parts(self) -> "OverviewParts":
        """The overview part of each section, in order, read back as iterated."""
        return OverviewParts(self)

    def close(self) -> None:
        self._file.close()


class OverviewParts:
    """The overview parts of spooled sections, as a sequence read from disk (iterable again)."""

    def __init__(self, sections: SpooledSections):
        self._sections = sections

    def __len__(self) -> int:
        return len(self._sections)

    def __getitem__(self, index: int) -> dict[str, Any]:
        if not 0 <= index < len(self._sections):
            raise IndexError(index)
        return self._sections.overview_part(index)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for index in range(len(self._sections)):
            yield self._sections.overview_part(index)
