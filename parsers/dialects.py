"""Step-line dialects: one small pyparsing grammar per training framework, as a table.

A dialect turns one progress segment (a line, or one `\\r`-separated state of a
progress bar) into named numeric values; `StepParser` (steps.py) turns those into
`StepRecord`s and keeps the per-stream state (bars, epoch headers, multi-line
blocks).

Speed: pyparsing runs once per *line shape*, not once per line. A shape is the
segment with every number replaced by a placeholder and runs of blanks and bar
glyphs collapsed. Two segments with the same shape differ only in their numbers,
so the first parse is kept as a template (which value sits between which number
tokens) and later segments of that shape are read by slicing their own number
tokens. Shapes that no dialect accepts are remembered too, so repeated prose
costs one dictionary lookup after the prefilter. What each value means (loss,
learning rate, a throughput and its unit, a step time in ms...) depends on its
key alone, so it is decided once per key set (`make_plan`).

Every format below comes from the library's source (commit and file cited per
dialect in `Dialect.source`) or from real output captured in fixtures/dialects/:
hf_trainer (logs dict), tqdm (bars), lightning (TQDMProgressBar), lightning_rich
(RichProgressBar), keras (Progbar, Keras 2 and 3), megatron, deepspeed, torchtitan,
nemo (ProgressPrinter), fairseq (SimpleProgressBar), composer (ConsoleLogger),
generic (plain loops).
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import pyparsing as pp

try:
    import hyperscan
except ImportError:  # optional: guards are then tested one by one
    hyperscan = None

# --------------------------------------------------------------------------- prefilter

# What every step line of some dialect contains, as precisely as one regex can say it:
# a line that matches none never reaches the parser. Precision matters more than
# the regex's own cost (the pipeline runs all prefilters at once over whole blocks):
# every line let through costs the pipeline its slow path, so prose that merely
# says "steps" or "batch" must not pass. No look-arounds (Hyperscan compiles these),
# and as few alternatives as will do (Python's re tries each at every position).
PREFILTER_PARTS = (
    r"""['"]loss['"] ?:""",  # the Trainer's logs dict
    r"[0-9?KMG](?:it/s|s/it|s/step|ms/step|us/step)",  # bars: tqdm (Trainer, Lightning, Rich), Keras, Ultralytics' own ("1.2Kit/s")
    # Keras 2 bar before its first rate; Keras epoch header; the Trainer's plan "Num Epochs = 3"; the column header of
    # Ultralytics/YOLOv5/YOLOv7, which names the loss parts (YOLO_HEADER) (folded in: no new alternative)
    r"E(?:TA: [0-9]|poch [0-9]+/[0-9]+|pochs = [0-9]|poch +(?:GPU|gpu)_mem )",
    r"iteration +[0-9]+/",  # Megatron-LM, NeMo
    r"epoch [0-9]+: +[0-9]+ / [0-9]",  # fairseq
    # Composer "[batch=10/100]"; "[ 50/500]" of MMEngine/MMCV, torchvision references, timm ("[  50/1000 (  5%)]")
    r"\[(?:batch=[0-9]| *[0-9]+/[0-9]+[] ])",
    # plain loops, DeepSpeed ("step=", "global_step="), torchtitan (whose colors glue "\x1b[31m" to "step")
    r"(?:[Ss]tep|STEP|[Ii]ter(?:ation)?|ITER)[^0-9A-Za-z_]{0,3}[0-9]",
    r"[Bb]atch[^0-9A-Za-z_]{0,3}[0-9].*[Ll]oss",  # plain loops counting batches (with a loss)
    r"Total (?:optimization )?steps = [0-9]",  # the Trainer's (and Unsloth's) plan: upper-case start, few positions
)
PREFILTER = "|".join(f"(?:{p})" for p in PREFILTER_PARTS)


# --------------------------------------------------------------------------- numbers and shapes

# A number token: not glued to a preceding identifier (so "group0", "v1" and
# "0x5581" are not numbers), thousands separators allowed ("7,512" is torchtitan's
# tps), nan/inf as printed by Python.
NUMBER = (
    r"(?<![\w.])[-+]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
    r"|(?<![\w.])[-+]?(?:nan|inf|NAN|INF|NaN|Inf)(?![A-Za-z])"
)
# The same tokens without nan/inf, written to start with a character class so that re
# scans for candidates instead of trying a look-behind at every position (2-3x faster);
# used for the many lines that contain no "nan" or "inf".
_PLAIN_NUMBER = (
    r"[-+.\d](?<![\w.][-+.\d])"
    r"(?:(?<=[-+])(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)|(?<=\.)\d+|(?<=\d)\d*(?:,\d{3})*(?:\.\d*)?)"
    r"(?:[eE][-+]?\d+)?"
)
# Blanks and bar glyphs (tqdm's block characters, Keras 3's heavy line): their
# count changes with progress and padding, never with meaning.
_FILL_RE = re.compile(r"[ \t\u2588-\u258f\u2501]+")
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    return _ANSI_RE.sub("", text) if "\x1b" in text else text


# --------------------------------------------------------------------------- grammar pieces


class Value(NamedTuple):
    """One number a grammar found: the key it belongs to and where it sits."""

    key: str
    start: int
    end: int
    unit: str = ""


class _Span(NamedTuple):
    start: int
    end: int
    unit: str


def _span_action(s: str, loc: int, toks: pp.ParseResults) -> _Span:
    text = toks[0]
    return _Span(loc, loc + len(text), "")


NUM = pp.Regex(NUMBER).set_parse_action(_span_action).set_name("number")
# A unit glued to its number: 45.67ms, 4.50it/s, 38.21GiB, 35.40%.
UNIT = pp.Regex(r"[A-Za-z%\u00b5]+(?:/[A-Za-z]+)*").leave_whitespace().set_name("unit")
NUM_UNIT = (NUM + pp.Opt(UNIT)).set_parse_action(
    lambda t: _Span(t[0].start, t[0].end, t[1] if len(t) > 1 else "")
)
# A clock duration as tqdm/Keras print it: 00:01, 1:52:09, 213:02:09.
CLOCK = pp.Regex(r"-?\d+(?::\d\d)+").set_parse_action(lambda s, loc, t: _Span(loc, loc + len(t[0]), "clock"))


def val(key: str, expr: pp.ParserElement = NUM) -> pp.ParserElement:
    """`expr` (a number) recorded under a fixed key."""
    return expr.copy().add_parse_action(lambda t: Value(key, t[0].start, t[0].end, t[0].unit))


def pair(key_expr: pp.ParserElement, sep: pp.ParserElement, value_expr: pp.ParserElement) -> pp.ParserElement:
    """`key sep value` recorded under the printed key."""

    def action(t: pp.ParseResults) -> Value:
        key, span = t[0], t[-1]
        return Value(str(key).strip(), span.start, span.end, span.unit)

    return (key_expr + pp.Suppress(sep) + value_expr).set_parse_action(action)


def L(text: str) -> pp.ParserElement:
    return pp.Suppress(pp.Literal(text))


def K(text: str) -> pp.ParserElement:
    return pp.Suppress(pp.Keyword(text))


def R(pattern: str, flags: int = 0) -> pp.ParserElement:
    return pp.Suppress(pp.Regex(pattern, flags))


# --------------------------------------------------------------------------- the dialect table


class Guard:
    """A dialect's cheap test of a segment before its grammar is tried, as data: the segment holds
    every clause (a literal, or a tuple of literals any one of which will do), starts with
    `starts` if given, and passes `where` (a test of a fixed place, or a regex) if given.
    Being data, the literals of a whole table are looked for in one pass (`GuardScan`)."""

    __slots__ = ("all_of", "starts", "where", "_singles", "_anys")

    def __init__(self, *all_of: str | tuple[str, ...], starts: str = "", where: Callable[[str], bool] | None = None):
        self.all_of = tuple((c,) if isinstance(c, str) else tuple(c) for c in all_of)
        self.starts = starts
        self.where = where
        self._singles = tuple(c[0] for c in self.all_of if len(c) == 1)
        self._anys = tuple(c for c in self.all_of if len(c) > 1)

    def __call__(self, s: str) -> bool:
        if not s.startswith(self.starts):
            return False
        for lit in self._singles:
            if lit not in s:
                return False
        for clause in self._anys:
            for lit in clause:
                if lit in s:
                    break
            else:
                return False
        return self.where is None or self.where(s)

    def literals(self) -> set[str]:
        """Every literal the guard looks for (`starts` too: a segment that starts with it holds it)."""
        return {lit for clause in self.all_of for lit in clause} | ({self.starts} if self.starts else set())


class GuardScan:
    """The guards of a dialect table tested together on a new segment: the literals of all of
    them found in one Hyperscan pass over its UTF-8 bytes (a bit each), then each guard a few
    bit tests. On a 2 KB JSON log line holding a step key, which only the generic dialect's
    regex lets through, the ~30 guards' substring searches took ~46 us, the pass ~3 us.
    A str holds a literal exactly where its UTF-8 bytes hold the literal's (UTF-8 is
    self-synchronizing; lone surrogates are passed through as their own 3-byte forms)."""

    def __init__(self, dialects: tuple["Dialect", ...]):
        # a guard given as a plain function (a table built elsewhere) is tested as it is
        guards = [d.guard if isinstance(d.guard, Guard) else Guard(where=d.guard) for d in dialects]
        literals = sorted({lit for g in guards for lit in g.literals()})
        bit = {lit: 1 << i for i, lit in enumerate(literals)}
        self.literals = literals
        self.checks = []
        for d, g in zip(dialects, guards):
            need = sum(bit[c[0]] for c in g.all_of if len(c) == 1) | (bit[g.starts] if g.starts else 0)
            anys = tuple(sum(bit[lit] for lit in set(c)) for c in g.all_of if len(c) > 1)
            self.checks.append((d, need, anys, g.starts, g.where))
        # a digit-free literal is found in the layout too (its digits made 0s: see ShapeCache)
        self.layout_safe = not any(ch in "0123456789" for lit in literals for ch in lit)
        self._database = _literal_database(literals)
        self._survivors: dict[int, tuple] = {}  # see passing

    def found(self, seg: str, data: bytes | None = None) -> int:
        """Bit i set where the segment holds literal i; `data`: its UTF-8 bytes (or layout, where
        `layout_safe`) if already made."""
        if self._database is not None:
            if data is None:
                data = seg.encode("utf-8", "surrogatepass")
            out = [0]
            try:
                self._database.scan(data, match_event_handler=_or_literal_bit, context=out)
                return out[0]
            except hyperscan.error:
                pass
        return sum(1 << i for i, lit in enumerate(self.literals) if lit in seg)

    def passing(self, seg: str, data: bytes | None = None):
        """The table's dialects whose guard holds on `seg`, in table order (lazily)."""
        found = self.found(seg, data)
        # the dialects whose literals are all there depend on the literals found alone: the same
        # few sets come back line after line, so each set's survivors are remembered
        survivors = self._survivors.get(found)
        if survivors is None:
            survivors = tuple((d, starts, where) for d, need, anys, starts, where in self.checks
                              if found & need == need and (not anys or all(found & m for m in anys)))
            if len(self._survivors) >= 4096:
                self._survivors.clear()
            self._survivors[found] = survivors
        for d, starts, where in survivors:
            if (not starts or seg.startswith(starts)) and (where is None or where(seg)):
                yield d


def _or_literal_bit(literal_id, _start, _end, _flags, found) -> None:
    found[0] |= 1 << literal_id


def _literal_database(literals: list[str]):
    """The literals as one Hyperscan database of byte strings (each reported once under its
    index); None when Hyperscan is missing or refuses them."""
    if hyperscan is None or not literals:
        return None
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(expressions=[lit.encode("utf-8", "surrogatepass") for lit in literals],
                         ids=list(range(len(literals))), elements=len(literals),
                         flags=hyperscan.HS_FLAG_SINGLEMATCH, literal=True)
    except hyperscan.error:
        return None
    return database



@dataclass(frozen=True)
class Dialect:
    """One framework's step-line format.

    - `guard`: cheap test on a segment before pyparsing is tried (only on a new shape; see `Guard`).
    - `grammar`: the pyparsing grammar; its tokens are `Value`s.
    - `parse`: alternative to `grammar` for dialects that search (generic key/value).
    - `keys`: printed key -> field overrides for this dialect (see `FIELD_KEYS`).
    - `kind`: "step" (a step line), "bar" (a progress-bar state: one record per step,
      its last state), "epoch_header" (sets the epoch of the bar lines that follow),
      "block_header" / "block_item" (Composer's multi-line records).
    - `epoch_base`: how the framework numbers epochs (0 or 1; None = unknown).
    - `step_scope`: "global" (steps count across epochs), "epoch" (restart each
      epoch), "auto" (decided from what the stream does).
    """

    name: str
    source: str
    guard: Guard
    grammar: pp.ParserElement | None = None
    parse: Callable[[str], list[Value] | None] | None = None
    keys: dict[str, tuple] = field(default_factory=dict)
    kind: str = "step"
    epoch_base: int | None = None
    step_scope: str = "global"
    item: "Dialect | None" = None  # block headers: the dialect of their continuation lines
    # a line carrying a key of an evaluation (val_*, eval_*, test_*) is an eval line, not a step (see _EVAL_KEY);
    # False where the framework prints the last evaluation's metrics on its training lines (NeMo, Lightning bars, Keras)
    eval_lines: bool = False
    # fields derived from the others once a line is read (Ultralytics: the loss is the sum of the printed parts)
    post: Callable[[dict], None] | None = None

    def __post_init__(self) -> None:
        if self.grammar is not None:
            # spans must index the segment itself, not a tab-expanded copy
            self.grammar.parse_with_tabs()

    def values(self, seg: str) -> list[Value] | None:
        if self.parse is not None:
            return self.parse(seg)
        try:
            toks = self.grammar.parse_string(seg, parse_all=True)  # type: ignore[union-attr]
        except pp.ParseBaseException:
            return None
        return [t for t in toks if isinstance(t, Value)]


# ---- Hugging Face transformers Trainer: the logs dict, printed with print()/tqdm.write()
# SRC huggingface/transformers src/transformers/trainer_callback.py ProgressCallback.on_log
# (v5.24: floats as f"{v:.4g}" strings, `self.training_bar.write(str(shallow_logs))`),
# PrinterCallback.on_log (`print(logs)`); Trainer.log adds "epoch" (trainer.py). Older
# releases print raw floats: {'loss': 0.5514, 'grad_norm': 60.71, 'learning_rate': 4.3e-06, 'epoch': 0.09}.
_HF_KEY = pp.QuotedString("'") | pp.QuotedString('"')
_HF_NUM = NUM | (L("'") + NUM + L("'")) | (L('"') + NUM + L('"'))
_HF_OTHER = R(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\([^)]*\)|[^,}]+")
# ms-swift's ProgressCallbackNew adds 'global_step/max_steps': '10/94' to the Trainer's dict
# SRC modelscope/ms-swift swift/trainers/callback.py (logs['global_step/max_steps'] = f'{state.global_step}/{state.max_steps}')
_HF_STEPS = L("'global_step/max_steps'") + L(":") + L("'") + val("step") + L("/") + val("total_steps") + L("'")
_HF_ITEM = _HF_STEPS | pair(_HF_KEY, ":", _HF_NUM + pp.FollowedBy(pp.Char(",}"))) | (_HF_KEY + L(":") + _HF_OTHER).suppress()
HF_TRAINER = Dialect(
    name="hf_trainer",
    source="huggingface/transformers@v5.24.0:src/transformers/trainer_callback.py (ProgressCallback.on_log, PrinterCallback.on_log); trainer.py Trainer.log",
    guard=Guard("{", ("'loss'", '"loss"')),
    grammar=R(r"[^{]*") + L("{") + pp.DelimitedList(_HF_ITEM, ",") + L("}"),
    step_scope="global",
    eval_lines=True,  # Trainer.evaluate logs its own dict of eval_* keys
)

# ---- tqdm bars (Trainer's training bar, plain loops): '{l_bar}{bar}{r_bar}'
# SRC tqdm/tqdm tqdm/std.py @ v4.70.1 format_meter: r_bar = f'| {n_fmt}/{total_fmt} [{elapsed_str}<{remaining_str}, {rate_fmt}{postfix}]',
# rate_fmt f'{rate:5.2f}' + unit + '/s' or inverse 's/' + unit, no-total form f'{n_fmt}{unit} [{elapsed_str}, {rate_fmt}{postfix}]';
# postfix ', ' + 'k=v, k2=v2' (set_postfix, numbers through format_num '.3g').
_RATE = (
    (NUM + pp.Regex(r"[A-Za-z]+/s").leave_whitespace()).set_parse_action(
        lambda t: Value("_rate", t[0].start, t[0].end, t[1])
    )
    | (NUM + pp.Regex(r"s/[A-Za-z]+").leave_whitespace()).set_parse_action(
        lambda t: Value("_rate", t[0].start, t[0].end, t[1])
    )
    | R(r"\?[A-Za-z]+/s")
)
_POSTFIX_KEY = pp.Regex(r"[A-Za-z_][\w./-]*")
_POSTFIX_ITEM = pair(_POSTFIX_KEY, "=", NUM + pp.FollowedBy(pp.Char(",]"))) | R(r"[^,\]]+")
_POSTFIX = pp.ZeroOrMore(L(",") + _POSTFIX_ITEM)
_TIMES = L("[") + val("_elapsed", CLOCK) + pp.Opt(L("<") + (val("_remaining", CLOCK) | L("?"))) + L(",")
_BAR_COUNTS = (
    R(r"\d{1,3}%") + R(r"\|[^|]*\|") + val("step") + L("/") + (val("total_steps") | L("?"))
    | val("step") + R(r"[A-Za-z]+(?=\s*\[)")
)
_BAR_TAIL = _BAR_COUNTS + _TIMES + _RATE + _POSTFIX + L("]")
# Descriptions of bars that are not training steps (Lightning's validation/sanity bars, eval loops).
# and the bars of the data and hub libraries: huggingface_hub snapshot_download "Fetching N files", "Downloading ...",
# datasets Dataset.map/filter "Map", "Filter", "Tokenizing", checkpoint shards "Loading checkpoint shards"
# and Ultralytics' validation bar, described by its column header ("Class Images Instances Box(P R mAP50 mAP50-95)")
# [h27b] and vLLM's offline generation bars, which RL trainers (OpenRLHF, verl, TRL's vLLM generation) print from their
# rollout actors between training steps: vllm/entrypoints/llm.py LLM._run_engine tqdm(total=num_requests, desc="Processed
# prompts", postfix="est. speed input: ... toks/s, output: ... toks/s") and _validate_and_add_requests tqdm(desc="Adding
# requests"); a batch of prompts generated to its end is no end of training (fixtures/eval dev 839, OpenRLHF#949)
_NOT_TRAIN_DESC = re.compile(r"(?i)valid|sanity|test|predict|eval|infer|fetch|download|upload|load|map\b|filter|token|shard|extract|convert|mAP"
                             r"|processed prompts|adding requests")
TQDM = Dialect(
    name="tqdm",
    source="tqdm/tqdm@v4.70.1:tqdm/std.py format_meter (r_bar, rate_fmt, postfix); Trainer bar: transformers trainer_callback.py ProgressCallback.on_train_begin tqdm(total=state.max_steps)",
    guard=Guard(("/s", "s/")),
    grammar=pp.Opt(pp.Regex(r"[^|\[]*?:(?= )").add_condition(lambda t: not _NOT_TRAIN_DESC.search(t[0])).suppress())
    + _BAR_TAIL,
    kind="bar",
    step_scope="global",
)

# ---- tqdm bars of loops over one epoch's batches, described "Epoch n/N": the count restarts every epoch
# SRC tqdm/tqdm tqdm/std.py format_meter (l_bar = desc + ': ' + percentage + '|'); loops such as
# tqdm(train_dataloader, desc=f"Epoch {epoch + 1}/{num_epochs}"); meta-llama/llama-cookbook
# src/llama_cookbook/utils/train_utils.py train: pbar.set_description(f"Training Epoch: {epoch+1}/{train_config.num_epochs},"
# f" step {step}/{len(train_dataloader)} completed (loss: {loss.detach().float()})") (a tensor's repr), pbar.update(1) per optimizer step.
_TE_LOSS = (L("tensor(") + val("loss") + pp.Opt(R(r", device='[^']*'")) + L(")")) | val("loss")
TQDM_EPOCH = Dialect(
    name="tqdm_epoch",
    source="tqdm/tqdm:tqdm/std.py format_meter; meta-llama/llama-cookbook:src/llama_cookbook/utils/train_utils.py train (pbar.set_description); hpcaitech/ColossalAI:docs/source/en/features/pipeline_parallel.md",
    guard=Guard("Epoch", ("/s", "s/")),
    # ColossalAI's booster examples: tqdm(desc=f"Epoch [{epoch + 1}]") (docs/source/en/features/pipeline_parallel.md train_epoch)
    grammar=pp.Opt(L("Training")) + K("Epoch") + pp.Opt(L(":"))
    + (val("epoch") + L("/") + val("total_epochs") | L("[") + val("epoch") + L("]"))
    + pp.Opt(L(",") + K("step") + val("batch") + L("/") + val("batches") + L("completed") + L("(loss:") + _TE_LOSS + L(")"))
    + L(":") + _BAR_TAIL,
    keys={"batch": ("skip",), "batches": ("skip",)},
    kind="bar",
    step_scope="auto",  # epochs as printed, 1-based unless the first is 0 (StepParser._plain_global_step)
)

# ---- PyTorch Lightning TQDMProgressBar: description f"Epoch {trainer.current_epoch}", postfix = v_num + prog_bar metrics
# SRC Lightning-AI/pytorch-lightning@2.6.6 src/lightning/pytorch/callbacks/progress/tqdm_progress.py
# (on_train_epoch_start set_description, on_train_batch_end set_postfix(self.get_metrics(...)));
# progress_bar.py get_metrics adds "v_num".
# [h33d] Lightning's Tqdm.format_num pads a float it prints to _PAD_SIZE (5) characters: a text without "." that float() reads
# gets "." and then "0"s, so a NaN loss is printed "nan.0", an infinite one "inf.0" / "-inf." (Lightning-AI/pytorch-lightning
# src/lightning/pytorch/callbacks/progress/tqdm_progress.py Tqdm.format_num, in lightning 2.1.4 and 2.4.0 as in 2.6.6;
# fixtures/runs/lightning_amp_nan_torch2_1, _torch2_4: "train_loss=nan.0"). The number is read without its padding.
_LIGHTNING_NUM = NUM + pp.Opt(pp.Regex(r"\.0*(?=[,\]])").leave_whitespace().suppress())
_LIGHTNING_POSTFIX = pp.ZeroOrMore(L(",") + (pair(_POSTFIX_KEY, "=", _LIGHTNING_NUM + pp.FollowedBy(pp.Char(",]")))
                                             | R(r"[^,\]]+")))
LIGHTNING = Dialect(
    name="lightning",
    source="Lightning-AI/pytorch-lightning@2.6.6:src/lightning/pytorch/callbacks/progress/tqdm_progress.py (set_description(f\"Epoch {trainer.current_epoch}\"), set_postfix(get_metrics))",
    guard=Guard("Epoch", ("/s", "s/")),
    grammar=K("Epoch") + val("epoch") + L(":") + _BAR_COUNTS + _TIMES + _RATE + _LIGHTNING_POSTFIX + L("]"),
    keys={"v_num": ("skip",)},
    kind="bar",
    epoch_base=0,
    step_scope="epoch",
)

# ---- PyTorch Lightning's validation bar: never a step, but 1.x's main bar counts its batches too
# SRC Lightning-AI/pytorch-lightning@1.9.5 src/pytorch_lightning/callbacks/progress/tqdm_progress.py: init_validation_tqdm
# (desc "Validating"; 2.x "Validation DataLoader 0", lightning/pytorch/callbacks/progress/tqdm_progress.py validation_description);
# on_train_epoch_start resets the main bar to total_batches_current_epoch (train + val batches of the epoch's checks) and
# on_validation_batch_end advances it to train_batch_idx + _val_processed: StepParser reads those states as validation.
LIGHTNING_VAL = Dialect(
    name="lightning",
    source="Lightning-AI/pytorch-lightning@1.9.5:src/pytorch_lightning/callbacks/progress/tqdm_progress.py init_validation_tqdm, on_validation_batch_end",
    guard=Guard("Validati", ("/s", "s/")),
    grammar=(L("Validating") | L("Validation") + pp.Opt(L("DataLoader") + R(r"\d+"))) + L(":") + _BAR_TAIL,
    kind="eval_bar",
)

# ---- Keras 3 Progbar (and Keras 2 / tf.keras): "Epoch 1/10" line, then the bar
# SRC keras-team/keras@v3.15.1 keras/src/utils/progbar.py Progbar.update: bar = f"%{numdigits}d/%d" ...
# "\x1b[1m{bar}\x1b[0m " + "━" runs, info f" \x1b[1m{eta}\x1b[0m" + _format_time (f" {t:.0f}ms/{unit}") +
# f" - {k}: {avg:.4f}" (".4e" when |avg| <= 1e-3); verbose=2: f"{count} - {elapsed:.0f}s -{time} - k: v";
# unknown target "%7d/Unknown". keras/src/callbacks/progbar_logger.py on_epoch_begin: f"Epoch {epoch + 1}/{self.epochs}".
# Keras 2 bar: "[=====>....] - ETA: 37s - loss: 0.6016" (tf.keras utils/generic_utils.py Progbar).
_KERAS_DURATION = val("_clock", CLOCK) | val("_duration", NUM + pp.Regex(r"(?:us|ms|s)(?=\s|$)").leave_whitespace())
_KERAS_TIME = (NUM + pp.Regex(r"(?:us|ms|s)/[A-Za-z]+").leave_whitespace()).set_parse_action(
    lambda t: Value("_rate", t[0].start, t[0].end, t[1])
)
_KERAS_METRIC = pair(pp.Regex(r"[A-Za-z_][\w./-]*"), ":", NUM) | (pp.Regex(r"[A-Za-z_][\w./-]*") + L(":") + R(r"\S+")).suppress()
KERAS = Dialect(
    name="keras",
    source="keras-team/keras@v3.15.1:keras/src/utils/progbar.py Progbar.update, keras/src/callbacks/progbar_logger.py on_epoch_begin",
    guard=Guard("/", (" - ", "step")),
    grammar=val("step")
    + L("/")
    + (val("total_steps") | L("Unknown"))
    + pp.Opt(R(r"\[[=>.]*\]"))
    + pp.Opt(R("\u2501+"))
    + pp.Opt(L("-"))
    + pp.Opt(L("ETA:"))
    + pp.Opt(_KERAS_DURATION)
    + pp.Opt(pp.Opt(L("-")) + _KERAS_TIME)
    # tf.keras 2 verbose=2 ends with " - 2s/epoch - 15ms/step" (tf_keras/utils/generic_utils.py Progbar.update, finalize)
    + pp.ZeroOrMore(L("-") + (_KERAS_TIME | _KERAS_METRIC)),
    kind="bar",
    epoch_base=1,
    step_scope="epoch",
)
EPOCH_HEADER = Dialect(
    name="keras",
    source="keras-team/keras@v3.15.1:keras/src/callbacks/progbar_logger.py on_epoch_begin (f\"Epoch {epoch + 1}/{self.epochs}\")",
    guard=Guard("Epoch ", where=lambda s: s.lstrip().startswith("Epoch ")),
    grammar=K("Epoch") + val("epoch") + L("/") + val("total_epochs"),
    kind="epoch_header",
    epoch_base=1,
)

# ---- Megatron-LM training_log (print_rank_last)
# SRC NVIDIA/Megatron-LM@d98e8a64 megatron/training/training.py training_log:
# f" [{datetime.now()...}]" + ' iteration {:8d}/{:8d} |' + ' consumed samples: {:12d} |' +
# ' elapsed time per iteration (ms): {:.1f} |' + ... + ' {key}: {:.6E} |' (losses) + ' loss scale: {:.1f} |' + ' grad norm: {:.3f} |' ...
_MEG_KEY = pp.Regex(r"[^:|\[\]]+")
_MEG_ITEM = pair(_MEG_KEY, ":", NUM + pp.FollowedBy("|")) | R(r"[^|]+")
MEGATRON = Dialect(
    name="megatron",
    source="NVIDIA/Megatron-LM@d98e8a64:megatron/training/training.py training_log (log_string)",
    guard=Guard("iteration", "|"),
    # GPT-NeoX prints " samples/sec: {:.3f} |" before the iteration (EleutherAI/gpt-neox megatron/training.py training_log)
    grammar=pp.Opt(R(r"\[[^\]]*\]"))
    + pp.ZeroOrMore(pair(_MEG_KEY, ":", NUM + pp.FollowedBy("|")) + L("|"))
    + K("iteration")
    + val("step")
    + L("/")
    + val("total_steps")
    + L("|")
    + pp.ZeroOrMore(_MEG_ITEM + L("|")),
    keys={
        "lm loss": ("loss",),
        "learning rate": ("learning_rate",),
        "grad norm": ("grad_norm",),
        "elapsed time per iteration (ms)": ("step_time_s", "ms"),
        "elapsed time per iteration (s)": ("step_time_s", "s"),  # bigscience-workshop/Megatron-DeepSpeed megatron/training.py
        "samples per second": ("throughput", "samples/s"),
        "samples/sec": ("throughput", "samples/s"),
        "number of skipped iterations": ("metric",),
    },
)

# ---- DeepSpeed engine progress and ThroughputTimer (logger format "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s")
# SRC deepspeedai/DeepSpeed@edaa7221 deepspeed/runtime/engine.py _report_progress:
# log_dist(f"step={step}, skipped={self.skipped_steps}, lr={lr}, mom={mom}", ranks=[0]) ("[Rank {}] {}" prefix, utils/logging.py get_dist_msg);
# deepspeed/utils/timer.py ThroughputTimer.stop: "epoch={}/micro_step={}/global_step={}, RunningAvgSamplesPerSec={}, CurrSamplesPerSec={}, MemAllocated={}GB, MaxMemAllocated={}GB".
_DS_PREFIX = R(r"(?:\[[^\]]*\]\s*)*?(?=step=|epoch=)")
def _lr_groups(t: pp.ParseResults) -> list[Value]:
    # lr=[g0, g1, ...]: the first param group is the learning rate, the others are named by their index
    return [Value("lr" if i == 0 else f"lr_group{i}", s.start, s.end) for i, s in enumerate(t)]


_DS_LR = (L("[") + pp.DelimitedList(NUM, ",") + L("]")).set_parse_action(_lr_groups)
_DS_ENGINE = K("step") + L("=") + val("step") + L(",") + L("skipped=") + val("skipped") + L(",") + L("lr=") + (_DS_LR | val("lr")) + pp.Opt(L(",") + R(r"mom=.*"))
_DS_TIMER = (
    L("epoch=")
    + val("epoch")
    + L("/micro_step=")
    + val("micro_step")
    + L("/global_step=")
    + val("step")
    + pp.ZeroOrMore(L(",") + pair(pp.Regex(r"[A-Za-z_]\w*"), "=", NUM_UNIT))
)
DEEPSPEED = Dialect(
    name="deepspeed",
    source="deepspeedai/DeepSpeed@edaa7221:deepspeed/runtime/engine.py _report_progress; deepspeed/utils/timer.py ThroughputTimer.stop; deepspeed/utils/logging.py",
    guard=Guard("step="),
    grammar=_DS_PREFIX + (_DS_ENGINE | _DS_TIMER),
    keys={
        "CurrSamplesPerSec": ("throughput", "samples/s"),
    },
    epoch_base=0,
)

# ---- torchtitan MetricsProcessor.log (logger "[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s", ANSI colors)
# SRC pytorch/torchtitan@b5bcd76c torchtitan/components/metrics.py: f"{color.red}step: {step:2}  {color.green}loss: {global_avg_loss:8.5f}  "
# f"{color.orange}grad_norm: {grad_norm:7.4f}  {color.turquoise}memory: {max_reserved_gib:5.2f}GiB({max_reserved_pct:.2f}%)  "
# f"{color.blue}tps: {round(tps):,}  {color.cyan}tflops: {tflops:,.2f}  {color.magenta}mfu: {mfu_str}{color.reset}";
# torchtitan/tools/logging.py init_logger. 2024 releases: "step:  1  loss: 12.2251  memory: 33.84GiB(35.62%)  wps: 1,189  mfu: 21.94%".
_TT_ITEM = (
    pair(pp.Regex(r"[a-z_]+"), ":", NUM_UNIT)
    + pp.Opt((L("(") + NUM + L("%") + L(")")).set_parse_action(lambda t: Value("memory_pct", t[0].start, t[0].end, "%")))
)
TORCHTITAN = Dialect(
    name="torchtitan",
    source="pytorch/torchtitan@b5bcd76c:torchtitan/components/metrics.py MetricsProcessor.log; torchtitan/tools/logging.py",
    guard=Guard("step:", "loss:"),
    # 2024 releases log through "%(asctime)s - %(name)s - %(levelname)s - %(message)s" without "[titan]"
    grammar=pp.Opt(R(r"(?:\[titan\] )?.*? - [A-Z]+ - "))
    + K("step")
    + L(":")
    + val("step")
    + pp.OneOrMore(_TT_ITEM),
    keys={
        "tps": ("throughput", "tokens/s"),
        "wps": ("throughput", "tokens/s"),
        "memory": ("metric_unit",),
    },
)

# ---- NVIDIA NeMo 2.x ProgressPrinter
# SRC NVIDIA/NeMo@8cfedd72 nemo/lightning/pytorch/callbacks/progress_printer.py on_train_batch_end:
# prefix = self.train_description + f" epoch {trainer.current_epoch}, iteration {n-1}/{self.total-1}";
# format_string: f' | {metric}: {val}' (int-valued) or f' | {metric}: {val:.4}'.
def _counted_from_zero(out: dict) -> None:
    """A 0-based iteration index -> optimizer steps done (SPEC `step`): iteration k of 0..N-1 is step k + 1 of N
    (Lightning's own "global step {n}" checkpoint line says n = k + 1 after it)."""
    if isinstance(out.get("step"), int):
        out["step"] += 1
    if isinstance(out.get("total_steps"), int):
        out["total_steps"] += 1


_NEMO_ITEM = pair(pp.Regex(r"[^:|]+"), ":", NUM + pp.FollowedBy(pp.Literal("|") | pp.StringEnd())) | R(r"[^|]+")
NEMO = Dialect(
    name="nemo",
    source="NVIDIA/NeMo@8cfedd72:nemo/lightning/pytorch/callbacks/progress_printer.py ProgressPrinter.on_train_batch_end, format_string",
    guard=Guard("Training epoch"),
    grammar=K("Training")
    + K("epoch")
    + val("epoch")
    + L(",")
    + K("iteration")
    + val("step")
    + L("/")
    + val("total_steps")
    + pp.ZeroOrMore(L("|") + _NEMO_ITEM),
    keys={
        "reduced_train_loss": ("loss",),
        "train_step_timing in s": ("step_time_s", "s"),
    },
    epoch_base=0,
    step_scope="auto",
    post=_counted_from_zero,
)

# ---- fairseq SimpleProgressBar.log (logger "%(asctime)s | %(levelname)s | %(name)s | %(message)s", name = tag "train_inner")
# SRC facebookresearch/fairseq@3d262bb2 fairseq/logging/progress_bar.py SimpleProgressBar.log:
# "{}:  {:5d} / {:d} {}".format(self.prefix, self.i + 1, self.size, postfix), prefix "epoch {:03d}",
# postfix _str_commas: ", ".join(key + "=" + value); fairseq_cli/train.py logging.basicConfig format.
_FS_ITEM = pair(pp.Regex(r"[A-Za-z_]\w*"), "=", NUM + pp.FollowedBy(pp.Literal(",") | pp.StringEnd())) | R(r"[A-Za-z_]\w*=[^,]*")
FAIRSEQ = Dialect(
    name="fairseq",
    source="facebookresearch/fairseq@3d262bb2:fairseq/logging/progress_bar.py SimpleProgressBar.log, BaseProgressBar.__init__",
    guard=Guard("epoch", " / "),
    # fairseq <= 0.9 printed the bar with a leading "| " (fairseq/progress_bar.py simple_progress_bar.log @ v0.9.0)
    grammar=pp.Opt(R(r".*?\| [A-Z]+ \| [\w.]+ \| |\| (?=epoch )"))
    + K("epoch")
    + val("epoch")
    + L(":")
    + val("epoch_step")
    + L("/")
    + val("epoch_steps")
    + pp.DelimitedList(_FS_ITEM, ","),
    keys={
        "gnorm": ("grad_norm",),
        "wps": ("throughput", "words/s"),
        "num_updates": ("step",),
    },
    epoch_base=1,
)

# ---- MosaicML Composer ConsoleLogger (multi-line: a progress header, then "\n\t {prefix}{name}: {value}" lines)
# SRC mosaicml/composer@6405188 composer/loggers/console_logger.py log_to_console / _get_progress_string:
# f'[epoch={cur_epoch + 1}][batch={cur_batch}/{total}]' or f'[{unit}={curr}/{total}]', then ':' when data follows;
# values via composer/loggers/logger.py format_log_data_value (floats f'{data:.4f}').
COMPOSER_SOURCE = "mosaicml/composer@6405188:composer/loggers/console_logger.py log_to_console, _get_progress_string"
COMPOSER_ITEM = Dialect(
    name="composer",
    source=COMPOSER_SOURCE,
    guard=Guard(starts="\t"),
    grammar=pair(pp.Regex(r"Train [^:]+"), ":", NUM),
    keys={
        "Train loss/train/total": ("loss",),
        "Train throughput/samples_per_sec": ("throughput", "samples/s"),
        "Train throughput/tokens_per_sec": ("throughput", "tokens/s"),
        "Train throughput/batches_per_sec": ("throughput", "batches/s"),
    },
    kind="block_item",
)
COMPOSER_HEADER = Dialect(
    name="composer",
    source=COMPOSER_SOURCE,
    guard=Guard("[batch="),
    grammar=pp.Opt(L("[epoch=") + val("epoch") + L("]"))
    + L("[batch=")
    + val("step")
    + pp.Opt(L("/") + val("total_steps"))
    + L("]")
    + L(":"),
    kind="block_header",
    epoch_base=1,
    step_scope="epoch",
    item=COMPOSER_ITEM,
)

# ---- PyTorch Lightning RichProgressBar, as rich prints it without a terminal: the final frame of the
# training bar, its metrics column wrapped onto indented continuation lines.
# SRC Lightning-AI/pytorch-lightning@2.6.6 src/lightning/pytorch/callbacks/progress/rich_progress.py:
# _get_train_description f"Epoch {current_epoch}" + f"/{max_epochs - 1}"; BatchesProcessedColumn f"{completed}/{total}";
# CustomTimeColumn f"{elapsed_delta} • {remaining_delta}" (str(timedelta)); ProcessingSpeedColumn f"{speed:>.2f}it/s";
# MetricsTextColumn f"{name}: {value:.3f}" joined by " ".
_RICH_METRIC = pair(pp.Regex(r"[A-Za-z_][\w./-]*"), ":", NUM)
LIGHTNING_RICH_ITEM = Dialect(
    name="lightning_rich",
    source="Lightning-AI/pytorch-lightning@2.6.6:src/lightning/pytorch/callbacks/progress/rich_progress.py MetricsTextColumn",
    guard=Guard(": ", starts="  "),
    grammar=pp.OneOrMore(_RICH_METRIC),
    keys={"v_num": ("skip",)},
    kind="block_item",
)
LIGHTNING_RICH = Dialect(
    name="lightning_rich",
    source="Lightning-AI/pytorch-lightning@2.6.6:src/lightning/pytorch/callbacks/progress/rich_progress.py (_get_train_description, BatchesProcessedColumn, CustomTimeColumn, ProcessingSpeedColumn, MetricsTextColumn)",
    guard=Guard("Epoch", "it/s"),
    grammar=K("Epoch")
    + val("epoch")
    + pp.Opt(L("/") + val("_last_epoch"))
    + R("[\u2501\u2578\u257a ]*")
    + val("step")
    + L("/")
    + (val("total_steps") | L("--"))
    + (val("_elapsed", CLOCK) | R(r"-:--:--"))
    + L("\u2022")
    + (val("_remaining", CLOCK) | R(r"-:--:--"))
    + (NUM + pp.Literal("it/s").leave_whitespace()).set_parse_action(lambda t: Value("_rate", t[0].start, t[0].end, t[1]))
    + pp.ZeroOrMore(_RICH_METRIC),
    keys={"v_num": ("skip",)},
    kind="block_header",
    epoch_base=0,
    step_scope="epoch",
    item=LIGHTNING_RICH_ITEM,
)


# ---- generic key/value lines of plain training loops
# `epoch 1/3 step 10/50 loss 2.31`, `Epoch [1/10], Step [100/500], Loss: 2.3012`, `step=10 loss=2.31 lr=1e-4`,
# `step: 10 | loss: 2.31`, nanoGPT's `iter 100: loss 2.3456, time 45.67ms, mfu 12.34%`.
# A line is a step only if the whole rest of the line is key/value pairs, one key names a
# step (STEP_KEYS) with an integer, and at least one other pair is a metric.
# keys of up to three words ("train loss"), never starting with a logger's level name
_G_KEY = pp.Regex(
    r"(?!(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL|NOTICE|TRACE)\b)[A-Za-z_][\w./-]*"
    r"(?: (?!(?:nan|inf|NAN|INF|NaN|Inf)\b)[A-Za-z_][\w./-]*){0,2}(?<![./-])"
)
_G_RATIO = (NUM + L("/") + NUM).set_parse_action(lambda t: [_Span(t[0].start, t[0].end, ""), _Span(t[1].start, t[1].end, "/")])
_G_VALUE = (L("[") + _G_RATIO + L("]")) | _G_RATIO | NUM_UNIT


def _g_pair(t: pp.ParseResults) -> list[Value]:
    key = str(t[0]).strip()
    out = [Value(key, t[1].start, t[1].end, t[1].unit)]
    if len(t) > 2:
        out.append(Value(key + "/", t[2].start, t[2].end))
    return out


# pyparsing skips blanks between elements, so separators are optional punctuation
_G_PAIR = (_G_KEY + pp.Opt(R(r"[:=]")) + _G_VALUE).set_parse_action(_g_pair)
_G_SEP = pp.Opt(R(r"[,|;:]|-(?=\s)"))
_G_LIST = (_G_PAIR + pp.ZeroOrMore(_G_SEP + _G_PAIR) + pp.Opt(R(r"[.,;|]")) + pp.StringEnd()).parse_with_tabs()
# where a key/value list may begin: start of line or after a non-word character
_G_STARTS = re.compile(r"(?:^|(?<=[^\w./-]))[A-Za-z_]")


# What a key/value list can be made of (keys, numbers and units, ratios, brackets, separators, blanks):
# a superset of every character _G_LIST consumes. Since _G_LIST must reach the end of the segment, a
# start before the last character outside this set can never match, so only the tail after it is
# tried: a 5 KB JSON log line ending in "}" costs one reversed scan instead of a parse per word.
_G_TAIL_CLASS = r"[\w\s./\-:=\[\]+,%;|]"
_G_TAIL = re.compile(_G_TAIL_CLASS + "*").match
# a segment whose last character is outside that set has an empty tail: no key/value list
_G_TAIL_LAST = re.compile(_G_TAIL_CLASS).fullmatch


def _generic_values(seg: str) -> list[Value] | None:
    tail = len(seg) - _G_TAIL(seg[::-1]).end()
    for m in _G_STARTS.finditer(seg, tail):
        pos = m.start()
        try:
            toks = _G_LIST.parse_string(seg[pos:])
        except pp.ParseBaseException:
            continue
        return [Value(v.key, v.start + pos, v.end + pos, v.unit) for v in toks if isinstance(v, Value)]
    return None


# a step word followed by its number: without one, no line is worth a generic parse
_G_GUARD = re.compile(r"(?i)\b(?:step|iter|iteration|global_step|batch|train_step|optimizer_step)\b\W{0,3}\d").search


def _generic_guard(s: str) -> bool:
    """A step word and its number, in a segment with a tail to read: where the last character cannot
    end a key/value list (a JSON log line's "}"), _generic_values reads nothing whatever the step
    word, so the search for it (~9 us on a 2 KB line) is not made."""
    return bool(s) and _G_TAIL_LAST(s[-1]) is not None and _G_GUARD(s) is not None


GENERIC = Dialect(
    name="generic",
    source="plain PyTorch loops (print/logging of key/value pairs); forms listed in parsers/dialects.py",
    guard=Guard(where=_generic_guard),
    parse=_generic_values,
    step_scope="auto",
    eval_lines=True,  # nanoGPT's "step N: train loss X, val loss Y" is its evaluation
)

# ---- fairseq JsonProgressBar (--log-format json): the stats dict as JSON after the logger's prefix
# SRC facebookresearch/fairseq fairseq/logging/progress_bar.py JsonProgressBar.log (json.dumps of
# _format_stats: values as strings), logger "%(asctime)s | %(levelname)s | %(name)s | %(message)s"
FAIRSEQ_JSON = Dialect(
    name="fairseq",
    source="facebookresearch/fairseq:fairseq/logging/progress_bar.py JsonProgressBar.log, _format_stats",
    guard=Guard('"num_updates"', "{"),
    grammar=R(r"[^{]*") + L("{") + pp.DelimitedList(_HF_ITEM, ",") + L("}"),
    keys={"num_updates": ("step",), "update": ("metric",)},
    epoch_base=1,
)

# ---- torchtune recipes: a tqdm bar over the epoch's batches whose description carries the global step
# SRC pytorch/torchtune recipes/full_finetune_distributed.py (and the other recipes) train():
# pbar.set_description(f"{curr_epoch + 1}|{self.global_step}|Loss: {loss_to_log}")
TORCHTUNE = Dialect(
    name="torchtune",
    source="pytorch/torchtune:recipes/full_finetune_distributed.py train (pbar.set_description)",
    guard=Guard("|Loss: "),
    grammar=val("epoch") + L("|") + val("step") + L("|") + L("Loss:") + val("loss") + L(":")
    + R(r"\d{1,3}%") + R(r"\|[^|]*\|") + val("epoch_step") + L("/") + (val("epoch_steps") | L("?"))
    + _TIMES + _RATE + _POSTFIX + L("]"),
    kind="bar",
    epoch_base=1,
)

# ---- MLX-LM LoRA / fine-tuning: "Iter N: Train loss ..., Learning Rate ..., It/sec ..., Tokens/sec ..."
# SRC ml-explore/mlx-lm mlx_lm/tuner/trainer.py train: f"Iter {it}: Train loss {train_loss:.3f}, Learning Rate {learning_rate:.3e},
# It/sec {it_sec:.3f}, Tokens/sec {tokens_sec:.3f}, Trained Tokens {trained_tokens}, Peak mem {peak_mem:.3f} GB";
# f"Iter {it}: Val loss {val_loss:.3f}, Val took {val_time:.3f}s" (an eval line); ml-explore/mlx-examples lora/lora.py (older).
_MLX_ITEM = (pp.Regex(r"[A-Za-z][\w/]*(?: [A-Za-z][\w/]*)*(?= [-+\d.])") + NUM_UNIT + pp.Opt(R(r"GB\b"))).set_parse_action(
    lambda t: Value(str(t[0]), t[1].start, t[1].end, t[1].unit)
)
MLX_LM = Dialect(
    name="mlx_lm",
    source="ml-explore/mlx-lm:mlx_lm/tuner/trainer.py train; ml-explore/mlx-examples:lora/lora.py train",
    guard=Guard(starts="Iter "),
    grammar=K("Iter") + val("step") + L(":") + pp.DelimitedList(_MLX_ITEM, ","),
    eval_lines=True,
)

# ---- MaxText: "completed step: N, seconds: ..., TFLOP/s/device: ..., Tokens/s/device: ..., total_weights: ..., loss: ..."
# SRC AI-Hypercomputer/maxtext MaxText/metric_logger.py (and train.py of older releases) max_logging.log(f"completed step: {step}, seconds: ...")
MAXTEXT = Dialect(
    name="maxtext",
    source="AI-Hypercomputer/maxtext:MaxText/metric_logger.py MetricLogger.log_metrics (train.py record_scalar_metrics in older releases)",
    guard=Guard("completed step: "),
    grammar=pp.Opt(R(r".*?(?=completed step: )")) + L("completed step:") + val("step")
    + pp.ZeroOrMore(L(",") + pair(pp.Regex(r"[A-Za-z_][\w/]*"), ":", NUM)),
    keys={"seconds": ("step_time_s", "s"), "Tokens/s/device": ("throughput", "tokens/s"), "TFLOP/s/device": ("metric",)},
)

# ---- LitGPT pretrain / finetune fit(): "Epoch 1 | iter 10 step 5 | loss train: 2.345, val: n/a | iter time: 123.45 ms (step) ..."
# SRC Lightning-AI/litgpt litgpt/pretrain.py fit (fabric.print of f"Epoch {metrics['epoch']+1} | iter {metrics['iter']} step {metrics['step']} |"
# f" loss train: {metrics['loss']:.3f}, val: {val_loss} | iter time: {metrics['iter_time'] * 1000:.2f} ms"); litgpt/finetune/*.py likewise.
# "iter" counts micro-batches, "step" optimizer steps; the "val" printed is the last evaluation's, not this step's.
LITGPT = Dialect(
    name="litgpt",
    source="Lightning-AI/litgpt:litgpt/pretrain.py fit; litgpt/finetune/lora.py fit",
    guard=Guard("| loss train: "),
    grammar=K("Epoch") + val("epoch") + L("|") + K("iter") + val("iter") + K("step") + val("step") + L("|")
    + L("loss train:") + val("loss") + L(",") + R(r"val: [^|]*") + L("|") + L("iter time:") + val("iter_time_ms") + L("ms") + R(r".*"),
    keys={"iter": ("metric",)},
)

# ---- YOLOX Trainer.after_iter (loguru "{time} | {level: <8} | {name}:{function}:{line} - {message}")
# SRC Megvii-BaseDetection/YOLOX yolox/core/trainer.py after_iter: "{}, {}, {}, {}, lr: {:.3e}".format(progress_str
# ("epoch: {}/{}, iter: {}/{}"), "mem: {:.0f}Mb", time_str ("iter_time: {:.3f}s, ..."), loss_str ("total_loss: {:.1f}, ...")) + ", size: {:d}, {}" (ETA)
YOLOX = Dialect(
    name="yolox",
    source="Megvii-BaseDetection/YOLOX:yolox/core/trainer.py Trainer.after_iter",
    guard=Guard("epoch: ", "iter: "),
    grammar=pp.Opt(R(r".*? - (?=epoch: )")) + L("epoch:") + val("epoch") + L("/") + val("total_epochs") + L(",")
    + L("iter:") + val("step") + L("/") + val("total_steps")
    + pp.ZeroOrMore(L(",") + (R(r"ETA: .*") | pair(pp.Regex(r"[A-Za-z_]\w*"), ":", NUM_UNIT))),
    keys={"total_loss": ("loss",)},
    epoch_base=1,
    step_scope="epoch",
)

# ---- OpenMMLab: MMEngine LogProcessor and MMCV 1.x TextLoggerHook (logger "%(asctime)s - %(name)s - %(levelname)s - %(message)s")
# SRC open-mmlab/mmengine mmengine/runner/log_processor.py get_log_after_iter: f"Epoch({mode}) [{cur_epoch}][{cur_iter:>{n}}/{dataloader_len}]  "
# or f"Iter({mode}) [{cur_iter:>{n}}/{max_iters}]  ", then f"{name}: {val:.4f}" joined by "  " (lr ".4e", "eta: {eta}");
# open-mmlab/mmcv@v1.7.0 mmcv/runner/hooks/logger/text.py TextLoggerHook._log_info: f"Epoch [{epoch}][{inner_iter}/{len}]\t" or
# f"Iter [{iter}/{max_iters}]\t", "lr: {:.3e}, ", "eta: {eta_str}, ", then ", ".join(f"{k}: {v:.4f}"). Val lines say Epoch(val) / Epoch(val) [1][500]: not training.
_MM_HEAD = (
    (L("Epoch(train)") | L("Epoch")) + L("[") + val("epoch") + L("]") + L("[") + val("step") + L("/") + val("total_steps") + L("]")
    | (L("Iter(train)") | L("Iter")) + L("[") + val("step") + L("/") + val("total_steps") + L("]")
)
_MM_ETA = L("eta:") + pp.Opt(R(r"\d+ days?,")) + val("_remaining", CLOCK)
MMENGINE = Dialect(
    name="mmengine",
    source="open-mmlab/mmengine:mmengine/runner/log_processor.py LogProcessor.get_log_after_iter; open-mmlab/mmcv@v1.7.0:mmcv/runner/hooks/logger/text.py TextLoggerHook._log_info",
    guard=Guard(("(train)", "Epoch [", "Iter [")),
    grammar=pp.Opt(R(r".*? - [A-Z]+ - ")) + _MM_HEAD
    + pp.ZeroOrMore(pp.Opt(L(",")) + (_MM_ETA | pair(pp.Regex(r"[A-Za-z_][\w/.]*"), ":", NUM))) + pp.Opt(L(",")),
    epoch_base=1,
    step_scope="epoch",
)

# ---- torchvision references MetricLogger.log_every (classification, detection, segmentation, video)
# SRC pytorch/vision references/classification/utils.py MetricLogger.log_every: header f"Epoch: [{epoch}]", "[{0:>N}/{1}]",
# "eta: {eta}", meters "{name}: {median:.4f} ({global_avg:.4f})" (lr: "{value}"), "time: {time}", "data: {data}", "max mem: {memory:.0f}";
# evaluation uses the header "Test:" (not training).
TORCHVISION = Dialect(
    name="torchvision",
    source="pytorch/vision:references/classification/utils.py MetricLogger.log_every, SmoothedValue; references/classification/train.py train_one_epoch",
    guard=Guard(starts="Epoch: ["),
    grammar=L("Epoch:") + L("[") + val("epoch") + L("]") + L("[") + val("step") + L("/") + val("total_steps") + L("]")
    + pp.ZeroOrMore(_MM_ETA | pair(pp.Regex(r"[A-Za-z_][\w/]*(?: mem)?"), ":", NUM) + pp.Opt(R(r"\([^)]*\)"))),
    epoch_base=0,
    step_scope="epoch",
)

# ---- timm train.py train_one_epoch
# SRC huggingface/pytorch-image-models train.py: f'Train: {epoch} [{update_idx:>4d}/{updates_per_epoch} ({100. * (update_idx + 1) / updates_per_epoch:>3.0f}%)]  '
# f'Loss: {loss_now:#.3g} ({loss_avg:#.3g})  Time: {update_time_m.val:.3f}s, {rate:>7.2f}/s  ({update_time_m.avg:.3f}s, {rate_avg:>7.2f}/s)  '
# f'LR: {lr:.3e}  Data: {data_time_m.val:.3f} ({data_time_m.avg:.3f})'; validate() prints "Test: [...]" (not training).
_PAREN = R(r"\([^)]*\)")
TIMM = Dialect(
    name="timm",
    source="huggingface/pytorch-image-models:train.py train_one_epoch",
    guard=Guard(starts="Train: "),
    grammar=L("Train:") + val("epoch") + L("[") + val("step") + L("/") + val("total_steps") + R(r"\(\s*\d+%\)") + L("]")
    + L("Loss:") + val("loss") + pp.Opt(_PAREN) + L("Time:") + val("time", NUM_UNIT) + L(",")
    + (NUM + L("/s")).set_parse_action(lambda t: Value("samples/s", t[0].start, t[0].end)) + pp.Opt(_PAREN)
    + L("LR:") + val("lr") + pp.Opt(L("Data:") + val("data_time") + pp.Opt(_PAREN)),
    epoch_base=0,
    step_scope="epoch",
)

# ---- Ultralytics YOLO (v8/11) and YOLOv5: the epoch's tqdm bar, its description a row of the column header
# SRC ultralytics/ultralytics ultralytics/engine/trainer.py BaseTrainer._do_train: pbar.set_description(("%11s" * 2 + "%11.4g" *
# (2 + loss_length)) % (f"{epoch + 1}/{self.epochs}", f"{self._get_memory():.3g}G", *losses, batch["cls"].shape[0], batch["img"].shape[-1]));
# progress_string() prints the header ("Epoch", "GPU_mem", *loss_names, "Instances", "Size"). ultralytics/yolov5 train.py: the same
# row with f"{epoch}/{epochs - 1}" (0-based) and "%11.4g" * 5. The loss is the sum of the printed parts (the objective the
# trainer backpropagates is their sum, times the batch size); the parts are metrics loss_part0.. in printed order.
def _yolo_values(t: pp.ParseResults) -> list[Value]:
    nums = [x for x in t if isinstance(x, _Span)]
    if len(nums) < 2:  # no instances and size: not a row ("4/2  0G  12,345.5.02 ..." raised ValueError here)
        raise pp.ParseException("", 0, "a YOLO row ends with its instances and size")
    *parts, instances, size = nums
    return [Value(f"loss_part{i}", p.start, p.end) for i, p in enumerate(parts)] + [
        Value("instances", instances.start, instances.end), Value("imgsz", size.start, size.end)]


def _yolo_loss(out: dict) -> None:
    metrics = out["metrics"]
    parts = [v for k, v in metrics.items() if k.startswith("loss_part")]
    if parts and out.get("loss") is None:
        out["loss"] = sum(parts)


# The column header the trainer logs before each epoch's bar names the parts: ultralytics
# ultralytics/models/yolo/detect/train.py DetectionTrainer.progress_string ("\n" + "%11s" * (4 + len(self.loss_names))) %
# ("Epoch", "GPU_mem", *self.loss_names, "Instances", "Size") with loss_names ("box_loss", "cls_loss", "dfl_loss") for detect,
# ("box_loss", "seg_loss", "cls_loss", "dfl_loss") segment, ("box_loss", "pose_loss", "kobj_loss", "cls_loss", "dfl_loss") pose,
# ("loss",) classify (its own progress_string), ("giou_loss", "cls_loss", "l1_loss") RT-DETR; ultralytics/yolov5 train.py
# ('\n' + '%11s' * 7) % ('Epoch', 'GPU_mem', 'box_loss', 'obj_loss', 'cls_loss', 'Instances', 'Size'); yolov5 up to v5.0 and
# WongKinYiu/yolov7 train.py ('\n' + '%10s' * 8) % ('Epoch', 'gpu_mem', 'box', 'obj', 'cls', 'total', 'labels', 'img_size'),
# whose bar prints the total as a fourth "part" ('%10s' * 2 + '%10.4g' * 6: mloss is box, obj, cls, total).
YOLO_HEADER = re.compile(
    r"\s*Epoch +(?:GPU_mem|gpu_mem) +((?:[A-Za-z_][\w()-]* +){1,12}?)(?:Instances|labels|targets) +(?:Size|img_size)\s*$")
# columns that are the loss itself, not a part of it
_YOLO_TOTALS = ("total", "loss")


def yolo_loss_names(seg: str) -> tuple[str, ...] | None:
    """The loss columns of an Ultralytics/YOLOv5/YOLOv7 epoch header, or None when `seg` is not one."""
    m = YOLO_HEADER.match(seg)
    return tuple(m.group(1).split()) if m is not None else None


def name_loss_parts(metrics: dict, loss, nonfinite: list, names: tuple[str, ...]) -> tuple[dict, object, list] | None:
    """(metrics, loss, nonfinite) of a bar whose loss_part0.. are named after the header its run printed, or None
    when the header has another number of columns. Where a column is the total ("total", or classification's single
    "loss"), that column is the loss rather than the sum of the parts."""
    if sum(k.startswith("loss_part") for k in metrics) + sum(n.startswith("loss_part") for n in nonfinite) != len(names):
        return None
    renamed = {f"loss_part{i}": name for i, name in enumerate(names)}
    total = next((f"loss_part{i}" for i, name in enumerate(names) if name in _YOLO_TOTALS), None)
    if total is not None:
        metrics = dict(metrics)
        loss = metrics.pop(total, None)
        nonfinite = [n for n in nonfinite if n not in ("loss", total)] + (["loss"] if loss is None else [])
    return {renamed.get(k, k): v for k, v in metrics.items()}, loss, [renamed.get(n, n) for n in nonfinite]


# Ultralytics 8.3.1xx+ draws its own bar (ultralytics/ultralytics@002363f134378804ac4fa9eb0f7f6357ee3629c1
# ultralytics/utils/tqdm.py TQDM._display: f"{self.desc}: {percent:.0f}% {bar} {n_str}/{t_str} {rate_str} {elapsed_str}{remaining_str}",
# bar 12 of "━", "─", "╸" (_generate_bar), rate f"{rate:.1f}{unit}/s" or scaled f"{rate / 1e3:.1f}K{unit}/s" ("" before any rate),
# times _format_time: f"{seconds:.1f}s", "m:ss", "h:mm:ss", remaining f"<{...}" while 0 < n < total; "\r\033[K" before each state,
# on stdout), the trainer's description as before.
_UL_TIME = CLOCK | (NUM + pp.Literal("s").leave_whitespace()).set_parse_action(lambda t: _Span(t[0].start, t[0].end, "s"))
_UL_RATE = (NUM + pp.Regex(r"[KMG]?it/s").leave_whitespace()).set_parse_action(
    lambda t: Value("_rate", t[0].start, t[0].end, t[1]))
_UL_OWN_BAR = (R(r"\d{1,3}%") + R("[\u2501\u2500\u2578]+") + val("step") + L("/") + val("total_steps")
               + pp.Opt(_UL_RATE) + val("_elapsed", _UL_TIME) + pp.Opt(L("<") + val("_remaining", _UL_TIME)))
ULTRALYTICS = Dialect(
    name="ultralytics",
    source="ultralytics/ultralytics:ultralytics/engine/trainer.py BaseTrainer._do_train (pbar.set_description), progress_string; "
    "ultralytics/utils/tqdm.py TQDM._display (8.3.1xx+); ultralytics/yolov5:train.py; WongKinYiu/yolov7:train.py",
    guard=Guard("G ", ("%|", "% \u2501", "% \u2500")),
    grammar=val("epoch") + L("/") + val("total_epochs") + val("gpu_mem_gb") + L("G")
    + pp.OneOrMore(NUM).set_parse_action(_yolo_values) + L(":")
    + (R(r"\d{1,3}%") + R(r"\|[^|]*\|") + val("step") + L("/") + val("total_steps") + _TIMES + _RATE + _POSTFIX + L("]")
       | _UL_OWN_BAR),
    kind="bar",
    step_scope="auto",  # ultralytics counts epochs from 1, yolov5 from 0 (StepParser._plain_global_step)
    post=_yolo_loss,
)

# ---- OLMo (allenai/OLMo) and OLMo-core: a progress marker, then one indented "name=value" line per metric (one log record)
# SRC allenai/OLMo olmo/train.py Trainer.log_metrics_to_console: log.info(f"{prefix}\n" + "\n".join(f"    {name}={format_float(value)}"))
# with prefix f"[step={self.global_step}/{self.max_steps}]" (other ranks log the prefix alone); format_float: "{int(v):,d}" above 1000.
# allenai/OLMo-core src/olmo_core/train/callbacks/console_logger.py ConsoleLoggerCallback: f"[step={step}/{max_steps},epoch={epoch},eta={eta}]".
OLMO_ITEM = Dialect(
    name="olmo",
    source="allenai/OLMo:olmo/train.py Trainer.log_metrics_to_console; allenai/OLMo-core:src/olmo_core/train/callbacks/console_logger.py",
    guard=Guard("=", starts="    "),
    grammar=pair(pp.Regex(r"[^=]+"), "=", NUM),
    keys={
        "train/CrossEntropyLoss": ("loss",),
        "train/CE loss": ("loss",),
        "optim/total_grad_norm": ("grad_norm",),
        "optim/total grad norm": ("grad_norm",),
        "optim/learning_rate_group0": ("learning_rate",),
        "optim/LR (group 0)": ("learning_rate",),
        "throughput/device/tokens_per_second": ("throughput", "tokens/s"),
        "throughput/device/TPS": ("throughput", "tokens/s"),
    },
    kind="block_item",
)
OLMO = Dialect(
    name="olmo",
    source="allenai/OLMo:olmo/train.py Trainer.log_metrics_to_console; allenai/OLMo-core:src/olmo_core/train/callbacks/console_logger.py ConsoleLoggerCallback._get_progress_marker",
    guard=Guard("[step=", where=lambda s: s.rstrip().endswith("]")),
    grammar=pp.Opt(R(r".*?(?=\[step=)")) + L("[step=") + val("step") + L("/") + (val("total_steps") | L("???"))
    + pp.Opt(L(",epoch=") + val("epoch")) + pp.Opt(R(r",eta=[^\]]*")) + L("]"),
    kind="block_header",
    item=OLMO_ITEM,
)

# ---- NVIDIA DLLogger StdOutBackend (DeepLearningExamples): "DLL {timestamp} - {step} {name} : {value} {unit} ..."
# SRC NVIDIA/dllogger dllogger/logger.py StdOutBackend.log ("{}{} {}".format(prefix_format(ts), step_format(step), " ".join(metrics)),
# default_prefix_format "DLL {} - ", default_metric_format "{} : {} {}" (unit from metadata)); NVIDIA/DeepLearningExamples
# PyTorch/LanguageModeling/BERT utils.py format_step ("Training Epoch: {} ", "Training Iteration: {} ", "Validation Iteration: {} ")
# and dllogger.log(step=(epoch, global_step), data={"step_loss": ..., "learning_rate": ...}). A line with a validation
# iteration is an evaluation (its key has a space: the metric grammar refuses it); step=() summaries have no iteration.
# A word after a value is its unit unless a colon follows it (then it is the next metric's name).
_DLL_ITEM = (pp.Regex(r"[A-Za-z_][\w./]*") + L(":") + NUM + pp.Opt(pp.Regex(r"[A-Za-z%]+(?:/[A-Za-z]+)?(?=\s|$)(?!\s*:)"))).set_parse_action(
    lambda t: Value(str(t[0]), t[1].start, t[1].end, t[2] if len(t) > 2 else "")
)
DLLOGGER = Dialect(
    name="dllogger",
    source="NVIDIA/dllogger:dllogger/logger.py StdOutBackend.log; NVIDIA/DeepLearningExamples:PyTorch/LanguageModeling/BERT/utils.py format_step",
    guard=Guard("Training Iteration: "),
    grammar=pp.Opt(R(r"DLL .*? - ")) + pp.Opt(L("Training Epoch:") + val("epoch")) + L("Training Iteration:") + val("step")
    + pp.OneOrMore(_DLL_ITEM),
    keys={"step_loss": ("loss",), "average_loss": ("metric",)},
    epoch_base=0,
)

# ---- Ray Train / Tune (Ray 2.x output engine): "Training finished iteration N at ...", then the reported metrics as a table
# SRC ray-project/ray python/ray/tune/experimental/output.py on_trial_result (print(f"{addressing} finished iteration
# {result[TRAINING_ITERATION]} at {curr_time_str}. Total running time: ...")), _print_result / _get_dict_as_table_data
# (floats f"{item:.5f}".rstrip("0")), AIR_TABULATE_TABLEFMT (rows "│ key  value │" between "╭─╮" / "├─┤" / "╰─╯").
# training_iteration counts ray.train.report() calls: the step of the record.
RAY_TRAIN_ITEM = Dialect(
    name="ray_train",
    source="ray-project/ray:python/ray/tune/experimental/output.py _print_result, AIR_TABULATE_TABLEFMT",
    guard=Guard(where=lambda s: s[:1] in "\u2502\u251c\u256d"),
    grammar=L("\u2502") + pair(pp.Regex(r"[A-Za-z_][\w./-]*"), pp.Empty(), NUM) + L("\u2502"),
    keys={"training_iteration": ("skip",), "time_this_iter_s": ("step_time_s", "s"), "time_total_s": ("metric",)},
    kind="block_item",
)
RAY_TRAIN = Dialect(
    name="ray_train",
    source="ray-project/ray:python/ray/tune/experimental/output.py on_trial_result, _print_result",
    guard=Guard(" finished iteration "),
    grammar=pp.Opt(R(r"Training|Trial \S+")) + L("finished iteration") + val("step") + R(r"at .*"),
    kind="block_header",
    item=RAY_TRAIN_ITEM,
)

# ---- PaddlePaddle high-level API (paddle.Model.fit): "Epoch 1/2", then "step  10/938 - loss: 0.5123 - acc: 0.8125 - 12ms/step"
# SRC PaddlePaddle/Paddle python/paddle/hapi/progressbar.py ProgressBar.update: verbose 2 (fit's default)
# (self.name + ' %' + str(numdigits) + 'd/%d') + ' - %s:' + ' %.4f' per value + ' - %.0fms/step'; verbose 1 adds
# ' [' + '='... + '>' + '.'... + ']' and ' - ETA: ...', redrawn with '\b' * width + '\r'; python/paddle/hapi/callbacks.py
# ProgBarLogger on_epoch_begin "Epoch %d/%d", on_eval_begin "Eval begin..." then the eval loader's bar (another total).
PADDLE = Dialect(
    name="paddle",
    source="PaddlePaddle/Paddle:python/paddle/hapi/progressbar.py ProgressBar.update; python/paddle/hapi/callbacks.py ProgBarLogger",
    guard=Guard(" - ", starts="step "),
    grammar=K("step") + val("step") + L("/") + val("total_steps") + pp.Opt(R(r"\[[=>.]*\]"))
    + pp.ZeroOrMore(L("-") + (pp.Literal("ETA:").suppress() + R(r"\S+") | _KERAS_TIME | pair(pp.Regex(r"[A-Za-z_][\w./-]*"), ":", NUM))),
    kind="bar",
    epoch_base=1,
    step_scope="epoch",
)


# ---- The plan of a Trainer run: how many optimizer steps and epochs (the logs dict never prints its step)
# SRC huggingface/transformers src/transformers/trainer.py _inner_training_loop: logger.info("***** Running training *****"),
# f"  Num Epochs = {num_train_epochs:,}", f"  Total optimization steps = {max_steps:,}" (INFO: printed where the script sets
# the verbosity, as the examples, TRL and LLaMA-Factory scripts do); unslothai/unsloth banner
# f"Num Epochs = {num_train_epochs:,} | Total steps = {max_steps:,}". Each gives a plan record (dialect TRAINER_PLAN) that
# TrainerLogFolder consumes to number the dicts as they come: never a step record of its own.
TRAINER_PLAN = "trainer_plan"
_PLAN_RE = re.compile(r"(?:Num Epochs = (\d[\d,]*)|[Tt]otal (?:optimization )?steps = (\d[\d,]*))")


def _plan_values(seg: str) -> list[Value] | None:
    out = []
    for m in _PLAN_RE.finditer(seg):
        if m.group(1) is not None:
            out.append(Value("total_epochs", m.start(1), m.end(1)))
        else:
            out.append(Value("total_steps", m.start(2), m.end(2)))
    return out or None


TRAINER_RUN = Dialect(
    name=TRAINER_PLAN,
    source="huggingface/transformers:src/transformers/trainer.py _inner_training_loop (Num Epochs, Total optimization steps); unslothai/unsloth banner",
    guard=Guard(("Num Epochs = ", "otal steps = ", "optimization steps = ")),
    parse=_plan_values,
    kind="plan",
)


# Most specific first: the first dialect whose grammar accepts a new shape owns it.
DIALECTS: tuple[Dialect, ...] = (
    FAIRSEQ_JSON,
    HF_TRAINER,
    LIGHTNING_VAL,
    LIGHTNING,
    TQDM_EPOCH,
    TORCHTUNE,
    ULTRALYTICS,
    TQDM,
    MEGATRON,
    DEEPSPEED,
    TORCHTITAN,
    NEMO,
    FAIRSEQ,
    COMPOSER_HEADER,
    LIGHTNING_RICH,
    MLX_LM,
    MAXTEXT,
    LITGPT,
    YOLOX,
    MMENGINE,
    TORCHVISION,
    TIMM,
    OLMO,
    DLLOGGER,
    RAY_TRAIN,
    PADDLE,
    TRAINER_RUN,
    EPOCH_HEADER,
    KERAS,
    GENERIC,
)

# facts the progress tracker needs, by dialect name
FACTS: dict[str, Dialect] = {}
for _d in DIALECTS:
    FACTS.setdefault(_d.name, _d)
FACTS["composer"] = COMPOSER_HEADER
FACTS["keras"] = KERAS
FACTS["lightning_rich"] = LIGHTNING_RICH
FACTS["olmo"] = OLMO
FACTS["ray_train"] = RAY_TRAIN


# --------------------------------------------------------------------------- fields

# Printed key (lower-cased) -> field. Dialects override per key (Dialect.keys).
FIELD_KEYS: dict[str, tuple] = {}
for _k in ("loss", "train_loss", "train/loss", "training_loss", "train loss", "training loss", "train_loss_step",
           "reduced_train_loss", "lm loss", "lm_loss", "loss/train", "trn_loss", "tr_loss", "avg_loss", "running_loss"):
    FIELD_KEYS[_k] = ("loss",)
for _k in ("lr", "learning_rate", "learning rate", "learning-rate", "train/lr", "train/learning_rate"):
    FIELD_KEYS[_k] = ("learning_rate",)
for _k in ("grad_norm", "grad norm", "gradnorm", "grad-norm", "gnorm", "train/grad_norm", "grad_norm_total", "global_grad_norm"):
    FIELD_KEYS[_k] = ("grad_norm",)
for _k, _u in (("tps", "tokens/s"), ("tok/s", "tokens/s"), ("tokens/s", "tokens/s"), ("tokens_per_sec", "tokens/s"),
               ("tokens_per_second", "tokens/s"), ("tokens/sec", "tokens/s"), ("tgs", "tokens/s"),
               ("samples/s", "samples/s"), ("samples_per_sec", "samples/s"), ("samples_per_second", "samples/s"),
               ("samples/sec", "samples/s"), ("sps", "samples/s"), ("imgs/s", "samples/s"), ("img/s", "samples/s"),
               ("it/s", "it/s"), ("its", "it/s"), ("wps", "words/s"), ("ups", "updates/s"),
               # axolotl's AxolotlTrainer.log (per GPU)
               ("tokens/train_per_sec_per_gpu", "tokens/s"), ("tokens_per_second_per_gpu", "tokens/s")):
    FIELD_KEYS[_k] = ("throughput", _u)
for _k in ("time", "step_time", "step time", "iter_time", "batch_time", "dt", "time/step", "time_per_step", "step_time_s",
           "elapsed_time_per_step"):
    FIELD_KEYS[_k] = ("step_time_s", None)

# words that name the step in plain loops; "batch" also counts data-loader batches, so it
# names a step only on a line that has a loss
STEP_KEYS = frozenset({"step", "iter", "iteration", "global_step", "global step", "train_step", "optimizer_step", "batch"})
_WEAK_STEP_KEYS = frozenset({"batch"})
EPOCH_KEYS = frozenset({"epoch", "ep"})
# A key containing one of these words makes a line prose rather than a step line.
_PROSE_WORDS = frozenset({"of", "in", "at", "to", "for", "from", "with", "by", "and", "or", "is", "was", "are", "the", "a", "an", "on", "after", "before", "every", "until", "than"})
# seconds from a duration in a unit (divided, so that 52 ms is 0.052 s exactly as printed)
_PER_SECOND = {"s": 1.0, "sec": 1.0, "ms": 1e3, "us": 1e6, "\u00b5s": 1e6, "min": 1 / 60, "h": 1 / 3600}
_NOT_TRAINING_LOSS = ("val", "eval", "test", "scale", "aux", "z_loss", "balanc", "part")


def to_float(text: str) -> float:
    return float(text.replace(",", ""))


def _integer(text: str) -> int:
    """An integer as printed ("7,512" included); "18.25" is not a step number."""
    t = text.replace(",", "")
    if not t.isdigit():
        raise ValueError(text)
    return int(t)


def clock_seconds(text: str) -> float:
    if len(text) == 5 and text[2] == ":" and text[0] != "-":
        # "01:23", the commonest (tqdm's elapsed and remaining, two on every bar state): the same
        # number as the loop below, and the same ValueError for a part int() refuses
        return float(int(text[:2]) * 60 + int(text[3:]))
    return _clock_parts(text)


def _clock_parts(text: str) -> float:
    """A clock of any number of parts ("1:52:09", "-0:05")."""
    sign = -1.0 if text.startswith("-") else 1.0
    total = 0
    for part in text.lstrip("-").split(":"):
        total = total * 60 + int(part)
    return sign * total


def metric_name(key: str) -> str:
    # dots would become object paths in OpenSearch
    return key.strip().replace(".", "_")


def _target(dialect: Dialect, key: str, unit: str) -> tuple:
    t = dialect.keys.get(key)
    if t is not None:
        return t
    low = key.lower()
    t = FIELD_KEYS.get(low)
    if t is not None:
        return t
    last = low.rsplit(" ", 1)[-1]  # "Train lr-DecoupledSGDW/group0" (Composer's "Train " prefix)
    if last.startswith("lr-") or last.startswith("lr/"):
        return ("learning_rate",)
    if unit and "/s" in unit and unit != "/s":
        return ("throughput", unit)
    return ("metric",)


Op = tuple  # (operation, name, argument)
Plan = tuple  # (ops, has clocks)

def make_plan(d: Dialect, keys: tuple[tuple[str, str], ...]):
    """What to do with each value of a line of these keys (and units): all decided by the keys.

    Returns None when the keys alone say the line is not a step (prose in a key).
    """
    ops: list[Op] = []
    assigned: set[str] = set()
    loss_like: list[int] = []
    clocks = False
    weak_step = False
    plain = d is GENERIC or d is KERAS

    def field_or_metric(field: str, key: str, op: Op) -> Op:
        if field in assigned:
            return ("metric", metric_name(key), None)
        assigned.add(field)
        return op

    for key, unit in keys:
        if key in ("step", "total_steps", "total_epochs"):
            ops.append(field_or_metric(key, key, ("int", key, None)))
            continue
        if key == "epoch":
            ops.append(field_or_metric(key, key, ("epoch", "epoch", None)))
            continue
        if key == "_last_epoch":  # Rich prints "Epoch 2/2" for the last of three epochs
            ops.append(("last_epoch", "total_epochs", None))
            continue
        if key == "_rate":
            if unit.endswith("/epoch"):  # Keras 2 verbose=2 "2s/epoch": the epoch's time, not a step's
                ops.append(("skip", key, None))
            elif unit[:1] in "KMG" and unit[1:] == "it/s":  # Ultralytics' own bar scales its rate: "1.2Kit/s"
                ops.extend(_scaled([[("tput", "throughput", "it/s")]], _SI[unit[0]]))
            elif unit.startswith("s/") or "s/" in unit[:3]:
                u = unit.split("/")[0]
                ops.append(field_or_metric("step_time_s", "rate", ("step_time", "step_time_s", _PER_SECOND.get(u, 1.0))))
            else:
                ops.append(field_or_metric("throughput", "rate", ("tput", "throughput", unit)))
            continue
        if key in ("_elapsed", "_remaining", "_clock", "_duration"):
            clocks = True
            if unit == "clock":
                ops.append(("clock", key, None))
            else:
                ops.append(("duration", key, _PER_SECOND.get(unit, 1.0)))
            continue
        low = key.lower()
        if d.eval_lines and _EVAL_KEY(low):
            return None
        if unit in _SI and "mem" not in low:  # "1.07M", "134K" (nanotron human_format): the value scaled, whatever field it goes to
            ops.extend(_scaled(make_plan(d, ((key, ""),)), _SI[unit]))
            continue
        if plain:
            base = low[:-1] if low.endswith("/") else low
            if not _PROSE_WORDS.isdisjoint(base.split(" ")):
                return None
            if base in STEP_KEYS or base in EPOCH_KEYS or base.rsplit(" ", 1)[-1] in EPOCH_KEYS:
                if base in STEP_KEYS:
                    name = "total_steps" if low.endswith("/") else "step"
                    if name == "step" and name not in assigned and base in _WEAK_STEP_KEYS:
                        weak_step = True
                else:
                    name = "total_epochs" if low.endswith("/") else "epoch"
                if name not in assigned:
                    assigned.add(name)
                    ops.append(("epoch" if name == "epoch" else "int", name, None))
                    continue
            if low.endswith("/"):
                ops.append(("metric", metric_name(key[:-1]) + "_total", None))
                continue
        t = _target(d, key, unit)
        f = t[0]
        if f == "skip":
            ops.append(("skip", key, None))
        elif f == "step":
            ops.append(field_or_metric("step", key, ("int", "step", None)))
        elif f == "step_time_s":
            u = t[1] or unit or "s"
            if u not in _PER_SECOND:  # a "time" with a unit that is not a duration
                ops.append(("metric", metric_name(key), None))
            else:
                ops.append(field_or_metric("step_time_s", key, ("step_time", "step_time_s", _PER_SECOND[u])))
        elif f == "throughput":
            ops.append(field_or_metric("throughput", key, ("tput", "throughput", t[1])))
        elif f in ("loss", "learning_rate", "grad_norm"):
            ops.append(field_or_metric(f, key, ("field", f, None)))
        elif f == "metric_unit" and unit:
            ops.append(("metric", metric_name(f"{key}_{unit}".lower()), None))
        else:
            if "loss" in low and not any(w in low for w in _NOT_TRAINING_LOSS):
                loss_like.append(len(ops))
            ops.append(("metric", metric_name(key), None))
    if "loss" not in assigned and loss_like:
        # a key that is plainly the training loss ("train_loss_epoch", "loss_avg")
        ops[loss_like[0]] = ("field", "loss", None)
        assigned.add("loss")
    if weak_step and "loss" not in assigned:
        return None
    return (tuple(ops), clocks)


# A key of an evaluation: a line of a step dialect carrying one is an eval / validation / test line (nanoGPT's
# "step N: train loss X, val loss Y", MLX-LM's "Iter N: Val loss", the Trainer's eval dict), never a training step.
# Only for dialects that say so (`Dialect.eval_lines`): NeMo's ProgressPrinter, Lightning's and Keras' training bars
# carry the last val_* metrics along on their training lines.
_EVAL_KEY = re.compile(r"(?:val|valid|validation|eval|evaluation|test)(?:[ _/.-]|$)").match
# SI suffixes glued to a number (not on memory: detectron2's "max_mem: 1000M" is megabytes and stays as printed)
_SI = {"K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "B": 1e9}


def _scaled(plan, factor: float) -> list:
    """The ops of a one-key plan, their value multiplied by `factor` (a metric if the key says nothing)."""
    if plan is None:
        return [("skip", "", None)]
    out = []
    for op, name, arg in plan[0]:
        if op in ("field", "metric", "tput"):
            out.append(("scaled_" + op, name, (arg, factor)))
        elif op == "step_time":
            out.append(("step_time", name, arg / factor))
        else:
            out.append((op, name, arg))
    return out


def _epoch_value(text: str) -> int | float:
    return float(text) if "." in text else int(text)


def _divided(by: float):
    return lambda text: float(text) / by


def _times(by: float):
    return lambda text: float(text) * by


def _plus_one(text: str) -> int:
    return int(text) + 1


class CompiledPlan(NamedTuple):
    """A plan as the hot path runs it: per value (into metrics?, name, converter)."""

    fixed: dict  # fields every line of the plan has (dialect, throughput unit)
    ops: tuple
    clocks: bool
    measures: bool  # a line of the plan carries a measurement (see is_step)
    # apply_plan(dialect, this plan, texts) for texts without thousands separators, written out (plan_reader)
    read: Callable[[Sequence[str]], dict | None] | None = None


def compile_plan(d: Dialect, plan: Plan) -> CompiledPlan:
    ops, clocks = plan
    fixed: dict = {"dialect": d.name}
    out = []
    for op, name, arg in ops:
        if op == "skip":
            out.append((True, None, None))
        elif op in ("metric", "field"):
            out.append((op == "metric", name, float))
        elif op in ("scaled_metric", "scaled_field"):
            out.append((op == "scaled_metric", name, _times(arg[1])))
        elif op == "scaled_tput":
            fixed["throughput_unit"] = arg[0]
            out.append((False, "throughput", _times(arg[1])))
        elif op == "int":
            out.append((False, name, int))  # int("18.25") fails: not a step number
        elif op == "epoch":
            out.append((False, name, _epoch_value))
        elif op == "tput":
            fixed["throughput_unit"] = arg
            out.append((False, "throughput", float))
        elif op == "step_time":
            out.append((False, "step_time_s", _divided(arg)))
        elif op == "clock":
            out.append((True, name, clock_seconds))
        elif op == "duration":
            out.append((True, name, _divided(arg)))
        elif op == "last_epoch":
            out.append((False, name, _plus_one))
    measures = any(
        name in _MEASUREMENTS if not into_metrics else name not in _CLOCK_METRICS
        for into_metrics, name, conv in out
        if conv is not None
    )
    return CompiledPlan(fixed, tuple(out), clocks, measures, plan_reader(d, fixed, tuple(out), clocks, measures))


def plan_reader(d: Dialect, fixed: dict, ops: tuple, clocks: bool, measures: bool) -> Callable[[Sequence[str]], dict | None]:
    """`apply_plan(d, plan, texts)` of the plan made of these parts, for texts that hold no thousands
    separator (a layout's texts with their commas taken off: see ShapeCache.fields): the fields
    are one dict display and the metrics another, each value its converter on its text, written
    out and compiled once per plan (as redact_fields.known_clean_check and dataclasses' __init__
    are). apply_plan's loop over the ops, a zip and a branch per value, cost a Megatron line
    (11 values) more than its conversions. The same dicts in the same key order: the fixed
    fields, then the fields in the ops' order, then the metrics in the ops' order (a name given
    twice keeps its first place and its last value, as assignment in a loop does); a text a
    converter refuses (ValueError, OverflowError) reads as no step (None), as in apply_plan."""
    scope: dict = {"bar_clocks": _bar_clocks, "post": d.post, "numbered": _numbered, "d": d}
    fields, metrics = [], []
    for i, (key, value) in enumerate(fixed.items()):
        scope[f"f{i}"] = value
        fields.append(f"{key!r}: f{i}")
    for i, (into_metrics, name, conv) in enumerate(ops):
        if conv is None:
            continue
        scope[f"c{i}"] = conv
        (metrics if into_metrics else fields).append(f"{name!r}: c{i}(t[{i}])")
    lines = ["def read(t):",
             "    try:",
             f"        out = {{{', '.join(fields)}}}",
             f"        metrics = {{{', '.join(metrics)}}}",
             "    except (ValueError, OverflowError):",
             "        return None"]
    if clocks:
        lines.append("    bar_clocks(out, metrics)")
    lines.append("    out['metrics'] = metrics")
    if d.post is not None:
        lines.append("    post(out)")
    if d.kind in ("step", "bar"):
        lines.append("    if not numbered(out.get('step'), d): return None" if measures else "    return None")
    lines.append("    return out")
    exec("\n".join(lines), scope)  # noqa: S102 -- the source is made above from the plan's names (as literals) only
    return scope["read"]


def apply_plan(d: Dialect, plan: CompiledPlan, texts: list[str], nonfinite: bool = False) -> dict | None:
    """StepRecord fields from the texts of a line's values, or None when it is not a step."""
    out = dict(plan.fixed)
    metrics: dict[str, float] = {}
    try:
        for (into_metrics, name, conv), text in zip(plan.ops, texts):
            if conv is not None:
                (metrics if into_metrics else out)[name] = conv(text)
    except (ValueError, OverflowError):
        if not any("," in t for t in texts):
            return None
        # thousands separators ("7,512"): read without them (see Reading.commas)
        return apply_plan(d, plan, [t.replace(",", "") for t in texts], nonfinite)
    if plan.clocks:
        _bar_clocks(out, metrics)
    out["metrics"] = metrics
    if d.post is not None:
        d.post(out)
    if nonfinite:
        _take_nonfinite(out)
    if d.kind in ("step", "bar") and not (plan.measures and _numbered(out.get("step"), d)):
        return None
    return out


# fields a printed NaN/Inf is taken out of (SPEC rev. 2: the field null, its name in `nonfinite`)
_FLOAT_FIELDS = ("loss", "learning_rate", "grad_norm", "throughput", "step_time_s", "epoch")


def _take_nonfinite(out: dict) -> None:
    """NaN/Inf values out of a step's fields and metrics, their names into out["nonfinite"]."""
    names = [f for f in _FLOAT_FIELDS if isinstance(out.get(f), float) and not math.isfinite(out[f])]
    for f in names:
        out[f] = None
    metrics = out["metrics"]
    for k in [k for k, v in metrics.items() if not math.isfinite(v)]:
        del metrics[k]
        names.append(k)
    if names:
        out["nonfinite"] = names


def merge_nonfinite(into: dict, fields: dict) -> None:
    """After `fields` (a later line of the same step) merged into `into`: a name stays non-finite
    only while no line gave it a number."""
    names = list(dict.fromkeys((into.get("nonfinite") or []) + (fields.get("nonfinite") or [])))
    kept = [n for n in names if into.get(n) is None and n not in into["metrics"]]
    if kept:
        into["nonfinite"] = kept
    else:
        into.pop("nonfinite", None)


_NOT_METRICS = frozenset({"elapsed_s", "eta_s"})
_MEASUREMENTS = ("loss", "learning_rate", "grad_norm", "throughput", "step_time_s")
# metrics a bar's clocks become (_bar_clocks): times, not measurements
_CLOCK_METRICS = frozenset({"_elapsed", "_remaining", "_clock", "_duration"}) | _NOT_METRICS


def _numbered(step, d: Dialect) -> bool:
    """The step-number half of `is_step`."""
    if step is None:
        return d is HF_TRAINER
    return step > 0 or (step == 0 and d.kind != "bar")


def is_step(out: dict, d: Dialect) -> bool:
    """A step needs a step number (the Trainer's dict excepted: it never prints one) and a measurement.

    A bar at 0 has done no step yet (its reset at an epoch start is drawn with the rate of the last epoch).
    """
    if not _numbered(out.get("step"), d):
        return False
    for f in _MEASUREMENTS:
        if out.get(f) is not None:
            return True
    return any(k not in _NOT_METRICS for k in out["metrics"])


def _bar_clocks(out: dict, metrics: dict) -> None:
    """Bars print elapsed and remaining time; keep them as metrics with plain names."""
    if "_elapsed" in metrics:
        metrics["elapsed_s"] = metrics.pop("_elapsed")
    if "_remaining" in metrics:
        metrics["eta_s"] = metrics.pop("_remaining")
    # Keras prints the ETA while the epoch runs and the elapsed time on its final update
    for k in ("_clock", "_duration"):
        if k in metrics:
            v = metrics.pop(k)
            total = out.get("total_steps")
            if total is not None and out.get("step") is not None and out["step"] < total:
                metrics["eta_s"] = v
            else:
                metrics["elapsed_s"] = v


# --------------------------------------------------------------------------- the shape cache


class Template(NamedTuple):
    dialect: Dialect
    spans: tuple[tuple[int, int], ...]  # per value: first and last number token
    plan: CompiledPlan | None  # None: the keys say it is not a step


class Reading(NamedTuple):
    """What a dialect read from one segment: its plan, the text of each value, whether one of
    them is a NaN/Inf (a property of the layout: only those texts have letters), and whether one
    holds a thousands separator ("tps: 32,454": a property of the layout too)."""

    dialect: Dialect
    plan: CompiledPlan | None
    texts: list[str]
    nonfinite: bool = False
    commas: bool = False


def _has_nonfinite(texts) -> bool:
    joined = "".join(texts)
    return "n" in joined or "N" in joined  # nan, inf, NAN, INF: no other number text has an n


def _has_commas(texts) -> bool:
    return any("," in t for t in texts)


def build(reading: Reading) -> dict | None:
    """StepRecord fields from a reading, or None when it is not a step."""
    if reading.plan is None:
        return None
    if reading.commas:
        # apply_plan would read these texts without their commas after its converters refused
        # them (each refuses a ","): an exception per line; read so at once, the same fields
        return apply_plan(reading.dialect, reading.plan, [t.replace(",", "") for t in reading.texts], reading.nonfinite)
    return apply_plan(reading.dialect, reading.plan, reading.texts, reading.nonfinite)


class ShapeCache:
    """Shape -> Template (or a remembered miss). Bounded: cleared when full.

    Two levels. A segment's *layout* is its UTF-8 bytes with every digit made a 0: two
    segments with one layout tokenize alike (number tokens are told apart by character
    classes, never by which digit), so a layout seen before gives each value's text by
    slicing at remembered offsets, with no tokenizing at all. A new layout is first tested
    against the dialects' guards: where none holds, no dialect reads the segment (a JSON log
    line holding a step key, prose with "step 3" in it), whatever its shape, and it is not
    tokenized. Else it is tokenized and its *shape* (the text between numbers, padding
    squeezed) looked up; pyparsing runs only for a shape never seen.

    Guards are judged per layout, not per shape, because two segments of one shape can differ
    on a guard ("step:    12" and "step:  1234": the generic guard allows three characters
    between the word and its number): a shape remembered as read by nothing because the
    first of its segments failed every guard would have hidden the later ones that pass.
    A guard's verdict is its segment's layout's (no guard tells one digit from another), so a
    long segment (`GUARDS_FIRST_BYTES`) has its guards tested before its layout is made: where
    none holds (a JSON log line with a "step" key: the commonest long segment), no layout of
    its could have been remembered as read, and it is not made (a translate and a hash of
    every byte, ~2/3 of the cost of such a line) nor kept.
    """

    def __init__(self, dialects: tuple[Dialect, ...] = DIALECTS, max_shapes: int = 20000):
        self.dialects = dialects
        self.max_shapes = max_shapes
        self._layouts: dict[bytes, tuple | None] = {}  # layout -> (dialect, plan, value offsets) or a miss
        self._shapes: dict[str, Template | None] = {}
        self._plans: dict[tuple, Plan | None] = {}
        self._guards = GuardScan(dialects)
        self.parses = 0  # pyparsing runs, for tests and benchmarks

    def read(self, seg: str, only: tuple[Dialect, ...] | None = None) -> Reading | None:
        if only is not None:
            return self._read_shape(seg, None, only)
        layout, known = self._layout_of(seg)
        if known is None:
            return None
        if known is not _UNSEEN:  # (a Reading without the Python frame of a NamedTuple's __new__)
            d, plan, pick, nonfinite, commas, _fields = known
            return _new_tuple(Reading, (d, plan, pick(seg), nonfinite, commas))
        return self._read_new(seg, layout)

    def fields(self, seg: str) -> tuple[Dialect, dict | None] | None:
        """What a step parser wants of a segment: `(reading.dialect, build(reading))` for
        `reading = self.read(seg)`, or None where that is None. A layout seen before is read in
        one step, its values sliced out and converted by its plan's written-out reader
        (`plan_reader`), without the Reading in between."""
        return self.fields_of(seg, *self._layout_of(seg))

    def fields_of(self, seg: str, layout: bytes, known) -> tuple[Dialect, dict | None] | None:
        """`fields(seg)` where `_layout_of(seg)` gave (`layout`, `known`)."""
        if known is None:
            return None
        if known is not _UNSEEN:
            return known[5](seg)
        reading = self._read_new(seg, layout)
        return None if reading is None else (reading.dialect, build(reading))

    def _layout_of(self, seg: str) -> tuple[bytes | None, tuple | None]:
        """(the segment's layout, what is known of it: a layout's entry, _UNSEEN, or None for a
        miss). A long segment no dialect's guard holds on is a miss without its layout made."""
        data = seg.encode("utf-8", "surrogatepass")
        if len(data) >= GUARDS_FIRST_BYTES and self._read_by_nothing(seg, data):
            return None, None
        layout = data.translate(_DIGITS_TO_ZERO)
        return layout, self._layouts.get(layout, _UNSEEN)

    def _read_by_nothing(self, seg: str, data: bytes) -> bool:
        """No dialect's guard holds on the segment (`data`: its UTF-8 bytes)."""
        return next(self._guards.passing(seg, data), None) is None

    def _read_new(self, seg: str, layout: bytes) -> Reading | None:
        """`read` of a segment whose layout (`layout`) is not remembered."""
        guarded = self._guards.passing(seg, layout if self._guards.layout_safe else None)
        first = next(guarded, None)
        if first is None:  # no dialect's guard holds: none reads it, whatever its shape
            self._remember(layout, None)
            return None
        return self._read_shape(seg, layout, itertools.chain((first,), guarded))

    def _read_shape(self, seg: str, layout: bytes | None, dialects) -> Reading | None:
        """`read` by the segment's shape: `dialects` those whose guard holds, in table order, and
        `layout` its layout; or (`layout` None) `dialects` the `only` of a block's item lines."""
        only = dialects if layout is None else None
        # text, number, text, number, ..., text
        if _NAN_VALUE(seg):
            parts = _NUMBER_SPLIT(seg)
        elif only is None and len(seg) >= _SPARSE_MIN_CHARS and seg.isascii() and layout.count(b"0") * 16 < len(seg):
            parts = _split_sparse(seg, layout)
        else:
            parts = _PLAIN_SPLIT(seg)
        shape = "\0".join(parts[0::2]) if len(parts) > 1 else seg
        if not shape.isascii() or "  " in shape or "\t" in shape:  # bar glyphs, padding
            shape = _FILL_RE.sub(" ", shape)
        key = shape if only is None else shape + "\x01" + only[0].name
        tpl = self._shapes.get(key, _UNSEEN)
        if tpl is None:
            if only is None:
                self._remember(layout, None)
            return None
        if tpl is not _UNSEEN:
            texts = [parts[2 * a + 1] if a == b else "".join(parts[2 * a + 1 : 2 * b + 2]) for a, b in tpl.spans]
            nonfinite = _has_nonfinite(texts)
            if only is None:
                self._remember(layout, (tpl.dialect, tpl.plan, _picker(tpl.spans, parts), nonfinite, _has_commas(texts)))
            return Reading(tpl.dialect, tpl.plan, texts, nonfinite)
        if only is None:
            reading, tpl = self._parse(seg, parts, dialects)
        else:
            reading, tpl = self._parse(seg, parts, (d for d in only if d.guard(seg)))
        if len(self._shapes) >= self.max_shapes:
            self._shapes.clear()
            self._plans.clear()
        if tpl is not None or reading is None:
            self._shapes[key] = tpl
            if only is None:
                self._remember(layout, None if tpl is None else (tpl.dialect, tpl.plan, _picker(tpl.spans, parts), reading.nonfinite,
                                                                 _has_commas(reading.texts)))
        return reading

    def _remember(self, layout: bytes, known: tuple | None) -> None:
        if len(self._layouts) >= self.max_shapes:
            self._layouts.clear()
        if known is not None:
            known = (*known, _layout_fields(*known))
        self._layouts[layout] = known

    def _parse(self, seg: str, parts: list[str], dialects) -> tuple[Reading | None, Template | None]:
        """The first of `dialects` (those whose guard holds, in table order) that reads `seg`."""
        for d in dialects:
            self.parses += 1
            vals = d.values(seg)
            if vals is None:
                continue
            keys = tuple((v.key, v.unit) for v in vals)
            pk = (d.name, d.kind, keys)
            if pk not in self._plans:
                plan = make_plan(d, keys)
                self._plans[pk] = compile_plan(d, plan) if plan is not None else None
            plan = self._plans[pk]
            texts = [seg[v.start : v.end] for v in vals]
            reading = Reading(d, plan, texts, _has_nonfinite(texts))
            return reading, _template(d, plan, vals, parts)
        return None, None


_UNSEEN = object()
_new_tuple = tuple.__new__
# segments of this many UTF-8 bytes or more have their guards tested before their layout is made (see
# ShapeCache): a long step line of a known layout pays one guard scan more (~1 us of 1 KB)
GUARDS_FIRST_BYTES = 1024


def _layout_fields(d: Dialect, plan: CompiledPlan | None, pick, nonfinite: bool, commas: bool) -> Callable[[str], tuple]:
    """`ShapeCache.fields` of a segment of a known layout (its dialect, plan, value picker and
    what its texts hold), as one function of the segment."""
    if plan is None:
        found = (d, None)
        return lambda seg: found
    if nonfinite or plan.read is None:  # NaN/Inf taken out of the fields: apply_plan's way
        return lambda seg: (d, build(_new_tuple(Reading, (d, plan, pick(seg), nonfinite, commas))))
    read = plan.read
    if commas:
        return lambda seg: (d, read([t.replace(",", "") for t in pick(seg)]))
    return lambda seg: (d, read(pick(seg)))
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _picker(spans: tuple[tuple[int, int], ...], parts: list[str]) -> Callable[[str], tuple[str, ...]]:
    """A function that slices each value's text (its first to its last number token) out of
    any segment with the layout of the one `parts` came from."""
    starts = [0]
    for part in parts:
        starts.append(starts[-1] + len(part))
    slices = [slice(starts[2 * a + 1], starts[2 * b + 2]) for a, b in spans]
    if len(slices) == 1:
        only = slices[0]
        return lambda seg: (seg[only],)
    return operator.itemgetter(*slices) if slices else (lambda seg: ())


_NUMBER_SPLIT = re.compile(f"({NUMBER})").split
_PLAIN_SPLIT = re.compile(f"({_PLAIN_NUMBER})").split
_PLAIN_MATCH = re.compile(_PLAIN_NUMBER).match
_SPARSE_MIN_CHARS = 256
# bytes -> b"0" (a digit), b"a" (a word character) or b" " (any other): in this map a token's first
# digit is a 0 after a blank (or the first byte)
_CLASSES = bytes(48 if 48 <= c <= 57 else 97 if (65 <= c <= 90 or 97 <= c <= 122 or c == 95) else 32 for c in range(256))


def _split_sparse(seg: str, layout: bytes) -> list[str]:
    """`_PLAIN_SPLIT(seg)` for a long ASCII segment with few digits (`layout`: its bytes with every
    digit a 0). A token starts at its first digit or one or two characters before it (a sign, a
    dot), and no word character comes right before that digit (the pattern's look-behind, or
    the sign or dot itself): so a match is tried only in the two positions before such a digit
    and at the digit, found with bytes.find in the segment's character classes (`_CLASSES`);
    the regex's split steps through every character (~30 ns each: ~35 us for a 1.4 KB JSON
    log line). Positions are tried in increasing order from the end of the previous token, so
    the first match is the one the split's search finds."""
    parts: list[str] = []
    find = layout.translate(_CLASSES).find
    match = _PLAIN_MATCH
    last = 0  # end of the previous token
    tried = -1  # positions up to here were tried since it
    d = 0 if layout[:1] == b"0" else find(b" 0") + 1 or -1
    while d >= 0:
        p = max(last, tried + 1, d - 2)
        while p <= d:
            if (p == d or seg[p] in "-+.") and (m := match(seg, p)) is not None:
                parts.append(seg[last:p])
                last = m.end()
                parts.append(seg[p:last])
                tried = last - 1
                break
            p += 1
        else:
            tried = d
        d = find(b" 0", max(tried, 0)) + 1 or -1
    parts.append(seg[last:])
    return parts


# nan/inf where a value sits ("grad norm: nan", "'loss': nan", "loss=inf"); Megatron's
# "number of nan iterations" on every line is prose and keeps the fast tokens
_NAN_AT = re.compile(r"(?:[:=',(\[] ?|[A-Za-z_] )[-+]?(?:nan|inf|NAN|INF|NaN|Inf)(?![A-Za-z])(?! [A-Za-z])").match
_NAN_TOKENS = ("nan", "inf", "NAN", "INF", "NaN", "Inf")
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _NAN_VALUE(seg: str) -> bool:
    """Whether `_NAN_AT` matches somewhere: it can only start 1 to 3 characters before a token
    (a separator or a key's last letter, a blank, a sign) that no letter, nor a blank and a
    letter, follows. Searching it at every position of a long line cost ~60 us of 1.5 KB, a
    regex scan for the tokens ~25 us of 2 KB; an ASCII text is lowered once and searched for
    "nan" and "inf" (each hit checked against the six spellings), others token by token."""
    if seg.isascii():
        low = seg.lower()  # the same length and positions as seg
        return _nan_value_at(seg, low.find, ("nan", "inf"))
    return _nan_value_at(seg, seg.find, _NAN_TOKENS)


def _nan_value_at(seg: str, find, tokens: tuple[str, ...]) -> bool:
    for token in tokens:
        t = find(token)
        while t >= 0:
            after = seg[t + 3 : t + 4]
            if seg[t : t + 3] in _NAN_TOKENS and after not in _ASCII_LETTERS and not (
                    after == " " and seg[t + 4 : t + 5] in _ASCII_LETTERS):
                for q in range(max(0, t - 3), t):
                    if _NAN_AT(seg, q):
                        return True
            t = find(token, t + 1)
    return False


def _template(d: Dialect, plan, vals: list[Value], parts: list[str]) -> Template | None:
    """Which number tokens each value spans (None if a value is not made of whole tokens)."""
    starts, ends = {}, {}
    pos = 0
    for i, part in enumerate(parts):
        if i % 2:
            starts[pos] = ends[pos + len(part)] = i // 2
        pos += len(part)
    spans = []
    for v in vals:
        a, b = starts.get(v.start), ends.get(v.end)
        if a is None or b is None:
            return None
        spans.append((a, b))
    return Template(d, tuple(spans), plan)


DEFAULT_CACHE = ShapeCache()
