"""Normalising error text so the same failure looks the same across users and machines.

Pure Python: masking volatile parts of messages (numbers, paths, hex ids, pids, versions),
removing library boilerplate, tokenising for lexical matching, and naming frames by module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from kb.logpatterns import HUB_REQUEST_ID_RE
from kb.logscan import Frame

URL_RE = re.compile(r"https?://\S+")
PATH_RE = re.compile(r"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[\\/][\w.\-@+~]+){2,}[\\/]?")
HEX_RE = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b")
IP_RE = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b")
PID_RE = re.compile(r"\b(pid|tid|actor_id|job_id|node_id)\s*[=:]\s*\w+", re.I)
VERSION_RE = re.compile(r"\b\d+\.\d+\.\d+(?:[.\-+]?\w+)*\b")
FLOAT_RE = re.compile(r"-?\b\d+\.\d+\b")
BIGINT_RE = re.compile(r"-?\b\d{4,}\b")
WS_RE = re.compile(r"\s+")
WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\b\d{3}\b|[\u4e00-\u9fff]+")
CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
PLACEHOLDERS = frozenset({"path", "url", "hex", "ip", "ver", "num", "pid"})
STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "this",
        "that",
        "with",
        "as",
        "at",
        "by",
        "from",
        "you",
        "your",
        "please",
        "if",
        "not",
        "no",
        "but",
        "can",
        "will",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "there",
        "their",
        "its",
        "into",
        "than",
        "then",
        "so",
        "such",
        "use",
        "using",
        "used",
        "try",
    ]
)

# Package directories that identify a module root in a path (after site-packages or not).
KNOWN_PACKAGES = (
    "verl",
    "trl",
    "swift",
    "openrlhf",
    "deepspeed",
    "vllm",
    "ray",
    "torch",
    "transformers",
    "accelerate",
    "peft",
    "llamafactory",
    "llmtuner",
    "flash_attn",
    "wandb",
    "safetensors",
    "datasets",
    "tokenizers",
    "megatron",
    "sglang",
    "numpy",
    "jinja2",
    "hydra",
    "axolotl",
)


# Sentences that libraries append to many different errors; they say nothing about which one.
# (PyTorch's ROCm build appends the same sentences with HIP's names.)
BOILERPLATE_RES = (
    re.compile(
        r"(?:CUDA|HIP) kernel errors might be asynchronously reported at some other API call.*?(?:incorrect\.|$)", re.I
    ),
    re.compile(r"For debugging consider passing (?:CUDA_LAUNCH_BLOCKING=1|AMD_SERIALIZE_KERNEL=\d)\.?", re.I),
    re.compile(r"Compile with `?TORCH_USE_(?:CUDA|HIP)_DSA`? to enable device-side assertions\.?", re.I),
    re.compile(r"\(?run with NCCL_DEBUG=INFO for details\)?", re.I),
    re.compile(r"Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace\.?", re.I),
    re.compile(r"Including non-PyTorch memory.*?(?=$)", re.I),
    re.compile(r"See documentation for Memory Management.*?(?=$)", re.I),
    # ComfyUI's marker in front of every node's error: the message follows it.
    re.compile(r"!!! Exception during processing !!!"),
    HUB_REQUEST_ID_RE,
)


def strip_boilerplate(message: str) -> str:
    for rx in BOILERPLATE_RES:
        message = rx.sub(" ", message)
    return WS_RE.sub(" ", message).strip()


FILE_NAME_RE = re.compile(r"^[A-Za-z_][\w\-]*(?:\.[A-Za-z]\w*)+(?:\.\d+)*$")


def _mask_path(m: re.Match[str]) -> str:
    """A path's folders vary by machine; its file name (config.json, libcudart.so.12) tells
    which file was missing or broken, so it stays."""
    name = re.split(r"[\\/]", m.group(0).rstrip("\\/"))[-1]
    return f"<PATH> {name}" if FILE_NAME_RE.match(name) else "<PATH>"


def _mask_url(m: re.Match[str]) -> str:
    """The host of a URL tells which service failed (huggingface.co, pypi.org); the rest varies."""
    host = re.match(r"https?://([\w.\-]+)", m.group(0))
    return f"<URL> {host.group(1)}" if host else "<URL>"


def mask_message(message: str) -> str:
    s = URL_RE.sub(_mask_url, strip_boilerplate(message))
    s = PATH_RE.sub(_mask_path, s)
    s = IP_RE.sub("<IP>", s)
    s = PID_RE.sub(lambda m: f"{m.group(1)}=<PID>", s)
    s = HEX_RE.sub("<HEX>", s)
    s = VERSION_RE.sub("<VER>", s)
    s = FLOAT_RE.sub("<NUM>", s)
    s = BIGINT_RE.sub("<NUM>", s)
    return WS_RE.sub(" ", s).strip()


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens with identifiers also split into their parts, lightly stemmed.

    `max_num_batched_tokens` yields itself plus max/num/batch/token; `LLMEngine` yields
    llmengine plus llm/engine; Chinese runs yield character bigrams.
    """
    out: list[str] = []
    for raw in WORD_RE.findall(text):
        out.extend(_word_tokens(raw))
    return out


def surface_words(text: str, tokens: Iterable[str]) -> list[str]:
    """Each token as the word of `text` it stands for (`undefin` → `undefined`), for people to read;
    a token that is only part of a longer name (`socket` of `NCCL_SOCKET_IFNAME`) stays as it is."""
    word_of: dict[str, str] = {}
    for raw in WORD_RE.findall(text):
        whole = _word_tokens(raw)[:1]
        if whole:
            word_of.setdefault(whole[0], raw)
    out: list[str] = []
    for token in tokens:
        word = word_of.get(token, token)
        if word not in out:
            out.append(word)
    return out


@lru_cache(maxsize=1 << 18)
def _word_tokens(raw: str) -> tuple[str, ...]:
    # A knowledge base says the same words again and again: building the ranking copy of a
    # million entries tokenises each distinct word once.
    if "\u4e00" <= raw[0] <= "\u9fff":
        return tuple(raw[i : i + 2] for i in range(max(1, len(raw) - 1)))
    low = raw.lower()
    if low in STOPWORDS or low in PLACEHOLDERS or len(low) < 2:
        return ()
    out = [_stem(low)]
    parts = [p for chunk in raw.split("_") for p in CAMEL_RE.findall(chunk)]
    if len(parts) > 1:
        for part in parts:
            pl = part.lower()
            if len(pl) >= 2 and pl not in STOPWORDS and not pl.isdigit():
                out.append(_stem(pl))
    return tuple(out)


def module_of(path: str) -> str:
    """Dotted module for a frame path: site-packages prefix stripped, else from a known package."""
    p = path.replace("\\", "/").replace("*", "")  # markdown bold around part of a pasted path
    for marker in ("site-packages/", "dist-packages/"):
        if marker in p:
            p = p.rsplit(marker, 1)[1]
            break
    else:
        parts = p.split("/")
        known = [i for i, part in enumerate(parts[:-1]) if part in KNOWN_PACKAGES]
        p = "/".join(parts[known[-1] :]) if known else "/".join(parts[-2:])
    p = re.sub(r"\.(?:py|pyx|pyi)$", "", p.strip("/"))
    return p.replace("/", ".").removesuffix(".__init__")


def frame_key(frame: Frame) -> str:
    return f"{module_of(frame.path)}:{frame.function}"


# Messages of the form "<family> error: <what went wrong>", where the family is shared by many
# different failures: the part after the family decides which failure it is.
ERROR_FAMILY_RE = re.compile(
    r"^\s*(?P<family>CUDA error|HIP error|cuda runtime error(?: \(\d+\))?|CUBLAS_STATUS_\w+|cuDNN error|"
    r"NCCL error(?: in: \S+)?|nccl\w*Error)\s*[:,]?\s*(?P<specific>.*)$",
    re.I | re.S,
)
FAMILY_NOISE = frozenset({"please", "report", "issue", "developer", "nccl", "version", "cuda", "error", "last", "num"})


def error_family(masked_message: str) -> tuple[str, frozenset[str]] | None:
    """("cuda", words of what went wrong) for "CUDA error: device-side assert triggered" and for
    ROCm's "HIP error: …"; None for a message that does not belong to such a family."""
    m = ERROR_FAMILY_RE.match(masked_message)
    if not m:
        return None
    family = m.group("family").split()[0].lower().removesuffix("error")
    family = "nccl" if family.startswith("nccl") else family
    family = "cuda" if family == "hip" else family  # ROCm's HIP runtime says CUDA's errors in CUDA's words
    words = frozenset(t for t in tokenize(m.group("specific")[:300]) if t not in FAMILY_NOISE and "_" not in t)
    return (family, words) if words else None


# What tells two errors of one wording apart, which masking would merge: the quoted name
# ('GRPOConfig' vs 'DataCollatorForCompletionOnlyLM'), the called function, the command-line
# flag or linked library (-lcuda vs -lcurand), the shared library a loader could not open
# (libmpi.so.12 vs libcudart.so.12), the error code (Error 802 vs Error 804).
# A name quoted with one kind of quote and closed by another ('resource‘”) is read up to the first.
SLOT_QUOTED_RE = re.compile(r"(?<![\w'\"`])['\"`‘“]([^\s'\"`‘’“”]{2,100})['\"`‘’“”]")
SLOT_CALL_RE = re.compile(r"\b([A-Za-z_][\w.]*[A-Za-z_]\w*)\(\)")
# A flag the shell ran as a command ("line 9: -m: command not found": the line above lost its
# trailing backslash) names no option of a program: every broken continuation says the same.
SLOT_FLAG_RE = re.compile(r"(?<![\w/.<>-])(--?[A-Za-z][\w.+-]*)(?![\w.+=-]*:\s*command not found)")
SLOT_CODE_RE = re.compile(r"\b(?:error|code|errno|status|err)\b[\"']?\s*(?:code)?\s*[:=(#]?\s*(-?\d{1,4})\b", re.I)
# The port says which service a connection was for (6379 Redis, 29500 torch.distributed), where
# the address differs from user to user.
SLOT_PORT_RE = re.compile(r"(?:\b\d{1,3}(?:\.\d{1,3}){3}|\blocalhost|\]):(\d{2,5})\b")
SLOT_DIGITS_RE = re.compile(r"\d+")
# Bumped when message_slots reads messages another way: a saved ranking copy holds entries' slots.
SLOT_RULES = 6
# A model's name or folder ("Qwen1.5-72B-Chat", "/data/llama-2-7b-hf"): each user's own, never what
# tells two failures apart. Known by its parameter count between separators.
MODEL_NAME_RE = re.compile(r"(?:^|[-_/.])\d+(?:\.\d+)?[bBmM](?:$|[-_/.])")
# A shared library is named by its stem: libcudart.so.11.0 and libcudart.so.12 are one slot.
SLOT_LIBRARY_RE = re.compile(
    r"(?<![\w.-])(lib[A-Za-z][\w+-]*)\.(?:so|dylib)\b|(?<![\w.-])([A-Za-z][\w+-]*)\.dll\b", re.I
)


def _slot(value: str) -> str:
    value = value.strip(".,:;()[]{}").replace("\\", "/").rsplit("/", 1)[-1].lower()
    return SLOT_DIGITS_RE.sub("#", value.split("=", 1)[0])


def message_slots(raw_message: str) -> tuple[str, ...]:
    """The distinguishing values of an error message, normalised (digits as #, paths as their
    file name): quoted names (not a model's name), called functions, flags and linked libraries,
    shared libraries, error codes, ports."""
    return tuple(dict.fromkeys(slot for slot, _ in _slot_values(raw_message)))


def slot_surfaces(raw_message: str) -> dict[str, str]:
    """Each of the message's slots (`message_slots`) as the message writes it, for people to read."""
    out: dict[str, str] = {}
    for slot, written in _slot_values(raw_message):
        out.setdefault(slot, written)
    return out


def _mapping_key(text: str, quoted: re.Match[str]) -> bool:
    """A quoted name that opens an entry of a printed mapping (`{"code":500,"message":…}`, pydantic's
    `{'type': 'extra_forbidden', 'loc': …}`): every such error has the same keys; its values tell."""
    return text[quoted.end() :].lstrip().startswith(":") and text[: quoted.start()].rstrip().endswith(("{", ","))


def _slot_values(raw_message: str) -> list[tuple[str, str]]:
    """(slot, as written) of each distinguishing value of the message, in order; a library's
    sentences appended to many errors (BOILERPLATE_RES) name none."""
    text = strip_boilerplate(raw_message[:1500])[:1000]
    found = [
        (_slot(m.group(1)), m.group(1))
        for m in SLOT_QUOTED_RE.finditer(text)
        if not MODEL_NAME_RE.search(m.group(1)) and not _mapping_key(text, m)
    ]
    found += [(_slot(v), v) for rx in (SLOT_CALL_RE, SLOT_FLAG_RE) for v in rx.findall(text)]
    found += [(_slot(a or b), a or b) for a, b in SLOT_LIBRARY_RE.findall(text)]
    found += [(f"code:{c}", f"code {c}") for c in SLOT_CODE_RE.findall(text)]
    found += [(f"port:{p}", f"port {p}") for p in SLOT_PORT_RE.findall(text)]
    return [(s, v) for s, v in found if len(s.strip("#")) >= 2 or s.startswith(("code:", "port:"))]
