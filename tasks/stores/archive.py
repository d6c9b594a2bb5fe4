"""zstd streams (the one module that imports zstandard): tar.zst archives written with a content
checksum and read back member by member, and JSONL.zst files (ReMe's stores) read line by line;
both stream, so a large archive or store is never held whole."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path


class ArchiveError(ValueError):
    """An archive that is truncated, corrupt or not a tar.zst."""


def write_tar_zst(out: Path, members: Iterable[tuple[str, Path | bytes]], level: int = 10) -> None:
    """Write (name, file path or bytes) members to `out` as a zstd-compressed tar."""
    import zstandard

    with open(out, "wb") as raw:
        compressor = zstandard.ZstdCompressor(level=level, write_checksum=True, threads=-1)
        with compressor.stream_writer(raw, closefd=False) as packed, \
                tarfile.open(fileobj=packed, mode="w|", format=tarfile.PAX_FORMAT) as tar:
            for name, source in members:
                if isinstance(source, bytes):
                    info = tarfile.TarInfo(name)
                    info.size = len(source)
                    tar.addfile(info, io.BytesIO(source))
                else:
                    info = tar.gettarinfo(str(source), arcname=name)
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    with open(source, "rb") as handle:
                        tar.addfile(info, handle)


MemberChunks = Iterator[bytes]
CHUNK = 1 << 20


def stream_tar_zst(archive: Path) -> Iterator[tuple[str, int, MemberChunks]]:
    """(name, size from its header, its bytes in chunks of at most 1 MiB) of each regular file
    member, in order; read each member's chunks (or not) before asking for the next member.
    Nothing is held whole. Raises ArchiveError when the archive is truncated, fails its
    checksum, is not a tar.zst or holds a member that is not a regular file."""
    import zstandard

    try:
        with open(archive, "rb") as raw:
            reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
            with tarfile.open(fileobj=reader, mode="r|") as tar:
                for member in tar:
                    if member.isdir():
                        continue
                    if not member.isfile():
                        raise ArchiveError(f"{archive}: member {member.name!r} is not a regular file")
                    yield member.name, member.size, _chunks(archive, tar.extractfile(member), member)
    except (zstandard.ZstdError, tarfile.TarError, EOFError) as exc:
        raise ArchiveError(f"{archive} is truncated or corrupt ({type(exc).__name__}: {exc})") from exc


def _chunks(archive: Path, handle, member: tarfile.TarInfo) -> MemberChunks:
    import zstandard

    read = 0
    try:
        while handle is not None and (data := handle.read(min(CHUNK, member.size - read))):
            read += len(data)
            yield data
    except (zstandard.ZstdError, tarfile.TarError, EOFError) as exc:
        raise ArchiveError(f"{archive} is truncated or corrupt inside {member.name!r} "
                           f"({type(exc).__name__}: {exc})") from exc
    if read != member.size:
        raise ArchiveError(f"{archive}: truncated inside {member.name!r}")


def read_tar_zst(archive: Path) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each regular file member, in order (whole members: small archives)."""
    for name, _size, chunks in stream_tar_zst(archive):
        yield name, b"".join(chunks)


def read_jsonl_zst(path: Path, block: int = 1 << 16) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line of a zstd-compressed JSONL file, streaming
    block by block. Raises ArchiveError when the stream is truncated (a frame never ends) or not
    zstd, UnicodeDecodeError on bad UTF-8 (the caller names the file)."""
    import codecs

    import zstandard

    decoder = codecs.getincrementaldecoder("utf-8")()
    pending, number = "", 0
    try:
        with open(path, "rb") as raw:
            inflate = zstandard.ZstdDecompressor().decompressobj()
            while data := raw.read(block):
                text = ""
                while data:
                    text += decoder.decode(inflate.decompress(data))
                    data = inflate.unused_data if inflate.eof else b""
                    if data:  # the next frame
                        inflate = zstandard.ZstdDecompressor().decompressobj()
                *lines, pending = (pending + text).split("\n")
                for line in lines:
                    number += 1
                    if line.strip():
                        yield number, line
            if not inflate.eof:
                raise ArchiveError(f"{path} is truncated (its last zstd frame does not end)")
    except zstandard.ZstdError as exc:
        raise ArchiveError(f"{path} is truncated or not zstd ({exc})") from exc
    tail = pending + decoder.decode(b"", final=True)
    if tail.strip():
        yield number + 1, tail
