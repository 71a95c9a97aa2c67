"""The dashboard's panels, in page order: each is one query module plus one template.

A panel module has NAME, TITLE, TEMPLATE, `query(search, filters) -> dict` (JSON-ready numbers,
served at /api/<name>) and `view(data) -> dict` (the same plus chart geometry, for the template).
"""

from gangscope.pipeline.dashboard.panels import diagnoses, errors, events, progress, ranks, steps, traces

PANELS = {p.NAME: p for p in (progress, steps, ranks, errors, traces, events, diagnoses)}
