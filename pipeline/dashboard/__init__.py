"""The dashboard: panels served from OpenSearch (`gangscope dashboard`)."""

from gangscope.pipeline.dashboard.app import create_app, serve

__all__ = ["create_app", "serve"]
