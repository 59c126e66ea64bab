// softmax_bf16.dispatch-creation.mlir as iree-opt --mlir-print-op-generic prints it (named ops in the generic form); see generate.py.
#executable_target_embedded_elf_x86_64 = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "", cpu_features = "", data_layout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128", iree.encoding.resolver = #iree_cpu.cpu_encoding_resolver<>, max_stack_allocation_size = 32768 : i64, native_vector_size = 16 : i64, target_triple = "x86_64-unknown-unknown-eabi-elf"}>
#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
#map2 = affine_map<(d0, d1) -> (d0)>
#device_target_local = #hal.device.target<"local", [#executable_target_embedded_elf_x86_64]> : !hal.device
"builtin.module"() <{sym_name = "jit_softmax_bf16"}> ({
  "util.global"() <{initial_value = #device_target_local, sym_name = "__device_0", sym_visibility = "private", type = !hal.device}> : () -> ()
  "util.func"() <{function_type = (!hal.buffer_view) -> !hal.buffer_view, sym_name = "main", sym_visibility = "public", tied_operands = [-1 : index]}> ({
  ^bb0(%arg0: !hal.buffer_view):
    %0 = "hal.tensor.import"(%arg0) <{name = "input0", operandSegmentSizes = array<i32: 1, 0, 0, 0>, target_encoding = tensor<4x16xf32>}> : (!hal.buffer_view) -> tensor<4x16xf32>
    %1 = "flow.tensor.reshape"(%0) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<4x16xf32>) -> tensor<64xf32>
    %2 = "flow.dispatch.workgroups"(%1) <{operandSegmentSizes = array<i32: 0, 1, 0, 0>, tied_operands = [-1 : index]}> ({
    ^bb0(%arg24: !iree_tensor_ext.dispatch.tensor<readonly:tensor<64xf32>>, %arg25: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64xbf16>>):
      %38 = "iree_tensor_ext.dispatch.tensor.load"(%arg24) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0>, static_sizes = array<i64: 64>, static_strides = array<i64: 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<64xf32>>) -> tensor<64xf32>
      %39 = "tensor.empty"() : () -> tensor<64xbf16>
      %40 = "linalg.generic"(%38, %39) <{indexing_maps = [#map, #map], iterator_types = [#linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 1, 1>}> ({
      ^bb0(%arg26: f32, %arg27: bf16):
        %41 = "arith.truncf"(%arg26) : (f32) -> bf16
        "linalg.yield"(%41) : (bf16) -> ()
      }) : (tensor<64xf32>, tensor<64xbf16>) -> tensor<64xbf16>
      "iree_tensor_ext.dispatch.tensor.store"(%40, %arg25) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>, static_offsets = array<i64: 0>, static_sizes = array<i64: 64>, static_strides = array<i64: 1>}> : (tensor<64xbf16>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<64xbf16>>) -> ()
      "flow.return"() : () -> ()
    }, {
      %37:3 = "iree_tensor_ext.dispatch.workgroup_count_from_slice"() : () -> (index, index, index)
      "flow.return"(%37#0, %37#1, %37#2) : (index, index, index) -> ()
    }) : (tensor<64xf32>) -> tensor<64xbf16>
    %3 = "flow.tensor.reshape"(%2) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<64xbf16>) -> tensor<4x16xbf16>
    %4 = "flow.dispatch.workgroups"(%3) <{operandSegmentSizes = array<i32: 0, 1, 0, 0>, tied_operands = [-1 : index]}> ({
    ^bb0(%arg15: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xbf16>>, %arg16: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xbf16>>):
      %27 = "arith.constant"() <{value = 0xFF80 : bf16}> : () -> bf16
      %28 = "iree_tensor_ext.dispatch.tensor.load"(%arg15) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xbf16>>) -> tensor<4x16xbf16>
      %29 = "tensor.empty"() : () -> tensor<4x16xbf16>
      %30 = "tensor.empty"() : () -> tensor<4xbf16>
      %31 = "linalg.fill"(%27, %30) <{operandSegmentSizes = array<i32: 1, 1>}> ({
      ^bb0(%arg22: bf16, %arg23: bf16):
        "linalg.yield"(%arg22) : (bf16) -> ()
      }) : (bf16, tensor<4xbf16>) -> tensor<4xbf16>
      %32 = "linalg.generic"(%28, %31) <{indexing_maps = [#map1, #map2], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], operandSegmentSizes = array<i32: 1, 1>}> ({
      ^bb0(%arg20: bf16, %arg21: bf16):
        %36 = "arith.maximumf"(%arg21, %arg20) <{fastmath = #arith.fastmath<none>}> : (bf16, bf16) -> bf16
        "linalg.yield"(%36) : (bf16) -> ()
      }) : (tensor<4x16xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
      %33 = "linalg.generic"(%28, %32, %29) <{indexing_maps = [#map1, #map2, #map1], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 2, 1>}> ({
      ^bb0(%arg17: bf16, %arg18: bf16, %arg19: bf16):
        %34 = "arith.subf"(%arg17, %arg18) <{fastmath = #arith.fastmath<none>}> : (bf16, bf16) -> bf16
        %35 = "math.exp"(%34) <{fastmath = #arith.fastmath<none>}> : (bf16) -> bf16
        "linalg.yield"(%35) : (bf16) -> ()
      }) : (tensor<4x16xbf16>, tensor<4xbf16>, tensor<4x16xbf16>) -> tensor<4x16xbf16>
      "iree_tensor_ext.dispatch.tensor.store"(%33, %arg16) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (tensor<4x16xbf16>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xbf16>>) -> ()
      "flow.return"() : () -> ()
    }, {
      %26:3 = "iree_tensor_ext.dispatch.workgroup_count_from_slice"() : () -> (index, index, index)
      "flow.return"(%26#0, %26#1, %26#2) : (index, index, index) -> ()
    }) : (tensor<4x16xbf16>) -> tensor<4x16xbf16>
    %5 = "flow.dispatch.workgroups"(%4) <{operandSegmentSizes = array<i32: 0, 1, 0, 0>, tied_operands = [-1 : index]}> ({
    ^bb0(%arg7: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xbf16>>, %arg8: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xbf16>>):
      %16 = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
      %17 = "iree_tensor_ext.dispatch.tensor.load"(%arg7) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xbf16>>) -> tensor<4x16xbf16>
      %18 = "tensor.empty"() : () -> tensor<4xbf16>
      %19 = "tensor.empty"() : () -> tensor<4xf32>
      %20 = "linalg.fill"(%16, %19) <{operandSegmentSizes = array<i32: 1, 1>}> ({
      ^bb0(%arg13: f32, %arg14: f32):
        "linalg.yield"(%arg13) : (f32) -> ()
      }) : (f32, tensor<4xf32>) -> tensor<4xf32>
      %21 = "linalg.generic"(%17, %20) <{indexing_maps = [#map1, #map2], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>], operandSegmentSizes = array<i32: 1, 1>}> ({
      ^bb0(%arg11: bf16, %arg12: f32):
        %24 = "arith.extf"(%arg11) : (bf16) -> f32
        %25 = "arith.addf"(%arg12, %24) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
        "linalg.yield"(%25) : (f32) -> ()
      }) : (tensor<4x16xbf16>, tensor<4xf32>) -> tensor<4xf32>
      %22 = "linalg.generic"(%21, %18) <{indexing_maps = [#map, #map], iterator_types = [#linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 1, 1>}> ({
      ^bb0(%arg9: f32, %arg10: bf16):
        %23 = "arith.truncf"(%arg9) : (f32) -> bf16
        "linalg.yield"(%23) : (bf16) -> ()
      }) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xbf16>
      "iree_tensor_ext.dispatch.tensor.store"(%22, %arg8) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>, static_offsets = array<i64: 0>, static_sizes = array<i64: 4>, static_strides = array<i64: 1>}> : (tensor<4xbf16>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xbf16>>) -> ()
      "flow.return"() : () -> ()
    }, {
      %15:3 = "iree_tensor_ext.dispatch.workgroup_count_from_slice"() : () -> (index, index, index)
      "flow.return"(%15#0, %15#1, %15#2) : (index, index, index) -> ()
    }) : (tensor<4x16xbf16>) -> tensor<4xbf16>
    %6 = "flow.dispatch.workgroups"(%4, %5) <{operandSegmentSizes = array<i32: 0, 2, 0, 0>, tied_operands = [-1 : index]}> ({
    ^bb0(%arg1: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xbf16>>, %arg2: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xbf16>>, %arg3: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>):
      %9 = "iree_tensor_ext.dispatch.tensor.load"(%arg1) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4x16xbf16>>) -> tensor<4x16xbf16>
      %10 = "iree_tensor_ext.dispatch.tensor.load"(%arg2) <{operandSegmentSizes = array<i32: 1, 0, 0, 0, 0>, static_offsets = array<i64: 0>, static_sizes = array<i64: 4>, static_strides = array<i64: 1>}> : (!iree_tensor_ext.dispatch.tensor<readonly:tensor<4xbf16>>) -> tensor<4xbf16>
      %11 = "tensor.empty"() : () -> tensor<4x16xf32>
      %12 = "linalg.generic"(%9, %10, %11) <{indexing_maps = [#map1, #map2, #map1], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 2, 1>}> ({
      ^bb0(%arg4: bf16, %arg5: bf16, %arg6: f32):
        %13 = "arith.divf"(%arg4, %arg5) <{fastmath = #arith.fastmath<none>}> : (bf16, bf16) -> bf16
        %14 = "arith.extf"(%13) : (bf16) -> f32
        "linalg.yield"(%14) : (f32) -> ()
      }) : (tensor<4x16xbf16>, tensor<4xbf16>, tensor<4x16xf32>) -> tensor<4x16xf32>
      "iree_tensor_ext.dispatch.tensor.store"(%12, %arg3) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0>, static_offsets = array<i64: 0, 0>, static_sizes = array<i64: 4, 16>, static_strides = array<i64: 1, 1>}> : (tensor<4x16xf32>, !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4x16xf32>>) -> ()
      "flow.return"() : () -> ()
    }, {
      %8:3 = "iree_tensor_ext.dispatch.workgroup_count_from_slice"() : () -> (index, index, index)
      "flow.return"(%8#0, %8#1, %8#2) : (index, index, index) -> ()
    }) : (tensor<4x16xbf16>, tensor<4xbf16>) -> tensor<4x16xf32>
    %7 = "hal.tensor.export"(%6) <{name = "output0", source_encoding = tensor<4x16xf32>}> : (tensor<4x16xf32>) -> !hal.buffer_view
    "util.return"(%7) : (!hal.buffer_view) -> ()
  }) {iree.abi.stub, iree.reflection = {iree.abi.declaration = "sync func @main(%input0: tensor<4x16xf32>) -> (%output0: tensor<4x16xf32>)"}} : () -> ()
}) {stream.affinity.default = #hal.device.affinity<@__device_0>} : () -> ()

