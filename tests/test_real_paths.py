"""real_paths: an analysis asks the file system once per path; the next one (forget) sees a link that changed."""

from __future__ import annotations

import os

from cudalens.real_paths import forget, real_path


def test_a_link_changed_between_runs_is_seen_by_the_next(tmp_path) -> None:
    (tmp_path / "one.cu").write_text("")
    (tmp_path / "two.cu").write_text("")
    link = tmp_path / "k.cu"
    link.symlink_to(tmp_path / "one.cu")
    forget()
    assert real_path(str(link)) == os.path.realpath(tmp_path / "one.cu")
    link.unlink()
    link.symlink_to(tmp_path / "two.cu")
    assert real_path(str(link)) == os.path.realpath(tmp_path / "one.cu")  # kept for the analysis
    forget()  # a new analysis
    assert real_path(str(link)) == os.path.realpath(tmp_path / "two.cu")
