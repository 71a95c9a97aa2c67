"""Horovod's SHUT_DOWN_ERROR raised through TensorFlow on the ranks that did not fail (horovod/common/common.h;
the wording before horovod#350 too): an effect of another rank's failure, never a python_exception of its own."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis

NEW = ("Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, "
       "allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an "
       "exception, you should see the exception in the log before the first shutdown message.")
OLD = ("Horovod has been shut down. This has been caused by an exception on one of the rank or an attempt to allreduce, "
       "allgather or broadcast a tensor after one of the ranks has finished execution.")
FRAMES = ('[1,0]<stderr>:    File "/usr/lib/python3/dist-packages/horovod/tensorflow/mpi_ops.py", line 127, in _allreduce\n'
          "[1,0]<stderr>:      return MPI_LIB.horovod_allreduce(tensor, name=name, reduce_op=op,\n"
          '[1,0]<stderr>:    File "<string>", line 107, in horovod_allreduce\n')


@pytest.mark.parametrize("text", [
    FRAMES + "[1,0]<stderr>:Node: 'HorovodAllreduce_grads_3_0'\n[1,0]<stderr>:" + NEW + "\n"
    "[1,0]<stderr>:\t [[{{node HorovodAllreduce_grads_3_0}}]] [Op:__inference_train_function_5120]\n",
    "Traceback (most recent call last):\n  File \"train.py\", line 80, in <module>\n    sess.run(bcast)\n"
    "tensorflow.python.framework.errors_impl.AbortedError: " + OLD + "\n",
    "Traceback (most recent call last):\n  File \"train.py\", line 80, in <module>\n    model.fit(ds)\n"
    "tensorflow.python.framework.errors_impl.UnknownError: " + NEW + "\n",
], ids=["graph-node-stack", "aborted-old-wording", "unknown-error"])
def test_horovod_shut_down_through_tensorflow_is_no_cause_of_its_own(tmp_path, text):
    assert the_diagnosis(tmp_path, text).category == "unknown"


def test_the_rank_that_raised_first_is_the_cause(tmp_path):
    text = ("[1,1]<stderr>:Traceback (most recent call last):\n"
            '[1,1]<stderr>:  File "train.py", line 51, in <module>\n'
            "[1,1]<stderr>:    batch = next(it)\n"
            "[1,1]<stderr>:KeyError: 'input_ids'\n"
            + FRAMES + "[1,0]<stderr>:Node: 'HorovodAllreduce_grads_3_0'\n[1,0]<stderr>:" + NEW + "\n")
    d = the_diagnosis(tmp_path, text)
    assert (d.category, d.rank) == ("python_exception", 1)
