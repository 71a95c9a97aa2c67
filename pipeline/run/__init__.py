"""Drivers: replay, the consumer service, Kafka ranges and the command line."""
