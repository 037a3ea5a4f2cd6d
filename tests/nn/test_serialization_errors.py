"""nn.save (mg.save) pickles what is not data, as torch.save; nn.load (mg.load)
refuses a truncated, corrupt, .npy, non-numeric or lying file with one error naming it,
before allocating."""

import io
import pickle
import zipfile

import numpy as np
import pytest
from numpy.lib import format as np_format

from microgradnorm import nn


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "m.npz"
    nn.save({"w": np.arange(64.0), "n": np.array(3)}, path)
    return path


def write_npz(path, name, header, payload):
    buf = io.BytesIO()
    np_format.write_array_header_1_0(buf, header)
    buf.write(payload)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(name, buf.getvalue())
    return path


def test_round_trip(saved):
    state = nn.load(saved)
    assert state["w"].tolist() == list(np.arange(64.0)) and state["n"] == 3


@pytest.mark.parametrize("value", [np.array([1, "a"], dtype=object), np.array(["a"]),
                                   np.array([1 + 1j]), np.zeros(2, [("x", "f8")])])
def test_a_non_numeric_array_is_pickled_and_a_weights_only_load_refuses_it(tmp_path, value):
    # torch.save pickles it; torch.load refuses NumPy's globals unless weights_only=False
    path = tmp_path / "o.npz"
    nn.save({"ok": np.ones(2), "bad": value}, path)
    with pytest.raises(pickle.UnpicklingError, match=r"global numpy\..*weights_only=False"):
        nn.load(path)
    loaded = nn.load(path, weights_only=False)
    assert loaded["bad"].dtype == value.dtype and loaded["bad"].tolist() == value.tolist()


@pytest.mark.parametrize("state, refused", [
    ({"w": np.ones(2), "fn": print}, "builtins.print"),
    ([1, {2}], None),
    ({(1, 2): np.ones(2)}, None),
    ({True: 1}, None),
])
def test_what_is_not_data_is_pickled(tmp_path, state, refused):
    # torch.save pickles these; a weights-only load takes sets, but no function
    path = tmp_path / "o.npz"
    nn.save(state, path)
    if refused:
        with pytest.raises(pickle.UnpicklingError, match=f"global {refused}"):
            nn.load(path)
    assert repr(nn.load(path, weights_only=False)) == repr(state)


def test_save_to_an_unwritable_path_is_one_line_naming_it():
    with pytest.raises(FileNotFoundError) as info:
        nn.save({"w": np.ones(2)}, "/proc/x/y.npz")
    assert str(info.value) == "[Errno 2] No such file or directory: '/proc/x/y.npz'"
    assert info.value.__notes__ == ["in mg.save"]


def test_load_of_a_missing_file_or_directory_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"No such file or directory: '{tmp_path}/no"):
        nn.load(tmp_path / "no.npz")
    with pytest.raises(IsADirectoryError, match=f"Is a directory: '{tmp_path}'"):
        nn.load(tmp_path)


@pytest.mark.parametrize("keep", [0.2, 0.5, 0.9, 0.99])
def test_load_of_a_truncated_file(saved, keep):
    raw = saved.read_bytes()
    saved.write_bytes(raw[:int(len(raw) * keep)])
    with pytest.raises(ValueError, match=f"mg.load: {saved}.*(truncated|corrupt)"):
        nn.load(saved)


def test_load_of_a_corrupt_file(saved):
    raw = bytearray(saved.read_bytes())
    raw[150:160] = b"\xff" * 10                    # inside the array data: a CRC mismatch
    saved.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=f"mg.load: {saved}.*corrupt"):
        nn.load(saved)


def test_load_of_a_npy_file(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.ones(3))
    with pytest.raises(ValueError, match=r"\.npy file \(one array\), not a \.npz"):
        nn.load(path)


def test_load_of_a_file_that_is_not_an_archive(tmp_path):
    path = tmp_path / "x.npz"
    path.write_text("hello")
    with pytest.raises(ValueError, match="not a complete .npz archive"):
        nn.load(path)


def test_a_header_claiming_a_huge_array_is_refused_before_allocating(tmp_path):
    path = write_npz(tmp_path / "h.npz", "a.npy", {"descr": "<f8", "fortran_order": False,
                                                   "shape": (100000, 100000)}, b"\0" * 64)
    with pytest.raises(ValueError, match=r"claims shape \(100000, 100000\).*stores 64 bytes"):
        nn.load(path)


def test_an_object_array_member_is_refused(tmp_path):
    path = write_npz(tmp_path / "o.npz", "a.npy", {"descr": "|O", "fortran_order": False,
                                                   "shape": (1,)}, b"\0" * 8)
    with pytest.raises(ValueError, match="dtype object, not a numeric array"):
        nn.load(path)


def test_a_member_that_is_not_an_array_is_refused(tmp_path):
    path = tmp_path / "z.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "hi")
    with pytest.raises(ValueError, match="'notes.txt', which is not an array"):
        nn.load(path)
