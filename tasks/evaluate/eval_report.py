"""Aggregate evaluation rows (pure): the summary.json shape, overall and per category."""

from __future__ import annotations

from statistics import mean

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def _mean(rows: list[dict], key: str) -> float:
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(mean(values), 4) if values else 0.0


def block(rows: list[dict], ks: list[int], budgets: list[int], prefix: str = "") -> dict:
    scored = [r for r in rows if f"{prefix}any@{ks[0]}" in r]
    updates = [r for r in scored if f"{prefix}current_first@{budgets[0]}" in r] if budgets else []
    ordered = {"current_first": {str(b): _mean(updates, f"{prefix}current_first@{b}") for b in budgets},
               "updates": len(updates)} if updates else {}
    return ordered | {
        "questions": len(scored),
        "recall_any": {str(k): _mean(scored, f"{prefix}any@{k}") for k in ks},
        "recall_all": {str(k): _mean(scored, f"{prefix}all@{k}") for k in ks},
        "budget_recall_any": {str(b): _mean(scored, f"{prefix}budget_any@{b}") for b in budgets},
        "budget_recall_all": {str(b): _mean(scored, f"{prefix}budget_all@{b}") for b in budgets},
        "session_recall": {str(k): _mean(scored, f"{prefix}session@{k}") for k in ks},
        "mrr": round(mean([1.0 / r[f"{prefix}first_hit"] if r.get(f"{prefix}first_hit") else 0.0
                           for r in scored]), 4) if scored else 0.0,
        "ndcg@10": _mean(scored, f"{prefix}ndcg10"),
    }


def category_names(rows: list[dict]) -> dict[int, str]:
    """Category number -> name: a question's own `category_name`, else LoCoMo's."""
    named = {r["category"]: r["category_name"] for r in rows if r.get("category_name")}
    return {c: named.get(c) or CATEGORIES.get(c, str(c))
            for c in sorted({r["category"] for r in rows} | set(CATEGORIES))}


def summarize(rows: list[dict], ks: list[int], budgets: list[int]) -> dict:
    names = category_names(rows)
    out = block(rows, ks, budgets)
    out["per_category"] = {
        f"{c} {name}": block([r for r in rows if r["category"] == c], ks, budgets)
        for c, name in names.items() if any(r["category"] == c for r in rows)}
    out["baseline"] = block(rows, ks, budgets, "baseline_")
    out["baseline"]["per_category"] = {
        f"{c} {name}": block([r for r in rows if r["category"] == c], ks, budgets, "baseline_")
        for c, name in names.items() if any(r["category"] == c for r in rows)}
    if any("transcript_first_hit" in r for r in rows):  # memory-flows over the raw transcripts
        out["transcript"] = block(rows, ks, budgets, "transcript_")
        out["transcript"]["per_category"] = {
            f"{c} {name}": block([r for r in rows if r["category"] == c], ks, budgets, "transcript_")
            for c, name in names.items() if any(r["category"] == c for r in rows)}
    graded = [r for r in rows if "qa_correct" in r]
    out["qa"] = {"status": "not run (no chat model configured)"} if not graded else {
        "status": "ok", "questions": len(graded),
        "accuracy": round(mean(float(r["qa_correct"]) for r in graded), 4),
        "per_category": {f"{c} {name}": round(mean(float(r["qa_correct"]) for r in graded
                                                   if r["category"] == c), 4)
                         for c, name in names.items() if any(r["category"] == c for r in graded)}}
    out["evidence"] = {"questions_total": len(rows),
                       "without_valid_evidence": sum(1 for r in rows if f"any@{ks[0]}" not in r),
                       "malformed_entries": sum(r["malformed"] for r in rows),
                       "dangling_ids": sum(r["dangling"] for r in rows)}
    return out


def metrics_table(summary: dict) -> list[dict]:
    """summary.json -> rows (metric, memflow, baseline, difference) for reports and the Prefect
    UI, overall figures only."""
    rows = []
    for family in ("recall_any", "recall_all", "budget_recall_any", "budget_recall_all", "session_recall"):
        for x, value in summary.get(family, {}).items():
            base = summary.get("baseline", {}).get(family, {}).get(x)
            rows.append({"metric": f"{family}@{x}", "memflow": value, "baseline": base,
                         "difference": None if base is None else round(value - base, 4)})
    for metric in ("mrr", "ndcg@10"):
        if metric in summary:
            base = summary.get("baseline", {}).get(metric)
            rows.append({"metric": metric, "memflow": summary[metric], "baseline": base,
                         "difference": None if base is None else round(summary[metric] - base, 4)})
    return rows
