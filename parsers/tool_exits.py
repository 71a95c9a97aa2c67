"""`ToolExitDetector`: the lines a container tool prints on its own line, lower case and at its start, when a
container or a remote command it ran ended (parsers/errors.py rules `kubectl_command_exit`, `compose_container_exit`).

They hold no capital or rare sign for ErrorDetector's prefilter to find them by (a lower-case key costs every line
re's first-character skip, tests/test_errors.py), so this detector has its own prefilter, anchored: `re` tries it at
one position of a line (~0.3 us a line of the realistic corpus, against ~10 us for ErrorDetector's). The records are
ErrorDetector's, from the same rule table; a line both prefilters pass is ErrorDetector's alone.

h27c (issue 16, session 27): the same holds for a native library's last words before abort(), lower case at the start of
their line: glibc's malloc checks (rule glibc_malloc_abort), libstdc++'s terminate handler with no exception and the ABI's
pure virtual call (cxx_terminate_no_exception), Rust's panic header (rust_panic). Their alternatives are heads of those
rules' patterns too. h30b: glibc's __fortify_fail line ("*** stack smashing detected ***: terminated", rule
glibc_fortify_abort), whose 2.26-2.30 form ("...***: <unknown> terminated") holds none of ErrorDetector's keys."""

from __future__ import annotations

import re

from gangscope.parsers.errors import GLIBC_MALLOC_ABORTS, PREFILTER as ERROR_PREFILTER, ErrorDetector
from gangscope.parsers.lines import Line
from gangscope.parsers.records import Record

# Each alternative the head of one rule's pattern (kept in step by tests/test_h16q_tool_exits.py).
TOOL_EXIT_PREFILTER = (r"^(?:(?:I have no name!)?[\w@:/~.-]*[$#] )?command terminated with exit code \d"  # kubectl_command_exit
                       r"|^[\w.-]+ +exited with code \d"  # compose_container_exit
                       # glibc_malloc_abort (h27c): the first word of each of its texts
                       r"|^(?:" + "|".join(sorted({re.escape(t.split(" ")[0]) for t in GLIBC_MALLOC_ABORTS})) + r") "
                       r"|^\*\*\* [a-z][^*\n]* \*\*\*: "  # glibc_fortify_abort (h30b)
                       r"|^(?:terminate called |pure virtual method called|deleted virtual method called)"  # cxx_terminate_no_exception
                       r"|^thread '[^'\n]*' panicked at "  # rust_panic
                       # h33c: PRRTE's help texts, lower case at their line's start (prrte_signal_continued,
                       # mpirun_executable_not_found)
                       r"|^signal \d+(?: \([^)\n]*\))?\.\s*$"
                       r"|^[\w.-]+ was unable to find the specified executable file")
_ERROR_PREFILTER = re.compile(ERROR_PREFILTER).search


class ToolExitDetector(ErrorDetector):
    """StreamParser: an ErrorRecord for a container tool's exit line that ErrorDetector's prefilter lets by."""

    PREFILTER = TOOL_EXIT_PREFILTER

    def feed(self, line: Line) -> tuple[bool, list[Record]]:
        if _ERROR_PREFILTER(line.text):  # ErrorDetector is fed this line and reads it
            return False, []
        return super().feed(line)
