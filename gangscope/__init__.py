"""gangscope: curate the raw logs of distributed training jobs and diagnose why they fail.

The code lives in the top-level folders `parsers/`, `pipeline/` and `templates/`; the links
`gangscope/parsers`, `gangscope/pipeline` and `gangscope/templates` point at them, so that
`gangscope.pipeline.run.cli` is a path in this tree as it is in the installed wheel.
"""

__version__ = "0.1.0"
