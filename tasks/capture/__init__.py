"""Stage 1, capture: conversations and resources become daily notes.

Entry points: `auto_memory` (a conversation -> session log + daily notes), `auto_resource`
(files under resource/ -> daily notes; `adopt_resource_notes` records ones already converted elsewhere; `catalog_counts`: refused and waiting to retry, for status), the model writers `model_writer`, `write_with_model`,
`read_with_model` (without a chat model the offline extractive writer is used), and for agent
hosts `next_turn`/`TurnState` (when to flush), and `check_messages` (validation at the door;
raises `InvalidMessages`). The session log's read side (`log_path`,
`read_log`, `message_text`, `message_key`), `refresh_day_index`, `retitle` (a note named again after a forget), `salient_terms`, `informative` and `small_talk` (what says something) and `section_kind` (what a daily note's section holds) are public
for recall, dream, forgetting and evaluation.
"""

from memflow.tasks.capture.conversation import anchor, auto_memory, retitle, section_kind
from memflow.tasks.capture.dayindex import refresh_day_index
from memflow.tasks.capture.extractive import informative, salient_terms, small_talk
from memflow.tasks.capture.model_writer import (
           model_writer,
           read_with_model,
           write_with_model,
)
from memflow.tasks.capture.resources import adopt_resource_notes, auto_resource, catalog_counts
from memflow.tasks.capture.sessionlog import log_path, message_key, message_text, read_log
from memflow.tasks.capture.turns import TurnState, next_turn
from memflow.tasks.capture.validate import InvalidMessages, check_messages

__all__ = ["auto_memory", "auto_resource", "model_writer", "write_with_model", "read_with_model",
           "next_turn", "TurnState", "log_path", "read_log", "message_text", "salient_terms",
           "check_messages", "InvalidMessages", "message_key", "refresh_day_index", "section_kind",
           "informative", "small_talk", "adopt_resource_notes", "catalog_counts", "retitle", "anchor"]
