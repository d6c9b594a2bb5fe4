"""Stage 3, consolidate ("dream"): new daily notes -> digest nodes, reversible, plus topics.

Entry points: `run_dream` (the whole run within a budget; raises `DreamStalled` when it could
consume nothing), `migrate_nodes` (earlier node format -> fact lines), its stages `extract_stage`, `integrate_stage`,
`topics_stage`, `finish_stage` (the Prefect flow runs them as tasks; `nothing_to_do`: the summary
of a run with no work, naming the files left out), the model deciders
`extract_with_model`, `decide_with_model`, runs and rollback (`list_runs`, `rollback`,
`catalog_path`, `recover_interrupted` for killed runs, `rebuild_catalog` from the digest's sources, `adopt_consolidated` for notes consolidated elsewhere), the chosen interest topics (`proactive`) and a run as Markdown
(`summary_markdown`); the node format's read side (`facts_of`, `fact_line`); the profile
(`build_profile`: the user's and named people's current facts within a token budget).
"""

from memflow.tasks.dream.digest import fact_line, facts_of, set_meta
from memflow.tasks.dream.dream_runs import (NO_MANIFEST, forget_catalog_entries, list_runs,
                                          recover_interrupted, rollback)
from memflow.tasks.dream.migrate import migrate_nodes
from memflow.tasks.dream.profile import build_profile
from memflow.tasks.dream.model_dream import decide_with_model, extract_with_model
from memflow.tasks.dream.nightly import (
    DreamStalled,
    adopt_consolidated,
    catalog_path,
    extract_stage,
    finish_stage,
    integrate_stage,
    integrate_within,
    nothing_to_do,
    pending_notes,
    proactive,
    rebuild_catalog,
    run_dream,
    summary_markdown,
    topics_stage,
)

__all__ = ["forget_catalog_entries", "run_dream", "extract_stage", "integrate_stage", "integrate_within",
           "topics_stage", "finish_stage", "nothing_to_do",
           "extract_with_model", "decide_with_model", "list_runs", "NO_MANIFEST", "rollback", "catalog_path",
           "proactive", "summary_markdown", "migrate_nodes", "DreamStalled", "facts_of", "fact_line",
           "set_meta", "recover_interrupted", "rebuild_catalog", "pending_notes",
           "adopt_consolidated", "build_profile"]
