"""Shapes of `memflow import reme`: where a ReMe/QwenPaw workspace keeps things, and what an
import adopted, reused or could not read."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RemeLayout(BaseModel):
    """Folder names of a ReMe (daily/, metadata/) or QwenPaw (memory/, mem_metadata/) workspace."""

    flavour: str  # "reme" or "qwenpaw"
    metadata: str
    daily: str
    session: str
    digest: str = "digest"
    resource: str = "resource"


class ImportReport(BaseModel):
    source: str
    workspace: str  # where memory-flows now reads the files
    mode: str  # "adopted in place", "copied", "dry run"
    layout: RemeLayout
    files: int = 0  # Markdown and resource files in the workspace's layers (copied, with --into)
    reme_chunks: int = 0  # records in ReMe's chunk store
    reme_vectors: int = 0  # of them with a vector
    reme_model: str = ""  # ReMe's embedding model as found or given ("" unknown)
    chunks: int = 0  # memory-flows chunks indexed
    reused_exact: int = 0  # vector of exactly the text memory-flows embeds
    reused_same_chunk: int = 0  # ReMe's vector of the same chunk text (without the name/description head)
    reused_composed: int = 0  # mean of the ReMe chunk vectors covering the chunk's lines
    skipped: dict[str, int] = Field(default_factory=dict)  # reason -> chunks left to embed
    resources_adopted: int = 0  # resources ReMe had converted: not converted again
    resources_pending: dict[str, str] = Field(default_factory=dict)  # path -> why it will be converted
    dreamt_adopted: int = 0  # daily notes ReMe had dreamt: not consolidated again
    dream_pending: dict[str, str] = Field(default_factory=dict)  # path -> why it stays pending
    graph_links: int = 0  # links in ReMe's graph
    index_links: int = 0  # links memory-flows derived from the files
    typed_links: int = 0  # of them `rel:: [[x]]` lines
    unreadable: list[str] = Field(default_factory=list)  # "what: why", one per problem
