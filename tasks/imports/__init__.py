"""Stage: import. Another memory system's workspace becomes a memory-flows workspace, keeping
what it already paid for (ReMe / QwenPaw: chunk vectors, converted resources, dreamt notes).

Entry points: `detect_layout` (a ReMe or QwenPaw folder's names; raises `NotReme`) and
`import_workspace` (copy or adopt in place, index, reuse vectors, take over catalogs; returns an
`ImportReport`).
"""

from memflow.tasks.imports.adoption import import_workspace
from memflow.tasks.imports.reme_store import NotReme, detect_layout

__all__ = ["detect_layout", "import_workspace", "NotReme"]
