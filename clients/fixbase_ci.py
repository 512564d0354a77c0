#!/usr/bin/env python3
"""Fixbase from CI or a launcher: post a failed job's log, print the known fix. Standard library only.

    fixbase triage job.log                 # or - for stdin; FIXBASE_URL and FIXBASE_TOKEN from the environment
    fixbase run -- torchrun train.py ...   # run the command; only if it fails, post its output

It never breaks a pipeline: an unreachable, slow or failing Fixbase is reported and the exit code
is 0 (`triage`) or the command's own (`run`). Exit codes of `triage`:
  0  done (whatever the verdict), or Fixbase could not be asked
  10 a known issue matched and --fail-on-match was given
  N  a known infrastructure issue matched and --exit-code-on-known-infra N was given
The markdown summary goes to stdout, and is appended to --summary FILE (default: $GITHUB_STEP_SUMMARY
when it is set).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections import deque
from typing import Any

MAX_BYTES = 1_500_000  # under the server's default 2 MB paste limit
TAIL_LINES = 300
CONTEXT_LINES = 30  # kept around every error line of a huge log
ERROR_RE = re.compile(
    r"Traceback \(most recent call last\)|^\s*\w*(Error|Exception|Interrupt)\b|\berror\b|FAILED|Killed|"
    r"out of memory|Segmentation fault|core dumped|exit code|exitcode|NCCL WARN|timed? ?out",
    re.IGNORECASE,
)
EXIT_ON_MATCH = 10
INFRA_FRAMEWORKS = "nccl,ray,slurm,docker,kubernetes,network,storage,shell,cuda-driver"


SKIPPED_RE = re.compile(r"^\[… (\d+) lines skipped …\]$")


def keep_what_matters(text: str, max_bytes: int = MAX_BYTES) -> str:
    """A huge log cut to fit: every error line with CONTEXT_LINES around it, plus the tail, in
    order, with "[… N lines skipped …]" markers (so `original_line_numbers` can map a line of the
    cut log back to the file). A log under the limit is kept whole."""
    if len(text.encode()) <= max_bytes:
        return text
    lines = text.splitlines()
    keep = [False] * len(lines)
    for i in range(max(0, len(lines) - TAIL_LINES), len(lines)):
        keep[i] = True
    for i, line in enumerate(lines):
        if ERROR_RE.search(line):
            for j in range(max(0, i - CONTEXT_LINES), min(len(lines), i + CONTEXT_LINES + 1)):
                keep[j] = True
    out: list[tuple[str, int]] = []  # (line, how many lines of the file it stands for)
    skipped = 0
    for line, k in zip(lines, keep, strict=True):
        if k:
            if skipped:
                out.append((f"[… {skipped} lines skipped …]", skipped))
                skipped = 0
            out.append((line, 1))
        else:
            skipped += 1
    size = sum(len(line.encode()) + 1 for line, _ in out)
    dropped = 0

    def marker_bytes() -> int:  # the "[… N lines skipped …]" line the front cut adds
        return len(f"[… {dropped} lines skipped …]".encode()) + 1 if dropped else 0

    while out and size + marker_bytes() > max_bytes:  # still too big: the latest errors and the tail win
        for line, n in out[: len(out) // 4 or 1]:
            dropped += n
            size -= len(line.encode()) + 1
        out = out[len(out) // 4 or 1 :]
    if dropped:
        out.insert(0, (f"[… {dropped} lines skipped …]", dropped))
    return "\n".join(line for line, _ in out)


def original_line_numbers(kept: str) -> list[int | None]:
    """For each line of a log cut by `keep_what_matters`, its number in the whole log (None for
    a "lines skipped" marker)."""
    out: list[int | None] = []
    n = 0
    for line in kept.split("\n"):
        skipped = SKIPPED_RE.match(line)
        if skipped:
            n += int(skipped.group(1))
            out.append(None)
        else:
            n += 1
            out.append(n)
    return out


def ask(url: str, token: str, log: str, context: dict[str, str], top_k: int, timeout: float) -> dict[str, Any]:
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"{url!r} is not an http(s) URL")
    body = json.dumps({"log": log, "top_k": top_k, "context": context}).encode()
    req = urllib.request.Request(  # noqa: S310 - the scheme is checked above
        url.rstrip("/") + "/api/v1/triage/",
        data=body,
        headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the user's own server
        return dict(json.load(resp))


def summary_markdown(answer: dict[str, Any], base_url: str, numbers: list[int | None] | None = None) -> str:
    """The summary a CI job shows. `numbers` maps the lines of a cut log to the file's own."""
    sig = answer.get("signature", {})
    # A paste with no recognised error is shown by its own words, not by the parser's kind ("text").
    name = sig.get("exception") or ("" if sig.get("kind") == "text" else (sig.get("pattern") or "error"))
    message = sig.get("raw_message") or sig.get("message", "")
    root = (f"{name.replace('_', ' ')}: {message}" if name else message)[:300]
    fence = "``" if "`" in root else "`"
    lines = ["## Fixbase", "", f"**{sig.get('label') or 'Root error'}:** {fence} {root} {fence}"]
    if sig.get("root_lines"):
        first, last = sig["root_lines"]
        if numbers and 0 < first <= last <= len(numbers):
            first, last = numbers[first - 1] or first, numbers[last - 1] or last
        lines[-1] += f" (log lines {first}–{last})"
    # What the server says about how it read the log (a symptom, a cut-off traceback, start-up noise).
    if answer.get("notes"):
        lines += ["", *(f"> ⚠ {note}" for note in answer["notes"])]
    matches = answer.get("matches", [])
    verdict = answer.get("verdict")
    if verdict == "match" and matches:
        top = matches[0]
        lines += ["", f"### Known issue: [{top['title']}]({top['url']})", ""]
        # What ranking counted against it (another exception, another name in the same wording).
        lines += [f"> {d}" for d in top.get("differences", [])] + ([""] if top.get("differences") else [])
        lines.append(_demote_headings(top["remedy_markdown"].strip()[:3000]) or "_Seen before — no fix recorded yet._")
        rest = matches[1:]
        fixed = next((m for m in rest if m["remedy_markdown"].strip() and m["score"] >= 0.5), None)
        if not top["remedy_markdown"].strip() and fixed is not None:
            lines += ["", f"A fix recorded for a close match, [{fixed['title']}]({fixed['url']}):", ""]
            lines.append(_demote_headings(fixed["remedy_markdown"].strip()[:3000]))
        rest = [m for m in rest if not (fixed is not None and not top["remedy_markdown"].strip() and m is fixed)]
        if rest:
            lines += ["", "Also similar: " + ", ".join(f"[{m['title'][:80]}]({m['url']})" for m in rest[:3])]
    elif verdict == "possible" and matches:
        lines += ["", "### Possibly related (not confirmed as the fix)", ""]
        for m in matches[:5]:
            lines.append(f"- [{m['title'][:120]}]({m['url']}) (score {m['score']:.2f})")
            lines += [f"  - {d}" for d in m.get("differences", [])]
    else:
        lines += ["", f"### No known match — [add it to Fixbase]({base_url.rstrip('/')}/) once it is solved."]
    return "\n".join(lines) + "\n"


def _demote_headings(markdown: str) -> str:
    """A remedy's own headings would outrank the summary's: make them bold lines."""
    return re.sub(r"(?m)^#{1,6}\s+(.+)$", r"**\1**", markdown)


def is_infra(answer: dict[str, Any], infra: set[str]) -> bool:
    matches = answer.get("matches", [])
    if answer.get("verdict") != "match" or not matches:
        return False
    frameworks = {
        str(matches[0].get("framework") or "").lower(),
        str(answer.get("signature", {}).get("framework") or "").lower(),
    }
    return bool(frameworks & infra)


def report(args: argparse.Namespace, log: str) -> int:
    """Ask Fixbase about `log`, print and write the summary; the exit code `triage` documents."""
    url = args.url or os.environ.get("FIXBASE_URL", "")
    token = args.token or os.environ.get("FIXBASE_TOKEN", "")
    if not url or not token:
        print("fixbase: set FIXBASE_URL and FIXBASE_TOKEN (or --url/--token); not asked.", file=sys.stderr)
        return 0
    context = dict(kv.split("=", 1) for kv in args.context if "=" in kv)
    kept = keep_what_matters(log)
    try:
        answer = ask(url, token, kept, context, args.top_k, args.timeout)
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        print(f"fixbase: could not ask {url} ({reason}); carrying on.", file=sys.stderr)
        return 0
    text = summary_markdown(answer, url, original_line_numbers(kept) if kept != log else None)
    print(text)
    target = args.summary or os.environ.get("GITHUB_STEP_SUMMARY", "")
    if target:
        try:
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except OSError as exc:
            print(f"fixbase: could not write the summary to {target}: {exc}", file=sys.stderr)
    infra = {f.strip().lower() for f in args.infra.split(",") if f.strip()}
    if args.exit_code_on_known_infra and is_infra(answer, infra):
        return int(args.exit_code_on_known_infra)
    if args.fail_on_match and answer.get("verdict") == "match":
        return EXIT_ON_MATCH
    return 0


STDERR_TAG = "[stderr]: "


def run_command(args: argparse.Namespace) -> int:
    """Run the command with its stdout and stderr passed through to ours; keep its last MAX_BYTES;
    if it fails, ask Fixbase. The exit code is always the command's own. In the log sent, each
    line the command wrote to stderr is tagged `[stderr]: `: the two streams arrive interleaved,
    and the tag tells the server that a stdout line right under an exception line on stderr is
    not the rest of its message."""
    if not args.command:
        print("fixbase run: give the command after --", file=sys.stderr)
        return 2
    cmd = args.command[1:] if args.command[0] == "--" else args.command
    if not cmd:
        print("fixbase run: give the command after --", file=sys.stderr)
        return 2
    kept: deque[str] = deque()
    size = [0]
    lock = threading.Lock()
    try:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=1, text=True, errors="replace"
        )
    except OSError as exc:  # as a shell says it: 127 when there is no such command, 126 when it cannot run
        print(f"fixbase run: cannot run {cmd[0]}: {exc.strerror or exc}; not asked.", file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126

    def pump(stream: Any, out: Any, tag: str) -> None:
        for line in stream:
            out.write(line)
            out.flush()
            with lock:
                kept.append(tag + line if line.strip() else line)
                size[0] += len(kept[-1])
                while size[0] > 4 * MAX_BYTES and kept:
                    size[0] -= len(kept.popleft())

    pumps = [
        threading.Thread(target=pump, args=(proc.stdout, sys.stdout, ""), daemon=True),
        threading.Thread(target=pump, args=(proc.stderr, sys.stderr, STDERR_TAG), daemon=True),
    ]
    for t in pumps:
        t.start()
    code = proc.wait()
    for t in pumps:
        t.join()
    if code != 0 and not "".join(kept).strip():
        print(f"fixbase run: the command failed (exit {code}) and printed nothing; not asked.", file=sys.stderr)
    elif code != 0:
        if not any(kv.startswith("job=") for kv in args.context):
            args.context = [*args.context, f"job={' '.join(cmd)[:200]}"]
        report(args, "".join(kept))
    return code


def _options(ap: argparse.ArgumentParser, on_subcommand: bool = False) -> None:
    """The shared options. On the subcommands too (their defaults suppressed, so the main parser's
    stand), so `fixbase triage --fail-on-match x.log` works as well as `fixbase --fail-on-match triage x.log`."""

    def d(value: Any) -> Any:
        return argparse.SUPPRESS if on_subcommand else value

    ap.add_argument("--url", default=d(None), help="Fixbase base URL (default $FIXBASE_URL)")
    ap.add_argument("--token", default=d(None), help="API token (default $FIXBASE_TOKEN)")
    ap.add_argument("--timeout", type=float, default=d(20.0), help="seconds to wait for an answer")
    ap.add_argument("--top-k", type=int, default=d(3))
    ap.add_argument(
        "--context", action="append", default=d([]), metavar="KEY=VALUE", help="job, url, commit, framework, cluster"
    )
    ap.add_argument(
        "--summary", default=d(None), help="append the markdown summary here (default $GITHUB_STEP_SUMMARY)"
    )
    ap.add_argument("--fail-on-match", action="store_true", default=d(False), help=f"exit {EXIT_ON_MATCH} on a match")
    ap.add_argument(
        "--exit-code-on-known-infra", type=int, default=d(None), metavar="N", help="exit N on an infrastructure match"
    )
    ap.add_argument("--infra", default=d(INFRA_FRAMEWORKS), help="frameworks counted as infrastructure")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="fixbase", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    _options(ap)
    sub = ap.add_subparsers(dest="action", required=True)
    tri = sub.add_parser("triage", help="ask about a log file (- for stdin)")
    _options(tri, on_subcommand=True)
    tri.add_argument("file")
    run = sub.add_parser("run", help="run a command; ask about its output if it fails")
    _options(run, on_subcommand=True)
    run.add_argument("command", nargs=argparse.REMAINDER)
    return ap


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:  # a usage error must not fail the job it reports on
        if exc.code in (0, None):
            return 0
        print("fixbase: could not read the arguments (see above); not asked.", file=sys.stderr)
        return 0
    if args.action == "run":
        return run_command(args)
    try:
        if args.file == "-":
            log = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8", errors="replace") as fh:
                log = fh.read()
    except OSError as exc:
        print(f"fixbase: cannot read {args.file}: {exc}; not asked.", file=sys.stderr)
        return 0
    if not log.strip():
        print("fixbase: the log is empty; not asked.", file=sys.stderr)
        return 0
    return report(args, log)


if __name__ == "__main__":
    sys.exit(main())
