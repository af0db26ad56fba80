# The sanitizer pass's short fuzz run (issue 9): each libFuzzer target of this folder linked with
# mutate_main.cpp, a coverage-blind mutation driver that g++ builds, runs its committed seeds and
# then random edits of them for VN_MUTATE_SECONDS under ASan and UBSan. Included from
# tests/CMakeLists.txt in sanitizer builds; the coverage-guided targets need clang (VN_FUZZ).
set(VN_MUTATE_SECONDS 3 CACHE STRING "Seconds each target's mutation run takes in the sanitizer pass")
set(VN_MUTATE_TARGETS fuzz_onnx_model fuzz_npy fuzz_npz fuzz_tensor_proto fuzz_polygraphy_json fuzz_debug_replay
                      fuzz_plan fuzz_tactic_replay fuzz_calibration_cache fuzz_timing_cache)
foreach(target ${VN_MUTATE_TARGETS})
  set(exe mutate_${target})
  add_executable(${exe} ${CMAKE_CURRENT_LIST_DIR}/${target}.cpp ${CMAKE_CURRENT_LIST_DIR}/mutate_main.cpp)
  target_link_libraries(${exe} PRIVATE vn_build_flags vernier_core)
  add_dependencies(vn_sanitize_tests ${exe})
  add_test(NAME fuzz_mutate.${target}
           COMMAND ${exe} ${VN_MUTATE_SECONDS} ${CMAKE_CURRENT_LIST_DIR}/corpus/${target} 1)
  set_tests_properties(fuzz_mutate.${target} PROPERTIES LABELS "fuzz_mutate;sanitize" TIMEOUT 120)
endforeach()
