"""Replay's unit of work (pipeline/sources/files.PodGroups): the log sources under the given paths
grouped by pod, held as plain paths and made again when a group is taken; the same groups of the
same sources as grouping the LogSources `discover` finds, whatever the layout."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from gangscope.pipeline.sources.files import PodGroups, discover

UIDS = ["0c6d1111-2222-3333-4444-555566667777", "9f000000-aaaa-bbbb-cccc-dddddddddddd"]
KUBELET_NAMES = ["0.log", "1.log", "0.log.20240101-000000", "0.log.20240102-000000.gz"]


def _by_pod(sources):
    """The grouping replay made of `discover`'s sources before PodGroups: by namespace and pod uid
    (or pod name), else by the file; groups and their sources in discovery order."""
    groups = {}
    for source in sources:
        ident = source.identity
        key = (ident.namespace, ident.pod_uid or ident.pod) if ident.pod_uid or ident.namespace else (source.display,)
        groups.setdefault(key, []).append(source)
    return list(groups.values())


_kubelet_file = st.tuples(st.sampled_from(["ns-a", "ns-b"]), st.sampled_from(["pod-0", "pod-1"]), st.sampled_from(UIDS),
                          st.sampled_from(["pytorch", "sidecar"]), st.sampled_from(KUBELET_NAMES))
_link_file = st.tuples(st.sampled_from(["pod-0", "pod-1"]), st.sampled_from(["ns-a", "ns-b"]),
                       st.sampled_from(["pytorch", "init"]), st.sampled_from("ab"))
_plain_file = st.sampled_from(["rank0.log", "rank1.txt", "notes.out", "dump.ndjson"])


@settings(max_examples=60, deadline=None)
@given(st.lists(_kubelet_file, max_size=12), st.lists(_link_file, max_size=4), st.lists(_plain_file, max_size=3),
       st.integers(min_value=1, max_value=2))
def test_the_groups_are_those_of_discovers_sources(tmp_path_factory, kubelet, links, plain, roots):
    tmp = tmp_path_factory.mktemp("pods")
    paths = []
    for r in range(roots):  # the same pod under two given folders too
        root = tmp / f"root{r}"
        root.mkdir()
        paths.append(str(root))
        for ns, pod, uid, container, name in kubelet:
            folder = root / f"{ns}_{pod}_{uid}" / container
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text("x\n")
        for pod, ns, container, c in links:
            (root / f"{pod}_{ns}_{container}-{c * 64}.log").write_text("x\n")
        for name in plain:
            (root / name).write_text("x\n")
    sources, problems = discover(paths)
    groups = PodGroups(paths)
    assert groups.problems == problems
    assert groups.files == sum(len(s.paths) for s in sources)
    assert len(groups) == len(_by_pod(sources))
    assert list(groups) == _by_pod(sources)
    assert [groups[i] for i in range(len(groups))] == _by_pod(sources)


def test_stdin_and_a_missing_path(tmp_path):
    groups = PodGroups(["-", str(tmp_path / "nope")])
    assert groups.files == 1 and len(groups) == 1
    (source,) = groups[0]
    assert source.paths == ["-"] and source.identity.pod == "stdin"
    assert any("no such file" in p for p in groups.problems)


def test_files_spilled_many_times_while_found_group_as_discover_groups_them(tmp_path, monkeypatch):
    # PodGroups groups the files from partitions on disk (sources/files._Discovered): with a buffer of
    # 3 files, every partition is read back from many spills and the groups merged by their first file
    from gangscope.pipeline.sources import files

    monkeypatch.setattr(files._Discovered, "BUFFER", 3)
    for i in range(40):
        for container in ("pytorch", "sidecar"):
            for name in ("0.log", "0.log.20240101-000000", "1.log"):
                folder = tmp_path / f"ns-{i % 3}_pod-{i}_{UIDS[i % 2][:-4]}{i:04d}" / container
                folder.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text("x\n")
        (tmp_path / f"rank{i}.log").write_text("x\n")
    sources, _problems = discover([str(tmp_path)])
    groups = PodGroups([str(tmp_path)])
    assert len(groups) == len(_by_pod(sources)) == 80
    assert list(groups) == _by_pod(sources)
    assert groups.files == 40 * 7
