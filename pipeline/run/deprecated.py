"""Flags kept for old scripts: each takes its value as the name that replaced it, with a warning."""

from __future__ import annotations

import argparse
import sys


class DeprecatedAlias(argparse.Action):
    """An old spelling of a flag (`replacement` is the new one): stores into the new flag's `dest`
    and says once, on stderr, which name to use. Hidden from --help."""

    def __init__(self, option_strings, dest, replacement: str, **kwargs):
        kwargs.setdefault("help", argparse.SUPPRESS)
        super().__init__(option_strings, dest, **kwargs)
        self.replacement = replacement

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        if not getattr(namespace, f"_{self.dest}_warned", False):
            sys.stderr.write(f"gangscope: warning: {option_string} is deprecated; use {self.replacement}\n")
            setattr(namespace, f"_{self.dest}_warned", True)
