"""Evaluation: LoCoMo retrieval (and optional QA) against a raw-turn BM25 baseline, the
Chinese/English regression set, and read-only analytics for the notebooks.

Entry points: `run_evaluation` (a LoCoMo file -> questions.parquet + summary.json) and
`evaluate_sample` (one sample), `techchat` (a generated long-technical-chat set in LoCoMo's
shape), `evaluate_job` (one sample as a worker runs it: the flow runs one
task per sample and grid setting), `parse_grid` (`KEY=V1,V2` arguments); `metrics_table`
(summary.json as rows against the baseline); `run_memright` (memory-right scenario folders ->
questions.parquet + summary.json: is a fact's current value what search gives first, beside
raw-message BM25), with `memright_report` (its printed table) and `memright_questions` (how
many questions a run asks); `sample_data` (the shipped LoCoMo-format sample). It calls only
the public functions of the other stages.
"""

from memflow.tasks.evaluate.analytics import sample_data
from memflow.tasks.evaluate.eval_report import metrics_table
from memflow.tasks.evaluate.grid import parse_grid
from memflow.tasks.evaluate.locomo_eval import evaluate_job, evaluate_sample, run_evaluation
from memflow.tasks.evaluate.memright import question_count as memright_questions
from memflow.tasks.evaluate.memright import report_lines as memright_report
from memflow.tasks.evaluate.memright import run_memright
from memflow.tasks.evaluate.techchat import techchat

__all__ = ["run_evaluation", "evaluate_sample", "evaluate_job", "metrics_table", "parse_grid", "techchat",
           "run_memright", "memright_report", "memright_questions", "sample_data"]
