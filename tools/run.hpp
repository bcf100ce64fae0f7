// One rule for every command's exit status, shared by the la executable and the module
// that holds the vendor comparisons:
//   0  success
//   1  the command ran, and its result is not good (the solve did not converge, or met
//      the tolerance only in the recurrence; a kernel failed validation)
//   2  bad usage or bad input: options, files, sizes, environment variables
//   3  no usable GPU, or a CUDA or internal failure
#pragma once

#include <cstdio>
#include <new>
#include <string>

#include <la/error.hpp>
#include "args.hpp"
#include "common.hpp"
#include "solve_options.hpp"

namespace la::cli {

inline constexpr int exit_ok = 0, exit_not_good = 1, exit_usage = 2, exit_device = 3;

template <typename F>
int run_command(const std::string& cmd, F&& f) {
  const char* c = cmd.c_str();
  try {
    return f();
  } catch (const usage_error& e) {
    std::fprintf(stderr, "la %s: %s (see 'la %s --help')\n", c, cli_words(e.what()).c_str(), c);
    return exit_usage;
  } catch (const no_gpu_error& e) {
    std::fprintf(stderr, "la %s: %s\n", c, cli_words(e.what()).c_str());
    return exit_device;
  } catch (const device_error& e) {  // CUDA runtime, cuBLAS, cuSPARSE
    std::fprintf(stderr, "la %s: %s\n", c, cli_words(e.what()).c_str());
    return exit_device;
  } catch (const offset_overflow& e) {
    std::fprintf(stderr, "la %s: error: %s: pass --offsets 64 (or auto)\n", c, cli_words(e.what()).c_str());
    return exit_usage;
  } catch (const error& e) {
    std::fprintf(stderr, "la %s: error: %s\n", c, cli_words(e.what()).c_str());
    return exit_usage;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "la %s: error: out of host memory\n", c);
    return exit_usage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "la %s: internal error: %s\n", c, cli_words(e.what()).c_str());
    return exit_device;
  }
}

}  // namespace la::cli
