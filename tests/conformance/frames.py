"""The probe/host frame protocol as the tests read it (docs/probe-protocol.md, "Frames").

A Python twin of contract/frame_reader.cc for the tests that run probes themselves: it turns a
probe's stdout into facts and protocol errors by the same rules (nonce, line cap, UTF-8, NUL,
depth, the done frame, one fact per identity, the exit status line). It is test code: the host's
reader stays the one that decides; this one only has to be at least as strict, so a probe that
passes the tests also passes the host.
"""
import json

FRAME_MARKER = b"@@sandprobe"
FRAME_PREFIX = b"@@sandprobe "
EXIT_LINE_PREFIX = b"@@sandprobe-exit "
MAX_FRAME_LINE_BYTES = 64 * 1024
MAX_FACTS = 100_000
MAX_JSON_DEPTH = 64


# contract/frame_reader.cc kItemKeys: the families whose list items share (path, variant) and
# the fields that tell them apart (strings, an integer); in every other family these keys are no
# part of the identity.
ITEM_KEYS = {
    "env.secret": (("source", "name"), None),
    "priv.runtime_sockets": (("source",), None),
    "priv.fds": ((), "fd"),
}


def fact_identity(fact):
    """contract/frame_reader.h FactIdentity: None for progress facts (a stream, no identity)."""
    def text(key):
        value = fact.get(key)
        return value if isinstance(value, str) else ""
    if text("kind") == "progress":
        return None
    parts = [text("family"), text("path"), text("variant")]
    if fact.get("summary") is True:
        parts.append("summary")
    strings, integer = ITEM_KEYS.get(text("family"), ((), None))
    for item in strings:
        if text(item):
            parts.append(f"{item}={text(item)}")
    number = fact.get(integer) if integer else None
    if isinstance(number, int) and not isinstance(number, bool):
        parts.append(f"{integer}={number}")
    return "\0".join(parts)


def _depth(value):
    """Containers open at once around the deepest value."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


class ProbeFrames:
    """What one probe run printed: facts in order, protocol errors, done, the exit status line."""

    def __init__(self):
        self.facts = []
        self.errors = []
        self.done = False
        self.noise_lines = 0
        self.exit_status = None

    @property
    def complete(self):
        return self.done and not self.errors

    def describe(self):
        problems = [] if self.done else ["no done frame"]
        return "; ".join(problems + self.errors[:5])


def parse_frames(stdout: bytes, nonce: str, truncated=False) -> ProbeFrames:
    result = ProbeFrames()
    if truncated:
        result.errors.append("output truncated at the cap")
    identities = {}
    done_frames = 0
    after_done = False
    exit_line = 0
    lines = stdout.split(b"\n")
    tail = lines.pop()  # b"" when the stream ended with a newline
    numbered = [(i + 1, line, True) for i, line in enumerate(lines)]
    if tail:
        numbered.append((len(lines) + 1, tail, False))
    for number, line, has_newline in numbered:
        if line.endswith(b"\r"):
            line = line[:-1]
        if exit_line > 0:
            result.errors.append(f"line {number}: a line after the exit status line (line {exit_line})")
            result.exit_status = None
            exit_line = -1
        if line.startswith(EXIT_LINE_PREFIX):
            digits = line[len(EXIT_LINE_PREFIX):]
            if not has_newline:
                result.errors.append(f"line {number}: truncated exit status line (no newline)")
            elif exit_line != 0:
                result.errors.append(f"line {number}: a second exit status line")
            else:
                exit_line = number
                if digits.isdigit() and len(digits) <= 3 and int(digits) <= 255:
                    result.exit_status = int(digits)
                else:
                    result.errors.append(f"line {number}: malformed exit status line")
            continue
        if not line.startswith(FRAME_MARKER):
            result.noise_lines += 1
            continue
        if done_frames:
            after_done = True
        error = None
        payload = None
        if not has_newline:
            error = "truncated frame (no newline)"
        elif len(line) > MAX_FRAME_LINE_BYTES:
            error = f"frame line is {len(line)} bytes, over the {MAX_FRAME_LINE_BYTES}-byte limit"
        elif not line.startswith(FRAME_PREFIX):
            error = "malformed frame: no space after @@sandprobe"
        else:
            rest = line[len(FRAME_PREFIX):]
            space = rest.find(b" ")
            if space < 0:
                error = "malformed frame: no payload after the nonce"
            elif not nonce or rest[:space] != nonce.encode():
                error = "frame with a foreign nonce"
            else:
                raw = rest[space + 1:]
                if b"\0" in raw:
                    error = "frame has a NUL byte"
                else:
                    try:
                        text = raw.decode("utf-8", errors="strict")
                        payload = json.loads(text, parse_constant=_reject_constant)
                    except (UnicodeDecodeError, ValueError) as e:
                        error = f"frame JSON: {e}"
                    if error is None and _depth(payload) > MAX_JSON_DEPTH:
                        error = f"frame JSON nests deeper than {MAX_JSON_DEPTH} levels"
                    if error is None and not isinstance(payload, dict):
                        error = f"frame payload is a JSON {type(payload).__name__}, not an object"
        if error is None and "done" in payload and "family" not in payload:
            if payload != {"done": True}:
                error = 'malformed done frame: must be exactly {"done":true}'
            else:
                done_frames += 1
                if done_frames > 1:
                    error = "second done frame"
        elif error is None:
            if done_frames:
                error = "frame after done"
            elif not isinstance(payload.get("family"), str) or not payload["family"]:
                error = 'fact without a non-empty string "family"'
            elif len(result.facts) >= MAX_FACTS:
                error = f"more than {MAX_FACTS} facts"
            else:
                identity = fact_identity(payload)
                if identity is not None:
                    if identity in identities:
                        error = f"a second fact for {identity!r} (first on line {identities[identity]})"
                    else:
                        identities[identity] = number
                result.facts.append(payload)
        if error is not None:
            result.errors.append(f"line {number}: {error}")
    result.done = done_frames == 1 and not after_done
    return result
