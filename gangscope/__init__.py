"""gangscope: curate the raw logs of distributed training jobs and diagnose why they fail.

The code lives in the top-level folders `parsers/`, `pipeline/` and `templates/`,
installed as `gangscope.parsers`, `gangscope.pipeline` and `gangscope.templates`.
"""

__version__ = "0.1.0"
