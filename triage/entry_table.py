"""The entries of a knowledge base as compact arrays: what ranking reads of each entry, without a
Python object per entry. Pure Python (numpy, scipy), no Django.

A million entries held as `Doc`s (tuples of strings, one object each) take gigabytes; here every
word is an int32 id into one vocabulary, every entry's words are a slice of one array, and short
strings (exception types, patterns, frameworks) are codes into small tables. A `Doc` is decoded
only for the few entries a triage scores.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from triage.lexical import Postings, raw_bm25_weights, signature_bm25_weights


@dataclass(frozen=True)
class Doc:
    """An entry as ranking sees it (tokens precomputed once per knowledge-base version)."""

    id: int
    exc_type: str
    pattern: str
    kind: str
    fingerprint: str
    framework: str
    frames: tuple[str, ...]
    msg_tokens: tuple[str, ...]
    ctx_tokens: tuple[str, ...]
    text_tokens: tuple[str, ...]
    family: tuple[str, frozenset[str]] | None = None
    origin: str = "team"
    has_fix: bool = True
    slots: tuple[str, ...] = ()  # the message's distinguishing values (kb.normalize.message_slots)


@dataclass(frozen=True)
class Ragged:
    """One int32 list per entry: entry i's list is values[offsets[i]:offsets[i + 1]]."""

    offsets: np.ndarray  # int64, one more than entries
    values: np.ndarray  # int32

    def row(self, i: int) -> list[int]:
        return self.values[self.offsets[i] : self.offsets[i + 1]].tolist()  # type: ignore[no-any-return]


class _RaggedBuilder:
    def __init__(self) -> None:
        self.offsets = array("q", [0])
        self.values = array("i")

    def add(self, ids: Iterable[int]) -> None:
        self.values.extend(ids)
        self.offsets.append(len(self.values))

    def freeze(self) -> Ragged:
        return Ragged(_np(self.offsets, np.int64), _np(self.values, np.int32))


def _np(buf: array, dtype: type) -> np.ndarray:  # type: ignore[type-arg]
    """The buffer as an array, without a copy (the buffer is not grown after this)."""
    return np.frombuffer(buf, dtype=dtype) if len(buf) else np.zeros(0, dtype=dtype)


STRING_FIELDS = ("exc_type", "pattern", "kind", "framework", "origin", "family")
EMPTY_RAW = "<empty>"  # an entry without problem text still counts in the raw-text BM25 (as bm25s did)


def fingerprint_code(fp: str, odd: dict[int, str]) -> int:
    """A fingerprint (16 hex digits) as a 64-bit number; any other string gets a hash, remembered."""
    if len(fp) == 16:
        try:
            code = int(fp, 16)
        except ValueError:
            pass
        else:
            if f"{code:016x}" == fp:
                return code
    code = int.from_bytes(hashlib.blake2b(fp.encode(), digest_size=8).digest(), "big")
    odd[code] = fp
    return code


class _Vocabulary(dict[str, int]):
    """Word → id; a word not seen yet gets the next id (readers use `get`, which adds nothing)."""

    def __missing__(self, word: str) -> int:
        self[word] = len(self)
        return len(self) - 1


def _capped(counts: Iterable[int]) -> list[int]:
    out = list(counts)
    return out if max(out, default=0) <= 65535 else [min(c, 65535) for c in out]


class TableBuilder:
    """Collects entries one at a time (in increasing pk order) into the arrays of an `EntryTable`,
    so a build holds the knowledge base's words once, never a Python object per entry."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = _Vocabulary()
        self.pks = array("q")
        self.msg, self.ctx, self.frames = _RaggedBuilder(), _RaggedBuilder(), _RaggedBuilder()
        self.family_words = _RaggedBuilder()
        self.slots = _RaggedBuilder()
        self.text, self.raw = _RaggedBuilder(), _RaggedBuilder()
        self.text_tf, self.raw_tf = array("H"), array("H")
        self.text_len, self.raw_len = array("i"), array("i")
        self.msg_seen, self.frame_seen = array("i"), array("i")  # each entry's distinct words, for dfs
        self.strings: dict[str, dict[str, int]] = {name: {} for name in STRING_FIELDS}
        self.codes: dict[str, array] = {name: array("i") for name in STRING_FIELDS}  # type: ignore[type-arg]
        self.fingerprints = array("Q")
        self.odd_fingerprints: dict[int, str] = {}
        self.has_fix = array("b")

    def __len__(self) -> int:
        return len(self.pks)

    def _ids(self, tokens: Iterable[str]) -> list[int]:
        return list(map(self.vocab.__getitem__, tokens))

    def _code(self, name: str, value: str) -> None:
        table = self.strings[name]
        self.codes[name].append(table.setdefault(value, len(table)))

    def add(self, doc: Doc, raw_tokens: Sequence[str]) -> None:
        if self.pks and doc.id <= self.pks[-1]:
            raise ValueError("entries must be added in increasing pk order")
        self.pks.append(doc.id)
        msg, ctx, frames = self._ids(doc.msg_tokens), self._ids(doc.ctx_tokens), self._ids(doc.frames)
        self.msg.add(msg)
        self.ctx.add(ctx)
        self.frames.add(frames)
        self.slots.add(self._ids(doc.slots))
        self.msg_seen.extend(set(msg) | set(ctx))
        self.frame_seen.extend(set(frames))
        text = Counter(self._ids(doc.text_tokens))
        self.text.add(text.keys())
        self.text_tf.extend(_capped(text.values()))
        self.text_len.append(len(doc.text_tokens))
        raw = Counter(self._ids(raw_tokens or [EMPTY_RAW]))
        self.raw.add(raw.keys())
        self.raw_tf.extend(_capped(raw.values()))
        self.raw_len.append(max(1, len(raw_tokens)))
        for name in ("exc_type", "pattern", "kind", "framework", "origin"):
            self._code(name, getattr(doc, name))
        if doc.family is None:
            self.codes["family"].append(-1)
            self.family_words.add(())
        else:
            self._code("family", doc.family[0])
            self.family_words.add(self._ids(sorted(doc.family[1])))
        self.fingerprints.append(fingerprint_code(doc.fingerprint, self.odd_fingerprints))
        self.has_fix.append(1 if doc.has_fix else 0)

    def build(self) -> EntryTable:
        """1. The signature BM25 (term weights by entry → read by word); 2. the raw-text BM25 (bm25s's
        scores, IDF included); 3. document frequencies; 4. the per-entry fields."""
        n_words = len(self.vocab)
        text = self.text.freeze()
        lengths = _np(self.text_len, np.int32).astype(np.float64)
        weights = signature_bm25_weights(_np(self.text_tf, np.uint16), lengths, text.offsets)
        signature = Postings(text.offsets, text.values, weights, n_words)
        del self.text_tf, weights
        raw = self.raw.freeze()
        del self.raw
        lengths = _np(self.raw_len, np.int32).astype(np.float64)
        weights = raw_bm25_weights(_np(self.raw_tf, np.uint16), lengths, raw.offsets, raw.values)
        del self.raw_tf
        raw_index = Postings(raw.offsets, raw.values, weights, n_words)
        del raw, weights
        words = [""] * n_words
        for word, i in self.vocab.items():
            words[i] = word
        return EntryTable(
            pks=_np(self.pks, np.int64),
            vocab=self.vocab,
            words=words,
            msg=self.msg.freeze(),
            ctx=self.ctx.freeze(),
            frames=self.frames.freeze(),
            text=text,
            family_words=self.family_words.freeze(),
            slots=self.slots.freeze(),
            signature=signature,
            raw=raw_index,
            msg_df=np.bincount(_np(self.msg_seen, np.int32), minlength=n_words).astype(np.int32),
            frame_df=np.bincount(_np(self.frame_seen, np.int32), minlength=n_words).astype(np.int32),
            strings={name: list(table) for name, table in self.strings.items()},
            codes={name: _np(codes, np.int32) for name, codes in self.codes.items()},
            fingerprints=_np(self.fingerprints, np.uint64),
            odd_fingerprints=self.odd_fingerprints,
            has_fix=_np(self.has_fix, np.int8).astype(bool),
        )


class EntryTable:
    """Built entries (sorted by pk): their fields, words, document frequencies and BM25 indexes."""

    def __init__(
        self,
        *,
        pks: np.ndarray,
        vocab: dict[str, int],
        words: list[str],
        msg: Ragged,
        ctx: Ragged,
        frames: Ragged,
        text: Ragged,
        family_words: Ragged,
        slots: Ragged,
        signature: Postings,
        raw: Postings,
        msg_df: np.ndarray,
        frame_df: np.ndarray,
        strings: dict[str, list[str]],
        codes: dict[str, np.ndarray],
        fingerprints: np.ndarray,
        odd_fingerprints: dict[int, str],
        has_fix: np.ndarray,
    ) -> None:
        self.pks, self.vocab, self.words = pks, vocab, words
        self.msg, self.ctx, self.frames, self.text, self.family_words = msg, ctx, frames, text, family_words
        self.slots = slots
        self.signature, self.raw = signature, raw
        self.dfs = {"msg": msg_df, "text": signature.df, "frame": frame_df, "raw": raw.df}
        self.strings, self.codes = strings, codes
        self.fingerprints, self.odd_fingerprints = fingerprints, odd_fingerprints
        self.fp_order = np.argsort(fingerprints, kind="stable")
        self.fp_sorted = fingerprints[self.fp_order]
        self.has_fix = has_fix

    def __len__(self) -> int:
        return len(self.pks)

    def position(self, pk: int) -> int | None:
        at = int(np.searchsorted(self.pks, pk))
        return at if at < len(self.pks) and self.pks[at] == pk else None

    def positions(self, pks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The given pks that are in this table, and their positions."""
        wanted = np.asarray(pks, dtype=np.int64)
        if not len(self.pks) or not len(wanted):
            return wanted[:0], np.zeros(0, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.pks, wanted), len(self.pks) - 1)
        here = self.pks[at] == wanted
        return wanted[here], at[here]

    def df(self, field: str, word: str) -> int:
        i = self.vocab.get(word)
        return 0 if i is None else int(self.dfs[field][i])

    def with_fingerprint(self, fp: str) -> list[int]:
        code = np.uint64(fingerprint_code(fp, {}))
        lo, hi = np.searchsorted(self.fp_sorted, code, "left"), np.searchsorted(self.fp_sorted, code, "right")
        return np.sort(self.pks[self.fp_order[lo:hi]]).tolist()  # type: ignore[no-any-return]

    def fingerprint(self, pos: int) -> str:
        code = int(self.fingerprints[pos])
        return self.odd_fingerprints.get(code) or f"{code:016x}"

    def doc(self, pos: int) -> Doc:
        words = self.words

        def decode(r: Ragged) -> tuple[str, ...]:
            return tuple([words[i] for i in r.row(pos)])

        def string(name: str) -> str:
            return self.strings[name][int(self.codes[name][pos])]

        family_code = int(self.codes["family"][pos])
        return Doc(
            id=int(self.pks[pos]),
            exc_type=string("exc_type"),
            pattern=string("pattern"),
            kind=string("kind"),
            fingerprint=self.fingerprint(pos),
            framework=string("framework"),
            frames=decode(self.frames),
            msg_tokens=decode(self.msg),
            ctx_tokens=decode(self.ctx),
            # The entry's distinct words: ranking reads them as a set.
            text_tokens=decode(self.text),
            family=None
            if family_code < 0
            else (self.strings["family"][family_code], frozenset(decode(self.family_words))),
            origin=string("origin"),
            has_fix=bool(self.has_fix[pos]),
            slots=decode(self.slots),
        )


RAGGED_FIELDS = ("msg", "ctx", "frames", "text", "family_words", "slots")


def table_save(table: EntryTable, folder: Path) -> None:
    """Write the table into `folder` (which must not exist yet) as .npy files and one JSON file,
    so `table_load` maps it back without rebuilding anything."""
    folder.mkdir(parents=True)
    arrays: dict[str, np.ndarray] = {name: getattr(table, name) for name in ("pks", "fingerprints", "has_fix")}
    arrays["msg_df"], arrays["frame_df"] = table.dfs["msg"], table.dfs["frame"]
    for name in RAGGED_FIELDS:
        r: Ragged = getattr(table, name)
        arrays[f"{name}.offsets"], arrays[f"{name}.values"] = r.offsets, r.values
    for index in ("signature", "raw"):
        for name in Postings.ARRAYS:
            arrays[f"{index}.{name}"] = getattr(getattr(table, index), name)
    for name, codes in table.codes.items():
        arrays[f"code.{name}"] = codes
    encoded = [w.encode("utf-8", "surrogatepass") for w in table.words]
    arrays["words.offsets"] = np.cumsum([0, *map(len, encoded)], dtype=np.int64)
    arrays["words.bytes"] = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    for name, values in arrays.items():
        np.save(folder / f"{name}.npy", np.ascontiguousarray(values), allow_pickle=False)
    meta = {
        "strings": table.strings,
        "odd_fingerprints": {str(k): v for k, v in table.odd_fingerprints.items()},
        "n": len(table),
    }
    (folder / "table.json").write_text(json.dumps(meta), encoding="utf-8")


def table_load(folder: Path) -> EntryTable:
    """The table `table_save` wrote, its arrays memory-mapped (read-only, shared by every process
    that maps them); only the vocabulary is read into a dict."""
    meta = json.loads((folder / "table.json").read_text(encoding="utf-8"))

    def arr(name: str) -> np.ndarray:
        return np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)

    offsets, blob = np.asarray(arr("words.offsets")), arr("words.bytes").tobytes()
    words = [blob[offsets[i] : offsets[i + 1]].decode("utf-8", "surrogatepass") for i in range(len(offsets) - 1)]
    n = int(meta["n"])

    def postings(index: str) -> Postings:
        return Postings.from_arrays(n, {name: arr(f"{index}.{name}") for name in Postings.ARRAYS})

    ragged = {name: Ragged(arr(f"{name}.offsets"), arr(f"{name}.values")) for name in RAGGED_FIELDS}
    return EntryTable(
        pks=arr("pks"),
        vocab={w: i for i, w in enumerate(words)},
        words=words,
        signature=postings("signature"),
        raw=postings("raw"),
        msg_df=arr("msg_df"),
        frame_df=arr("frame_df"),
        strings=meta["strings"],
        codes={name: arr(f"code.{name}") for name in meta["strings"]},
        fingerprints=arr("fingerprints"),
        odd_fingerprints={int(k): v for k, v in meta["odd_fingerprints"].items()},
        has_fix=arr("has_fix"),
        **ragged,
    )
