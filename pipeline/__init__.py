"""Sources, curation, correlation, diagnosis, sinks, the service and the CLI."""
