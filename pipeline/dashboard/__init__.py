"""The dashboard: panels served from OpenSearch (`gangscope dashboard`), by waitress (server.py)."""

from gangscope.pipeline.dashboard.app import create_app
from gangscope.pipeline.dashboard.server import serve

__all__ = ["create_app", "serve"]
