"""RFC 3339 times, read and written in one place (parsers/times.py)."""

from datetime import datetime, timezone

import pytest

from gangscope.parsers import times


def test_crio_offset_times_become_utc():
    assert times.to_utc("2019-05-07T18:57:50.904275087+02:00") == "2019-05-07T16:57:50.904275087Z"
    assert times.to_utc("2019-05-07T18:57:50.904275087Z") == "2019-05-07T18:57:50.904275087Z"
    assert times.to_utc("not a time") is None


def test_to_utc_keeps_the_fraction_as_written():
    assert times.to_utc("2024-05-01T00:30:00.500-01:00") == "2024-05-01T01:30:00.500Z"


def test_time_seconds_reads_nanosecond_times():
    assert abs(times.seconds("1970-01-01T00:00:01.5Z") - 1.5) < 1e-9
    assert times.seconds("2019-05-07T18:57:50.904275087Z") == 1557255470 + 0.904275087


def test_an_offset_names_the_same_instant_as_its_utc_time():
    utc = times.seconds("2024-05-01T10:00:00.25Z")
    for ts in ("2024-05-01T12:00:00.25+02:00", "2024-05-01T05:30:00.25-04:30", "2024-05-01T12:00:00.25+0200",
               "2024-05-01t10:00:00.25z", "2024-05-01 10:00:00.25Z"):
        assert times.seconds(ts) == utc, ts


def test_a_time_read_twice_gives_the_same_seconds():
    """The second read comes from the remembered second: it must agree with the first."""
    ts = "2031-02-03T04:05:06.789Z"
    assert times.seconds(ts) == times.seconds(ts) == datetime(2031, 2, 3, 4, 5, 6, 789000, timezone.utc).timestamp()


@pytest.mark.parametrize("ts", [
    None, "", "garbage", "2024-05-01T12:00:00",  # no zone: no instant
    "2024-05-01", "2024-05-01T12:00Z", "2024-02-30T00:00:00Z", "2024-05-01T24:00:00Z", "2024-05-01T12:00:60Z",
    "2024-05-01T12:00:00.Z", "2024-05-01T12:00:00.abcZ", "2024-05-01T12:00:00.5+99:99", "2024-05-01T12:00:00Zjunk",
    "9999-99-99T99:99:99Z", "２０２４-05-01T12:00:00Z",
])  # fmt: skip
def test_what_is_not_an_rfc3339_instant_reads_as_none(ts):
    assert times.seconds(ts) is None
    assert times.parse(ts) is None
    assert times.normalized(ts) is None


def test_a_time_after_a_valid_one_of_the_same_second_is_still_checked():
    assert times.seconds("2024-05-01T12:00:00Z") is not None
    assert times.seconds("2024-05-01T12:00:00.abcZ") is None
    assert times.seconds("2024-05-01T12:00:00.5") is None


def test_normalized_trims_the_fraction_and_moves_to_utc():
    assert times.normalized("2019-05-07T18:57:50.904275087+02:00") == "2019-05-07T16:57:50.904275087Z"
    assert times.normalized("2026-03-02T09:00:00.000000Z") == "2026-03-02T09:00:00Z"
    assert times.normalized("2026-03-02T09:00:00.120z") == "2026-03-02T09:00:00.12Z"


def test_a_day_boundary_crossed_by_an_offset():
    assert times.normalized("2024-03-01T00:30:00+01:00") == "2024-02-29T23:30:00Z"
    assert times.normalized("2024-12-31T23:30:00-01:00") == "2025-01-01T00:30:00Z"


def test_from_seconds_writes_microseconds_trimmed_or_fixed():
    assert times.from_seconds(1557255470.5) == "2019-05-07T18:57:50.5Z"
    assert times.from_seconds(1557255470.0) == "2019-05-07T18:57:50Z"
    assert times.from_seconds(1557255470.5, fixed=True) == "2019-05-07T18:57:50.500000Z"
    assert times.from_seconds(0) == "1970-01-01T00:00:00Z"
    assert times.from_seconds(-1.5) == "1969-12-31T23:59:58.5Z"


def test_from_seconds_carries_a_fraction_that_rounds_to_a_whole_second():
    assert times.from_seconds(1.9999996) == "1970-01-01T00:00:02Z"


def test_from_seconds_agrees_with_datetime():
    for t in (1796014267.557308, 1796014267.5574026, 1700000000.0000005, 1700000000.1234565, 86399.9999994):
        dt = datetime.fromtimestamp(t, tz=timezone.utc)
        assert times.from_seconds(t, fixed=True) == dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), t


@pytest.mark.parametrize("t", [float("nan"), float("inf"), -float("inf"), 1e20, -1e20])
def test_from_seconds_out_of_range_is_none(t):
    assert times.from_seconds(t) is None


def test_seconds_and_from_seconds_round_trip():
    for ts in ("2024-05-01T12:00:00Z", "2024-05-01T12:00:00.25Z", "1999-12-31T23:59:59.999999Z"):
        assert times.from_seconds(times.seconds(ts)) == ts


def test_a_damaged_time_still_tells_how_long_a_stream_was_quiet():
    assert times.seconds("2024-05-01T12:09:00\ufffd") is None
    assert times.leading_seconds("2024-05-01T12:09:00\ufffd") == times.seconds("2024-05-01T12:09:00Z")
    assert times.leading_seconds("2024-05-01T14:09:00.5+02:00junk") == times.seconds("2024-05-01T12:09:00.5Z")
    assert times.leading_seconds("2024-05-01T12:09:00.5Z") == times.seconds("2024-05-01T12:09:00.5Z")
    assert times.leading_seconds("garbage") is None and times.leading_seconds(None) is None
