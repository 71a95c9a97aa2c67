"""Rules from batch h32d of issue 16 (fixtures/eval README, "Batch h32d"): a third blind draw from the cluster side
(gang schedulers, operators and managed platforms).

Two classes of its misses show their cause in the log:
- the JobSet controller (JobSet, and Kubeflow Trainer v2's TrainJob over it) refused a child Job of the gang by the API
  server: "creating jobs" with the error "job <name> creation failed with error: <api error>", and the Warning event
  JobCreationFailed with the same text. It retries every reconcile; no pod of that Job exists until a create succeeds:
  the gang never became ready where a log ends in it (role warning, rules.LAST_WORD_WARNINGS). "already exists" is no
  refusal.
- Open MPI's mpirun whose daemons on the other nodes never reported back: ORTE's (PRTE's) box "ORTE was unable to reliably
  start one or more daemons." or "An ORTE daemon has unexpectedly failed after launch and before communicating back to
  mpirun.": the job's processes never came together at start-up, rendezvous_error.
The lines below are rebuilt from the programs' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import assert_found_past_the_prefilter, category_of


CONTEXT = ('{"controller": "jobset", "controllerGroup": "jobset.x-k8s.io", "controllerKind": "JobSet", "JobSet": '
           '{"name":"llama-8n","namespace":"nlp"}, "namespace": "nlp", "name": "llama-8n", "reconcileID": '
           '"0b3f7c2e-5d1a-4e8b-9a6c-2f4d8e1b7a90"')  # fmt: skip


def zap_error(job: str, why: str) -> str:
    """The controller's "creating jobs" error line (zap's console encoder), the API server's refusal `why` in it."""
    return ('2025-03-02T11:40:12Z\tERROR\tcreating jobs\t' + CONTEXT + ', "error": "job \\"' + job
            + '\\" creation failed with error: ' + why + '"}')


def zap_info(msg: str) -> str:
    return '2025-03-02T11:40:12Z\tLEVEL(-2)\t' + msg + '\t' + CONTEXT + '}'


INVALID = ('Job.batch \\"llama-8n-workers-0\\" is invalid: spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: '
           'Invalid value: \\"9\\": must be less than or equal to nvidia.com/gpu request')
BOX = ["--------------------------------------------------------------------------",
       "ORTE was unable to reliably start one or more daemons.",
       "This usually is caused by:",
       "",
       "* not finding the required libraries and/or binaries on",
       "  one or more nodes. Please check your PATH and LD_LIBRARY_PATH",
       "  settings, or configure OMPI with --enable-orterun-prefix-by-default",
       "",
       "* an inability to create a connection back to mpirun due to a",
       "  lack of common network interfaces and/or no route found between",
       "  them. Please check network connectivity (including firewalls",
       "  and network routing requirements).",
       "--------------------------------------------------------------------------"]  # fmt: skip


@pytest.mark.parametrize(
    "line, rule, category",
    [
        # the controller's error in its console (zap) line, with a quota's and a webhook's refusal, and in zap's JSON
        (zap_error("llama-8n-workers-0", 'jobs.batch \\"llama-8n-workers-0\\" is forbidden: exceeded quota: gpu-quota, '
                          'requested: requests.nvidia.com/gpu=32, used: requests.nvidia.com/gpu=48, limited: '
                          'requests.nvidia.com/gpu=64'), "jobset_job_creation_failed", "pods_ready_timeout"),
        (zap_error("llama-8n-launcher-0", 'admission webhook \\"vjob.kb.io\\" denied the request: the queue is full'),
         "jobset_job_creation_failed", "pods_ready_timeout"),
        ('{"level":"error","ts":"2025-03-02T11:40:12Z","logger":"jobset","msg":"creating jobs","error":"job \\"llama-8n-'
         'workers-1\\" creation failed with error: Job.batch \\"llama-8n-workers-1\\" is invalid: spec.template.spec.'
         'containers[0].resources.limits[nvidia.com/gpu]: Invalid value: \\"9\\": must be less than or equal to nvidia.com/gpu '
         'request"}', "jobset_job_creation_failed", "pods_ready_timeout"),
        # the Warning event, as `kubectl describe jobset` and `kubectl get events` print it
        ('  Warning  JobCreationFailed  3m (x12 over 9m)  jobset  job "llama-8n-workers-0" creation failed with error: '
         'Job.batch "llama-8n-workers-0" is invalid: spec.template.spec.containers[0].resources.limits: Invalid value',
         "jobset_job_creation_failed", "pods_ready_timeout"),
        ('3m          Warning   JobCreationFailed   jobset/llama-8n   job "llama-8n-workers-0" creation failed with error: '
         'jobs.batch "llama-8n-workers-0" is forbidden: exceeded quota: gpu-quota', "jobset_job_creation_failed",
         "pods_ready_timeout"),
        # Open MPI's boxes, ORTE's (Open MPI <= 4) and PRTE's, and an MPIJob launcher's tagged copy
        ("ORTE was unable to reliably start one or more daemons.", "mpirun_daemon_launch_failed", "rendezvous_error"),
        ("PRTE was unable to reliably start one or more daemons.", "mpirun_daemon_launch_failed", "rendezvous_error"),
        ("An ORTE daemon has unexpectedly failed after launch and before", "mpirun_daemon_launch_failed", "rendezvous_error"),
        ("An PRTE daemon has unexpectedly failed after launch and before", "mpirun_daemon_launch_failed", "rendezvous_error"),
        ("2025-03-02T11:40:12.551Z launcher: ORTE was unable to reliably start one or more daemons.",
         "mpirun_daemon_launch_failed", "rendezvous_error"),
    ],
)  # fmt: skip
def test_the_lines_and_the_prefilter(line, rule, category):
    assert_found_past_the_prefilter(line, rule, category)


@pytest.mark.parametrize(
    "line, category",
    [
        # the Job is there already (a reconcile on a stale cache): no refusal
        (zap_error("llama-8n-workers-0", 'jobs.batch \\"llama-8n-workers-0\\" already exists'), None),
        ('  Warning  JobCreationFailed  1s  jobset  job "llama-8n-workers-0" creation failed with error: jobs.batch '
         '"llama-8n-workers-0" already exists', None),
        # the controller's other lines: a Job created, the service, the reconcile
        (zap_info("successfully created job"), None),
        (zap_info("Reconciling JobSet"), None),
        # prose with the words and no quoted name
        ("the job creation failed with error code 1 in our CI", None),
        # the box's other lines: its reasons are advice, not failures
        ("* not finding the required libraries and/or binaries on", None),
        ("  them. Please check network connectivity (including firewalls", None),
        # the daemon lost after the job ran stays the node's (mpirun_daemon_lost)
        ("ORTE has lost communication with a remote daemon.", "node_failure"),
        # the reasons printed above the box are read by no rule of their own
        ("ssh: Could not resolve hostname llama-8n-worker-0.llama-8n-worker: Name or service not known", None),
        ("bash: orted: command not found", None),
    ],
)  # fmt: skip
def test_near_misses(line, category):
    assert category_of(line) == category


def jobset_log(why: str) -> str:
    return "\n".join([zap_info("Reconciling JobSet"), zap_info("successfully created headless service"),
                      zap_error("llama-8n-workers-0", why)]) + "\n"


# the quota freed later: the next reconcile creates the Job, and the workers train
JOBSET_REFUSED_THEN_TRAINING = (
    jobset_log("jobs.batch \\\"llama-8n-workers-0\\\" is forbidden: exceeded quota: gpu-quota")
    + zap_info("successfully created job") + "\n"
    + "{'loss': 2.1432, 'grad_norm': 1.87, 'learning_rate': 1.9e-05, 'epoch': 0.01}\n"
    + "{'loss': 2.0911, 'grad_norm': 1.62, 'learning_rate': 1.9e-05, 'epoch': 0.02}\n"
)  # fmt: skip
LAUNCHER = "\n".join([
    "ssh: Could not resolve hostname llama-8n-worker-0.llama-8n-worker: Name or service not known",
    "ssh: Could not resolve hostname llama-8n-worker-1.llama-8n-worker: Name or service not known",
    *BOX,
]) + "\n"  # fmt: skip
ORTED_NOT_FOUND = "bash: orted: command not found\n" + "\n".join(BOX) + "\n"
HOROVOD_NODE_LOST = (
    "[1,0]<stdout>:Epoch 3/90 - loss: 1.9921\n"
    "--------------------------------------------------------------------------\n"
    "ORTE has lost communication with a remote daemon.\n"
    "\n"
    "  HNP daemon   : [[50515,0],0] on node llama-8n-launcher\n"
    "  Remote daemon: [[50515,0],2] on node llama-8n-worker-1\n"
)  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        # the refusal as the log's last word: the gang never became ready
        (jobset_log(INVALID), "pods_ready_timeout"),
        # a refusal the next reconcile got past: the run goes on
        (JOBSET_REFUSED_THEN_TRAINING, "running"),
        # a stale cache's "already exists" at the end: nothing was refused
        (jobset_log("jobs.batch \\\"llama-8n-workers-0\\\" already exists"), "running"),
        # mpirun could not start its daemons: over unresolved names, or with no orted on the node
        (LAUNCHER, "rendezvous_error"),
        (ORTED_NOT_FOUND, "rendezvous_error"),
        # the daemon lost under a job that was training: the node's, as before
        (HOROVOD_NODE_LOST, "node_failure"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
