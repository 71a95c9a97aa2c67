"""Jinja2 templates: index templates, the report and the dashboard pages."""
