"""root_cause._OWN_KILL_OF: rules.LAUNCHER_OWN_KILL read the other way (an explaining rule -> the stops it
explains), so that without_own_kills looks each failure up once: the same pairs, nothing more."""

from gangscope.pipeline.diagnose import root_cause
from gangscope.pipeline.diagnose.rules import LAUNCHER_OWN_KILL


def test_the_inverted_table_holds_the_same_pairs():
    pairs = {(rule, name) for name, before in LAUNCHER_OWN_KILL.items() for rule in before}
    assert {(rule, name) for rule, names in root_cause._OWN_KILL_OF.items() for name in names} == pairs
    assert all(len(set(names)) == len(names) for names in root_cause._OWN_KILL_OF.values())
