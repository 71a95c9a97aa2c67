"""Rules from batch h30d of issue 16 (fixtures/eval README, "Batch h30d"): a second blind draw from the cluster side
(gang schedulers, operators and managed training platforms).

Two classes of its misses show their cause in the log:
- a gang scheduler, or the operator in front of it, saying the gang cannot be placed yet, in wordings no rule read:
  the Kubeflow training-operator's reconcile warning "PodGroup <ns>/<job> unschedulable" (it creates no pod until the
  PodGroup is Inqueue), scheduler-plugins Coscheduling's PreFilter rejections ("pre-filter pod <pod> cannot find enough
  sibling pods, current pods number: N, minMember of group: M", the older "pod with pgName: <pg> last failed in 3s,
  deny"), both a failure only where a log ends in them (role warning, rules.LAST_WORD_WARNINGS), and kube-batch's
  PodGroup event Unschedulable "not enough resource for job" (a cause, as Volcano's "tasks in gang unschedulable");
- Determined's harness failing its check of the experiment's checkpoint storage ("Checkpoint storage validation failed:
  <error>", then exit 1): checkpoint_error.
The lines below are rebuilt from the programs' format strings with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import assert_found_past_the_prefilter, category_of


PREFILTER_FAILED = 'E0302 11:40:12.551907       1 coscheduling.go:133] "PreFilter failed" err="{}" pod="nlp/{}"'
OPERATOR = 'time="2025-03-02T11:40:12Z" level=warning msg="PodGroup {} unschedulable"'


@pytest.mark.parametrize(
    "line, rule, category",
    [
        # the training-operator's warning, as logrus prints it and as its zap-era builds print the same text
        (OPERATOR.format("nlp/llama-sft-8n"), "training_operator_podgroup_unschedulable", "pods_ready_timeout"),
        ("2025-03-02T11:40:12.551Z\tWARN\tPodGroup nlp/llama-sft-8n unschedulable", "training_operator_podgroup_unschedulable",
         "pods_ready_timeout"),
        # Coscheduling's PreFilter rejections, in klog's structured line and in the older klog.Error form
        (PREFILTER_FAILED.format("pre-filter pod llama-sft-8n-worker-3 cannot find enough sibling pods, current pods number: 5, "
                                 "minMember of group: 8", "llama-sft-8n-worker-3"),
         "coscheduling_prefilter_rejected", "pods_ready_timeout"),
        (PREFILTER_FAILED.format("pod with pgName: nlp/llama-sft-8n last failed in 3s, deny", "llama-sft-8n-worker-4"),
         "coscheduling_prefilter_rejected", "pods_ready_timeout"),
        ("E0302 11:40:12.551907       1 coscheduling.go:112] pre-filter pod llama-sft-8n-worker-0 cannot find enough sibling "
         "pods, current pods number: 1, minMember of group: 8", "coscheduling_prefilter_rejected", "pods_ready_timeout"),
        # kube-batch's event on the PodGroup, as `kubectl describe podgroups` and `kubectl get events` print it
        ("  Warning  Unschedulable  12m   kube-batch  not enough resource for job", "kube_batch_gang_unschedulable",
         "pods_ready_timeout"),
        ("14m         Warning   Unschedulable   podgroup/llama-sft-8n   not enough resource for job",
         "kube_batch_gang_unschedulable", "pods_ready_timeout"),
        # Determined's harness, as the trial's task log shows it, and as the harness's own logging line
        ("[2025-03-02T11:40:12.551907Z] 4f2a9c1e || ERROR: Checkpoint storage validation failed: [Errno 13] Permission denied: "
         "'/determined_shared_fs/0b7e2d44-9f61-4c2a-8e13-5a7f0c9d2b31'", "determined_checkpoint_storage_invalid",
         "checkpoint_error"),
        ("[5be0a7d3] [52] root: Checkpoint storage validation failed: unable to write to bucket 'ckpts': access denied <error> "
         "[2025-03-02 11:40:12]", "determined_checkpoint_storage_invalid", "checkpoint_error"),
        # a validation that failed on a file system's or an object store's own error: the storage rules earlier in the
        # table name it (storage_io), as they do wherever the error is printed
        ("ERROR:root:Checkpoint storage validation failed: [Errno 30] Read-only file system: '/determined_shared_fs/x'",
         "errno_storage", "storage_io"),
        ("ERROR:root:Checkpoint storage validation failed: Could not connect to the endpoint URL: \"https://s3.local/ckpts\"",
         "s3_endpoint", "storage_io"),
        # Determined's master on resources that exited non-zero, in its renamed FailureType's wording: a summary by the code
        ("[c71e05b2] crashed: resources failed with non-zero exit code:  (exit code 1) <error> [2025-03-02 11:40:13]",
         "determined_resources_exit", "unknown"),
        ("[c71e05b2] resources failed with non-zero exit code: unable to launch job: slurm option -G is not configurable "
         "(exit code 1)", "determined_resources_exit", "unknown"),
        ("[c71e05b2] crashed: resources failed with non-zero exit code:  (exit code 137)", "determined_resources_exit",
         "host_oom"),
        # the agent's message inside it: the older rule reads it, as before
        ("[c71e05b2] resources failed with non-zero exit code: container failed with non-zero exit code: 247 (exit code 247)",
         "determined_container_exit", "unknown"),
    ],
)  # fmt: skip
def test_the_lines_and_the_prefilter(line, rule, category):
    assert_found_past_the_prefilter(line, rule, category)


@pytest.mark.parametrize(
    "line, category",
    [
        # the operator's other gang lines: a PodGroup it created or deleted, an event that says nothing failed
        ('time="2025-03-02T11:40:12Z" level=info msg="PodGroup nlp/llama-sft-8n created"', None),
        ("  Normal  SuccessfulDeletePodGroup  2m  pytorchjob-controller  Deleted PodGroup: llama-sft-8n", None),
        # prose naming the state, with no namespace/name
        ("the PodGroup is unschedulable until the queue has room", None),
        # Coscheduling's Permit wait and its allow: the gang is being placed
        ('I0302 11:41:02.118800       1 coscheduling.go:194] "Pod is waiting to be scheduled to node" pod="nlp/llama-sft-8n-worker-0" '
         'nodeName="gpu-h100-12"', None),
        ("I0302 11:41:05.004411       1 coscheduling.go:216] Permit allows the pod: nlp/llama-sft-8n-worker-0", None),
        # kube-batch's other words, and the same words with no Unschedulable event
        ("  Normal  Scheduled  12m  kube-batch  Successfully assigned nlp/llama-sft-8n-worker-0 to gpu-h100-12", None),
        ("not enough resource for job, waiting", None),
        # Determined's validation that passed, and the phrase in a sentence without its message
        ("[2025-03-02T11:40:12.551907Z] 4f2a9c1e || INFO: Validating checkpoint storage ...", None),
        ("see the docs: Checkpoint storage validation failed means the checkpoint_storage settings need review", None),
    ],
)  # fmt: skip
def test_near_misses(line, category):
    assert category_of(line) == category


OPERATOR_LOG = (
    'time="2025-03-02T11:40:12Z" level=info msg="PyTorchJob llama-sft-8n is created."\n'
    'time="2025-03-02T11:40:12Z" level=info msg="Reconciling for job llama-sft-8n"\n'
    + OPERATOR.format("nlp/llama-sft-8n") + "\n"
    + OPERATOR.format("nlp/llama-sft-8n").replace("11:40:12", "11:40:42") + "\n"
)  # fmt: skip
# the same operator once the scheduler admitted the group: pods, then the workers' steps
OPERATOR_THEN_TRAINING = (
    OPERATOR_LOG
    + 'time="2025-03-02T11:41:20Z" level=info msg="PyTorchJob=llama-sft-8n, ReplicaType=Worker expected=8, running=8, '
      'succeeded=0, failed=0, Replicas=8"\n'
    + "{'loss': 2.1432, 'grad_norm': 1.87, 'learning_rate': 1.9e-05, 'epoch': 0.01}\n"
    + "{'loss': 2.0911, 'grad_norm': 1.62, 'learning_rate': 1.9e-05, 'epoch': 0.02}\n"
)  # fmt: skip
COSCHEDULING_LOG = "\n".join([
    PREFILTER_FAILED.format("pre-filter pod llama-sft-8n-worker-0 cannot find enough sibling pods, current pods number: 1, "
                            "minMember of group: 8", "llama-sft-8n-worker-0"),
    PREFILTER_FAILED.format("pod with pgName: nlp/llama-sft-8n last failed in 3s, deny", "llama-sft-8n-worker-1"),
    'I0302 11:41:02.118800       1 coscheduling.go:194] "Pod is waiting to be scheduled to node" pod="nlp/llama-sft-8n-worker-0" '
    'nodeName="gpu-h100-12"',
]) + "\n"  # fmt: skip
KUBE_BATCH_DESCRIBE = ("Name:         llama-sft-8n\n"
                       "Namespace:    nlp\n"
                       "Kind:         PodGroup\n"
                       "Spec:\n"
                       "  Min Member:  8\n"
                       "Events:\n"
                       "  Type     Reason         Age   From        Message\n"
                       "  ----     ------         ----  ----        -------\n"
                       "  Warning  Unschedulable  12m   kube-batch  not enough resource for job\n")  # fmt: skip
DETERMINED_TRIAL = ("[2025-03-02T11:40:12.101Z] 4f2a9c1e || INFO: Validating checkpoint storage ...\n"
                    "[2025-03-02T11:40:12.551Z] 4f2a9c1e || ERROR: Checkpoint storage validation failed: [Errno 13] Permission "
                    "denied: '/determined_shared_fs/0b7e2d44-9f61-4c2a-8e13-5a7f0c9d2b31'\n"
                    "[2025-03-02T11:40:13.002Z] 4f2a9c1e || ERROR: crashed: resources failed with non-zero exit code: "
                    "container failed with non-zero exit code: 1 (exit code 1)\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        # the operator's warning as the log's last word: the gang never became ready
        (OPERATOR_LOG, "pods_ready_timeout"),
        # a gang admitted later: its waiting warnings are no failure, the run goes on
        (OPERATOR_THEN_TRAINING, "running"),
        # Coscheduling's rejections, then a member waiting at Permit (an info line) and nothing else
        (COSCHEDULING_LOG, "pods_ready_timeout"),
        # the same rejections followed by training: admitted in the end
        (COSCHEDULING_LOG + "{'loss': 2.1432, 'grad_norm': 1.87, 'learning_rate': 1.9e-05, 'epoch': 0.01}\n", "running"),
        (KUBE_BATCH_DESCRIBE, "pods_ready_timeout"),
        # the validation's own failure outranks the exit it causes
        (DETERMINED_TRIAL, "checkpoint_error"),
        # the exit line alone: the attempt failed, the log does not say why
        ("[2025-03-02T11:40:13.002Z] c71e05b2 || INFO: New trial runner in (container 5b1) on agent gpu-h100-12\n"
         "[c71e05b2] crashed: resources failed with non-zero exit code:  (exit code 1) <error> [2025-03-02 11:40:13]\n", "unknown"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary
