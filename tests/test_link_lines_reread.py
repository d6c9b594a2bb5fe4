"""A search shows a linked file's anchored lines as the file says them now: the lines a process
remembers from an earlier search are read again when another program edits the file."""

from __future__ import annotations

import os
import time

from memflow import api

NOTE = "daily/2026-03-01/kettle.md"


def test_linked_lines_follow_an_edit_in_place(settings):
    root = settings.workspace
    note, node = root / NOTE, root / "digest/wiki/kitchen.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("# Kettle\n\n- The kettle colour is blue.\n", encoding="utf-8")
    node.write_text(f"# Kitchen\n\n- A gadget zorblat was noted [[{NOTE}#L3]]\n", encoding="utf-8")
    hour_ago = time.time_ns() - 3_600_000_000_000
    os.utime(note, ns=(hour_ago, hour_ago))  # old enough for a search to remember its lines
    api.index(settings)

    def linked() -> str:
        [hit] = api.search("zorblat", settings, limit=1).results
        assert hit.path == "digest/wiki/kitchen.md"
        [out] = [link for link in hit.links if link.direction == "out" and link.path == NOTE]
        return out.lines

    assert linked() == "- The kettle colour is blue."
    assert linked() == "- The kettle colour is blue."  # the second search is served remembered lines
    note.write_text("# Kettle\n\n- The kettle colour is pink.\n", encoding="utf-8")  # same size
    later = hour_ago + 60_000_000_000
    os.utime(note, ns=(later, later))
    assert linked() == "- The kettle colour is pink."
    note.write_text("# Kettle\n\n- The kettle colour is teal!\n", encoding="utf-8")  # just now
    assert linked() == "- The kettle colour is teal!"
