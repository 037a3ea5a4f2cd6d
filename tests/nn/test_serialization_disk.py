"""Saving respects what is on disk (links, permission bits, any key name, errno, Ctrl-C) and
loading is bounded (zip bombs, files that never end): each as torch.save / np.save do."""

import errno
import io
import os
import stat
import threading
import zipfile

import numpy as np
import pytest
from numpy.lib import format as np_format

from microgradnorm import nn, savefile
from microgradnorm.checkpoint import load_checkpoint, save_checkpoint

torch = pytest.importorskip("torch")


# ----- saving: links, permission bits, names ----------------------------------------------
@pytest.mark.parametrize("save", ["nn.save", "torch.save"])
def test_saving_through_a_symlink_updates_its_target(save, tmp_path):
    target, link = tmp_path / "real.npz", tmp_path / "link.npz"
    nn.save({"w": np.ones(2)}, target)
    link.symlink_to(target.name)
    if save == "torch.save":                      # the behaviour to match
        torch.save({"w": torch.zeros(2)}, link)
        assert link.is_symlink() and torch.load(target)["w"].tolist() == [0, 0]
        return
    nn.save({"w": np.zeros(2)}, link)
    assert link.is_symlink()
    np.testing.assert_array_equal(nn.load(target)["w"], np.zeros(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.npz", "real.npz"]


def test_saving_through_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.npz"
    link.symlink_to("made.npz")
    nn.save({"w": np.ones(2)}, link)
    assert link.is_symlink() and (tmp_path / "made.npz").is_file()


def test_saving_over_a_hard_linked_file_updates_every_link(tmp_path):
    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    nn.save({"w": np.ones(2)}, first)
    os.link(first, second)
    np.save(tmp_path / "c.npy", np.ones(1))        # np.save writes in place: links share it
    nn.save({"w": np.zeros(3)}, first)
    assert os.stat(first).st_ino == os.stat(second).st_ino
    np.testing.assert_array_equal(nn.load(second)["w"], np.zeros(3))
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664])
def test_an_existing_file_keeps_its_permission_bits(mode, tmp_path):
    path = tmp_path / "m.npz"
    nn.save({"w": np.ones(2)}, path)
    os.chmod(path, mode)
    nn.save({"w": np.zeros(2)}, path)
    save_checkpoint(path, nn.Linear(2, 2))
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_a_new_file_gets_the_mode_open_would_give(tmp_path):
    umask = os.umask(0o027)
    try:
        nn.save({"w": np.ones(2)}, tmp_path / "m.npz")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "m.npz").st_mode) == 0o640


@pytest.mark.parametrize("key", ["file", "allow_pickle", "args", "kwds", "compress"])
def test_a_key_named_like_a_savez_keyword_round_trips(key, tmp_path):
    # torch.save keeps any key; np.savez(f, file=a) fails, allow_pickle=a is a flag
    state = {key: np.arange(3.0), "w": np.ones(2)}
    nn.save(state, tmp_path / "m.npz")
    loaded = nn.load(tmp_path / "m.npz")
    assert sorted(loaded) == sorted(state)
    np.testing.assert_array_equal(loaded[key], state[key])


def test_the_file_is_what_np_load_reads(tmp_path):
    nn.save({"a": np.arange(6).reshape(2, 3), "b": np.array(2, np.float32)}, tmp_path / "m.npz")
    with np.load(tmp_path / "m.npz") as archive:
        assert archive["a"].tolist() == [[0, 1, 2], [3, 4, 5]]
        assert archive["b"].dtype == np.float32
        assert archive.files == ["a", "b", "__structure__"]      # its JSON: uint8 bytes


# ----- saving: failures keep errno and leave nothing behind -------------------------------
def test_a_failed_save_keeps_the_errno_and_names_the_path(tmp_path):
    path = tmp_path / "missing" / "m.npz"
    with pytest.raises(FileNotFoundError) as info:
        nn.save({"w": np.ones(2)}, path)
    assert info.value.errno == errno.ENOENT and info.value.filename == str(path)
    with pytest.raises(FileNotFoundError) as reference:  # what torch.save / open say
        open(path, "wb")
    assert str(info.value) == str(reference.value)
    (tmp_path / "dir.npz").mkdir()
    with pytest.raises(IsADirectoryError) as info:
        save_checkpoint(tmp_path / "dir.npz", nn.Linear(2, 2))
    assert info.value.errno == errno.EISDIR and info.value.filename == str(tmp_path / "dir.npz")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_folder_is_a_permission_error(tmp_path):
    os.chmod(tmp_path, 0o500)
    try:
        with pytest.raises(PermissionError) as info:
            nn.save({"w": np.ones(2)}, tmp_path / "m.npz")
    finally:
        os.chmod(tmp_path, 0o700)
    assert info.value.errno == errno.EACCES


def test_a_full_disk_keeps_the_old_file_and_the_errno(tmp_path, monkeypatch):
    path = tmp_path / "m.npz"
    nn.save({"w": np.ones(2)}, path)

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as info:
        nn.save({"w": np.zeros(2)}, path)
    monkeypatch.undo()
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    np.testing.assert_array_equal(nn.load(path)["w"], np.ones(2))


def test_ctrl_c_while_a_member_is_closed_stays_a_keyboard_interrupt(tmp_path, monkeypatch):
    # zipfile finalising a half-closed member raised its own ValueError instead
    path = tmp_path / "m.npz"
    nn.save({"w": np.ones(2)}, path)
    close = zipfile._ZipWriteFile.close

    def interrupted(self):
        monkeypatch.setattr(zipfile._ZipWriteFile, "close", close)
        self._zipfile._writing = True                  # as close() leaves it when cut short
        raise KeyboardInterrupt

    monkeypatch.setattr(zipfile._ZipWriteFile, "close", interrupted)
    with pytest.raises(KeyboardInterrupt):
        nn.save({"w": np.zeros(2), "v": np.zeros(3)}, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    np.testing.assert_array_equal(nn.load(path)["w"], np.ones(2))


def test_concurrent_saves_leave_one_whole_file(tmp_path):
    path = tmp_path / "m.npz"
    errors = []

    def save(value):
        try:
            for _ in range(10):
                nn.save({"w": np.full(1000, value)}, path)
        except Exception as error:                     # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=save, args=(v,)) for v in (1.0, 2.0)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    w = nn.load(path)["w"]
    assert w[0] in (1.0, 2.0) and (w == w[0]).all()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


@pytest.mark.parametrize("name", ["caf\u00e9 run.npz", "sp ace\nline.npz", "\udcff.npz"])
def test_odd_file_names_round_trip(name, tmp_path):
    try:
        os.fsencode(name)
    except UnicodeEncodeError:
        pytest.skip("the file system's encoding cannot hold this name")
    nn.save({"w": np.ones(2)}, tmp_path / name)
    np.testing.assert_array_equal(nn.load(tmp_path / name)["w"], np.ones(2))


# ----- loading is bounded -----------------------------------------------------------------
def zip_bomb(path, shape=(100_000, 100_000)):
    """A small .npz whose member declares shape's float64 (80 GB) in the zip directory (a real
    bomb deflates that many zeros; the directory, all that is checked, says the same)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("w.npy", "w", force_zip64=True) as member:
            np_format.write_array_header_1_0(member, {"descr": "<f8", "fortran_order": False,
                                                      "shape": shape})
            member.write(bytes(1 << 20))
        archive.filelist[0].file_size = 128 + int(np.prod(shape)) * 8
    return path


def test_a_zip_bomb_is_refused_before_allocating(tmp_path):
    path = zip_bomb(tmp_path / "bomb.npz")
    assert path.stat().st_size < 10_000
    with pytest.raises(ValueError, match=r"'w.npy', 80,000,000,128 bytes from [0-9,]+ stored"
                                         r".*memory available"):
        nn.load(path)


def test_a_member_larger_than_the_memory_is_refused(tmp_path, monkeypatch):
    # the same check as the zip bomb's, against a machine with 1 MB of memory
    path = tmp_path / "m.npz"
    nn.save({"w": np.zeros(200_000)}, path)
    monkeypatch.setattr(savefile, "available_memory", lambda: 1_000_000)
    with pytest.raises(ValueError, match=rf"mg.load: {path}: .*'w.npy', 1,600,128 bytes"):
        nn.load(path)
    with pytest.raises(ValueError, match="more than the 1,000,000 bytes of memory"):
        load_checkpoint(path, nn.Linear(2, 2))


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "symlink_to_dev_zero"])
def test_a_file_that_never_ends_is_refused_at_once(kind, tmp_path):
    path = tmp_path / "x.npz"
    if kind == "fifo":
        os.mkfifo(path)                            # open() would wait for a writer forever
    elif kind == "dev_zero":
        path = "/dev/zero"
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=f"{path} is not a regular file"):
        nn.load(path)
    with pytest.raises(ValueError, match="not a regular file"):
        load_checkpoint(path, nn.Linear(2, 2))


def test_a_directory_is_an_is_a_directory_error_with_errno(tmp_path):
    with pytest.raises(IsADirectoryError) as info:
        nn.load(tmp_path)
    assert info.value.errno == errno.EISDIR and info.value.filename == str(tmp_path)


def test_a_missing_file_is_what_open_raises(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        nn.load(tmp_path / "no.npz")
    with pytest.raises(FileNotFoundError) as reference:
        torch.load(tmp_path / "no.npz")
    assert str(info.value) == str(reference.value)


def test_a_pickled_object_array_is_refused_without_unpickling(tmp_path):
    path = tmp_path / "p.npz"
    np.savez(path, w=np.array([{"run": "me"}], dtype=object))
    with pytest.raises(ValueError, match="'w' has dtype object, not a numeric array"):
        nn.load(path)


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_member_name_held_twice_is_refused(tmp_path):
    path = tmp_path / "d.npz"
    with zipfile.ZipFile(path, "w") as archive:
        for value in (1.0, 2.0):                   # np.load would quietly take the last
            buffer = io.BytesIO()
            np.save(buffer, np.array([value]))
            archive.writestr("w.npy", buffer.getvalue())
    with pytest.raises(ValueError, match="holds a member name twice"):
        nn.load(path)


@pytest.mark.parametrize("path", [3, None, 1.5])
def test_a_path_that_is_not_a_path_is_a_type_error_touching_no_descriptor(path, tmp_path):
    # nn.load(3) must not read file descriptor 3, nor the save write to it
    with pytest.raises(TypeError, match=r"mg.load: f must be a path \(str, bytes or "
                                        r"os.PathLike\) or a binary file object"):
        nn.load(path)
    with pytest.raises(TypeError, match=r"mg.save: f must be a path \(str, bytes or "
                                        r"os.PathLike\) or a binary file object"):
        nn.save({"w": np.ones(2)}, path)
    with pytest.raises(TypeError, match="save_checkpoint: the path must be a str"):
        save_checkpoint(path, nn.Linear(2, 2))


def test_a_bytes_path_saves_and_loads_as_open_takes_it(tmp_path):
    path = os.fsencode(tmp_path / "m.npz")
    nn.save({"w": np.ones(2)}, path)
    np.testing.assert_array_equal(nn.load(path)["w"], np.ones(2))


def test_a_read_only_file_is_not_replaced(tmp_path, monkeypatch):
    # np.save and torch.save open it for writing and fail; the rename must not get round that
    path = tmp_path / "m.npz"
    nn.save({"w": np.ones(2)}, path)
    access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if os.fspath(p) == str(path)
                        and mode & os.W_OK else access(p, mode, **kw))
    with pytest.raises(PermissionError) as info:
        nn.save({"w": np.zeros(2)}, path)
    monkeypatch.undo()
    assert info.value.errno == errno.EACCES and info.value.filename == str(path)
    np.testing.assert_array_equal(nn.load(path)["w"], np.ones(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
