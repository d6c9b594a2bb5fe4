from memflow.schemas.tables import CatalogFile
from memflow.tasks.ground.tokenize import tokenize
from memflow.tasks.index.planning import DiskFile, needs_hash, plan_index


def cat(path, sha="s", pipeline="p", size=1, mtime=1):
    return CatalogFile(path, size, mtime, sha, pipeline)


def test_plan_by_content_hash():
    disk = {
        "a.md": DiskFile("a.md", 1, 1),  # stat matched, not hashed
        "b.md": DiskFile("b.md", 2, 5, "s"),  # touched: same content
        "c.md": DiskFile("c.md", 2, 5, "new"),
        "d.md": DiskFile("d.md", 1, 1, "s"),
    }
    catalog = {"a.md": cat("a.md"), "b.md": cat("b.md"), "c.md": cat("c.md"), "e.md": cat("e.md")}
    plan = plan_index(disk, catalog, "p")
    assert plan.added == ["d.md"]
    assert plan.modified == ["c.md"]
    assert plan.deleted == ["e.md"]
    assert plan.unchanged == ["a.md", "b.md"]
    assert plan.touched == ["b.md"]


def test_pipeline_change_modifies_everything():
    plan = plan_index({"a.md": DiskFile("a.md", 1, 1)}, {"a.md": cat("a.md")}, "p2")
    assert plan.modified == ["a.md"]


def test_stat_shortcut():
    assert not needs_hash(DiskFile("a", 1, 1), cat("a"), "p")
    assert needs_hash(DiskFile("a", 1, 2), cat("a"), "p")
    assert needs_hash(DiskFile("a", 1, 1), cat("a"), "p2")
    assert needs_hash(DiskFile("a", 1, 1), None, "p")


def test_identifiers_and_short_tokens_survive():
    tokens = tokenize("handleWebSocketReconnect ECONNREFUSED P99 C 7")
    for token in ("handlewebsocketreconnect", "reconnect", "socket", "econnrefus", "p99", "c", "7"):
        assert token in tokens


def test_english_stemming_and_stopwords():
    assert tokenize("The runners were running") == ["runner", "run"]


def test_chinese_without_spaces_gives_bigrams_identical_at_query_time():
    doc = tokenize("我每天骑自行车上班")
    query = tokenize("骑自行车")
    assert set(query) <= set(doc)
    assert "自行" in doc and "行车" in doc


def test_jieba_tokenizer_segments_words():
    assert "自行车" in tokenize("我每天骑自行车上班", "jieba")


def test_digits_next_to_chinese_do_not_swallow_the_han_run():
    assert {"汽车", "保养", "9"} <= set(tokenize("老李每个周二9点有汽车保养。"))


def test_query_tokens_add_closed_compounds_of_adjacent_words():
    from memflow.tasks.ground.tokenize import query_tokens, tokenize

    tokens = query_tokens("How do I roll back a deploy? Log in, then check out.")
    assert tokens[: len(tokenize("How do I roll back a deploy? Log in, then check out."))] == \
        tokenize("How do I roll back a deploy? Log in, then check out.")
    assert {"rollback", "login", "checkout"} <= set(tokens)
    # no compound starts with a stopword, none spans punctuation, Chinese gets none
    assert "doi" not in tokens and "deploylog" not in tokens and "howdo" not in tokens
    assert query_tokens("回滚 部署") == tokenize("回滚 部署")


def test_an_acronyms_plural_is_one_word_and_its_singular():
    """"VMs", "APIs": capitals and a plural "s" were split as camelCase into "v" and "ms", so
    "How many VMs" matched every "310 ms". Now the plural and the acronym, on generated
    acronyms; a camelCase identifier still gives its parts."""
    import random
    import string

    from memflow.tasks.ground.tokenize import tokenize_lines

    rng = random.Random(29)
    for _ in range(300):
        acronym = "".join(rng.choice(string.ascii_uppercase) for _ in range(rng.randint(2, 5)))
        tokens = tokenize(f"the {acronym}s here")
        assert set(tokenize(acronym)) <= set(tokens), (acronym, tokens)  # the singular finds it
        assert all(len(t) >= 2 for t in tokens), (acronym, tokens)  # no letter alone
        assert tokens == tokenize_lines([f"the {acronym}s here"])[0]
        assert not set(tokenize("down to 310 ms")) & set(tokens) - {"310"}
    assert {"get", "http", "respons"} <= set(tokenize("getHTTPResponse"))


def test_an_index_of_another_tokenizer_version_says_to_rebuild(settings, lay):
    """After an upgrade that changes how text is cut, search and `status` name the old index and
    what to run."""
    import pytest

    from memflow import api
    from memflow.tasks.recall.hybrid import IndexMissing

    api.write("digest/wiki/a.md", "The VMs run on two hosts.", workspace=settings)
    api.index(settings)
    keyword = lay.index_dir / "keyword"
    [current] = [p for p in keyword.iterdir() if p.is_dir()]
    current.rename(keyword / "bigram-0123456789")
    with pytest.raises(IndexMissing, match="another tokenizer .*bigram-0123456789.*memflow -w .* index"):
        api.search("VMs", settings)
    from memflow.tasks.check.status import workspace_status

    assert any("another tokenizer (bigram-0123456789)" in w for w in workspace_status(settings)["warnings"])
    api.index(settings)
    assert [r.path for r in api.search("VM", settings).results] == ["digest/wiki/a.md"]
