"""The specs declare what they take, and what is generic reads the declaration: inputs drawn
by kind, options passed with their defaults (PyTorch's twin given only what it takes),
running statistics, the empty output, ``centres`` against PyTorch's own behaviour, the
places and the models that take any norm fitting theirs, the kernels a fused node calls and
their fallback to the reference, the GPU bench's norms, and precision's rows."""

import types

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import kernels, nn
from microgradnorm.checks import precision
from microgradnorm.fused import FUSED_OPS, FusedFunction, Input, Twin
from microgradnorm.kernels import blocked, reference
from microgradnorm.norms import NORMS, PLACES, SPECS, Norm, fitting, lookup
from microgradnorm.train import TrainConfig

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def fitting_shape(spec):
    return (4, 6) if spec.ndim == (2, 2) else (2, 4, 6)


def torch_running(spec, arrays):
    running = spec.running_stats(arrays)
    return None if running is None else {n: torch.tensor(a) for n, a in running.items()}


@pytest.mark.parametrize("spec", list(SPECS.values()), ids=lambda s: s.name)
def test_make_inputs_draws_each_declared_input_by_its_kind(spec):
    shape = fitting_shape(spec)
    arrays = spec.make_inputs(shape)
    drawn = [i for i in spec.inputs if i.kind != "running"]
    assert list(arrays) == [i.name for i in drawn]
    for spec_input in drawn:
        a = arrays[spec_input.name]
        assert a.shape == spec_input.shape_for(shape), spec_input.name
        assert a.dtype == (np.int64 if spec_input.kind == "index" else np.float64)
    bare = spec.make_inputs(shape, affine=False)
    assert set(arrays) - set(bare) == set(spec.optional_params)
    running = spec.running_stats(arrays)
    assert (running is None) == (not spec.running)
    for spec_input in spec.inputs_of("running"):
        assert (running[spec_input.name] == spec_input.init).all()
    with pytest.raises(ValueError, match=f"{spec.name} needs a shape"):
        spec.make_inputs(())


@pytest.mark.parametrize("spec", list(SPECS.values()), ids=lambda s: s.name)
def test_run_and_run_torch_agree_through_the_declared_call(spec):
    arrays = spec.make_inputs(fitting_shape(spec), seed=3)
    running = spec.running_stats(arrays)
    ours = spec.run({n: mg.tensor(a) for n, a in arrays.items()}, "fused", running)
    theirs = spec.run_torch(TF, {n: torch.tensor(a) for n, a in arrays.items()},
                            torch_running(spec, arrays))
    assert len(ours) == len(theirs) == len(spec.outputs)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.detach().numpy(), t.numpy(), atol=1e-12, rtol=0)


def test_run_passes_the_declared_defaults_and_run_torch_only_torchs():
    seen = {}
    spec = NORMS["rms_norm"]
    probe = Norm(name="probe", title="Probe", function=None, composite=None, fused=None,
                 inputs=spec.inputs, options=spec.options,
                 call=lambda f, given, impl, **o: seen.setdefault("ours", o),
                 torch=lambda tF, given, **o: seen.setdefault("torch", o))
    probe.run({"x": None})
    probe.run_torch(TF, {"x": None}, eps=0.5)
    assert seen["ours"] == {"eps": None, "offset": 0.0, "casting": "llama"}
    assert seen["torch"] == {"eps": 0.5}
    assert probe.variants() == [("[llama]", {"casting": "llama"}), ("[gemma]", {"casting":
                                "gemma"}), ("[none]", {"casting": "none"})]


@pytest.mark.parametrize("spec", [s for s in NORMS.values() if s.params], ids=lambda s: s.name)
def test_empty_output_keeps_every_learned_input_in_the_graph_as_torch_does(spec):
    shape = (0,) + fitting_shape(spec)[1:]
    arrays = spec.make_inputs(shape)
    t = {n: mg.tensor(a, requires_grad=True) for n, a in arrays.items()}
    y = spec.empty_output(t[spec.x], **t)
    y.sum().backward()
    tt = {n: torch.tensor(a, requires_grad=True) for n, a in arrays.items()}
    try:
        ty = spec.run_torch(TF, tt, torch_running(spec, arrays), True)[0]
    except (IndexError, RuntimeError):     # torch refuses this empty input: zeros, as others
        expected = {name: np.zeros_like(arrays[name]) for name in spec.params}
    else:
        assert y.shape == tuple(ty.shape) and y.dtype == np.float64
        ty.sum().backward()
        expected = {name: tt[name].grad.numpy() for name in spec.params}
    for name in spec.params:
        np.testing.assert_array_equal(t[name].grad.numpy(), expected[name])


@pytest.mark.parametrize("spec", [s for s in NORMS.values() if not s.residual],
                         ids=lambda s: s.name)
def test_centres_says_whether_torchs_output_ignores_a_shift_of_x(spec):
    arrays = spec.make_inputs(fitting_shape(spec), seed=4)
    t = {n: torch.tensor(a) for n, a in arrays.items()}
    y = spec.run_torch(TF, t, torch_running(spec, arrays), True)[0]
    shifted = spec.run_torch(TF, t | {spec.x: t[spec.x] + 3.0}, torch_running(spec, arrays),
                             True)[0]
    assert torch.allclose(y, shifted, atol=1e-10) == spec.centres


def test_places_list_the_norms_each_model_takes_and_the_models_take_them():
    assert set(PLACES) == {"row", "mlp", "channel"}
    assert nn.NORMS == fitting("row") and "layer_norm" in fitting("row")
    assert "batch_norm" in fitting("mlp") and "batch_norm" not in fitting("row")
    for name in fitting("row"):
        model = nn.GPT(11, 4, d_model=8, n_heads=2, n_layers=1, norm=name, dtype="float64")
        assert type(model.blocks[0].ln1) is nn.module_for(name, "row")
        assert model(np.zeros((2, 4), np.int64)).shape == (2, 4, 11)
        assert TrainConfig(norm=name).norm == name
    for name in fitting("mlp"):
        mlp = nn.MLP(3, 5, 2, norm=name, dtype="float64")
        assert type(mlp.layers[1]) is nn.module_for(name, "mlp")
    not_a_block_norm = next(name for name in NORMS if name not in fitting("row"))
    for build in (lambda: nn.TransformerBlock(8, 2, norm=not_a_block_norm),
                  lambda: TrainConfig(norm=not_a_block_norm)):
        with pytest.raises(ValueError, match="norm must be one of 'layer_norm'"):
            build()
    with pytest.raises(ValueError, match="place must be one of"):
        fitting("cnn")


def test_a_second_module_for_one_place_of_a_norm_is_refused_and_subclasses_are_not_it():
    before = dict(nn.normalization.MODULES)
    with pytest.raises(TypeError, match="already LayerNorm's"):
        type("OtherLayerNorm", (nn.normalization.NormModule,), {"norm": "layer_norm"})
    mine = type("MyLayerNorm", (nn.LayerNorm,), {})          # no norm of its own
    assert nn.normalization.MODULES == before and nn.module_for("layernorm", "row") is not mine


@pytest.mark.parametrize("spec", list(NORMS.values()), ids=lambda s: s.name)
def test_every_declared_kernel_exists_and_a_backend_without_it_falls_back(spec):
    backends = [blocked, kernels.for_array(np.zeros(1))]
    for name in spec.kernels:
        assert name in reference.__all__
        for module in backends:                     # its own kernel, or the reference's
            own = vars(module).get(name, getattr(reference, name))
            assert getattr(module, name) is own
            assert kernels.defines(module, (name,)) == (name in vars(module))
    bare = types.ModuleType("bare")
    bare.__getattr__ = reference.fallback("bare")
    assert all(getattr(bare, name) is getattr(reference, name) for name in spec.kernels)
    assert not hasattr(bare, "fallback")               # only kernels fall back


def test_the_gpu_bench_times_the_norms_whose_kernels_cuda_defines():
    from microgradnorm.cli import bench_cuda
    from microgradnorm.kernels import cuda
    expected = tuple(name for name, s in NORMS.items()
                     if s.kernel_calls and all(k in vars(cuda) for k in s.kernels))
    assert bench_cuda.GPU_NORMS == expected and "layer_norm" in expected
    assert not kernels.defines(cuda, ("batch_norm_forward",))
    assert cuda.batch_norm_forward is reference.batch_norm_forward


def test_precision_rows_come_from_the_declarations():
    rows = set(precision.implementations())
    for spec in precision.MEASURED:
        for variant, _ in spec.variants():
            assert {(spec.name, "composite" + variant), (spec.name, "fused" + variant)} <= rows
        assert {(spec.name, label) for label in spec.naive} <= rows
    assert ("rms_norm", "fused[gemma]") in rows and ("layer_norm", "eps-outside") in rows


def test_the_twins_live_apart_from_the_norms():
    assert set(SPECS) == set(NORMS) | set(FUSED_OPS) and not set(NORMS) & set(FUSED_OPS)
    for spec in SPECS.values():
        fused = spec.fused if isinstance(spec.fused, tuple) else (spec.fused,)
        assert all(issubclass(f, FusedFunction) for f in fused), spec.name
        assert isinstance(spec, Norm) == (spec.name in NORMS)
        assert isinstance(spec, Twin) and lookup(spec.name, among=SPECS) is spec
    assert FUSED_OPS["cross_entropy"].constants == ("target",)


def test_a_bad_declaration_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        Input("w", "per-row")
    with pytest.raises(ValueError, match="takes no gradient"):
        Input("running_mean", "running")
    with pytest.raises(ValueError, match="places must be among"):
        Norm(name="n", title="N", function=None, composite=None, fused=None, inputs=(),
             torch=None, places=("cnn",))
