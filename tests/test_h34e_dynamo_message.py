"""torch.compile's (dynamo's) error messages hold File lines and blank lines (h34e, issue 16; fixtures/eval README,
"Code-review debts and dynamo messages (h34e)").

pytorch/pytorch torch/_dynamo/exc.py augment_exc_message appends to the exception's own text
"\\nfrom user code:\\n " + "".join(traceback.format_list(real_stack)) (each frame's File line and source line, the first
File line one space deeper), then "\\nSet TORCH_LOGS=\\"+dynamo\\" and TORCHDYNAMO_VERBOSE=1 for more information\\n"
(2.1-2.5; 2.0 "Set torch._dynamo.config.verbose=True for more information", 2.6+ "Set TORCHDYNAMO_VERBOSE=1 for the
internal stack trace (please do this especially if you're reporting a bug to PyTorch). ..."), "\\nMinifier script written
to ...", and (2.0-2.5) "\\n\\nYou can suppress this exception and fall back to eager by setting:\\n    import torch._dynamo\\n
    torch._dynamo.config.suppress_errors = True\\n". On 57e1e72 the blank line before "from user code:" ended the trace and
its File line started a trace of its own, with no type. The parser now keeps those lines in the message (traces.py state
"dynamo_frames", trace_shapes.DYNAMO_USER_CODE / DYNAMO_HINT); a File line of another trace after a message that is not
dynamo's, or after dynamo's frames and a blank line, still starts a trace of its own. The lines are rebuilt from exc.py's
format strings with our values.
"""

from __future__ import annotations

import pytest

from diagnose_in_process import the_diagnosis
from trace_feed import feed_traces

HEAD = ["Traceback (most recent call last):",
        '  File "/srv/job/train.py", line 311, in <module>',
        "    main()",
        '  File "/opt/venv/lib/python3.11/site-packages/torch/_dynamo/symbolic_convert.py", line 477, in inner',
        "    raise exc.UserError("]
EXC = "torch._dynamo.exc.UserError: Dynamic control flow is not supported at the moment."
USER_CODE = ["from user code:",
             '   File "/srv/job/model.py", line 88, in gate',
             "    if scores.max() > 0.25:"]
SUPPRESS = ["You can suppress this exception and fall back to eager by setting:",
            "    import torch._dynamo",
            "    torch._dynamo.config.suppress_errors = True"]

# each release's message after the exception line (exc.py augment_exc_message)
MESSAGES = {
    "torch 2.1-2.5": ["", *USER_CODE, "", 'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information', "", "",
                      *SUPPRESS],
    "torch 2.0": ["", *USER_CODE, "", "Set torch._dynamo.config.verbose=True for more information", "", "", *SUPPRESS],
    "torch 2.6+, three frames": [
        "", *USER_CODE,
        '  File "/opt/venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1751, in _call_impl',
        "    return forward_call(*args, **kwargs)",
        '  File "/srv/job/model.py", line 40, in forward',
        "    return self.gate(h)",
        "",
        "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're reporting a bug to "
        'PyTorch). For even more developer context, set TORCH_LOGS="+dynamo"'],
    "a frame of <string>, no source line": ["", "from user code:", '   File "<string>", line 23, in forward', "", "",
                                            *SUPPRESS],
    "a minifier's script": ["", *USER_CODE, "",
                            "Minifier script written to /srv/job/torch_compile_debug/minifier/minifier_launcher.py. Run "
                            "this script to find the smallest traced graph which reproduces this error.", "",
                            'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information', "", "", *SUPPRESS],
}
NEXT = ["Traceback (most recent call last):",
        '  File "/srv/job/train.py", line 311, in <module>',
        "    dist.barrier()",
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.4.2.17]:41207"]


@pytest.mark.parametrize("release", MESSAGES)
def test_dynamo_s_message_stays_in_its_trace(release):
    message = MESSAGES[release]
    traces = feed_traces(HEAD + [EXC] + message + [""] + NEXT)
    assert [t.exception_type for t in traces] == ["torch._dynamo.exc.UserError", "RuntimeError"]
    first = traces[0].chain[-1]
    assert first.message.split("\n") == [EXC.split(": ", 1)[1], *message]
    assert [f.function for f in first.frames] == ["<module>", "inner"]  # the message's File lines are no frames


def test_backend_compiler_failed_without_user_code_keeps_its_hints():
    # BackendCompilerFailed has no real_stack to quote: the hints come after its inner exception's line
    message = ["ModuleNotFoundError: No module named 'torch._inductor.triton_heuristics'", "",
               'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information', "", "", *SUPPRESS]
    traces = feed_traces(HEAD[:3] + ["torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:"] + message + [""]
                         + NEXT)
    assert [t.exception_type for t in traces] == ["torch._dynamo.exc.BackendCompilerFailed", "RuntimeError"]
    assert traces[0].chain[-1].message.split("\n")[1:] == message


def test_a_prefixed_rank_s_message_reads_the_same(tmp_path):
    # torch 2.2+'s excepthook: "[rankN]: " on every line but the empty ones (distributed_c10d._distributed_excepthook);
    # the rank's parser gets its lines without the prefix and without the blank ones (pipeline/curate/container.py)
    lines = [f"[rank2]: {t}" if t else "" for t in HEAD + [EXC] + MESSAGES["torch 2.1-2.5"]]
    traces = feed_traces([t.removeprefix("[rank2]: ") for t in lines if t])
    assert [t.exception_type for t in traces] == ["torch._dynamo.exc.UserError"]
    assert traces[0].chain[-1].message.split("\n") == [EXC.split(": ", 1)[1], *(t for t in MESSAGES["torch 2.1-2.5"] if t)]
    d = the_diagnosis(tmp_path, "\n".join(lines) + "\n")
    assert (d.category, (d.first_failure or {}).get("rank")) == ("python_exception", 2), d.summary


# ---------------------------------------------------------------- near misses: another trace's File line still splits

def test_a_file_line_after_a_plain_message_and_a_blank_starts_another_trace():
    # no "from user code:": the File line is the next trace's (its header lost), as before
    traces = feed_traces(HEAD[:3] + ["ValueError: shapes (4, 8) and (3, 8) differ", ""] + NEXT[1:])
    assert [t.exception_type for t in traces] == ["ValueError", "RuntimeError"]
    assert traces[0].chain[-1].message == "shapes (4, 8) and (3, 8) differ"


def test_a_file_line_after_dynamo_s_frames_and_a_blank_starts_another_trace():
    # dynamo's frames end at the blank line; a File line after it is no line of exc.py's message
    traces = feed_traces(HEAD + [EXC, "", *USER_CODE, ""] + NEXT[1:])
    assert [t.exception_type for t in traces] == ["torch._dynamo.exc.UserError", "RuntimeError"]
    assert traces[0].chain[-1].message.split("\n")[-3:] == USER_CODE


def test_a_header_right_after_dynamo_s_frames_starts_another_trace():
    traces = feed_traces(HEAD + [EXC, "", *USER_CODE] + NEXT)
    assert [t.exception_type for t in traces] == ["torch._dynamo.exc.UserError", "RuntimeError"]


def test_a_log_line_after_dynamo_s_frames_ends_the_trace():
    traces = feed_traces(HEAD + [EXC, "", *USER_CODE, "",
                                 "[2026-12-05 11:42:07,118] torch.distributed.elastic.agent.server.api: [WARNING] Received "
                                 "Signals.SIGTERM death signal, shutting down workers"])
    assert len(traces) == 1 and traces[0].chain[-1].message.split("\n")[-3:] == USER_CODE


def test_the_hint_s_words_elsewhere_do_not_continue_a_message():
    # the words inside a sentence of their own (not at the line's start), and "from user code:" with more after it
    for line in ["W1205 11:42:07.118 We set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information",
                 "from user code: see the notebook", "  You can suppress this exception and fall back to eager by setting:"]:
        traces = feed_traces(HEAD[:3] + ["ValueError: bad value", "", line] + NEXT)
        assert [t.exception_type for t in traces] == ["ValueError", "RuntimeError"], line
        assert traces[0].chain[-1].message == "bad value", line


def test_the_diagnosis_quotes_the_compile_error_once(tmp_path):
    text = "\n".join(HEAD + [EXC] + MESSAGES["torch 2.1-2.5"] + [""]) + "\n"
    d = the_diagnosis(tmp_path, text)
    assert d.category == "python_exception", d.summary
    assert "Dynamic control flow is not supported" in d.summary, d.summary
