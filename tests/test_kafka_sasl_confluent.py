"""SASL on the confluent-kafka backend (`--kafka-client confluent`): the records indexed over
SASL/PLAIN equal replay's, the dead-letter producer (confluent's too) logs in with the same settings, and a
wrong password is one line, exit 2 (tests in test_kafka_sasl.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("confluent_kafka")

from confluent_backend import confluent_backend  # noqa: E402,F401  (autouse)
from test_kafka_sasl import (  # noqa: E402,F401  (fixtures and tests, collected again here)
    wanted,
    test_consume_over_sasl_plain_indexes_the_fluent_bit_records_as_replay_does,
    test_a_wrong_password_exits_2_at_once_with_one_line_naming_the_authentication_failure,
    test_the_password_is_never_in_the_service_log_even_at_debug,
    test_the_dead_letter_producer_authenticates_with_the_same_settings,
)
