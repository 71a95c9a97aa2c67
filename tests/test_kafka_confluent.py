"""The consumer service's key scenarios again on the confluent-kafka backend (`--kafka-client
confluent`, pipeline/sources/kafka_client.py; what `auto`, the default, picks where confluent-kafka
is installed): exactness against replay, kill -9 at random moments, a group of three with one
stopped, dead letters, the events topic, SIGTERM's commit, the broker stopped and started, a poison
message every 250; SASL in test_kafka_sasl_confluent.py; test_consume_order.py runs its adversarial
orders and its kill-during-rebalance on both backends itself. The other modules run on kafka-python
(tests/conftest.py names it for them). Every service these tests start logs the backend it
subscribed with, checked after each test (a run on the wrong backend cannot pass here)."""

from __future__ import annotations

import pytest

pytest.importorskip("confluent_kafka")

from confluent_backend import confluent_backend  # noqa: E402,F401  (autouse)
from test_kafka_service import (  # noqa: E402,F401  (fixtures and tests, collected again here)
    messages,
    wanted,
    test_events_topic_gives_the_event_records_attempts_and_diagnoses_of_replay_with_events,
    test_fixtures_through_kafka_index_the_same_documents_as_replay,
    test_kill_9_at_random_moments_then_restart_leaves_the_index_of_a_clean_run,
    test_three_consumers_of_six_partitions_one_stopped_mid_run_index_every_record_once,
    test_undecodable_messages_go_to_the_dead_letter_topic_with_reason_and_original_bytes,
    test_sigterm_flushes_commits_and_exits_0_and_metrics_say_what_was_read,
)
from test_faults import (  # noqa: E402,F401
    test_a_poison_message_every_250_goes_to_the_dead_letter_topic_and_the_index_is_a_clean_runs,
    test_broker_stopped_and_started_mid_run_leaves_the_index_of_a_clean_run,
)
