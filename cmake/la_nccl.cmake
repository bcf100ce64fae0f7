# NCCL (and MPI, for `la solve --mpi`) for CG on several GPUs. Looked for in NCCL_ROOT, the
# CUDA toolkit, the system, and the Python environment's NVIDIA wheel (site-packages/nvidia/
# nccl, which pip's nvidia-nccl-cu* installs). LA_WITH_NCCL / LA_WITH_MPI: AUTO (use it when
# found), ON (fail without it), OFF. Without NCCL everything else builds, and the multi-GPU
# entry points say why they are unavailable (la::nccl_status()).
set(LA_WITH_NCCL AUTO CACHE STRING "CG on several GPUs over NCCL: AUTO, ON or OFF")
set(LA_WITH_MPI AUTO CACHE STRING "MPI launch of the multi-GPU solver (la solve --mpi): AUTO, ON or OFF")
set_property(CACHE LA_WITH_NCCL PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE LA_WITH_MPI PROPERTY STRINGS AUTO ON OFF)

set(LA_HAVE_NCCL OFF)
set(LA_HAVE_MPI OFF)
if(NOT LA_WITH_NCCL STREQUAL "OFF")
  set(la_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT})
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE la_nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE la_nccl_rc)
    if(la_nccl_rc EQUAL 0 AND la_nccl_wheel)
      list(APPEND la_nccl_hints ${la_nccl_wheel})
    endif()
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${la_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${la_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
    PATH_SUFFIXES lib lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    file(STRINGS ${NCCL_INCLUDE_DIR}/nccl.h la_nccl_version REGEX "^#define NCCL_(MAJOR|MINOR)[ \t]")
    string(REGEX REPLACE ".*NCCL_MAJOR[ \t]+([0-9]+).*" "\\1" la_nccl_major "${la_nccl_version}")
    string(REGEX REPLACE ".*NCCL_MINOR[ \t]+([0-9]+).*" "\\1" la_nccl_minor "${la_nccl_version}")
    if(la_nccl_major GREATER_EQUAL 2 AND la_nccl_minor GREATER_EQUAL 19)
      set(LA_HAVE_NCCL ON)
      message(STATUS "la: NCCL ${la_nccl_major}.${la_nccl_minor} (${NCCL_LIBRARY}): CG on several GPUs enabled")
    else()
      message(STATUS "la: NCCL ${la_nccl_major}.${la_nccl_minor} at ${NCCL_LIBRARY} is older than 2.19: "
                     "CG on several GPUs disabled")
    endif()
  else()
    message(STATUS "la: NCCL not found (searched NCCL_ROOT, the CUDA toolkit, the system and the Python wheel "
                   "nvidia/nccl): CG on several GPUs disabled; `la solve --gpus` will say so. Set NCCL_ROOT to "
                   "its install prefix to enable it")
  endif()
  if(LA_WITH_NCCL STREQUAL "ON" AND NOT LA_HAVE_NCCL)
    message(FATAL_ERROR "LA_WITH_NCCL=ON but no usable NCCL (2.19 or newer) was found; set NCCL_ROOT")
  endif()
endif()

if(LA_HAVE_NCCL AND NOT LA_WITH_MPI STREQUAL "OFF")
  # A runtime without its headers (Debian's openmpi-bin without libopenmpi-dev) makes
  # FindMPI's try_compile a configure error: preprocess <mpi.h> through the wrapper first,
  # and look no further when it fails.
  set(la_mpi_usable ON)
  find_program(LA_MPICC NAMES mpicc HINTS ${MPI_HOME} $ENV{MPI_HOME} PATH_SUFFIXES bin)
  if(LA_MPICC)
    set(la_mpi_probe ${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/la_mpi_probe.c)
    file(WRITE ${la_mpi_probe} "#include <mpi.h>\nint main(void) { return 0; }\n")
    execute_process(COMMAND ${LA_MPICC} -E ${la_mpi_probe} RESULT_VARIABLE la_mpi_rc OUTPUT_QUIET ERROR_QUIET)
    if(NOT la_mpi_rc EQUAL 0)
      set(la_mpi_usable OFF)
      message(STATUS "la: MPI's compiler wrapper ${LA_MPICC} is here but cannot include <mpi.h> (a runtime without "
                     "its development files: install libopenmpi-dev or your MPI's headers): `la solve --mpi` "
                     "disabled and will say so")
    endif()
  endif()
  if(la_mpi_usable)
    # The C API, through whichever wrapper the MPI has (mpicxx, else mpicc).
    find_package(MPI COMPONENTS CXX QUIET)
    if(MPI_CXX_FOUND)
      set(LA_MPI_TARGET MPI::MPI_CXX)
    else()
      enable_language(C)
      find_package(MPI COMPONENTS C QUIET)
      set(LA_MPI_TARGET MPI::MPI_C)
    endif()
    if(MPI_CXX_FOUND OR MPI_C_FOUND)
      set(LA_HAVE_MPI ON)
      message(STATUS "la: MPI ${MPI_CXX_VERSION}${MPI_C_VERSION} (${LA_MPI_TARGET}): `la solve --mpi` enabled")
    else()
      message(STATUS "la: MPI not found (mpicc on PATH, or MPI_HOME): `la solve --mpi` disabled and will say so")
    endif()
  endif()
  if(LA_WITH_MPI STREQUAL "ON" AND NOT LA_HAVE_MPI)
    message(FATAL_ERROR "LA_WITH_MPI=ON but no usable MPI was found; put mpicc on PATH or set MPI_HOME, with the "
                        "MPI's headers installed")
  endif()
elseif(LA_WITH_MPI STREQUAL "ON")
  message(FATAL_ERROR "LA_WITH_MPI=ON needs NCCL, which was not found or is disabled")
endif()
