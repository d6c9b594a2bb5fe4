"""The text of a file in the encoding it was saved in (pure; stages: resources, index). The one
module that imports charset-normalizer.

Order: a byte-order mark names the encoding (UTF-8, UTF-16, UTF-32); then UTF-8, which most
files are; then charset-normalizer's candidates. Among candidates that read the bytes equally
cleanly (same "chaos"), windows-1252 is preferred: it is the WHATWG fallback for unlabelled
Western text, a superset of Latin-1's printable characters, and charset-normalizer otherwise
often picks a Central European code page for French or Portuguese text (measured: "São" read as
"Săo"); and a single-byte guess for text that is mostly ASCII letters gives way to windows-1252
(measured: "café" read as Urdu cp1006). Bytes no candidate reads, or that read mostly as control characters, are not text.
"""

from __future__ import annotations

import codecs

from memflow.tasks.stores.files import DecodeError, DecodePolicy

# UTF-32 LE's mark starts with UTF-16 LE's: the longer marks are tried first
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
SAMPLE = 256 * 1024  # what the detector reads; the whole file is then decoded
PREFERRED = "cp1252"
CHAOS_TIE = 0.01


class NotText(ValueError):
    """The file's content is not text (a binary file with a text suffix)."""


def _decode(data: bytes, codec: str, policy: DecodePolicy, name: str) -> str:
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        if policy == "strict":
            raise DecodeError(f"{name or 'file'} is not valid {codec} (byte {exc.start})") from exc
        return data.decode(codec, errors="replace")


def control_share(text: str) -> float:
    """Share of characters that are control characters (tab, newlines and form feed aside)."""
    sample = text[:8192]
    bad = sum(1 for ch in sample if (ord(ch) < 32 and ch not in "\t\n\f\r") or 0x7f <= ord(ch) < 0xa0
              or ch == "\ufffd")
    return bad / max(1, len(sample))


def detect(data: bytes) -> str | None:
    """charset-normalizer's encoding for non-UTF-8 bytes (windows-1252 on a tie), or None."""
    from charset_normalizer import from_bytes
    from charset_normalizer.utils import is_multi_byte_encoding

    matches = list(from_bytes(data[:SAMPLE]))
    if not matches:
        return None
    low = min(m.chaos for m in matches)
    tied = [m for m in matches if m.chaos <= low + CHAOS_TIE]
    best = next((m.encoding for m in tied if m.encoding == PREFERRED), tied[0].encoding)
    if best != PREFERRED and not is_multi_byte_encoding(best) and latin_text(data):
        return PREFERRED
    return best


def latin_text(data: bytes) -> bool:
    """Mostly ASCII letters and readable as windows-1252: Western text with a few accented
    letters, which a single-byte guess from a short sample may read as another script."""
    ascii_letters = sum(1 for b in data[:SAMPLE] if 65 <= b <= 90 or 97 <= b <= 122)
    try:
        data[:SAMPLE].decode(PREFERRED)
    except UnicodeDecodeError:
        return False
    return ascii_letters > 0.5 * sum(1 for b in data[:SAMPLE] if b > 64 and b != 0x7f)


def decoded(data: bytes, policy: DecodePolicy = "replace", name: str = "",
            partial: bool = False) -> tuple[str, str]:
    """(text, encoding name) of a file's bytes. `partial`: the bytes are the start of a larger
    file, so a UTF-8 character cut at the end is dropped, not a sign of another encoding.
    Raises NotText for bytes that are not text (whatever they decode as: random control bytes
    are valid UTF-8), DecodeError (policy `strict`) for bytes the chosen encoding cannot read."""
    text, encoding = _decoded(data, policy, name, partial)
    share = control_share(text)
    if share > 0.3:
        raise NotText(f"binary content ({share:.0%} control characters as {encoding}), not text")
    return text, encoding


def _decoded(data: bytes, policy: DecodePolicy, name: str, partial: bool) -> tuple[str, str]:
    for bom, codec in BOMS:
        if data.startswith(bom):
            return _decode(data, codec, policy, name), codec.removesuffix("-sig")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        if partial and exc.reason == "unexpected end of data" and len(data) - exc.start < 4:
            try:
                return data[:exc.start].decode("utf-8"), "utf-8"
            except UnicodeDecodeError:
                pass
    if b"\0" in data[:8192]:
        raise NotText("binary content (NUL bytes), not text; no note written")
    encoding = detect(data)
    if encoding is None:
        raise NotText("binary content, or text in no encoding charset-normalizer knows; "
                      "not read (save it as UTF-8)")
    return _decode(data, encoding, policy, name), codecs.lookup(encoding).name
