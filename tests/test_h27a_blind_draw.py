"""Rules from batch h27a of issue 16 (fixtures/eval README, "Batch h27a"): a blind draw shaped like the judged set.

Three classes of its misses show their cause in the log:
- Apple's GPU out of memory under MLX: "[METAL] Command buffer execution failed: Insufficient Memory
  (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)" (parsers/errors.py metal_command_buffer_oom, line and trace
  rules, cuda_oom);
- python-manhole's stack dump of a live process ("######### ProcessID=N, ThreadID=N #########"), a stall report as a
  py-spy dump is (errors.py manhole_stack_dump, hang);
- IPython's ultratb before IPython 8, whose frame lines are "<file> in <func>(<args>)" (trace_shapes.IPY_CLASSIC_FRAME,
  traces.py state ipy_frames, trace_blocks.derender), and ultratb's head of a type that starts with "T" (TypeError),
  which trace_blocks._rendered did not take for IPython's.
The lines below are rebuilt from the libraries' format strings (and, for IPython 7, a run of IPython 7.34.0 on CPython
3.11 with our own file names) with our values, not copied from the fixtures."""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from rule_reference import assert_found_past_the_prefilter, category_of
from trace_feed import feed_traces

from gangscope.parsers import errors


METAL_OOM = "[METAL] Command buffer execution failed: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)"


@pytest.mark.parametrize(
    "line, rule, category",
    [
        # an uncaught throw in a C++ program (or a completion handler), as libc++abi prints it
        (f"libc++abi: terminating due to uncaught exception of type std::runtime_error: {METAL_OOM}",
         "metal_command_buffer_oom", "cuda_oom"),
        # Python's mlx raises it as RuntimeError; an exception line read alone
        (f"RuntimeError: {METAL_OOM}", "metal_command_buffer_oom", "cuda_oom"),
        # the description without its code in brackets
        ("[METAL] Command buffer execution failed: Insufficient Memory", "metal_command_buffer_oom", "cuda_oom"),
        # python-manhole's dump, one header per thread
        ("######### ProcessID=48213, ThreadID=140521884313408 #########", "manhole_stack_dump", "hang"),
        ("######### ProcessID=733, ThreadID=4873261440 #########", "manhole_stack_dump", "hang"),
    ],
)  # fmt: skip
def test_the_lines_and_the_prefilter(line, rule, category):
    assert_found_past_the_prefilter(line, rule, category)


@pytest.mark.parametrize(
    "line",
    [
        # the same MLX line with Metal's other errors: a GPU watchdog timeout, a page fault, an OS abort, no memory
        "RuntimeError: [METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)",
        "[METAL] Command buffer execution failed: Caused GPU Address Fault Error (0000000b:kIOGPUCommandBufferCallbackErrorPageFault)",
        "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: "
        "Impacting Interactivity (0000000e:kIOGPUCommandBufferCallbackErrorImpactingInteractivity)",
        # advice about it
        "Tip: if you see Insufficient Memory from Metal, lower --batch-size",
    ],
)  # fmt: skip
def test_metal_near_misses(line):
    assert category_of(line) != "cuda_oom"


@pytest.mark.parametrize(
    "line",
    [
        "#############################################",  # the dump's closing rule
        "######### Results #########",  # a heading in a notebook's output
        "ProcessID=48213 started the data server",
        "# ProcessID=48213, ThreadID=1 #",
    ],
)  # fmt: skip
def test_manhole_near_misses(line):
    assert category_of(line) is None


MLX_TRACE = ("Loading datasets\n"
             "Training\n"
             "Traceback (most recent call last):\n"
             '  File "/home/trainer/lora/lora.py", line 321, in <module>\n'
             "    train(model, train_set, opt, loss, tokenizer, args)\n"
             '  File "/opt/venvs/mlx/lib/python3.11/site-packages/mlx_lm/tuner/trainer.py", line 205, in train\n'
             "    mx.eval(model.state, optimizer.state, lvalue)\n"
             "RuntimeError: {}\n")  # fmt: skip

DUMP = ("Epoch 3:  41%|████      | 83/202 [01:12<01:43,  1.15it/s]\n"
        "\n"
        "######### ProcessID=48213, ThreadID=140521884313408 #########\n"
        'File: "/opt/venvs/train/lib/python3.10/threading.py", line 973, in _bootstrap\n'
        "  self._bootstrap_inner()\n"
        'File: "/opt/venvs/train/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 69, in _wrap\n'
        "  fn(i, *args)\n"
        'File: "/home/trainer/proj/train.py", line 188, in worker\n'
        "  loss.backward()\n"
        "#############################################\n")  # fmt: skip


@pytest.mark.parametrize(
    "text, category",
    [
        (MLX_TRACE.format(METAL_OOM), "cuda_oom"),
        # Metal's GPU watchdog is no memory
        (MLX_TRACE.format("[METAL] Command buffer execution failed: Caused GPU Timeout Error "
                          "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)"), "python_exception"),
        # a hung worker's stacks dumped through the manhole, nothing after them
        (DUMP, "hang"),
    ],
)  # fmt: skip
def test_the_logs_of_the_batch(tmp_path, text, category):
    d = the_diagnosis(tmp_path, text)
    assert d.category == category, d.summary


# IPython 7.34.0 on CPython 3.11, xmode Context, NoColor (a cell that calls a function of a module that raises)
CLASSIC = ["---------------------------------------------------------------------------",
           "TypeError                                 Traceback (most recent call last)",
           "<ipython-input-5-849d411705b8> in <cell line: 0>()",
           '----> 1 train_step([1, 2, "x"], 3)',
           "",
           "<ipython-input-4-110f1f0395fd> in train_step(batch, size)",
           "      1 def train_step(batch, size=None):",
           "----> 2     loss = collate(batch, size)",
           "      3     return loss",
           "",
           "/home/trainer/proj/lib_mod.py in collate(batch, size)",
           "      2     total = 0",
           "      3     for item in batch:",
           "----> 4         total += item",
           "      5     return total / size",
           "",
           "TypeError: unsupported operand type(s) for +=: 'int' and 'str'"]  # fmt: skip
# exec() of a file: frames of "<string>" at module level ("in <module>", no arguments)
CLASSIC_EXEC = ["RuntimeError                              Traceback (most recent call last)",
                "<ipython-input-1-ae651f43414f> in <cell line: 0>()",
                "----> 1 exec(open('run_cells.ipy').read())",
                "",
                "<string> in <module>",
                "",
                "<string> in train_step(batch, size)",
                "",
                "~/proj/lib_mod.py in collate(batch, size)",
                "      3     for item in batch:",
                "----> 4         total += item",
                "",
                "RuntimeError: Error in collate(batch) for the batch of step 7"]  # fmt: skip
# IPython 8's form with a head of a type that starts with "T"
MODERN_T = ["TypeError                                 Traceback (most recent call last)",
            "Cell In[5], line 1",
            '----> 1 train_step([1, 2, "x"], 3)',
            "",
            "File ~/proj/lib_mod.py:4, in collate(batch, size)",
            "      3 for item in batch:",
            "----> 4     total += item",
            "",
            "TypeError: unsupported operand type(s) for +=: 'int' and 'str'"]  # fmt: skip


def test_classic_ultratb_frames_are_frames():
    [t] = feed_traces(CLASSIC)
    assert (t.exception_type, t.message) == ("TypeError", "unsupported operand type(s) for +=: 'int' and 'str'")
    assert [(f.function, f.line) for f in t.frames] == [("<cell line: 0>", 1), ("train_step", 2), ("collate", 4)]
    assert t.frames[-1].file == "/home/trainer/proj/lib_mod.py"


def test_classic_frames_at_module_level_and_an_exception_that_names_a_call():
    [t] = feed_traces(CLASSIC_EXEC)
    assert [f.function for f in t.frames] == ["<cell line: 0>", "<module>", "train_step", "collate"]
    # a frame shows no "---> N" (exec's <string>): line 0; the last one its arrow's
    assert [f.line for f in t.frames] == [1, 0, 0, 4]
    # the exception line's " in collate(batch)" does not make it a frame
    assert (t.exception_type, t.message) == ("RuntimeError", "Error in collate(batch) for the batch of step 7")


def test_an_ipython_8_head_of_a_t_type_is_a_traceback():
    [t] = feed_traces(MODERN_T)
    assert t.exception_type == "TypeError" and [f.function for f in t.frames] == ["<module>", "collate"]


@pytest.mark.parametrize(
    "lines, category",
    [
        (CLASSIC, "python_exception"),
        # cut in the frames, before the exception line: a traceback cut short, unknown (silent-stop rule 2)
        (CLASSIC[:12], "unknown"),
        (CLASSIC_EXEC[:6], "unknown"),
        (MODERN_T[:6], "unknown"),
    ],
)  # fmt: skip
def test_the_notebook_tracebacks(tmp_path, lines, category):
    d = the_diagnosis(tmp_path, "\n".join(lines) + "\n")
    assert d.category == category, d.summary
