"""The bad-input matrix: for each public entry point, inputs a user (or an attacker) might
give, the error class that must come out, and the state that must not change.

Each row is one test: it builds fresh objects, snapshots the watched state, makes the bad
call, checks the error class and message, and compares the state with its snapshot.
``docs/testing.md`` shows the same table (``test_docs_table_is_in_step`` keeps the two
together; ``python tests/meta/test_bad_input_matrix.py`` prints it).
"""

import dataclasses
import os
import pickle
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import cli, layers, nn, optim, viz
from microgradnorm.norms import NORMS


@dataclasses.dataclass
class Case:
    area: str
    what: str                    # the input, in words (the doc table's second column)
    call: object                 # call(env): the bad call
    error: type
    match: str                   # regex the message must contain
    keeps: str                   # the state that must not change, in words
    watch: object = None         # watch(env) -> snapshot of that state (None: nothing)
    setup: object = None         # setup(env): prepares the state before the snapshot


def x64(shape=(4, 3), seed=0, grad=True):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=grad)


def env_bn(read_only=None, dtype=np.float64, int_var=False):
    rm, rv = np.zeros(3, dtype), (np.ones(3, np.int64) if int_var else np.ones(3, dtype))
    if read_only:
        rv.flags.writeable = False
    return {"x": x64((8, 3)), "rm": rm, "rv": rv}


def stats(env):
    return env["rm"].copy(), env["rv"].copy()


def seed_bn(env):
    bn = env["bn"]
    return (bn.running_mean if bn.running_mean is None else np.array(bn.running_mean),
            np.array(bn.running_var) if bn.running_var is not None else None,
            np.array(bn.gamma), bn.grad_gamma)


def module_state(env):
    return {k: v.numpy().copy() for k, v in env["model"].state_dict().items()}


def params(env):
    # the state's Tensors are updated in place: a snapshot copies their values
    state = {key: {name: np.array(value) for name, value in entries.items()}
             for key, entries in env["opt"].state.items()}
    return [p.detach().numpy().copy() for p in env["params"]], state


def cli_call(*argv):
    def call(env):
        try:
            code = cli.main(list(argv) + (["--out", str(env["tmp"] / "out")]
                                          if argv[0] in ("demo", "graph") and "--out" not in argv
                                          else []))
        except SystemExit as exit:
            code = exit.code
        if code:
            raise SystemExit(code)
    return call


def listing(env):
    return sorted(os.listdir(env["tmp"])), {
        p.name: p.read_bytes() for p in env["tmp"].iterdir() if p.is_file()}


def npz_file(env, name, header, payload):
    from numpy.lib import format as np_format
    import io
    buf = io.BytesIO()
    np_format.write_array_header_1_0(buf, header)
    buf.write(payload)
    path = env["tmp"] / name
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.npy", buf.getvalue())
    return path


def truncated(env):
    path = env["tmp"] / "t.npz"
    nn.save({"w": np.arange(64.0)}, path)
    path.write_bytes(path.read_bytes()[:300])


def one_nan_backward():
    class Wrong(mg.Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x

        @staticmethod
        def backward(ctx, grad):
            g = 2 * grad
            g.reshape(-1)[0] = np.nan
            return g
    return Wrong.apply


def inplace_leaf(env):
    env["x"].add_(1.0)


def first_backward(env):
    env["y"] = (env["x"] * env["x"]).sum()
    env["y"].backward()


def grads(env):
    return None if env["x"].grad is None else env["x"].grad.numpy().copy()


def data(env):
    return env["x"].detach().numpy().copy(), grads(env)


def norm_setup(spec):
    def setup(env):                 # x (8, 3), with positions (8, 3, 4) where it needs them
        env["arrays"] = spec.make_inputs((8, 3) + (4,) * max(0, spec.ndim[0] - 2))
        env["running"] = spec.running_stats(env["arrays"])
    return setup


def norm_call(spec, spoil=dict, **options):
    """A call of ``spec`` through the registry, in training, with ``spoil(tensors)``'s
    inputs replacing the good ones."""
    def call(env):
        tensors = {n: mg.tensor(a, requires_grad=True) for n, a in env["arrays"].items()}
        spec.run(tensors | spoil(tensors), "fused", env["running"], True, **options)
    return call


def norm_state(env):
    return [a.copy() for a in env["arrays"].values()], [
        a.copy() for a in (env["running"] or {}).values()]


def norm_rows(spec):
    """The bad inputs every norm of the registry refuses, read from its declaration: x, its
    first per-feature or per-channel input, eps where it has one, each like-x input (x (8, 3):
    3 features or channels)."""
    x = spec.x
    rows = [("of a NumPy array", norm_call(spec, lambda t: {x: t[x].detach().numpy()}),
             TypeError, f"{x} must be a microgradnorm Tensor")]
    for learned in spec.inputs_of("per-feature", "per-channel")[:1]:
        name = learned.name
        rows.append((f"{name} of shape (4,) for 3 features",
                     norm_call(spec, lambda t, name=name: {name: mg.tensor(np.ones(4))}),
                     ValueError, rf"{name} must have shape \(3,\)"))
    if spec.has_eps:
        rows.append(("eps = '1e-5'", norm_call(spec, eps="1e-5"), TypeError,
                     "eps must be a real number"))
    for added in spec.inputs_of("like-x"):
        name = added.name
        rows.append((f"{name} of another shape",
                     norm_call(spec, lambda t, name=name: {name: t[name][:2]}), ValueError,
                     f"{name} must have the shape of x"))
    keeps = "inputs, running statistics" if spec.running else "inputs"
    return [Case("functional", f"{spec.name} {what}", call, error, match, keeps, norm_state,
                 norm_setup(spec)) for what, call, error, match in rows]


MATRIX = [
    # ----- functional ---------------------------------------------------------------------
    *(row for spec in NORMS.values() for row in norm_rows(spec)),
    Case("functional", "layer_norm of an int tensor",
         lambda e: F.layer_norm(mg.tensor([[1, 2, 3]]), 3), TypeError, "floating-point", "-"),
    Case("functional", "layer_norm normalized_shape ≠ trailing dims",
         lambda e: F.layer_norm(e["x"], 4), ValueError, r"normalized_shape \(4,\)", "x",
         lambda e: e["x"].detach().numpy().copy()),
    Case("functional", "layer_norm float32 weight, float64 x",
         lambda e: F.layer_norm(e["x"], 3, mg.tensor(np.ones(3, np.float32))), TypeError,
         "weight must have x's dtype", "x", lambda e: e["x"].detach().numpy().copy()),
    Case("functional", "layer_norm impl = 'fast'", lambda e: F.layer_norm(e["x"], 3, impl="fast"),
         ValueError, "impl must be one of", "-"),
    Case("functional", "batch_norm read-only running_var, training",
         lambda e: F.batch_norm(e["x"], e["rm"], e["rv"], training=True), ValueError,
         "running_var is read-only", "running_mean, running_var", stats),
    Case("functional", "batch_norm float32 running stats, float64 x",
         lambda e: F.batch_norm(e["x"], e["rm"], e["rv"], training=True), TypeError,
         "must have x's dtype torch.float64", "running_mean, running_var", stats),
    Case("functional", "batch_norm int running_var",
         lambda e: F.batch_norm(e["x"], e["rm"], e["rv"], training=True), TypeError,
         "running_var must be floating point", "running_mean, running_var", stats),
    Case("functional", "batch_norm eps = 0, training",
         lambda e: F.batch_norm(e["x"], e["rm"], e["rv"], training=True, eps=0.0),
         ValueError, "eps must be positive during training", "running_mean, running_var",
         stats),
    Case("functional", "batch_norm training, 1 value per channel",
         lambda e: F.batch_norm(x64((1, 3)), e["rm"], e["rv"], training=True), ValueError,
         "more than 1 value per channel", "running_mean, running_var", stats),
    Case("functional", "batch_norm eval without running_var",
         lambda e: F.batch_norm(e["x"], e["rm"], None, training=False), ValueError,
         "required when training=False", "running_mean", stats),
    Case("functional", "batch_norm training = 'yes'",
         lambda e: F.batch_norm(e["x"], e["rm"], e["rv"], training="yes"), TypeError,
         "training must be a bool", "running_mean, running_var", stats),
    Case("functional", "cross_entropy with float targets",
         lambda e: F.cross_entropy(e["x"], np.zeros(4)), TypeError, "integer class indices",
         "-"),
    Case("functional", "cross_entropy target 3 with 3 classes",
         lambda e: F.cross_entropy(e["x"], np.array([0, 1, 2, 3])), ValueError,
         r"target values must be in \[0, 3\)", "-"),
    Case("functional", "mse_loss target that does not broadcast",
         lambda e: F.mse_loss(e["x"], np.zeros(2)), ValueError, "does not broadcast", "-"),
    Case("functional", "dropout p = 1.5", lambda e: F.dropout(e["x"], 1.5), ValueError,
         r"p must be a number in \[0, 1\]", "-"),
    Case("functional", "gelu approximate = 'fast'",
         lambda e: F.gelu(e["x"], approximate="fast"), ValueError, "approximate must be", "-"),
    Case("functional", "softmax axis 2 of a 2-D tensor", lambda e: F.softmax(e["x"], 2),
         ValueError, "axis 2 is out of range", "-"),
    # ----- seed-style layers --------------------------------------------------------------
    Case("seed layers", "LayerNorm(0)", lambda e: layers.LayerNorm(0), ValueError,
         "must be a positive int", "-"),
    Case("seed layers", "LayerNorm.forward of an int array",
         lambda e: e["ln"].forward(np.ones((2, 3), np.int64)), TypeError,
         "floating-point array", "-"),
    Case("seed layers", "LayerNorm.forward with D = 4 for D = 3",
         lambda e: e["ln"].forward(np.ones((2, 4))), ValueError, r"x.shape\[-1\] must be 3",
         "-"),
    Case("seed layers", "LayerNorm.backward before forward",
         lambda e: e["ln"].backward(np.ones((2, 3))), RuntimeError, "before forward", "-"),
    Case("seed layers", "LayerNorm.backward of the wrong shape",
         lambda e: (e["ln"].forward(np.ones((2, 3))), e["ln"].backward(np.ones((3, 3)))),
         ValueError, "grad_output must have the shape", "grad_gamma",
         lambda e: e["ln"].grad_gamma),
    Case("seed layers", "LayerNorm with int gamma",
         lambda e: (setattr(e["ln"], "gamma", np.ones(3, np.int64)),
                    e["ln"].forward(np.ones((2, 3)))), TypeError,
         "gamma must be a floating-point array", "-"),
    Case("seed layers", "RMSNorm eps = 'nan'", lambda e: layers.RMSNorm(3, eps="nan"),
         TypeError, "eps must be a real number", "-"),
    Case("seed layers", "BatchNorm eps = None", lambda e: layers.BatchNorm(3, eps=None),
         TypeError, "eps must be", "-"),
    Case("seed layers", "BatchNorm momentum = '5'", lambda e: layers.BatchNorm(3, momentum="5"),
         TypeError, "momentum must be", "-"),
    Case("seed layers", "BatchNorm int running_var",
         lambda e: (setattr(e["bn"], "running_var", np.ones(3, np.int64)),
                    e["bn"].forward(np.random.default_rng(0).standard_normal((8, 3)))),
         TypeError, "running_var must be a floating-point array",
         "running_mean, gamma, grad_gamma", lambda e: seed_bn(e)[0::2]),
    Case("seed layers", "BatchNorm momentum set to '5' after construction",
         lambda e: (setattr(e["bn"], "momentum", "5"),
                    e["bn"].forward(np.random.default_rng(0).standard_normal((8, 3)))),
         TypeError, "momentum must be", "running_mean, running_var", seed_bn),
    Case("seed layers", "BatchNorm eval with running_var = None",
         lambda e: (e["bn"].eval(), setattr(e["bn"], "running_var", None),
                    e["bn"].forward(np.ones((4, 3)))), TypeError,
         "running_var must be an array", "running_mean", lambda e: seed_bn(e)[0]),
    Case("seed layers", "BatchNorm.forward of a Tensor",
         lambda e: e["bn"].forward(mg.tensor(np.ones((4, 3)))), TypeError, "got a Tensor",
         "running_mean, running_var", seed_bn),
    Case("seed layers", "BatchNorm training on one sample",
         lambda e: e["bn"].forward(np.ones((1, 3))), ValueError, "more than 1 value",
         "running_mean, running_var", seed_bn),
    # ----- nn ---------------------------------------------------------------------------
    Case("nn", "BatchNorm1d(3) given 5 channels",
         lambda e: e["model"](x64((4, 5))), ValueError,
         r"BatchNorm1d\(3\).*num_features=3.*got 5", "buffers, num_batches_tracked",
         module_state),
    Case("nn", "nn.LayerNorm(8) given D = 3", lambda e: nn.LayerNorm(8)(e["x"]), ValueError,
         r"normalized_shape \(8,\) must equal the trailing dims of x.*expected \(\*, 8\)",
         "-"),
    Case("nn", "load_state_dict with a wrong shape",
         lambda e: e["model"].load_state_dict({**e["model"].state_dict(),
                                               "weight": np.ones(4)}),
         ValueError, "weight", "every parameter and buffer", module_state),
    Case("nn", "load_state_dict with a missing key",
         lambda e: e["model"].load_state_dict({"weight": np.ones(3)}), ValueError,
         r"Missing key\(s\) in state_dict", "every parameter and buffer", module_state),
    Case("nn", "register_buffer of a list",
         lambda e: e["model"].register_buffer("b", [1.0]), TypeError, "must be a Tensor or None",
         "every parameter and buffer", module_state),
    # ----- optim ------------------------------------------------------------------------
    Case("optim", "SGD lr = -1", lambda e: optim.SGD(e["params"], lr=-1.0), ValueError,
         "lr must be a non-negative number", "-"),
    Case("optim", "Adam betas = (1.5, 0.9)",
         lambda e: optim.Adam(e["params"], betas=(1.5, 0.9)), ValueError, "betas must be", "-"),
    Case("optim", "an empty parameter list", lambda e: optim.AdamW([]), ValueError,
         "empty parameter list", "-"),
    Case("optim", "a parameter that is not a Tensor",
         lambda e: optim.SGD([1.0], lr=0.1), TypeError, "Tensors, got float", "-"),
    # a .grad is a Tensor of the parameter's shape and dtype: torch refuses another at the
    # assignment (RuntimeError), before a step could use it (there are no complex Tensors)
    Case("optim", "step with a float32 gradient for a float64 parameter",
         lambda e: (setattr(e["params"][0], "grad", mg.tensor(np.ones(3, np.float32))),
                    e["opt"].step()),
         RuntimeError, "assigned grad has data of dtype torch.float32",
         "parameters, optimizer state", params),
    Case("optim", "step with a gradient of the wrong shape",
         lambda e: (setattr(e["params"][0], "grad", mg.tensor(np.ones(4))), e["opt"].step()),
         RuntimeError, r"assigned grad has data of shape \(4,\)", "parameters, optimizer state",
         params),
    # ----- serialization ----------------------------------------------------------------
    # what is not data is pickled, as torch.save; what pickle can't find by name is its error
    Case("serialization", "nn.save of an instance of a class made in a call",
         lambda e: nn.save({"w": type("Local", (), {})()}, e["tmp"] / "o.npz"),
         pickle.PicklingError, "Local", "the directory (no file)", listing),
    Case("serialization", "nn.save of a lambda",
         lambda e: nn.save({"fn": lambda x: x}, e["tmp"] / "o.npz"), AttributeError,
         "Can't pickle local object", "the directory (no file)", listing),
    Case("serialization", "nn.save to /proc/x/y.npz",
         lambda e: nn.save({"w": np.ones(2)}, "/proc/x/y.npz"), FileNotFoundError,
         "No such file or directory: '/proc/x/y.npz'", "-"),
    Case("serialization", "nn.load of a truncated file",
         lambda e: nn.load(e["tmp"] / "t.npz"), ValueError, "truncated", "the file", listing,
         setup=truncated),
    Case("serialization", "nn.load of a .npy file",
         lambda e: (np.save(e["tmp"] / "a.npy", np.ones(2)), nn.load(e["tmp"] / "a.npy")),
         ValueError, r"\.npy file", "-"),
    Case("serialization", "nn.load of a header claiming 100000 x 100000",
         lambda e: nn.load(npz_file(e, "h.npz", {"descr": "<f8", "fortran_order": False,
                                                 "shape": (100000, 100000)}, b"\0" * 64)),
         ValueError, "claims shape", "memory (nothing allocated)"),
    Case("serialization", "nn.load of an object-dtype member",
         lambda e: nn.load(npz_file(e, "o.npz", {"descr": "|O", "fortran_order": False,
                                                 "shape": (1,)}, b"\0" * 8)),
         ValueError, "not a numeric array", "-"),
    Case("serialization", "nn.load of a missing file",
         lambda e: nn.load(e["tmp"] / "none.npz"), FileNotFoundError,
         "No such file or directory: '.*none.npz'", "-"),
    # ----- viz --------------------------------------------------------------------------
    Case("viz", "draw of a NumPy array", lambda e: viz.draw(np.ones(3)), TypeError,
         "root must be a Tensor", "-"),
    Case("viz", "draw collapse = 5", lambda e: viz.draw(e["x"] * 2.0, collapse=5), TypeError,
         "collapse must be", "-"),
    Case("viz", "compare of an unknown norm", lambda e: viz.compare("groupnorm"), ValueError,
         "norm must be one of", "-"),
    Case("viz", "render format 'gif'",
         lambda e: viz.render(viz.draw(e["x"] * 2.0), e["tmp"], "g", formats=("gif",)),
         ValueError, "formats must be", "the directory (no file)", listing),
    # ----- CLI (exit status 2: one line on stderr, no traceback) ---------------------------
    Case("CLI", "demo --train-steps -1", cli_call("demo", "--train-steps", "-1"), SystemExit,
         "2", "the output directory (no file)", lambda e: sorted(os.listdir(e["tmp"] / "out")),
         setup=lambda e: (e["tmp"] / "out").mkdir()),
    Case("CLI", "graph --out /proc/x", cli_call("graph", "--out", "/proc/x"), SystemExit, "2",
         "-"),
    Case("CLI", "graph --out an existing file",
         lambda e: ((e["tmp"] / "f").write_text("keep"),
                    cli_call("graph", "--out", str(e["tmp"] / "f"))(e)), SystemExit, "2",
         "the file"),
    Case("CLI", "graph --shape 100000,100000", cli_call("graph", "--shape", "100000,100000"),
         SystemExit, "2", "the output directory (no file)", listing),
    Case("CLI", "compare --repeat 0", cli_call("compare", "--repeat", "0"), SystemExit, "2",
         "-"),
    Case("CLI", "train --batch-size 0", cli_call("train", "--batch-size", "0"), SystemExit,
         "2", "-"),
    Case("CLI", "train --sample -3", cli_call("train", "--sample", "-3"), SystemExit, "2", "-"),
    Case("CLI", "bench --repeat -1", cli_call("bench", "--repeat", "-1"), SystemExit, "2",
         "-"),
    # ----- autograd ---------------------------------------------------------------------
    Case("autograd", "backward with a complex gradient",
         lambda e: (e["x"] * 2.0).backward(np.ones((4, 3), complex)), TypeError, "complex",
         "x.grad", grads),
    Case("autograd", "backward with a list of strings",
         lambda e: (e["x"][0] * 2.0).backward(["a", "b", "c"]), TypeError,
         "nested lists of numbers", "x.grad", grads),
    Case("autograd", "backward with a gradient of the wrong shape",
         lambda e: (e["x"] * 2.0).backward(np.ones(3)), ValueError, "expected the output's shape",
         "x.grad", grads),
    Case("autograd", "backward of a tensor that does not require grad",
         lambda e: mg.tensor([1.0]).backward(), RuntimeError, "does not require grad", "-"),
    Case("autograd", "a second backward without retain_graph",
         lambda e: e["y"].backward(), RuntimeError, "a second time",
         "x.grad of the first backward", grads, setup=first_backward),
    Case("autograd", "numpy() of a tensor that requires grad", lambda e: e["x"].numpy(),
         RuntimeError, r"detach\(\)\.numpy\(\)", "x", data),
    Case("autograd", "an in-place op on a leaf that requires grad", inplace_leaf, RuntimeError,
         "in-place ops on a tensor that requires grad", "x", data),
    Case("autograd", "requires_grad on an int tensor",
         lambda e: mg.tensor([1, 2], requires_grad=True), TypeError, "floating-point", "-"),
    Case("autograd", "a tensor of strings", lambda e: mg.tensor(["a"]), TypeError,
         "must be numeric", "-"),
    Case("autograd", "gradcheck eps = 0", lambda e: mg.gradcheck(lambda t: t * t, e["x"], eps=0),
         ValueError, "eps must be a finite number > 0", "x, x.grad", data),
    Case("autograd", "gradcheck of a backward with one NaN",
         lambda e: mg.gradcheck(one_nan_backward(), e["x"]), mg.GradcheckError, "not finite",
         "x, x.grad", data),
    Case("autograd", "set_grad_enabled('no')", lambda e: mg.set_grad_enabled("no"), TypeError,
         "mode must be a bool", "grad mode", lambda e: mg.is_grad_enabled()),
]


def make_env(tmp_path, case):
    env = {"tmp": tmp_path, "x": x64(), "ln": layers.LayerNorm(3), "bn": layers.BatchNorm(3)}
    if case.what.startswith("batch_norm"):
        env.update(env_bn(read_only="read-only" in case.what,
                          dtype=np.float32 if "float32" in case.what else np.float64,
                          int_var="int running_var" in case.what))
        env["x"] = x64((8, 3))
    if case.area == "nn":
        env["model"] = nn.BatchNorm1d(3)
    if case.area == "optim":
        env["params"] = [mg.tensor(np.ones(3), requires_grad=True)]
        env["opt"] = optim.Adam(env["params"], lr=0.1)
        env["params"][0].grad = mg.tensor(np.ones(3))
        env["opt"].step()                       # some optimizer state to keep
    return env


def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
            np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def case_id(case):
    return f"{case.area}: {case.what}"


def test_matrix_has_at_least_60_cases_in_every_area():
    areas = {c.area for c in MATRIX}
    assert len(MATRIX) >= 60
    assert areas == {"functional", "seed layers", "nn", "optim", "serialization", "viz", "CLI",
                     "autograd"}
    assert len({case_id(c) for c in MATRIX}) == len(MATRIX)


@pytest.mark.parametrize("case", MATRIX, ids=case_id)
def test_bad_input(case, tmp_path, capsys):
    env = make_env(tmp_path, case)
    if case.setup:
        case.setup(env)
    before = case.watch(env) if case.watch else None
    with pytest.raises(case.error) as info:
        case.call(env)
    if case.error is SystemExit:
        assert str(info.value.code) == case.match
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.strip().splitlines()[-1].startswith(
            "microgradnorm")
    else:
        info.match(case.match)
    if case.watch:
        assert same(case.watch(env), before), f"{case.keeps} changed"
    assert mg.is_grad_enabled()


def markdown_table():
    lines = ["| # | area | input | error | must not change |", "|---|---|---|---|---|"]
    for i, c in enumerate(MATRIX, 1):
        error = "exit 2 (`SystemExit`)" if c.error is SystemExit else f"`{c.error.__name__}`"
        lines.append(f"| {i} | {c.area} | {c.what} | {error} | {c.keeps} |")
    return "\n".join(lines)


def test_docs_table_is_in_step():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "testing.md").read_text()
    assert markdown_table() in doc, "regenerate with: python tests/meta/test_bad_input_matrix.py"


if __name__ == "__main__":
    sys.stdout.write(markdown_table() + "\n")
