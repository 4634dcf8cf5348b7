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


def test_a_killed_writers_temporary_file_goes_at_the_next_write(tmp_path):
    """A process killed inside atomic_write leaves its temporary file; the next write of the same path on this
    host removes it. A writer still at work (a live process) keeps its own."""
    import signal
    import subprocess
    import sys

    target = tmp_path / "sdm.json"
    mid_write = (
        "import os, signal, sys, time\n"
        "from pyterrier_sparse_eval import files\n"
        "def write(tmp):\n"
        "    tmp.write_text('half')\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(600) if sys.argv[2] == 'live' else os.kill(os.getpid(), signal.SIGKILL)\n"
        "files.atomic_write(sys.argv[1], write)\n"
    )
    killed = subprocess.run(
        [sys.executable, "-c", mid_write, str(target), "killed"], capture_output=True, text=True
    )
    assert killed.returncode == -signal.SIGKILL and killed.stdout == "writing\n"
    (left,) = [p.name for p in tmp_path.iterdir()]
    assert left.startswith(".sdm.json.") and left.endswith(".tmp.json")
    live = subprocess.Popen(
        [sys.executable, "-c", mid_write, str(target), "live"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert live.stdout.readline() == "writing\n"
        (working,) = [p.name for p in tmp_path.iterdir()]  # its write removed the killed one's file
        assert working != left and f".{live.pid}." in working
        files.atomic_write_json(target, {"a": 1})
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["sdm.json", working])
    finally:
        live.kill()
        live.wait()
    files.atomic_write_json(target, {"a": 2})  # the live writer is dead now: its file goes too
    assert [p.name for p in tmp_path.iterdir()] == ["sdm.json"]


def test_only_open_descriptors_and_special_files_are_streams(tmp_path):
    """/dev/stdout, /dev/fd/N and /proc/<pid>/fd/... name open descriptors (written as they are, appended to);
    /dev/null is a device; a file under /dev/shm (a file system in memory) is a file like any other: written whole
    by a rename, and a link to it written through (every path under /dev had been taken for a stream)."""
    from pathlib import Path

    for name in ("/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/1", f"/proc/{os.getpid()}/fd/2"):
        assert files.is_stream(files.written_path(name)), name
    assert files.is_stream(Path("/dev/null"))
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        pytest.skip("needs a writable /dev/shm")
    target = shm / f"pse-test-{os.getpid()}.json"
    try:
        target.write_text("old")
        link = tmp_path / "link.json"
        link.symlink_to(target)
        assert not files.is_stream(files.written_path(link)) and files.written_path(link) == target
        files.atomic_write_text(link, "new")
        assert link.is_symlink() and target.read_text() == "new"
        files.atomic_write_text(target, "newer")  # replaced whole, not appended to
        assert target.read_text() == "newer"
    finally:
        target.unlink(missing_ok=True)


@pytest.mark.parametrize("make", ["mkdir", "open"])
def test_an_interrupt_right_after_a_temporary_is_created_removes_it(tmp_path, monkeypatch, make):
    """Ctrl-C (or SIGTERM) arriving just after the system call that creates a build's temporary folder or an atomic
    write's temporary file, before the code that removes it on failure knew its name, had left it behind."""
    real = getattr(os, make)

    def created_then_interrupted(path, *args, **kwargs):
        result = real(path, *args, **kwargs)
        if ".tmp" in os.fspath(path):
            raise KeyboardInterrupt
        return result

    monkeypatch.setattr(os, make, created_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        if make == "mkdir":
            files.new_temp_dir(tmp_path / "index")
        else:
            files.atomic_write_text(tmp_path / "results.txt", "x")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_only_the_calling_threads_unfinished_folders_are_removed(tmp_path):
    """A command's clean-up (the command line's, after each command) leaves alone the folder of a build another
    thread of the process is still writing."""
    import threading

    theirs: list = []
    made = threading.Event()
    done = threading.Event()

    def build():
        theirs.append(files.new_temp_dir(tmp_path / "a"))
        made.set()
        done.wait(30)
        theirs.append(files.remove_unfinished())

    other = threading.Thread(target=build)
    other.start()
    assert made.wait(30)
    mine = files.new_temp_dir(tmp_path / "b")
    assert files.remove_unfinished() == [mine]
    assert theirs[0].is_dir() and not mine.exists()
    done.set()
    other.join(30)
    assert theirs[1] == [theirs[0]] and list(tmp_path.iterdir()) == []


def _interrupt_at_each_line(functions, call):
    """Call ``call()`` once for each line of ``functions``, with KeyboardInterrupt raised as that line is reached
    (a trace function's exception enters the traced frame there): where a signal's handler runs in Python, between
    statements. Returns the number of calls interrupted."""
    import sys

    codes = {f.__code__ for f in functions}
    lines = sorted({(c, n) for c in codes for _, _, n in c.co_lines() if n and n > c.co_firstlineno}, key=str)
    interrupted = 0
    for code, line in lines:

        def local(frame, event, arg, code=code, line=line):
            if event == "line" and frame.f_code is code and frame.f_lineno == line:
                raise KeyboardInterrupt
            return local

        sys.settrace(lambda frame, event, arg: local if frame.f_code in codes else None)
        try:
            call()
        except KeyboardInterrupt:
            interrupted += 1
        finally:
            sys.settrace(None)
    return interrupted


def test_an_atomic_write_interrupted_at_any_line_leaves_the_old_file_or_the_new_and_no_temporary(tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("old")
    seen = set()

    def write():
        files.atomic_write_text(target, "new")
        seen.add(target.read_text())

    def after():
        seen.add(target.read_text())
        assert [p.name for p in tmp_path.iterdir()] == ["results.txt"]
        target.write_text("old")

    def call():
        try:
            write()
        finally:
            after()

    assert _interrupt_at_each_line([files.atomic_write], call) > 10
    assert seen == {"old", "new"}


def test_a_temporary_folder_interrupted_at_any_line_is_removed_or_returned_held(tmp_path):
    def call():
        folder = None
        try:
            folder = files.new_temp_dir(tmp_path / "index")
        finally:
            assert list(tmp_path.iterdir()) == ([folder] if folder else [])
            if folder:
                assert files.remove_unfinished() == [folder]
        assert not files._HELD

    assert _interrupt_at_each_line([files.new_temp_dir, files._hold], call) > 5
