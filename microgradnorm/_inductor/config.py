"""``mg._inductor.config``: the settings of torch's ``torch._inductor.config`` that training
and generation files set (``coordinate_descent_tuning``, ``triton.unique_kernel_names``,
``fx_graph_cache``, ...), with torch's defaults, recorded and read back; ``triton``, ``cpp``
and ``trace`` are its sub-namespaces. Nothing here generates code, so nothing reads them. A
name not listed is recorded too when assigned (torch refuses names it does not know)."""

import types

coordinate_descent_tuning = False
coordinate_descent_check_all_directions = False
coordinate_descent_search_radius = 1
max_autotune = False
max_autotune_gemm = False
max_autotune_pointwise = False
max_autotune_gemm_backends = "ATEN,TRITON,CPP"
epilogue_fusion = True
aggressive_fusion = False
permute_fusion = False
freezing = False
freezing_discard_parameters = False
fx_graph_cache = True
fx_graph_remote_cache = None
autotune_local_cache = True
force_fuse_int_mm_with_mul = False
use_mixed_mm = True
benchmark_kernel = False
conv_1x1_as_mm = False
layout_optimization = True
split_reductions = True
compile_threads = 2
debug = False
fallback_random = False
implicit_fallbacks = True
shape_padding = True
comprehensive_padding = True
pattern_matcher = True
reorder_for_compute_comm_overlap = False
cpp_wrapper = False
unroll_reductions_threshold = 8
emulate_precision_casts = False
size_asserts = True
nan_asserts = False

triton = types.SimpleNamespace(
    unique_kernel_names=True, cudagraphs=False, cudagraph_trees=True, autotune_pointwise=True,
    cudagraph_skip_dynamic_graphs=False, store_cubin=False, max_tiles=None,
    descriptive_names="original_aten", enable_persistent_tma_matmul=False, use_block_ptr=False,
    multi_kernel=0)
cpp = types.SimpleNamespace(
    enable_kernel_profile=False, threads=-1, simdlen=None, weight_prepack=True,
    dynamic_threads=False, fallback_scatter_reduce_sum=True, max_horizontal_fusion_size=16,
    min_chunk_size=512, cxx=(None, "g++"), enable_tiling_heuristics=True, vec_isa_ok=None)
trace = types.SimpleNamespace(enabled=False, debug_log=False, graph_diagram=False)
