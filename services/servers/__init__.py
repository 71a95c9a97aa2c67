"""Start and stop the local test servers (Kafka, OpenSearch); stdlib only, runs before any venv."""
