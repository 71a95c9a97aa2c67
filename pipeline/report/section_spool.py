"""The report's job sections between being built and being rendered, on disk.

Each job's view model (its attempts, progress rows, chart geometry, trace groups) is built once
and pickled to a temporary file as it is made; the template takes them back one at a time as
it writes the page. In memory stay only what the overview table at the top of the page reads
(the job's name, attempts and signals). 20k tiny pod files made 31 MB of view models, ~12 KB a
job, all held until the page was written.
"""

from __future__ import annotations

import pickle
import tempfile
from typing import Any, Iterable, Iterator

OVERVIEW_KEYS = ("name", "attempts", "signals")  # what render.overview reads of a section


class SpooledSections:
    """A sequence of job sections (dicts) kept in a temporary file; `overview_parts` in memory."""

    def __init__(self, sections: Iterable[dict[str, Any]]):
        self._file = tempfile.TemporaryFile(prefix="gangscope-report-")
        self._offsets: list[int] = []
        self._replaced: dict[int, dict[str, Any]] = {}
        self.overview_parts: list[dict[str, Any]] = []
        for section in sections:
            self._offsets.append(self._file.tell())
            pickle.dump(section, self._file, protocol=pickle.HIGHEST_PROTOCOL)
            self.overview_parts.append({key: section.get(key) for key in OVERVIEW_KEYS})
        self._file.flush()

    def sort(self, key) -> None:
        """Put the sections in the order `key` gives of their overview parts (before any is replaced)."""
        order = sorted(range(len(self._offsets)), key=lambda i: key(self.overview_parts[i]))
        self._offsets = [self._offsets[i] for i in order]
        self.overview_parts = [self.overview_parts[i] for i in order]

    def __len__(self) -> int:
        return len(self._offsets)

    def __getitem__(self, index: int) -> dict[str, Any]:
        if index in self._replaced:
            return self._replaced[index]
        self._file.seek(self._offsets[index])
        return pickle.load(self._file)

    def __setitem__(self, index: int, section: dict[str, Any]) -> None:
        self._replaced[index] = section
        self.overview_parts[index] = {key: section.get(key) for key in OVERVIEW_KEYS}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for index in range(len(self._offsets)):
            yield self[index]

    def close(self) -> None:
        self._file.close()
