"""How a job's controllers say it ended: the Kueue Workload's `Finished` condition and the end events of
the job kinds' own controllers, as (outcome, category) with the source that writes each string.

`workload_finish(reason, message)` reads a Workload's `Finished` condition (Kueue copies the job's own
end into it: jobframework/reconciler.go "handle job is finished"); `job_event_end(kind, reason, message)`
reads an Event on a job-kind object (batch/v1 Job, the Kubeflow training-operator's jobs, JobSet);
`job_condition_end(kind, type, status, reason, message)` reads a status condition of the job-kind object
itself (`kubectl get job,pytorchjob,jobset,trainjob -o json`: Job `Complete` / `Failed` reason
`DeadlineExceeded`, PyTorchJob `Succeeded`, JobSet `Completed`, TrainJob `Complete`, ...).
Both answer None for what says nothing about how the run ended (Kueue's `FinishedWorkload` event, whose
message "Workload '%s' is declared finished" is the same for a success and a failure; `OutOfSync`;
a `...Restarting` event: the job goes on).

Outcome `succeeded` means the job's own controller counted the run complete (exit code 0 of the pods
that decide it); `failed` comes with the category the controller's words prove (`time_limit` for an
active deadline) or `unknown` (a backoff limit says the pods failed, not why: the logs say why).
"""

from __future__ import annotations

import re
from typing import NamedTuple


class JobEnd(NamedTuple):
    outcome: str  # "succeeded" | "failed"
    category: str | None  # the diagnosis category the controller's words prove; None for a success
    source: str  # where the string is written


_SUCCEEDED = "succeeded"
_FAILED = "failed"

# A failed job's message that names its cause (the Kueue `Failed` condition carries it verbatim).
FAILURE_MESSAGES: tuple[tuple[re.Pattern[str], str, str], ...] = (
    # kubernetes pkg/controller/job/job_controller.go (v1.12-v1.34): newFailureCondition(DeadlineExceeded, ...)
    (re.compile(r"^Job was active longer than specified deadline"), "time_limit",
     "kubernetes pkg/controller/job/job_controller.go"),
    # kubeflow/training-operator pkg/controller.v1/common/job.go v1.7.0-v1.9.0: "Job %s has failed because it
    # was active longer than specified deadline" (runPolicy.activeDeadlineSeconds)
    (re.compile(r"^Job \S+ has failed because it was active longer than specified deadline"), "time_limit",
     "kubeflow/training-operator pkg/controller.v1/common/job.go"),
    # ray-project/kuberay v1.1.0-v1.7.0 ray-operator/controllers/ray/rayjob_controller.go
    # checkActiveDeadlineAndUpdateStatusIfNeeded: status.message (reason DeadlineExceeded), which Kueue's Workload
    # Finished condition copies for a RayJob.
    (re.compile(r"^The RayJob has passed the activeDeadlineSeconds\."), "time_limit",
     "kuberay ray-operator/controllers/ray/rayjob_controller.go checkActiveDeadlineAndUpdateStatusIfNeeded"),
)

# Kueue Workload condition Finished=True: reason -> outcome (message read by FAILURE_MESSAGES for a failure).
WORKLOAD_FINISH: dict[str, tuple[str, str]] = {
    # v0.7.0-HEAD apis/kueue/v1beta1 (and v1beta2) workload_types.go WorkloadFinishedReasonSucceeded / ...Failed,
    # set by pkg/controller/jobframework/reconciler.go from job.Finished() (message = the job's own
    # Complete/Failed/Succeeded condition message).
    "Succeeded": (_SUCCEEDED, "kueue v0.7.0+ apis/kueue/v1beta1/workload_types.go WorkloadFinishedReasonSucceeded"),
    "Failed": (_FAILED, "kueue v0.7.0+ apis/kueue/v1beta1/workload_types.go WorkloadFinishedReasonFailed"),
    # v0.5.0-HEAD pkg/controller/jobframework/reconciler.go FailedToStartFinishedReason (message: the error)
    "FailedToStart": (_FAILED, "kueue v0.5.0+ pkg/controller/jobframework/reconciler.go FailedToStartFinishedReason"),
}
# v0.4.0-v0.6.x: each integration's Finished() made the condition itself, reason "JobFinished"
# (pkg/controller/jobs/job/job_controller.go, mpijob/, kubeflow/kubeflowjob/) or "JobSetFinished"
# (jobs/jobset/jobset_controller.go); success or failure only in the message.
LEGACY_FINISH_MESSAGES: dict[str, tuple[str, str]] = {
    "Job finished successfully": (_SUCCEEDED, "kueue v0.4.0-v0.6.x pkg/controller/jobs/job/job_controller.go Finished()"),
    "Job failed": (_FAILED, "kueue v0.4.0-v0.6.x pkg/controller/jobs/job/job_controller.go Finished()"),
    "JobSet finished successfully": (_SUCCEEDED, "kueue v0.4.0-v0.6.x pkg/controller/jobs/jobset/jobset_controller.go"),
    "JobSet failed": (_FAILED, "kueue v0.4.0-v0.6.x pkg/controller/jobs/jobset/jobset_controller.go"),
}
LEGACY_FINISH_REASONS = frozenset({"JobFinished", "JobSetFinished"})
# kueue v0.4.0-v0.6.x pkg/controller/jobs/rayjob/rayjob_controller.go: Reason = string(Status.JobStatus)
# (KubeRay JobStatus: SUCCEEDED, FAILED, STOPPED).
RAYJOB_FINISH: dict[str, tuple[str, str]] = {
    "SUCCEEDED": (_SUCCEEDED, "kueue v0.4.0-v0.6.x pkg/controller/jobs/rayjob/rayjob_controller.go"),
    "FAILED": (_FAILED, "kueue v0.4.0-v0.6.x pkg/controller/jobs/rayjob/rayjob_controller.go"),
    "STOPPED": (_FAILED, "kueue v0.4.0-v0.6.x pkg/controller/jobs/rayjob/rayjob_controller.go"),
}

# Events on job-kind objects: (kinds or None for any, reason) -> outcome.
JOB_EVENTS: dict[tuple[str, str], tuple[str, str]] = {
    # kubernetes pkg/controller/job/job_controller.go recordJobFinished: Event(Normal, "Completed", "Job completed");
    # a failure: Event(Warning, finishedCond.Reason, finishedCond.Message), reasons of k8s.io/api batch/v1 types.go.
    ("Job", "Completed"): (_SUCCEEDED, "kubernetes pkg/controller/job/job_controller.go recordJobFinished"),
    ("Job", "BackoffLimitExceeded"): (_FAILED, "kubernetes batch/v1 JobReasonBackoffLimitExceeded"),
    ("Job", "DeadlineExceeded"): (_FAILED, "kubernetes batch/v1 JobReasonDeadlineExceeded"),
    ("Job", "PodFailurePolicy"): (_FAILED, "kubernetes batch/v1 JobReasonPodFailurePolicy"),
    ("Job", "MaxFailedIndexesExceeded"): (_FAILED, "kubernetes batch/v1 JobReasonMaxFailedIndexesExceeded"),
    ("Job", "FailedIndexes"): (_FAILED, "kubernetes batch/v1 JobReasonFailedIndexes"),
    # kubernetes-sigs/jobset pkg/constants/constants.go (v0.2.0-HEAD): the condition's reason is the event's
    # (pkg/controllers/jobset_controller.go setCondition -> enqueueEvent).
    ("JobSet", "AllJobsCompleted"): (_SUCCEEDED, "jobset pkg/constants/constants.go AllJobsCompletedReason"),
    ("JobSet", "FailedJobs"): (_FAILED, "jobset pkg/constants/constants.go FailedJobsReason"),
    ("JobSet", "ReachedMaxRestarts"): (_FAILED, "jobset pkg/constants/constants.go ReachedMaxRestartsReason"),
    ("JobSet", "FailJobSetFailurePolicyAction"): (_FAILED, "jobset pkg/constants/constants.go FailJobSetActionReason"),
}
# kubeflow/training-operator v1.4.0-v1.9.0: Recorder.Event(job, ..., NewReason(kind, JobSucceededReason|JobFailedReason), msg),
# pkg/util/status.go NewReason = kind + reason ("PyTorchJobSucceeded", "PyTorchJobFailed"); the messages are
# pkg/controller.v1/<kind>/*_controller.go "PyTorchJob %s/%s successfully completed.", "... is failed because %d %s
# replica(s) failed." and common/job.go "Job %s has failed because it has reached the specified backoff limit" /
# "... was active longer than specified deadline". `<Kind>Restarting` is not an end: the pods are restarted.
# kubeflow/mpi-operator v0.4.0-v0.8.x (kubeflow.org/v2beta1 MPIJob), pkg/controller/mpi_job_controller.go
# updateMPIJobFailedStatus: once its launcher Job has failed, the MPIJob's `Failed` condition and its Warning Event take
# the launcher's Failed condition's reason and message (batch/v1: DeadlineExceeded "Job was active longer than
# specified deadline", the launcher Job's activeDeadlineSeconds being the MPIJob's runPolicy.activeDeadlineSeconds),
# `BackoffLimitExceeded` with "/" and the last failed launcher pod's status reason appended; "MPIJobFailed" where the
# launcher's is empty; `MPIJobEvicted` "%d/%d workers are evicted" (mpi_job_controller_status.go).
MPIJOB_LAUNCHER_REASONS = frozenset({"DeadlineExceeded", "BackoffLimitExceeded", "PodFailurePolicy",
                                     "MaxFailedIndexesExceeded", "FailedIndexes", "MPIJobEvicted"})
_MPIJOB_SOURCE = "kubeflow/mpi-operator v0.4.0+ pkg/controller/mpi_job_controller.go updateMPIJobFailedStatus"

KUBEFLOW_KINDS = ("PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "MXJob", "JAXJob")
_KUBEFLOW_SOURCE = "kubeflow/training-operator pkg/util/status.go NewReason(kind, JobSucceededReason|JobFailedReason)"


def _failure_category(message: str | None) -> str:
    for pattern, category, _source in FAILURE_MESSAGES:
        if message and pattern.search(message):
            return category
    return "unknown"


def _end(outcome: str, source: str, message: str | None, category: str | None = None) -> JobEnd:
    if outcome == _SUCCEEDED:
        return JobEnd(outcome, None, source)
    return JobEnd(outcome, category or _failure_category(message), source)


def workload_finish(reason: str | None, message: str | None) -> JobEnd | None:
    """What a Kueue Workload's Finished=True condition says of the run; None when it says nothing of it."""
    reason = reason or ""
    if reason in WORKLOAD_FINISH:
        outcome, source = WORKLOAD_FINISH[reason]
        return _end(outcome, source, message)
    if reason in LEGACY_FINISH_REASONS and (message or "") in LEGACY_FINISH_MESSAGES:
        outcome, source = LEGACY_FINISH_MESSAGES[message or ""]
        return _end(outcome, source, message)
    if reason in RAYJOB_FINISH:
        outcome, source = RAYJOB_FINISH[reason]
        return _end(outcome, source, message)
    return None


def job_event_end(kind: str | None, reason: str | None, message: str | None) -> JobEnd | None:
    """What an Event on a job-kind object says of the run's end; None when it says nothing of it."""
    if not kind or not reason:
        return None
    hit = JOB_EVENTS.get((kind, reason))
    if hit is not None:
        outcome, source = hit
        category = "time_limit" if reason == "DeadlineExceeded" else None
        return _end(outcome, source, message, category)
    if kind == "MPIJob" and reason.split("/", 1)[0] in MPIJOB_LAUNCHER_REASONS:
        category = "time_limit" if reason == "DeadlineExceeded" else None
        return _end(_FAILED, _MPIJOB_SOURCE, message, category)
    if kind in KUBEFLOW_KINDS and reason.startswith(kind):
        tail = reason[len(kind):]
        if tail == "Succeeded":
            return _end(_SUCCEEDED, _KUBEFLOW_SOURCE, message)
        if tail == "Failed":
            return _end(_FAILED, _KUBEFLOW_SOURCE, message)
    return None


# Conditions of job-kind objects (`kubectl get job,pytorchjob,jobset,trainjob -o json`, parsers/events.py),
# status "True": (kind, condition type) -> outcome. A failure's category: `time_limit` for a batch/v1
# `DeadlineExceeded` reason, else what FAILURE_MESSAGES read in the message (the training operator's deadline
# message), else unknown. Not ends: Job `Suspended`; the training operator's `Created`, `Running`,
# `Restarting`, `Suspended`; JobSet `Suspended`, `RestartingJobSet`, `StartupPolicyInProgress`,
# `StartupPolicyCompleted`; TrainJob `Created`, `Suspended`.
_K8S_JOB_TYPES = "k8s.io/api batch/v1/types.go JobConditionType"
_K8S_JOB_DELAYED = ("kubernetes pkg/controller/job/job_controller.go newFailureCondition/newSuccessCondition "
                    "(v1.31+: set first, the terminal condition once the pods are gone; it cannot be removed)")
_KUBEFLOW_TYPES = "kubeflow/training-operator v1.9.0 pkg/apis/kubeflow.org/v1/common_types.go JobConditionType"
JOB_CONDITIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("Job", "Complete"): (_SUCCEEDED, _K8S_JOB_TYPES + " JobComplete"),
    ("Job", "Failed"): (_FAILED, _K8S_JOB_TYPES + " JobFailed"),
    ("Job", "SuccessCriteriaMet"): (_SUCCEEDED, _K8S_JOB_DELAYED + " JobSuccessCriteriaMet"),
    ("Job", "FailureTarget"): (_FAILED, _K8S_JOB_DELAYED + " JobFailureTarget"),
    # kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go JobSetCompleted / JobSetFailed (reasons
    # AllJobsCompleted, FailedJobs, ReachedMaxRestarts, FailJobSetFailurePolicyAction: pkg/constants/constants.go)
    ("JobSet", "Completed"): (_SUCCEEDED, "jobset api/jobset/v1alpha2/jobset_types.go JobSetCompleted"),
    ("JobSet", "Failed"): (_FAILED, "jobset api/jobset/v1alpha2/jobset_types.go JobSetFailed"),
    # kubeflow/trainer pkg/apis/trainer/v1alpha1/trainjob_types.go TrainJobComplete / TrainJobFailed: the JobSet's
    # Completed / Failed condition copied with its reason and message (plugins/jobset/jobset.go TerminalCondition)
    ("TrainJob", "Complete"): (_SUCCEEDED, "kubeflow/trainer pkg/apis/trainer/v1alpha1/trainjob_types.go TrainJobComplete"),
    ("TrainJob", "Failed"): (_FAILED, "kubeflow/trainer pkg/apis/trainer/v1alpha1/trainjob_types.go TrainJobFailed"),
}
for _kind in KUBEFLOW_KINDS:
    JOB_CONDITIONS[(_kind, "Succeeded")] = (_SUCCEEDED, _KUBEFLOW_TYPES + " JobSucceeded")
    JOB_CONDITIONS[(_kind, "Failed")] = (_FAILED, _KUBEFLOW_TYPES + " JobFailed")
del _kind
# kubeflow/mpi-operator v0.4.0+ pkg/apis/kubeflow/v2beta1/types.go: the same JobCondition types (Created, Running,
# Restarting, Succeeded, Suspended, Failed), set by pkg/controller/mpi_job_controller.go from its launcher Job.
JOB_CONDITIONS[("MPIJob", "Succeeded")] = (_SUCCEEDED, "kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/types.go JobSucceeded")
JOB_CONDITIONS[("MPIJob", "Failed")] = (_FAILED, "kubeflow/mpi-operator pkg/apis/kubeflow/v2beta1/types.go JobFailed")


def job_condition_end(kind: str | None, ctype: str | None, status: str | None, reason: str | None,
                      message: str | None) -> JobEnd | None:
    """What a job-kind object's status condition says of the run's end; None when it says nothing of it
    (another type, or a status other than True)."""
    if status != "True" or not kind or not ctype:
        return None
    hit = JOB_CONDITIONS.get((kind, ctype))
    if hit is None:
        return None
    outcome, source = hit
    # batch/v1's reason, and the MPIJob's (its launcher Job's, copied: MPIJOB_LAUNCHER_REASONS)
    category = "time_limit" if kind in ("Job", "MPIJob") and reason == "DeadlineExceeded" else None
    return _end(outcome, source, message, category)


# RayJob (ray.io/v1, ray-project/kuberay ray-operator/apis/ray/v1/rayjob_types.go) has no conditions: its status
# says `jobDeploymentStatus` (the operator's), `jobStatus` (the Ray job's: PENDING, RUNNING, STOPPED, SUCCEEDED,
# FAILED), `reason` (v1.1.0+, JobFailedReason) and `message`; parsers/events.py gives one record of the latest, type
# the deployment status, reason the `reason` else the job status. (deployment status, reason or job status) ->
# outcome, category. v1.0.0: `Complete` once the Ray job SUCCEEDED or FAILED (no reason field); v1.1.0+: `Complete`
# for SUCCEEDED or STOPPED (`ray job stop`), `Failed` with a reason: DeadlineExceeded (spec.activeDeadlineSeconds,
# rayjob_controller.go checkActiveDeadlineAndUpdateStatusIfNeeded), AppFailed (the Ray job FAILED), SubmissionFailed,
# and later ValidationFailed (v1.5.0), JobDeploymentStatusTransitionGracePeriodExceeded (v1.4.0),
# PreRunningDeadlineExceeded (v1.6.0: not Running within spec.preRunningDeadlineSeconds), JobStatusCheckTimeoutExceeded
# (v1.7.0). Other deployment statuses (Initializing, Running, Suspending, Suspended, Retrying, Waiting, ...) are no end.
_RAY_TYPES = "kuberay ray-operator/apis/ray/v1/rayjob_types.go"
RAYJOB_STATUS: dict[tuple[str, str | None], tuple[str, str | None, str]] = {
    ("Complete", "SUCCEEDED"): (_SUCCEEDED, None, _RAY_TYPES + " JobDeploymentStatusComplete, JobStatusSucceeded"),
    ("Complete", "FAILED"): (_FAILED, None, _RAY_TYPES + " v1.0.0 JobDeploymentStatusComplete, JobStatusFailed"),
    ("Complete", "STOPPED"): (_FAILED, None, _RAY_TYPES + " JobDeploymentStatusComplete, JobStatusStopped"),
    ("Failed", "DeadlineExceeded"): (_FAILED, "time_limit", _RAY_TYPES + " JobDeploymentStatusFailed, DeadlineExceeded"),
    ("Failed", None): (_FAILED, None, _RAY_TYPES + " JobDeploymentStatusFailed"),  # any other reason
}


def rayjob_end(deployment: str | None, reason: str | None, message: str | None) -> JobEnd | None:
    """What a RayJob's status (its deployment status and reason, else its job status) says of the run's end."""
    hit = RAYJOB_STATUS.get((deployment or "", reason)) or (
        RAYJOB_STATUS.get((deployment, None)) if deployment == "Failed" else None)
    if hit is None:
        return None
    outcome, category, source = hit
    return _end(outcome, source, message, category)


# A JobSet fails because one of its child Jobs failed (its `Failed` condition True: kubernetes-sigs/jobset
# pkg/controllers/failure_policy.go findJobFailureCondition, v0.2.0-HEAD jobset_controller.go before v0.6.0); its
# own reason says which policy ended it, not why the child failed: the child's condition says that (a Job past its
# activeDeadlineSeconds: reason DeadlineExceeded). Reasons of such a failure, constants.go (v0.5.0+; the same
# strings inline in jobset_controller.go v0.2.0-v0.4.x): FailedJobs "jobset failed due to one or more job
# failures", ReachedMaxRestarts "jobset failed due to reaching max number of restarts", and v0.6.0+
# FailJobSetFailurePolicyAction "applying FailJobSet failure policy action". From v0.5.0 the message names the
# child: messageWithFirstFailedJob "%s (first failed job: %s)" (v0.5.0 jobset_controller.go, v0.6.0+
# failure_policy.go), the child whose JobFailed condition is the oldest (findFirstFailedJob), or the one a failure
# policy rule matched. A TrainJob's `Failed` is its JobSet's condition copied (kubeflow/trainer plugins/jobset
# TerminalCondition), and Kueue's Workload `Finished` copies the job's message (jobframework/reconciler.go): the
# same message names the child there.
JOBSET_CHILD_FAILURE_REASONS = frozenset({"FailedJobs", "ReachedMaxRestarts", "FailJobSetFailurePolicyAction"})
FIRST_FAILED_JOB = re.compile(r"\(first failed job: (?P<job>[^()\s]+)\)\s*$")
_FIRST_FAILED_SOURCE = "jobset pkg/controllers/failure_policy.go messageWithFirstFailedJob (v0.5.0+)"


def first_failed_job(message: str | None) -> str | None:
    """The child Job a JobSet's failure message names (jobset v0.5.0+), else None."""
    m = FIRST_FAILED_JOB.search(message) if message else None
    return m.group("job") if m else None


def child_job_failure(ctype: str | None, status: str | None, reason: str | None, message: str | None,
                      event: bool = False) -> JobEnd | None:
    """What a child Job's own failure says (the one a JobSet reads: its `Failed` condition True, or the job
    controller's failure Event of the same reason), else None. `FailureTarget` is not it: JobSet acts on `Failed`."""
    end = job_event_end("Job", reason, message) if event else (
        job_condition_end("Job", ctype, status, reason, message) if ctype == "Failed" else None)
    return end if end is not None and end.outcome == _FAILED else None


def with_child_end(end: JobEnd | None, child: dict | None) -> JobEnd | None:
    """A JobSet's (TrainJob's, Workload's) failure whose own words prove no category, with the category its failed
    child Job's condition proves (linking.Index puts `child_end` in the record's details)."""
    if end is None or end.outcome != _FAILED or end.category != "unknown" or not isinstance(child, dict):
        return end
    category = child.get("category")
    if not isinstance(category, str) or category == "unknown":
        return end
    how = "named by its message" if child.get("named") else "the first failed child owned by it"
    return JobEnd(end.outcome, category,
                  f"{end.source}; its child Job {child.get('job')} ({how}: {_FIRST_FAILED_SOURCE}): {child.get('source')}")


#: The end reasons of failed jobs that do not say "fail" (an attempt's end_reason, diagnose/endings.outcome_of).
FAILED_END_REASONS = frozenset(reason for (_kind, reason), (outcome, _s) in JOB_EVENTS.items() if outcome == _FAILED)
