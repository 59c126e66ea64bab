// mlp_ln.flow.mlir as iree-opt --mlir-print-op-generic prints it (named ops in the generic form); see generate.py.
#executable_target_embedded_elf_x86_64 = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d1)>
#map5 = affine_map<(d0, d1) -> (d0)>
#device_target_local = #hal.device.target<"local", [#executable_target_embedded_elf_x86_64]> : !hal.device
"builtin.module"() <{sym_name = "jit_mlp_ln"}> ({
  "util.global"() <{initial_value = #device_target_local, sym_name = "__device_0", sym_visibility = "private", type = !hal.device}> : () -> ()
  "flow.executable"() <{sym_name = "main_dispatch_0", sym_visibility = "private"}> ({
    "flow.executable.export"() <{function_ref = @main_dispatch_0_matmul_4x16x8_f32, sym_name = "main_dispatch_0_matmul_4x16x8_f32", sym_visibility = "public"}> ({
      %47:3 = "iree_tensor_ext.dispatch.workgroup_count_from_slice"() : () -> (index, index, index)
      "flow.return"(%47#0, %47#1, %47#2) : (index, index, index) -> ()
    }) : () -> ()
    "builtin.module"() ({
      "func.func"() <{function_type = (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>, !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x16xf32>>, !iree_tensor_ext.dispatch.tensor<readonly:tensor<16xf32>>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>) -> (), sym_name = "main_dispatch_0_matmul_4x16x8_f32"}> ({
      ^bb0(%arg21: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>, %arg22: !iree_tensor_ext.dispatch.tensor<readonly:tensor<8x16xf32>>, %arg23: !iree_tensor_ext.dispatch.tensor<readonly:tensor<16xf32>>, %arg24: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>):
        %35 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
        %36 = "iree_tensor_ext.dispatch.tensor.load"(%arg21) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 8>, static_strides = array<i64: 1, 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4x8xf32>>) -> tensor<4x8xf32>
        %37 = "iree_tensor_ext.dispatch.tensor.load"(%arg22) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 8, 16>, static_strides = array<i64: 1, 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<8x16xf32>>) -> tensor<8x16xf32>
        %38 = "iree_tensor_ext.dispatch.tensor.load"(%arg23) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0>, static_sizes = array<i64: 16>, static_strides = array<i64: 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<16xf32>>) -> tensor<16xf32>
        %39 = "tensor.empty"() : () -> tensor<4x16xf32>
        %40 = "linalg.fill"(%35, %39) <{operandSegmentSizes = array<i32: 1, 1>}> ({
        ^bb0(%arg31: f32, %arg32: f32):
          "linalg.yield"(%arg31) : (f32) -> ()
        }) : (f32, tensor<4x16xf32>) -> tensor<4x16xf32>
        %41 = "linalg.matmul"(%36, %37, %40) <{indexing_maps = [#map, #map1, #map2], operandSegmentSizes = array<i32: 2, 1>}> ({
        ^bb0(%arg28: f32, %arg29: f32, %arg30: f32):
          %45 = "arith.mulf"(%arg28, %arg29) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          %46 = "arith.addf"(%arg30, %45) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          "linalg.yield"(%46) : (f32) -> ()
        }) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
        %42 = "linalg.generic"(%41, %38, %39) <{indexing_maps = [#map3, #map4, #map3], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 2, 1>}> ({
        ^bb0(%arg25: f32, %arg26: f32, %arg27: f32):
          %43 = "arith.addf"(%arg25, %arg26) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          %44 = "arith.maximumf"(%43, %35) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          "linalg.yield"(%44) : (f32) -> ()
        }) : (tensor<4x16xf32>, tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
        "iree_tensor_ext.dispatch.tensor.store"(%42, %arg24) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (tensor<4x16xf32>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>) -> ()
        "func.return"() : () -> ()
      }) : () -> ()
    }) : () -> ()
    "flow.executable_end"() : () -> ()
  }) : () -> ()
  "flow.executable"() <{sym_name = "main_dispatch_1", sym_visibility = "private"}> ({
    "flow.executable.export"() <{function_ref = @main_dispatch_1_reduction_4x16_f32, sym_name = "main_dispatch_1_reduction_4x16_f32", sym_visibility = "public"}> ({
      %34:3 = "iree_tensor_ext.dispatch.workgroup_count_from_slice"() : () -> (index, index, index)
      "flow.return"(%34#0, %34#1, %34#2) : (index, index, index) -> ()
    }) : () -> ()
    "builtin.module"() ({
      "func.func"() <{function_type = (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xf32>>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>) -> (), sym_name = "main_dispatch_1_reduction_4x16_f32"}> ({
      ^bb0(%arg12: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xf32>>, %arg13: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>):
        %23 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
        %24 = "arith.constant"() <{value = 1.600000e+01 : f32}> : () -> f32
        %25 = "iree_tensor_ext.dispatch.tensor.load"(%arg12) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xf32>>) -> tensor<4x16xf32>
        %26 = "tensor.empty"() : () -> tensor<4x16xf32>
        %27 = "tensor.empty"() : () -> tensor<4xf32>
        %28 = "linalg.fill"(%23, %27) <{operandSegmentSizes = array<i32: 1, 1>}> ({
        ^bb0(%arg19: f32, %arg20: f32):
          "linalg.yield"(%arg19) : (f32) -> ()
        }) : (f32, tensor<4xf32>) -> tensor<4xf32>
        %29 = "linalg.generic"(%25, %28) <{indexing_maps = [#map3, #map5], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], operandSegmentSizes = array<i32: 1, 1>}> ({
        ^bb0(%arg17: f32, %arg18: f32):
          %33 = "arith.addf"(%arg18, %arg17) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          "linalg.yield"(%33) : (f32) -> ()
        }) : (tensor<4x16xf32>, tensor<4xf32>) -> tensor<4xf32>
        %30 = "linalg.generic"(%25, %29, %26) <{indexing_maps = [#map3, #map5, #map3], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 2, 1>}> ({
        ^bb0(%arg14: f32, %arg15: f32, %arg16: f32):
          %31 = "arith.divf"(%arg15, %24) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          %32 = "arith.subf"(%arg14, %31) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          "linalg.yield"(%32) : (f32) -> ()
        }) : (tensor<4x16xf32>, tensor<4xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
        "iree_tensor_ext.dispatch.tensor.store"(%30, %arg13) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (tensor<4x16xf32>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>) -> ()
        "func.return"() : () -> ()
      }) : () -> ()
    }) : () -> ()
    "flow.executable_end"() : () -> ()
  }) : () -> ()
  "flow.executable"() <{sym_name = "main_dispatch_2", sym_visibility = "private"}> ({
    "flow.executable.export"() <{function_ref = @main_dispatch_2_reduction_4x16_f32, sym_name = "main_dispatch_2_reduction_4x16_f32", sym_visibility = "public"}> ({
      %22:3 = "iree_tensor_ext.dispatch.workgroup_count_from_slice"() : () -> (index, index, index)
      "flow.return"(%22#0, %22#1, %22#2) : (index, index, index) -> ()
    }) : () -> ()
    "builtin.module"() ({
      "func.func"() <{function_type = (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xf32>>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>) -> (), sym_name = "main_dispatch_2_reduction_4x16_f32"}> ({
      ^bb0(%arg3: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xf32>>, %arg4: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>):
        %7 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
        %8 = "arith.constant"() <{value = 1.600000e+01 : f32}> : () -> f32
        %9 = "arith.constant"() <{value = 9.99999974E-6 : f32}> : () -> f32
        %10 = "iree_tensor_ext.dispatch.tensor.load"(%arg3) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xf32>>) -> tensor<4x16xf32>
        %11 = "tensor.empty"() : () -> tensor<4x16xf32>
        %12 = "tensor.empty"() : () -> tensor<4xf32>
        %13 = "linalg.fill"(%7, %12) <{operandSegmentSizes = array<i32: 1, 1>}> ({
        ^bb0(%arg10: f32, %arg11: f32):
          "linalg.yield"(%arg10) : (f32) -> ()
        }) : (f32, tensor<4xf32>) -> tensor<4xf32>
        %14 = "linalg.generic"(%10, %13) <{indexing_maps = [#map3, #map5], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], operandSegmentSizes = array<i32: 1, 1>}> ({
        ^bb0(%arg8: f32, %arg9: f32):
          %20 = "arith.mulf"(%arg8, %arg8) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          %21 = "arith.addf"(%arg9, %20) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          "linalg.yield"(%21) : (f32) -> ()
        }) : (tensor<4x16xf32>, tensor<4xf32>) -> tensor<4xf32>
        %15 = "linalg.generic"(%10, %14, %11) <{indexing_maps = [#map3, #map5, #map3], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 2, 1>}> ({
        ^bb0(%arg5: f32, %arg6: f32, %arg7: f32):
          %16 = "arith.divf"(%arg6, %8) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          %17 = "arith.addf"(%16, %9) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          %18 = "math.sqrt"(%17) <{fastmath = #arith.fastmath<none>}> : (f32) -> f32
          %19 = "arith.divf"(%arg5, %18) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
          "linalg.yield"(%19) : (f32) -> ()
        }) : (tensor<4x16xf32>, tensor<4xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
        "iree_tensor_ext.dispatch.tensor.store"(%15, %arg4) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (tensor<4x16xf32>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>) -> ()
        "func.return"() : () -> ()
      }) : () -> ()
    }) : () -> ()
    "flow.executable_end"() : () -> ()
  }) : () -> ()
  "util.func"() <{function_type = (!hal.buffer_view, !hal.buffer_view, !hal.buffer_view) -> !hal.buffer_view, sym_name = "main", sym_visibility = "public", tied_operands = [-1 : index]}> ({
  ^bb0(%arg0: !hal.buffer_view, %arg1: !hal.buffer_view, %arg2: !hal.buffer_view):
    %0 = "hal.tensor.import"(%arg0) <{name = "input0", operandSegmentSizes = array<i32: 1, 0, 0, 0>, target_encoding = tensor<4x8xf32>}> : (!hal.buffer_view) -> tensor<4x8xf32>
    %1 = "hal.tensor.import"(%arg1) <{name = "input1", operandSegmentSizes = array<i32: 1, 0, 0, 0>, target_encoding = tensor<8x16xf32>}> : (!hal.buffer_view) -> tensor<8x16xf32>
    %2 = "hal.tensor.import"(%arg2) <{name = "input2", operandSegmentSizes = array<i32: 1, 0, 0, 0>, target_encoding = tensor<16xf32>}> : (!hal.buffer_view) -> tensor<16xf32>
    %3 = "flow.dispatch"(%0, %1, %2) <{entry_points = [@main_dispatch_0::@main_dispatch_0_matmul_4x16x8_f32], operandSegmentSizes = array<i32: 0, 3, 0, 0>, tied_operands = [-1 : index]}> : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    %4 = "flow.dispatch"(%3) <{entry_points = [@main_dispatch_1::@main_dispatch_1_reduction_4x16_f32], operandSegmentSizes = array<i32: 0, 1, 0, 0>, tied_operands = [-1 : index]}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %5 = "flow.dispatch"(%4) <{entry_points = [@main_dispatch_2::@main_dispatch_2_reduction_4x16_f32], operandSegmentSizes = array<i32: 0, 1, 0, 0>, tied_operands = [-1 : index]}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %6 = "hal.tensor.export"(%5) <{name = "output0", source_encoding = tensor<4x16xf32>}> : (tensor<4x16xf32>) -> !hal.buffer_view
    "util.return"(%6) : (!hal.buffer_view) -> ()
  }) {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<4x8xf32>, %input1: tensor<8x16xf32>, %input2: tensor<16xf32>) -> (%output0: tensor<4x16xf32>)"}} : () -> ()
}) {stream.affinity.default = #hal.device.affinity<@__device_0>} : () -> ()

