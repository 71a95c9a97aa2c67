"""Where log lines come from: files, folders, stdin, Kafka."""
