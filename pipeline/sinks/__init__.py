"""Where records go: a local folder, OpenSearch."""
