"""Optional QA accuracy: a chat model answers from the retrieved context, an LLM judge grades."""

from __future__ import annotations

from pydantic import BaseModel

from memflow.schemas.settings import Settings
from memflow.tasks.ground.llm import chat, complete_json

ANSWER_SYSTEM = "Answer the question in a few words using only the memory context. If it is not there, say 'unknown'."
JUDGE_SYSTEM = ('You grade an answer against the gold answer. Reply with JSON {"correct": true|false}: '
                'true when the answer states the same fact (wording may differ).')


class Grade(BaseModel):
    correct: bool


def answer_and_grade(settings: Settings, question: str, context: str, gold: str) -> tuple[str, bool]:
    reply = chat(settings, [{"role": "system", "content": ANSWER_SYSTEM},
                            {"role": "user", "content": f"Memory context:\n{context}\n\nQuestion: {question}"}])
    answer = (reply.get("content") or "").strip()
    grade = complete_json(settings, [
        {"role": "system", "content": JUDGE_SYSTEM},
        {"role": "user", "content": f"Question: {question}\nGold answer: {gold}\nAnswer: {answer}"}], Grade)
    return answer, grade.correct
