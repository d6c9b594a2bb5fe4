from memflow.tasks.ground.notes import parse_note
from memflow.tasks.index.chunking import chunk_bytes, chunk_markdown


def chunks(text, budget=300):
    return chunk_markdown(parse_note("x.md", text), budget)


def lines_of(text, piece):
    return text.split("\n")[piece.start - 1:piece.end]


def test_small_note_is_one_chunk_with_real_lines_after_frontmatter():
    text = "---\nname: N\n---\n# Title\n\nbody line\n"
    [piece] = chunks(text)
    assert (piece.start, piece.end) == (4, 6)
    assert piece.text == "# Title\n\nbody line"
    assert piece.heading_path == ""


def test_sections_that_fit_stay_whole_and_breadcrumb_lists_ancestors_only():
    c_lines = "\n".join("c" * 49 for _ in range(5))
    text = "# A\n\n" + "a " * 100 + "\n\n## B\n\nbee\n\n### C\n\n" + c_lines + "\n\n## D\n\ndee\n"
    got = chunks(text, 260)
    crumbs = [p.heading_path for p in got]
    assert any(c.startswith("# A > ## B") for c in crumbs)  # ancestors of C's pieces
    assert all("## D" not in c for c in crumbs)  # never the headings that follow
    assert got[-1].text == "# A\n## D\n\ndee"
    for piece in got:
        body = piece.text.split("\n")[1 if piece.heading_path else 0:]
        body = [line for line in body if not line.startswith("[Part ")]
        assert "\n".join(body) in "\n".join(lines_of(text, piece))  # original source lines
        assert len(piece.text.encode()) <= 260


def test_every_chunk_respects_budget_including_breadcrumb():
    text = "# Top\n\n## Sub\n\n" + "\n\n".join("para %d " % i + "w" * 80 for i in range(20)) + "\n"
    for piece in chunks(text, 300):
        assert len(piece.text.encode()) <= 300
        assert piece.text.startswith(("# Top > ## Sub\n", "# Top\n## Sub\n"))


def test_table_parts_repeat_header_and_separator():
    rows = "\n".join(f"| r{i} | " + "y" * 60 + " |" for i in range(12))
    text = f"# T\n\n| h1 | h2 |\n|----|----|\n{rows}\n"
    parts = chunks(text, 300)
    assert len(parts) > 1
    for n, piece in enumerate(parts, 1):
        body = piece.text.split("\n")
        assert body[1] == f"[Part {n}/{len(parts)}]"
        assert body[2:4] == ["| h1 | h2 |", "|----|----|"]
    assert parts[0].start == 1 and parts[-1].end == 16  # heading line folded into part 1


def test_fence_parts_repeat_opening_fence_and_close_it():
    code = "\n".join(f"x_{i} = {i}  # " + "z" * 30 for i in range(20))
    text = f"# T\n\n~~~python title=a\n{code}\n~~~\n"
    parts = chunks(text, 300)
    assert len(parts) > 1
    for piece in parts:
        body = piece.text.split("\n")
        assert body[2] == "~~~python title=a" and body[-1] == "~~~"
    assert parts[0].start == 1 and parts[-1].end == 24


def test_lists_split_between_items():
    items = "\n".join(f"- item {i}\n  continued {i} " + "q" * 40 for i in range(12))
    parts = chunks(f"# L\n\n{items}\n", 300)
    assert len(parts) > 1
    for piece in parts:
        body = piece.text.split("\n")[2:]
        assert body[0].startswith("- item")  # never starts inside an item
        assert body[-1].startswith("  continued")


def test_last_resort_line_splitting_marks_parts():
    para = "\n".join("line %d " % i + "k" * 50 for i in range(20))
    parts = chunks(f"{para}\n", 200)
    assert [p.text.split("\n")[0] for p in parts] == [f"[Part {n}/{len(parts)}]" for n in range(1, len(parts) + 1)]
    covered = [n for p in parts for n in range(p.start, p.end + 1)]
    assert covered == list(range(1, 21))


def test_utf8_text_is_never_cut_inside_a_character():
    text = "# 中文\n\n" + "\n".join("这是一个很长的中文句子，用来测试分块。" * 3 for _ in range(10)) + "\n"
    for piece in chunks(text, 250):
        piece.text.encode("utf-8").decode("utf-8")
        assert len(piece.text.encode()) <= 250


def test_byte_windows_overlap_and_respect_characters_and_links():
    text = ("héllo [[digest/wiki/some-note.md]] wörld 你好 " * 20).strip()
    windows = chunk_bytes(text, 60, overlap=10)
    data = text.encode()
    for start, end, piece in windows:
        assert data[start:end].decode() == piece
        assert piece.count("[[") == piece.count("]]")
    assert windows[-1][1] == len(data)
    assert all(b[0] < a[1] for a, b in zip(windows, windows[1:]))  # overlap
