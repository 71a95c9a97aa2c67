"""Errors the CLI turns into one-line messages and exit codes (SPEC.md: 1 bad input, 2 usage/config)."""


class GangscopeError(Exception):
    """A problem to report in one line; `exit_code` says how the CLI ends."""

    exit_code = 2


class UsageError(GangscopeError):
    exit_code = 2


class InputError(GangscopeError):
    exit_code = 1


class SinkError(GangscopeError):
    """A sink could not take the records (server down, disk full); nothing was acknowledged."""

    exit_code = 2
