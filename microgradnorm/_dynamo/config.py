"""``mg._dynamo.config``: the settings of torch's ``torch._dynamo.config`` that training
files set, with torch's defaults, recorded and read back; nothing here reads them. A name
torch does not list here is recorded too when assigned (torch refuses names it does not
know); reading a name never assigned is an AttributeError, as in torch."""

suppress_errors = False
cache_size_limit = 8
recompile_limit = 8
accumulated_cache_size_limit = 256
accumulated_recompile_limit = 256
verbose = False
optimize_ddp = True
capture_scalar_outputs = False
capture_dynamic_output_shape_ops = False
automatic_dynamic_shapes = True
assume_static_by_default = True
specialize_int = False
specialize_float = False
inline_inbuilt_nn_modules = True
error_on_recompile = False
compiled_autograd = False
force_parameter_static_shapes = True
allow_unspec_int_on_nn_module = False
guard_nn_modules = True
allow_rnn = False
disable = False
dynamic_shapes = True
trace_numpy = True
use_numpy_random_stream = False
raise_on_ctx_manager_usage = True
debug_dir_root = "/tmp/torch_compile_debug"
log_file_name = None
