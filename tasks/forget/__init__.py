"""Forgetting: the one job that removes what was given, and only when asked.

Entry points: `plan_forget` (pure over the files: what `memflow forget` would change, by session,
by daily note or by a text match: messages, lines, deletions, renames, state files) and
`apply_forget` (does it, records salted-hash tombstones so later captures do not bring it back,
and re-indexes with no old version left). `matching` finds a `--match` text and the names that
carry it; `scrub` rewrites state. `finish_pending` completes a forget killed before its index
rebuild. `journal` holds the plan saved before any file changes: `finish_pending` carries out
the plan a killed forget left, and removes the temp files of its writes.
"""

from memflow.tasks.forget.forgetting import ForgetPlan, apply_forget, plan_forget
from memflow.tasks.forget.journal import FILE as PLAN_FILE
from memflow.tasks.forget.journal import finish_pending
from memflow.tasks.forget.matching import without_links

__all__ = ["plan_forget", "apply_forget", "finish_pending", "ForgetPlan", "PLAN_FILE", "without_links"]
