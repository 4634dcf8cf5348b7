"""Atomic writes: a file or folder appears whole or not at all."""

import os

import pytest

from pyterrier_sparse_eval import files


def test_atomic_write_replaces_whole_and_keeps_permissions(tmp_path):
    target = tmp_path / "out" / "results.json"
    files.atomic_write_json(target, {"a": 1})
    files.atomic_write_text(target, "second")
    assert target.read_text() == "second"
    assert os.stat(target).st_mode & 0o777 == 0o666 & ~_umask()
    assert [p.name for p in target.parent.iterdir()] == ["results.json"]  # no temporary left behind


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("old")

    def half_then_fail(tmp):
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        files.atomic_write(target, half_then_fail)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.txt"]


def test_replace_dir_refuses_an_existing_target_unless_overwriting(tmp_path):
    target = tmp_path / "index"
    target.mkdir()
    (target / "old").write_text("1")
    tmp = files.new_temp_dir(target)
    (tmp / "new").write_text("2")
    with pytest.raises(FileExistsError, match="overwrite"):
        files.replace_dir(tmp, target, overwrite=False)
    assert sorted(p.name for p in target.iterdir()) == ["old"]
    files.replace_dir(tmp, target, overwrite=True)
    assert sorted(p.name for p in target.iterdir()) == ["new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # the old folder is gone too


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
