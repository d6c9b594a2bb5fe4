from memflow.schemas.notes import Link
from memflow.tasks.ground.markdown import blocks, parse_anchor, parse_links, rewrite_links
from memflow.tasks.ground.notes import parse_note, render_note


def test_wikilink_forms_parse_to_target_anchor_label_and_line():
    text = "a [[x/y.md]]\nb [[x/z.md|Zed]] and [[p.md#L9]]\n[[q.md#L9-L10,L15-L20|lbl]]"
    assert parse_links(text) == [
        Link("x/y.md", "", "", 1), Link("x/z.md", "", "Zed", 2), Link("p.md", "L9", "", 2),
        Link("q.md", "L9-L10,L15-L20", "lbl", 3),
    ]


def test_targets_are_literal():
    assert parse_links("[[notes/foo]]")[0].target == "notes/foo"


def test_typed_lines_give_link_kind():
    links = parse_links("derived_from:: [[daily/a.md]]\n- relates_to:: [[digest/b.md]]\n[[c.md]]")
    assert [(l.target, l.kind) for l in links] == [
        ("daily/a.md", "derived_from"), ("digest/b.md", "relates_to"), ("c.md", "link")]


def test_links_in_code_fences_and_inline_code_are_not_links():
    text = "```md\n[[in/fence.md]]\n```\nuse `[[inline.md]]` or [[real.md]]\n~~~\n[[t.md]]\n~~~"
    assert [l.target for l in parse_links(text)] == ["real.md"]


def test_line_numbers_offset_by_first_line():
    assert parse_links("x\n[[a.md]]", first_line=5)[0].line == 6


def test_anchor_ranges():
    assert parse_anchor("L9") == [(9, 9)]
    assert parse_anchor("L9-L10,L15-L20") == [(9, 10), (15, 20)]
    assert parse_anchor("heading") == []


def test_rewrite_keeps_anchor_label_and_code():
    text = "[[b.md#L2]] [[b.md|B]] [[b.md]] `[[b.md]]` [[b.mdx]]\r\n"
    new, count = rewrite_links(text, "b.md", "c.md")
    assert count == 3
    assert new == "[[c.md#L2]] [[c.md|B]] [[c.md]] `[[b.md]]` [[b.mdx]]\r\n"


def test_frontmatter_keys_order_types_and_dates_round_trip():
    src = "---\nname: N\ndescription: D\nday: 2026-01-02\ntags:\n- a\n- b\nscore: 3\n---\nbody\n"
    note = parse_note("x.md", src)
    assert list(note.metadata) == ["name", "description", "day", "tags", "score"]
    assert note.metadata["day"].isoformat() == "2026-01-02"
    assert note.body_start == 10
    assert render_note(note.metadata, note.body) == src


def test_malformed_frontmatter_is_read_as_markdown(caplog):
    src = "---\nname: [unclosed\n---\n# Title\n"
    note = parse_note("bad.md", src)
    assert note.warning.startswith("malformed frontmatter")
    assert note.body == src and note.metadata == {}
    assert "malformed frontmatter" in caplog.text


def test_crlf_is_normalised_for_parsing():
    note = parse_note("x.md", "---\r\nname: N\r\n---\r\nline\r\n")
    assert note.name == "N" and note.body == "line\n"


def test_blocks_have_real_file_lines():
    body = "# T\n\npara\n\n- a\n- b\n\n| h |\n|---|\n| 1 |\n\n```py\nx\n```\n"
    got = [(b.kind, b.start, b.end) for b in blocks(body, first_line=4)]
    assert got == [("heading", 4, 4), ("paragraph", 6, 6), ("list", 8, 9), ("table", 11, 13),
                   ("fence", 15, 17)]
    assert blocks(body, 4)[2].items == (8, 9)


def test_simple_frontmatter_reads_what_the_yaml_loader_reads():
    import random

    import yaml

    from memflow.tasks.ground.notes import _LOADER, _simple_frontmatter

    # what capture, dream and resources write, read without the loader
    fm = ("name: \"murrinto, quonesalix\"\ndescription: 4 note(s) today.\nsession_id: 2026-11-20-1179\n"
          "source_conversation: '[[session/dialog/a.jsonl]]'\nsubject: personal:rikavi\nname: C# – 中\n")
    assert _simple_frontmatter(fm) == yaml.load(fm, Loader=_LOADER)
    # anything the loader builds as another type, or reads otherwise, is left to it
    for line in ("n: 3", "d: 2026-01-02", "yes: x", "x: null", "x: ~", "x: true", "x: 1.5", "x: .inf",
                 "x:", "x: a: b", "x: a #c", "x: [a]", "x: &a b", "x: \"a\\tb\"", "x: 'it''s'", "x: a\tb",
                 "x: <<", "x: 12:30", " x: a", "x: - a", "x: a:", "x: a\u2028b", "x: \ufeffa"):
        assert _simple_frontmatter(line + "\n") is None, line
    rng = random.Random(5)
    pieces = list("abz AZ09_- .,:#'\"()[]{}!&*|>%@`?~=<\\\t\u00e9\u2013\u4e2d") + ["yes", "null", "2026-01-02", "1.5", "on"]
    for _ in range(20_000):
        lines = []
        for _ in range(rng.randint(1, 3)):
            value = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
            quote = rng.choice(["", "", "'", '"'])
            lines.append(f"{rng.choice(['name', 'y', 'a-b', 'k1', 'null'])}: {quote}{value}{quote}")
        text = "\n".join(lines) + "\n"
        fast = _simple_frontmatter(text)
        if fast is not None:
            loaded = yaml.load(text, Loader=_LOADER)
            assert fast == loaded and list(fast) == list(loaded), text
            assert all(type(v) is str for v in fast.values()), text


def test_deep_nesting_is_refused_and_shallow_lists_are_not():
    import pytest

    from memflow.schemas.settings import Settings
    from memflow.tasks.ground.guard import FileRefused, check_markdown

    settings = Settings()
    deep = "".join("  " * i + "- item\n" for i in range(settings.nesting_max_depth + 5)).encode()
    with pytest.raises(FileRefused, match="nests lists/quotes"):
        check_markdown(deep, settings)
    with pytest.raises(FileRefused, match="nests lists/quotes"):
        check_markdown(("> " * 120 + "- x\n").encode(), settings)
    check_markdown(("- " + "word " * 200 + "\n").encode() * 50, settings)


def test_links_read_in_one_scan_match_the_line_by_line_reading():
    import random

    from memflow.tasks.ground.markdown import HISTORY_LINE_RE, TYPED_LINE_RE, iter_link_spans, link_fields

    def by_lines(text, first_line):  # the reading of every line, code masked
        lines = text.split("\n")
        out = []
        for line_no, _s, _e, m in iter_link_spans(text, first_line):
            line = lines[line_no - first_line]
            typed = TYPED_LINE_RE.match(line)
            kind = typed.group(1) if typed else "superseded" if HISTORY_LINE_RE.match(line) else "link"
            out.append((line_no, m.group(1).strip(), (m.group(2) or "").strip(), (m.group(3) or "").strip(), kind))
        return out

    rng = random.Random(3)
    parts = ["[[a.md]]", "[[b.md#L3|B]]", "[[ c #x ]]", "- ", "  - until 2026-01-02: ", "rel:: ", "x", " ",
             "\n", "\n", "[[", "]]", "|", "#", "[[d\ne]]"]
    for _ in range(5000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 30)))
        first = rng.choice([1, 7])
        assert link_fields(text, first) == by_lines(text, first), text


def test_wikilink_pattern_matches_as_the_lazy_pattern_did():
    import random
    import re

    from memflow.tasks.ground.markdown import WIKILINK_RE

    lazy = re.compile(r"\[\[([^\[\]\n|#]+?)(?:#([^\[\]\n|]*))?(?:\|([^\[\]\n]*))?\]\]")
    rng = random.Random(1)
    for _ in range(50_000):
        text = "".join(rng.choice("[]#|\n ab") for _ in range(rng.randint(0, 16)))
        assert [(m.span(), m.groups()) for m in WIKILINK_RE.finditer(text)] == \
            [(m.span(), m.groups()) for m in lazy.finditer(text)], text


def test_expanded_size_of_a_mapping_of_strings_is_what_the_walk_counts():
    from memflow.tasks.ground import notes

    def walked(value, budget, max_chars):  # the walk, as it runs on any value
        return notes.expanded_size([value], budget, max_chars)  # a list: never the mapping shortcut

    for value in ({}, {"a": "b"}, {"name": "x" * 50, "d": "yz"}, {str(i): "v" for i in range(40)}):
        for budget in (0, 1, 3, 79, 80, 81, 10_000):
            for max_chars in (None, 0, 5, 51, 53, 10_000):
                assert notes.expanded_size(value, budget, max_chars) == walked(value, budget, max_chars), \
                    (value, budget, max_chars)
