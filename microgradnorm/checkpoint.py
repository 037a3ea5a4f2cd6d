"""Checkpoints that resume bitwise: model, optimizer, scheduler, step and random states in
one file of ``mg.save``'s format (docs/training.md, "Checkpoints that resume bitwise").

``mg.load(path)`` of one is a dict: ``checkpoint_version`` (2), ``step``, ``model`` (the
state dict), ``optimizer`` and ``scheduler`` (their ``state_dict()``, or None) with
``optimizer_type`` and ``scheduler_type`` (class names), ``random`` (``numpy``:
``np.random.get_state(legacy=False)``; ``python``: ``random.getstate()``;
``default_generator``: ``mg.default_generator.state_array()``; ``generator``: the ``rng``'s
``bit_generator.state``, or None) and ``extra``. Checkpoints of the layout before
(version 1: ``model/<name>``, ``optimizer/<index>/<name>``, ``numpy_random_key`` and a JSON
string ``meta``) still load, read into this one."""

import dataclasses
import json
import random

import numpy as np

from . import generator as streams
from .nn import Module
from .nn.serialization import load_file, save_file
from .optim import Optimizer
from .savefile import as_path, parse_json

__all__ = ["Checkpoint", "load_checkpoint", "save_checkpoint"]

FORMAT = 2            # checkpoint_version of the dict written
LEGACY_FORMAT = 1     # the "format" of the "meta" record of the layout before


@dataclasses.dataclass
class Checkpoint:
    """What ``load_checkpoint`` returns."""

    step: int           # the steps done when it was saved
    extra: dict         # the ``extra`` given to ``save_checkpoint`` (or {})
    path: str           # the file read


def save_checkpoint(path, model, optimizer=None, step=0, scheduler=None, rng=None,
                    extra=None):
    """Write model, optimizer, scheduler, step and random states to ``path`` atomically, in
    ``mg.save``'s format; returns the path written (as given: no suffix is added).

    Args:
        path: str, bytes or os.PathLike.
        model: the nn.Module; optimizer, scheduler: theirs, or None.
        step: the steps done, an int >= 0.
        rng: a ``np.random.Generator`` whose state to store, or None.
        extra: a JSON-compatible dict (NumPy numbers and arrays become numbers and lists).

    Example:
        >>> save_checkpoint("run.npz", model, opt, step=100, rng=rng, extra={"lr": 3e-3})
        'run.npz'
    """
    _check_objects("save_checkpoint", model, optimizer, rng)
    path = as_path(path, "save_checkpoint")
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
        raise ValueError(f"save_checkpoint: step must be a non-negative int, got {step!r}")
    try:           # NumPy numbers as numbers, arrays as lists: extra stays plain JSON data
        extra = json.loads(json.dumps(extra or {}, default=_numpy_to_json))
    except (TypeError, ValueError) as error:
        raise TypeError(f"save_checkpoint: extra must be JSON-compatible ({error})") from None
    checkpoint = {
        "checkpoint_version": FORMAT,
        "step": int(step),
        "model": model.state_dict(),
        "optimizer": None if optimizer is None else optimizer.state_dict(),
        "optimizer_type": None if optimizer is None else type(optimizer).__name__,
        "scheduler": None if scheduler is None else scheduler.state_dict(),
        "scheduler_type": None if scheduler is None else type(scheduler).__name__,
        # every stream a loop draws from: initialisation, dropout (mg.default_generator),
        # batches (rng), Python's random
        "random": {"numpy": np.random.get_state(legacy=False), "python": random.getstate(),
                   "default_generator": streams.default_generator.state_array(),
                   "generator": None if rng is None else rng.bit_generator.state},
        "extra": extra,
    }
    return save_file(checkpoint, path, "save_checkpoint")


def load_checkpoint(path, model, optimizer=None, scheduler=None, rng=None):
    """Restore what ``save_checkpoint`` wrote into the objects given and the global random
    states; returns a ``Checkpoint``. Every field is checked before anything changes: a
    mismatch or a damaged field is a ValueError naming the file and the field. Reads this
    format and the one before it (version 1).

    Args:
        path: the file; model, optimizer, scheduler, rng: as given to ``save_checkpoint``.

    Example:
        >>> load_checkpoint("run.npz", model, opt, rng=rng).step
        100
    """
    _check_objects("load_checkpoint", model, optimizer, rng)
    checkpoint = _read("load_checkpoint", path)

    def bad(field, why):
        return ValueError(f"load_checkpoint: {path}: {field}: {why}")

    step, extra = checkpoint.get("step"), checkpoint.get("extra", {})
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise bad("step", f"expected an int >= 0, got {step!r}")
    if not isinstance(extra, dict):
        raise bad("extra", f"expected a JSON object, got {type(extra).__name__}")
    for name, obj in (("optimizer", optimizer), ("scheduler", scheduler)):
        saved_type = checkpoint.get(f"{name}_type")
        if obj is not None and saved_type != type(obj).__name__:
            raise ValueError(f"load_checkpoint: {path} holds "
                             f"{saved_type or 'no ' + name}, got a {type(obj).__name__}")
    random_states = _random_states(checkpoint, rng, bad)
    # the model, optimizer and scheduler check their own state before changing; whichever
    # fails, the ones already loaded go back, so that nothing has changed
    before = [(model, {key: value._array.copy()           # the model's state_dict() is its memory
                       for key, value in model.state_dict().items()})]
    before += [(obj, obj.state_dict()) for obj in (optimizer, scheduler) if obj is not None]
    field = "model"
    try:
        model.load_state_dict(checkpoint.get("model"))
        if optimizer is not None:
            field = "optimizer"
            optimizer.load_state_dict(checkpoint.get("optimizer"))
        if scheduler is not None:
            field = "scheduler"
            scheduler.load_state_dict(checkpoint.get("scheduler"))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
        for obj, state in reversed(before):
            obj.load_state_dict(state)
        raise bad(field, error) from None
    numpy_state, python_state, generator_state, default_state = random_states
    np.random.set_state(numpy_state)
    random.setstate(python_state)
    if default_state is not None:
        streams.default_generator.set_state(default_state)
    if rng is not None:
        rng.bit_generator.state = generator_state
    return Checkpoint(step, extra, str(path))


def _random_states(checkpoint, rng, bad):
    # (NumPy's, Python's, rng's, mg.default_generator's) states, each tried on a fresh
    # generator first
    saved = checkpoint.get("random")
    if not isinstance(saved, dict):
        raise bad("random", f"expected the random states, got {saved!r}")
    try:
        numpy_state = saved["numpy"]
        np.random.RandomState().set_state(numpy_state)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError,
            OverflowError) as error:
        raise bad("random.numpy", f"not a NumPy random state ({error!r})") from None
    try:
        version, internal, gauss_next = saved["python"]
        python_state = (version, tuple(internal), gauss_next)
        random.Random().setstate(python_state)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as error:
        raise bad("random.python", f"not a state of Python's random ({error!r})") from None
    default_state = saved.get("default_generator")     # None: a checkpoint of version 1
    if default_state is not None:
        try:
            streams.Generator().set_state(default_state)
        except (ValueError, TypeError, OverflowError) as error:
            raise bad("random.default_generator", f"not a state of mg.Generator "
                                                  f"({error})") from None
    if rng is None:
        return numpy_state, python_state, None, default_state
    generator = saved.get("generator")
    if not isinstance(generator, dict):
        raise bad("random.generator", "holds no generator state for rng")
    if generator.get("bit_generator") != type(rng.bit_generator).__name__:
        raise bad("random.generator", f"holds the state of a {generator.get('bit_generator')}"
                                      f" generator, rng uses {type(rng.bit_generator).__name__}")
    try:
        type(rng.bit_generator)().state = generator
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as error:
        raise bad("random.generator", f"not a {generator['bit_generator']} state "
                                      f"({error!r})") from None
    return numpy_state, python_state, generator, default_state


def read_extra(path, where="read_extra"):
    """The ``extra`` stored in the checkpoint at ``path``, touching no other state; errors
    begin with ``where``.

    Example:
        >>> read_extra("run.npz")["losses"][:2]
        [4.17, 3.98]
    """
    extra = _read(where, path).get("extra", {})
    if not isinstance(extra, dict):
        raise ValueError(f"{where}: {path}: extra: expected a JSON object, got "
                         f"{type(extra).__name__}")
    return extra


def _read(where, path):
    # the checkpoint dict, of a file of either layout (arrays on the CPU: the model and the
    # optimizer put them on their devices); fields are checked by the caller
    checkpoint = load_file(path, where, "cpu", text=("meta",), legacy=_from_legacy)
    version = checkpoint.get("checkpoint_version") if isinstance(checkpoint, dict) else None
    if version != FORMAT:
        raise ValueError(f"{where}: {path} is not a checkpoint of checkpoint_version {FORMAT} "
                         f"(it has {version!r}; a file saved by mg.save loads with mg.load)")
    return checkpoint


def _from_legacy(arrays, label, where, place):
    # the layout before (version 1) as this one; a damaged field is carried over as it is,
    # for load_checkpoint to name
    meta = _legacy_meta(where, label, arrays)
    checkpoint = {key: meta[key] for key in ("step", "extra") if key in meta}
    checkpoint["checkpoint_version"] = FORMAT
    checkpoint["model"] = {key[len("model/"):]: value for key, value in arrays.items()
                           if key.startswith("model/")}
    saved = meta.get("random")
    if isinstance(saved, dict) and isinstance(saved.get("numpy"), dict):
        numpy_state = {key: value for key, value in saved["numpy"].items() if key != "pos"}
        numpy_state["state"] = {key: value for key, value in
                                (("key", arrays.get("numpy_random_key")),
                                 ("pos", saved["numpy"].get("pos"))) if value is not None}
        saved = {**saved, "numpy": numpy_state}
    if "random" in meta:
        checkpoint["random"] = saved
    for name in ("optimizer", "scheduler"):
        entry = meta.get(name)
        checkpoint[f"{name}_type"] = entry.get("type") if isinstance(entry, dict) else None
        checkpoint[name] = ({key: value for key, value in entry.items() if key != "type"}
                            if isinstance(entry, dict) else entry)
    if isinstance(checkpoint["optimizer"], dict):
        state = {}
        for key, value in arrays.items():
            if key.startswith("optimizer/"):
                parts = key.split("/", 2)
                index, name = parts[1], parts[2] if len(parts) == 3 else ""
                # a saved index that is not a number stays a str: the optimizer refuses it
                state.setdefault(int(index) if index.isdecimal() else index, {})[name] = value
        checkpoint["optimizer"]["state"] = state
    return checkpoint


def _legacy_meta(where, path, arrays):
    if "meta" not in arrays:
        raise ValueError(f"{where}: {path} is not a checkpoint (no 'meta' entry; a state "
                         "dict saved by nn.save loads with mg.load)")
    meta = parse_json(str(arrays["meta"]), where, path, "'meta' record")
    if not isinstance(meta, dict) or meta.get("format") != LEGACY_FORMAT:
        meta = meta if isinstance(meta, dict) else {}
        raise ValueError(f"{where}: {path} has format {meta.get('format')!r}, "
                         f"expected {LEGACY_FORMAT}")
    return meta


def _check_objects(where, model, optimizer, rng):
    if not isinstance(model, Module):
        raise TypeError(f"{where}: model must be an nn.Module, got {type(model).__name__}")
    if optimizer is not None and not isinstance(optimizer, Optimizer):
        raise TypeError(f"{where}: optimizer must be an optim.Optimizer or None, got "
                        f"{type(optimizer).__name__}")
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(f"{where}: rng must be a np.random.Generator or None, got "
                        f"{type(rng).__name__}")


def _numpy_to_json(value):
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

