"""Why a match matched, which pasted lines decided it, and the user's numbers that matter."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.logclean import log_lines
from kb.logscan import ErrorBlock
from kb.normalize import slot_surfaces, strip_boilerplate, surface_words
from triage.corpus import Corpus, Doc
from triage.ranking import Query, swapped_words

NUMBER_PAIR_RE = re.compile(r"(?P<name>[A-Za-z_][\w./]*)\s*(?:\(|=|:\s)\s*(?P<value>-?\d+(?:\.\d+)?)\)?")
SWIFT_MAXLEN_RE = re.compile(r"max_model_len\((?P<maxlen>\d+)\) - num_tokens\((?P<tokens>\d+)\)")
OOM_RE = re.compile(
    r"Tried to allocate (?P<alloc>[\d.]+ [GMK]iB).*?total capacity of (?P<total>[\d.]+ [GMK]iB)"
    r"(?:.*?of which (?P<free>[\d.]+ [GMK]iB) is free)?"
)
BATCHED_RE = re.compile(
    r"max_num_batched_tokens \((?P<batched>\d+)\) is smaller than max_model_len \((?P<maxlen>\d+)\)"
)


@dataclass(frozen=True)
class Explanation:
    reasons: tuple[str, ...]
    matched_tokens: tuple[str, ...]
    shared_frames: tuple[str, ...]
    highlight_lines: tuple[int, ...]
    numbers: tuple[str, ...]
    # What says this entry may be another failure (another exception; the same wording naming
    # something else): shown beside the match, so a look-alike is not taken for the fix.
    differences: tuple[str, ...] = ()


def explain_match(
    query: Query,
    doc: Doc,
    corpus: Corpus,
    features: dict[str, float],
    root: ErrorBlock | None,
    text: str,
    entry_raw_message: str = "",
) -> Explanation:
    reasons: list[str] = []
    sig = query.sig
    if features.get("family_conflict"):
        reasons.append("Same family of error, but a different failure: the words after the family name differ.")
    if features.get("fingerprint"):
        reasons.append("Same error signature (exception and masked message are identical).")
    if sig.exc_type and features.get("type_rel", 0) >= 1:
        reasons.append(f"Same exception: {sig.exc_type}.")
    elif sig.exc_type and doc.exc_type and features.get("type_rel", 0) > 0:
        reasons.append(f"Related exceptions: {sig.exc_type} and {doc.exc_type}.")
    elif sig.pattern and sig.pattern == doc.pattern:
        reasons.append(f"Same kind of failure: {sig.pattern.replace('_', ' ')}.")
    doc_tokens = set(doc.msg_tokens) | set(doc.ctx_tokens) | set(doc.text_tokens)
    matched = sorted(
        {t for t in query.msg_tokens if t in doc_tokens},
        key=lambda t: -corpus.idf(corpus.text_df, t),
    )[:8]
    if matched:
        reasons.append("Message words in common: " + ", ".join(surface_words(sig.raw_message, matched)) + ".")
    shared = tuple(f for f in sig.frames if f in set(doc.frames))[:4]
    if shared:
        reasons.append("Shared frames: " + ", ".join(shared) + ".")
    if sig.framework and sig.framework == doc.framework:
        reasons.append(f"Same framework: {sig.framework}.")
    if features.get("dense", 0) >= 0.6 and not matched:
        reasons.append("The error texts are close in meaning.")
    return Explanation(
        reasons=tuple(reasons),
        matched_tokens=tuple(matched),
        shared_frames=shared,
        highlight_lines=highlight_lines(root, text, matched, shared),
        # Library hint sentences ("consider passing CUDA_LAUNCH_BLOCKING=1") are not the user's numbers.
        numbers=numbers_from_log(root_context(root, text), strip_boilerplate(root.message) if root else ""),
        differences=differences(query, doc, features, entry_raw_message),
    )


def differences(query: Query, doc: Doc, features: dict[str, float], entry_raw_message: str) -> tuple[str, ...]:
    """The evidence against the entry that ranking counted (`type_conflict`, `slot_conflict`), in words."""
    sig = query.sig
    out: list[str] = []
    if features.get("type_conflict") and sig.exc_type and doc.exc_type:
        out.append(f"Your exception is {sig.exc_type}; this entry's is {doc.exc_type}.")
    if features.get("slot_conflict"):
        ours = [s for s in query.slots if s not in doc.slots]
        theirs = [s for s in doc.slots if s not in query.slots]
        if ours and theirs:
            out.append(
                f"Your error names {_written(ours, slot_surfaces(sig.raw_message))} where this entry's names "
                f"{_written(theirs, slot_surfaces(entry_raw_message))}: the same wording about another thing "
                "may be another failure."
            )
        elif swap := swapped_words(query.msg_tokens, doc.msg_tokens):
            mine = " ".join(surface_words(sig.raw_message, swap[0]))
            its = " ".join(surface_words(entry_raw_message, swap[1]))
            out.append(
                f"Your error says \u201c{mine}\u201d where this entry's says \u201c{its}\u201d: "
                "the same wording about another thing may be another failure."
            )
    return tuple(out)


def _written(slots: list[str], surfaces: dict[str, str], limit: int = 3) -> str:
    return ", ".join(f"\u201c{surfaces.get(s, s)}\u201d" for s in slots[:limit])


def highlight_lines(root: ErrorBlock | None, text: str, matched: list[str], shared: tuple[str, ...]) -> tuple[int, ...]:
    """The pasted lines that decided the match: the root error's message lines and the frames it shares."""
    if root is None:
        return ()
    lines = log_lines(text)
    out: set[int] = set()
    funcs = {f.rsplit(":", 1)[-1] for f in shared}
    for n in range(root.line_start, min(root.line_end, len(lines)) + 1):
        line = lines[n - 1]
        stripped = line.strip()
        if not stripped:
            continue
        if 'File "' in line:
            m = re.search(r", in (\S+)", line)
            if m and m.group(1) in funcs:
                out.add(n)
            continue
        if n == root.line_end or (root.kind != "traceback" and n >= root.line_start):
            out.add(n)
    # The exception line itself (for tracebacks the message starts after the last frame).
    for n in range(root.line_end, root.line_start - 1, -1):
        if n - 1 < len(lines) and re.match(r"^\W*[\w.]*(?:Error|Exception)\b", lines[n - 1].split("]: ")[-1].strip()):
            out.add(n)
            break
    return tuple(sorted(out))


def root_context(root: ErrorBlock | None, text: str, before: int = 8) -> str:
    """The root error's lines and the few above it: where the numbers that matter are printed."""
    if root is None:
        return text
    lines = log_lines(text)
    return "\n".join(lines[max(0, root.line_start - 1 - before) : root.line_end])


def numbers_from_log(text: str, message: str = "") -> tuple[str, ...]:
    """Numbers from the user's own log that matter for the fix, as sentences.

    Known situations (prompt longer than max_model_len, batched tokens below max_model_len, the
    size of a failed allocation) are read from the lines around the root error; otherwise the
    `name (value)` / `name=value` pairs of the error message itself are listed.
    """
    out: list[str] = []
    for m in SWIFT_MAXLEN_RE.finditer(text):
        maxlen, tokens = int(m.group("maxlen")), int(m.group("tokens"))
        if tokens >= maxlen:
            out.append(
                f"Your prompt is {tokens} tokens and max_model_len is {maxlen}: "
                "raise max_model_len or lower max_length so prompt + completion fit."
            )
            break
    m2 = BATCHED_RE.search(text)
    if m2:
        out.append(
            f"max_num_batched_tokens is {m2.group('batched')} but max_model_len is {m2.group('maxlen')}: "
            f"set max_num_batched_tokens to at least {m2.group('maxlen')}."
        )
    m3 = OOM_RE.search(text)
    if m3:
        free = f", {m3.group('free')} free" if m3.group("free") else ""
        out.append(f"The allocation that failed was {m3.group('alloc')} on a {m3.group('total')} GPU{free}.")
    if not out:
        seen: set[str] = set()
        for m in NUMBER_PAIR_RE.finditer(message):
            name = m.group("name")
            if name.lower() in ("line", "pid", "ip", "rank", "version", "code") or name in seen or len(name) < 4:
                continue
            if "_" not in name:
                continue
            seen.add(name)
            out.append(f"{name} = {m.group('value')}")
            if len(out) >= 4:
                break
    return tuple(out)
