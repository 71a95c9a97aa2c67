"""Rules from batch h16t of issue 16 (fixtures/eval README, "Batch h16t"): more of TensorFlow's own words.

The lines, each as the source cited beside its rule in parsers/errors.py prints it (values ours): TF 1.x's Coordinator
logging the exception that stopped training ("Error reported to Coordinator: <class 'T'>, message", coordinator.py), the
exception restated at the end of an OpError's text ("T (see above for traceback): message", errors_impl.py
OpError.__str__), and four statuses by their messages: a cloud file system's failed HTTP request (curl_http_request.cc:
storage_io), gRPC's unreachable peer (UNAVAILABLE "OS Error" / "Socket closed" / "failed to connect to all addresses":
nccl_error), an iterator's "End of sequence" raised in a step (iterator_ops.cc: dataloader_error), a checkpoint without a
key the graph restores (tensor_bundle.cc "Key K not found in checkpoint", saver.py "Restoring from checkpoint failed":
checkpoint_error). And the lines of a healthy run that carry the same words and must stay unread."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangscope.parsers.errors import exception_category
from diagnose_in_process import the_diagnosis
from rule_reference import found

DEV = Path(__file__).resolve().parent.parent / "fixtures" / "eval" / "dev"




@pytest.mark.parametrize(
    "line, expected",
    [
        ("INFO:tensorflow:Error reported to Coordinator: <class 'tensorflow.python.framework.errors_impl.UnavailableError'>, OS Error",
         ("tf_coordinator_error", "nccl_error")),
        ("I0711 03:12:44.901226 140221877114624 coordinator.py:224] Error reported to Coordinator: <class "
         "'tensorflow.python.framework.errors_impl.NotFoundError'>, Key conv3/bn/moving_mean not found in checkpoint",
         ("tf_coordinator_error", "checkpoint_error")),
        ("INFO:tensorflow:Error reported to Coordinator: <class 'tensorflow.python.framework.errors_impl.NotFoundError'>, Restoring "
         "from checkpoint failed. This is most likely due to a Variable name or other graph key that is missing from the checkpoint. "
         "Please ensure that you have not altered the graph expected based on the checkpoint. Original error:",
         ("tf_coordinator_error", "checkpoint_error")),
        ("INFO:tensorflow:Error reported to Coordinator: <class 'ValueError'>, Can't load save_path when it is None.",
         ("tf_coordinator_error", "python_exception")),
        ("INFO:tensorflow:Error reported to Coordinator: You must specify an aggregation method to update a MirroredVariable",
         ("tf_coordinator_error", "python_exception")),
        # the message's own rule comes first where it reads the whole line
        ("I0402 00:54:04.617474 35184372399344 coordinator.py:224] Error reported to Coordinator: <class "
         "'tensorflow.python.framework.errors_impl.ResourceExhaustedError'>, OOM when allocating tensor with shape[256,64,56,56] "
         "and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc", ("tf_oom_allocating", "cuda_oom")),
        ("OutOfRangeError (see above for traceback): End of sequence", ("tf_op_error_restated", "dataloader_error")),
        ("NotFoundError (see above for traceback): Key fc7/biases/Momentum not found in checkpoint",
         ("tf_op_error_restated", "checkpoint_error")),
        ("InvalidArgumentError (see above for traceback): Cannot assign a device for operation 'MatMul': Operation was explicitly "
         "assigned to /device:GPU:0", ("tf_op_error_restated", "python_exception")),
        ("DataLossError (see above for traceback): corrupted record at 4410", ("tf_record_corrupted", "dataloader_error")),
        ("tensorflow.python.framework.errors_impl.PermissionDeniedError: Error executing an HTTP request: HTTP response code 403 "
         "with body '{", ("exception_line", "storage_io")),
        ("tensorflow.python.framework.errors_impl.UnavailableError: Error executing an HTTP request: libcurl code 28 meaning "
         "'Timeout was reached', error details: Operation timed out", ("exception_line", "storage_io")),
        ("tensorflow.python.framework.errors_impl.UnavailableError: Socket closed", ("exception_line", "nccl_error")),
        ("tensorflow.python.framework.errors_impl.OutOfRangeError: End of sequence", ("exception_line", "dataloader_error")),
        # a healthy run's lines with the same words: no exception, no rule
        ("2023-03-01 10:02:11.410201: I tensorflow/core/framework/local_rendezvous.cc:405] Local rendezvous is aborting with status: "
         "OUT_OF_RANGE: End of sequence", None),
        ("2022-05-04 11:20:31.117355: W tensorflow/core/framework/op_kernel.cc:1745] OP_REQUIRES failed at iterator_ops.cc:1051 : "
         "Out of range: End of sequence", None),
        ("2021-08-17 09:41:02.118224: W tensorflow/core/platform/cloud/google_auth_provider.cc:184] All attempts to get a Google "
         "authentication bearer token failed, returning an empty token. Retrieving token from files failed with \"NOT_FOUND: Could "
         "not locate the credentials file.\". Retrieving token from GCE failed with \"FAILED_PRECONDITION: Error executing an HTTP "
         "request: libcurl code 6 meaning 'Couldn't resolve host name', error details: Could not resolve host: metadata\".", None),
        ("W tensorflow/magenta: Got error reported to coordinator: End of sequence", None),
    ],
)
def test_lines(line, expected):
    assert found(line) == expected


@pytest.mark.parametrize(
    "exc_type, message, category",
    [
        ("tensorflow.python.framework.errors_impl.UnavailableError", "OS Error", "nccl_error"),
        ("tensorflow.python.framework.errors_impl.UnavailableError", "failed to connect to all addresses", "nccl_error"),
        ("tensorflow.python.framework.errors_impl.NotFoundError", "Key _CHECKPOINTABLE_OBJECT_GRAPH not found in checkpoint",
         "checkpoint_error"),
        ("tensorflow.python.framework.errors_impl.PermissionDeniedError",
         "Error executing an HTTP request: HTTP response code 401 with body '{", "storage_io"),
        ("tensorflow.python.framework.errors_impl.OutOfRangeError", "End of sequence", "dataloader_error"),
        # the same words elsewhere in a message say nothing
        ("ValueError", "Socket closed by the remote user in my protocol", "python_exception"),
        ("tensorflow.python.framework.errors_impl.OutOfRangeError", "Read less bytes than requested", "python_exception"),
    ],
)
def test_exceptions(exc_type, message, category):
    assert exception_category(exc_type, message) == category


@pytest.mark.parametrize("name, category", [("515", "cuda_oom"), ("516", "python_exception"), ("517", "dataloader_error"),
                                           ("518", "storage_io"), ("519", "nccl_error"), ("520", "cuda_oom"),
                                           ("521", "python_exception"), ("522", "checkpoint_error"), ("523", "running")])
def test_the_dev_logs_of_the_batch(tmp_path, name, category):
    d = the_diagnosis(tmp_path, (DEV / f"{name}.log").read_text(), name)
    assert d.category == category, d.summary


RETRIES = "".join(
    f"2018-02-19 14:07:52.61{i}203: E tensorflow/stream_executor/cuda/cuda_driver.cc:924] failed to allocate {size} ({n} bytes) "
    "from device: CUDA_ERROR_OUT_OF_MEMORY\n"
    for i, (size, n) in enumerate([("96.00M", 100663296), ("86.40M", 90596966), ("77.76M", 81537269)])
)
BFC_GOES_ON = ("2018-02-19 14:07:55.118203: W tensorflow/core/common_runtime/bfc_allocator.cc:217] Allocator (GPU_0_bfc) ran out of "
               "memory trying to allocate 2.41GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean "
               "that there could be performance gains if more memory were available.\n")


@pytest.mark.parametrize(
    "text, category",
    [
        (RETRIES, "cuda_oom"),  # the log stops inside the allocator's retries: their last word
        (RETRIES + BFC_GOES_ON, "running"),  # the allocator served the run after them
        (RETRIES + "Epoch 1/10\n" + "100/100 [==============================] - 12s 120ms/step - loss: 0.6931 - acc: 0.5012\n",
         "running"),
        (BFC_GOES_ON * 2, "running"),  # a warning, never a failure by itself
    ],
)
def test_allocation_retries_at_the_end(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


def test_dev_510_stops_inside_the_retries(tmp_path):
    d = the_diagnosis(tmp_path, (DEV / "510.log").read_text(), "510")
    assert d.category == "cuda_oom" and "warnings with no error raised" in d.summary, d.summary
