"""Rules from batch h22a of issue 16 (fixtures/eval README, "Batch h22a"): a third blind draw of the communication and
lifecycle slices.

Two classes of its misses show their cause in the log, each printed by a library whose source is cited in
parsers/errors.py (the blocks marked h22a): the deepspeed launcher's passwordless-ssh probe of the hostfile's first host
(its CalledProcessError, then "Using hostfile at ... but host=... was not reachable via ssh. ...": the nodes were never
brought together), and `kubectl get pods` showing a pod still Pending past Kueue's default pods-ready timeout. The lines
below are rebuilt from the sources' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from gangscope.parsers.errors import exception_category
from rule_reference import category_of

PROBE_STR = "Command 'ssh -o PasswordAuthentication=no gpu-node-07 hostname' returned non-zero exit status 255."
PROBE_LIST = ("Command '['ssh', '-o', 'PasswordAuthentication=no', '-p', '2222', 'gpu-node-07', 'hostname']' returned "
              "non-zero exit status 255.")  # fmt: skip
REACH = ("Using hostfile at /job/hostfile but host=gpu-node-07 was not reachable via ssh. If you are running with a "
         "single node please remove /job/hostfile or setup passwordless ssh.")  # fmt: skip


@pytest.mark.parametrize(
    "exc_type, message, category",
    [
        ("subprocess.CalledProcessError", PROBE_STR, "rendezvous_error"),
        ("CalledProcessError", PROBE_LIST, "rendezvous_error"),
        ("RuntimeError", REACH, "rendezvous_error"),
        # near misses: another command's failure stays a child's report, an ssh word in prose a Python error
        ("subprocess.CalledProcessError", "Command 'ssh gpu-node-07 hostname -I' returned non-zero exit status 255.", "unknown"),
        ("RuntimeError", "host gpu-node-07 was not reachable via ssh", "python_exception"),
    ],
)  # fmt: skip
def test_the_ssh_probe_and_its_near_misses(exc_type, message, category):
    assert exception_category(exc_type, message) == category


@pytest.mark.parametrize(
    "line, category",
    [
        ("trainer-gang-worker-3   0/1     Pending   0          6m12s", "pods_ready_timeout"),
        ("trainer-gang-worker-3   0/2     Pending   0          2d5h", "pods_ready_timeout"),
        ("trainer-gang-worker-3   0/1     Pending   0          47m   <none>   <none>   <none>           <none>", "pods_ready_timeout"),
        # kubectl before 1.12 (ShortHumanDuration)
        ("trainer-gang-worker-3   0/1       Pending   0          9h", "pods_ready_timeout"),
        # near misses: a pod pending for less than the timeout, a running or ready pod, a queue's counter
        ("trainer-gang-worker-3   0/1     Pending   0          4m10s", None),
        ("trainer-gang-worker-3   0/1     Pending   0          83s", None),
        ("trainer-gang-worker-3   1/1     Running   0          9h", None),
        ("Avg prompt throughput: 0.0 tokens/s, Running: 2 reqs, Pending: 0 reqs", None),
    ],
)  # fmt: skip
def test_the_pending_row_and_its_near_misses(line, category):
    assert category_of(line) == category


LAUNCH = ("[2026-03-02 06:11:40,118] [INFO] [real_accelerator.py:219:get_accelerator] Setting ds_accelerator to cuda "
          "(auto detect)\n"
          "Traceback (most recent call last):\n"
          '  File "/opt/env/lib/python3.11/site-packages/deepspeed/launcher/runner.py", line 470, in main\n'
          "    subprocess.check_call(safe_ssh_cmd, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)\n"
          '  File "/opt/env/lib/python3.11/subprocess.py", line 413, in check_call\n'
          "    raise CalledProcessError(retcode, cmd)\n"
          "subprocess.CalledProcessError: " + PROBE_LIST + "\n\n"
          "During handling of the above exception, another exception occurred:\n\n"
          "Traceback (most recent call last):\n"
          '  File "/opt/env/bin/deepspeed", line 6, in <module>\n'
          "    main()\n"
          '  File "/opt/env/lib/python3.11/site-packages/deepspeed/launcher/runner.py", line 476, in main\n'
          "    raise RuntimeError(\n"
          "RuntimeError: " + REACH + "\n")  # fmt: skip
GET_PODS = ("NAME                      READY   STATUS    RESTARTS   AGE\n"
            "trainer-gang-launcher-0   0/1     Pending   0          3h12m\n"
            "trainer-gang-worker-0     0/1     Pending   0          3h12m\n")  # fmt: skip
YOUNG = ("NAME                      READY   STATUS    RESTARTS   AGE\n"
         "trainer-gang-worker-0     0/1     Pending   0          20s\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        (LAUNCH, "rendezvous_error"),
        (GET_PODS, "pods_ready_timeout"),
        (YOUNG, "running"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
