"""Curation: envelope -> logical lines -> parsers -> records, stamped and redacted."""
