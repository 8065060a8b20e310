# Stage 4: ops.yaml -> C++ API, dispatch, autograd nodes, Python bindings, .pyi.
# The generator rewrites a file only when its content changes (restat), so
# editing one operator recompiles only the shards that contain it.
set(EMBER_OPS_YAML ${PROJECT_SOURCE_DIR}/src/ember/ops/ops.yaml)
set(EMBER_GEN_DIR ${CMAKE_BINARY_DIR}/generated)
file(GLOB EMBER_CODEGEN_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tools/codegen/*.py)

set(EMBER_GEN_CPU_SOURCES
    ${EMBER_GEN_DIR}/src/Functions_0.cpp ${EMBER_GEN_DIR}/src/Functions_1.cpp
    ${EMBER_GEN_DIR}/src/Functions_2.cpp ${EMBER_GEN_DIR}/src/Functions_3.cpp
    ${EMBER_GEN_DIR}/src/Nodes.cpp ${EMBER_GEN_DIR}/src/ForwardFormulas.cpp
    ${EMBER_GEN_DIR}/src/Pointwise.cpp)
set(EMBER_GEN_PYTHON_SOURCES ${EMBER_GEN_DIR}/src/python_ops_0.cpp ${EMBER_GEN_DIR}/src/python_ops_1.cpp
                              ${EMBER_GEN_DIR}/src/python_aten_0.cpp ${EMBER_GEN_DIR}/src/python_aten_1.cpp)
set(EMBER_GEN_HEADERS
    ${EMBER_GEN_DIR}/include/ember/ops/generated/Functions.h
    ${EMBER_GEN_DIR}/include/ember/ops/generated/TensorMethods.h
    ${EMBER_GEN_DIR}/include/ember/ops/generated/NativeFunctions.h
    ${EMBER_GEN_DIR}/include/ember/ops/generated/DispatchTables.h
    ${EMBER_GEN_DIR}/include/ember/ops/generated/PointwiseStubs.h
    ${EMBER_GEN_DIR}/include/ember/autograd/generated/Nodes.h
    ${EMBER_GEN_DIR}/include/ember/autograd/generated/ForwardFormulas.h)
set(EMBER_GEN_PYI ${EMBER_GEN_DIR}/python/_C.pyi)

add_custom_command(
  OUTPUT ${EMBER_GEN_DIR}/codegen.stamp
  BYPRODUCTS ${EMBER_GEN_CPU_SOURCES} ${EMBER_GEN_PYTHON_SOURCES} ${EMBER_GEN_HEADERS} ${EMBER_GEN_PYI}
  COMMAND ${Python_EXECUTABLE} -m tools.codegen.main --yaml ${EMBER_OPS_YAML} --out ${EMBER_GEN_DIR}
          --stamp ${EMBER_GEN_DIR}/codegen.stamp
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  DEPENDS ${EMBER_OPS_YAML} ${EMBER_CODEGEN_SOURCES}
  COMMENT "Generating operators from ops.yaml"
  VERBATIM)
add_custom_target(ember_codegen DEPENDS ${EMBER_GEN_DIR}/codegen.stamp)
