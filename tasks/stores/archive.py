"""tar.zst archives (the one module that imports zstandard): write files into a zstd-compressed
tar stream with a content checksum, and read one back member by member, streaming (a large
archive is never held whole)."""

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


def read_tar_zst(archive: Path) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each regular file member, in order. Raises ArchiveError when the archive
    is truncated, fails its checksum or is not a tar.zst."""
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
                    handle = tar.extractfile(member)
                    data = handle.read() if handle else b""
                    if len(data) != member.size:
                        raise ArchiveError(f"{archive}: truncated inside {member.name!r}")
                    yield member.name, data
    except (zstandard.ZstdError, tarfile.TarError, EOFError) as exc:
        raise ArchiveError(f"{archive} is truncated or corrupt ({type(exc).__name__}: {exc})") from exc
