"""Checkpoints that resume bitwise: model, optimizer, scheduler, step and random states in
one ``.npz`` (docs/training.md, "Checkpoints that resume bitwise").

Layout: ``model/<name>``, ``optimizer/<index>/<name>``, ``numpy_random_key`` and ``meta``,
a JSON string with the step, the options, the scheduler, the other random states, ``extra``."""

import dataclasses
import json
import random

import numpy as np

from . import backend
from .nn import Module
from .optim import Optimizer
from .savefile import atomic_savez, read_npz

__all__ = ["Checkpoint", "load_checkpoint", "save_checkpoint"]

FORMAT = 1


@dataclasses.dataclass
class Checkpoint:
    """What ``load_checkpoint`` returns."""

    step: int           # the steps done when it was saved
    extra: dict         # the ``extra`` given to ``save_checkpoint`` (or {})
    path: str           # the file read


def save_checkpoint(path, model, optimizer=None, step=0, scheduler=None, rng=None,
                    extra=None):
    """Write model, optimizer, scheduler, step and random states to ``path`` atomically;
    returns the path written (``.npz`` added when missing).

    ``rng``: a ``np.random.Generator`` whose state to store; ``extra``: a JSON-compatible dict.

    Example:
        >>> save_checkpoint("run.npz", model, opt, step=100, rng=rng, extra={"lr": 3e-3})
    """
    _check_objects("save_checkpoint", model, optimizer, rng)
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
        raise ValueError(f"save_checkpoint: step must be a non-negative int, got {step!r}")
    arrays = {f"model/{key}": backend.to_numpy(value.data)
              for key, value in model.state_dict().items()}
    meta = {"format": FORMAT, "step": int(step), "extra": extra or {}}
    if optimizer is not None:
        state = optimizer.state_dict()
        meta["optimizer"] = {"type": type(optimizer).__name__,
                             "param_groups": state["param_groups"]}
        for index, entries in state["state"].items():
            for name, value in entries.items():
                arrays[f"optimizer/{index}/{name}"] = backend.to_numpy(value) \
                    if backend.is_cupy_array(value) else np.asarray(value)
    if scheduler is not None:
        meta["scheduler"] = {"type": type(scheduler).__name__, **scheduler.state_dict()}
    numpy_state = np.random.get_state(legacy=False)
    arrays["numpy_random_key"] = numpy_state["state"]["key"]
    meta["random"] = {
        "numpy": {key: value for key, value in numpy_state.items() if key != "state"}
        | {"pos": int(numpy_state["state"]["pos"])},
        "python": random.getstate(),            # its tuples become JSON lists
        "generator": rng.bit_generator.state if rng is not None else None,
    }
    try:
        json.dumps(meta["extra"], default=_numpy_to_json)    # NumPy numbers: as numbers
    except TypeError as error:
        raise TypeError(f"save_checkpoint: extra must be JSON-compatible ({error})") from None
    # NumPy values elsewhere (a float32 lr, a Philox key) become numbers and lists
    arrays["meta"] = np.array(json.dumps(meta, default=_numpy_to_json))
    return atomic_savez(path, arrays, where="save_checkpoint")


def load_checkpoint(path, model, optimizer=None, scheduler=None, rng=None):
    """Restore what ``save_checkpoint`` wrote into the objects given and the global random
    states; returns a ``Checkpoint``. Every field is checked before anything changes: a
    mismatch or a damaged field is a ValueError naming the file and the field."""
    _check_objects("load_checkpoint", model, optimizer, rng)
    arrays = read_npz(path, "load_checkpoint", text=("meta",))
    meta = _meta("load_checkpoint", path, arrays)

    def bad(field, why):
        return ValueError(f"load_checkpoint: {path}: {field}: {why}")

    step, extra = meta.get("step"), meta.get("extra", {})
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise bad("step", f"expected an int >= 0, got {step!r}")
    if not isinstance(extra, dict):
        raise bad("extra", f"expected a JSON object, got {type(extra).__name__}")
    for name, obj in (("optimizer", optimizer), ("scheduler", scheduler)):
        saved = meta.get(name)
        saved_type = saved.get("type") if isinstance(saved, dict) else None
        if obj is not None and saved_type != type(obj).__name__:
            raise ValueError(f"load_checkpoint: {path} holds "
                             f"{saved_type or 'no ' + name}, got a {type(obj).__name__}")
    random_states = _random_states(arrays, meta, rng, bad)
    # the model, optimizer and scheduler check their own state before changing; whichever
    # fails, the ones already loaded go back, so that nothing has changed
    before = [(model, {key: value.data.copy()           # the model's state_dict() is its memory
                       for key, value in model.state_dict().items()})]
    before += [(obj, obj.state_dict()) for obj in (optimizer, scheduler) if obj is not None]
    field = "model"
    try:
        model.load_state_dict({key[len("model/"):]: value for key, value in arrays.items()
                               if key.startswith("model/")})
        if optimizer is not None:
            field = "optimizer"
            optimizer.load_state_dict(_optimizer_state(arrays, meta["optimizer"]))
        if scheduler is not None:
            field = "scheduler"
            scheduler.load_state_dict({key: value for key, value in meta["scheduler"].items()
                                       if key != "type"})
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
        for obj, state in reversed(before):
            obj.load_state_dict(state)
        raise bad(field, error) from None
    numpy_state, python_state, generator_state = random_states
    np.random.set_state(numpy_state)
    random.setstate(python_state)
    if rng is not None:
        rng.bit_generator.state = generator_state
    return Checkpoint(step, extra, str(path))


def _random_states(arrays, meta, rng, bad):
    # (NumPy's, Python's, rng's) states, each tried on a fresh generator first
    saved = meta.get("random")
    if not isinstance(saved, dict):
        raise bad("random", f"expected the random states, got {saved!r}")
    try:
        numpy_state = dict(saved["numpy"])
        numpy_state["state"] = {"key": arrays["numpy_random_key"],
                                "pos": numpy_state.pop("pos")}
        np.random.RandomState().set_state(numpy_state)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
        raise bad("random.numpy", f"not a NumPy random state ({error!r})") from None
    try:
        version, internal, gauss_next = saved["python"]
        python_state = (version, tuple(internal), gauss_next)
        random.Random().setstate(python_state)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as error:
        raise bad("random.python", f"not a state of Python's random ({error!r})") from None
    if rng is None:
        return numpy_state, python_state, None
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
    return numpy_state, python_state, generator


def read_extra(path, where="read_extra"):
    """The ``extra`` stored in the checkpoint at ``path``, touching no other state; errors
    begin with ``where``."""
    extra = _meta(where, path, read_npz(path, where, text=("meta",))).get("extra", {})
    if not isinstance(extra, dict):
        raise ValueError(f"{where}: {path}: extra: expected a JSON object, got "
                         f"{type(extra).__name__}")
    return extra


def _meta(where, path, arrays):
    if "meta" not in arrays:
        raise ValueError(f"{where}: {path} is not a checkpoint (no 'meta' entry; "
                         f"a model saved by nn.save loads with nn.load)")
    try:
        meta = json.loads(str(arrays["meta"]))
    except ValueError as error:
        raise ValueError(f"{where}: {path} has a corrupt 'meta' record ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        meta = meta if isinstance(meta, dict) else {}
        raise ValueError(f"{where}: {path} has format {meta.get('format')!r}, "
                         f"expected {FORMAT}")
    return meta


def _optimizer_state(arrays, saved):
    state = {}
    for key, value in arrays.items():
        if key.startswith("optimizer/"):
            _, index, name = key.split("/", 2)
            state.setdefault(int(index), {})[name] = value
    return {"state": state, "param_groups": saved["param_groups"]}


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

