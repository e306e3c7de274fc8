// Fuzz targets (libFuzzer entry points, also fed by tests/fuzz_regression_test.cc): each takes
// arbitrary bytes, never crashes, and aborts only when a solver breaks its own contract (a status
// of "solved" with a non-finite or out-of-tolerance answer).
#ifndef CUSP_FUZZ_TARGETS_H_
#define CUSP_FUZZ_TARGETS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Config parser through the plugin's init: bytes -> <config key= value=> pairs for keys of the
// config table -> MJCF string -> mj_compile, mj_makeData (plugin init), 3 steps.
// The plugin must already be registered (libcusp.so loaded). Returns 1 if the model loaded.
int cusp_fuzz_config(const uint8_t* data, size_t size);

// LCP file reader: bytes as the text of a Siconos LCP file. Returns 1 if it parsed.
int cusp_fuzz_lcp_file(const uint8_t* data, size_t size);

// Solver core: bytes -> a small dense LCP (NaN, inf, huge, tiny, singular entries) through every
// backend, the same numbers as a contact LCP through cusp_contact_solve (conditioning) and as an
// MCP through FB Newton. Returns the number of solves that reported "solved".
int cusp_fuzz_solver(const uint8_t* data, size_t size);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_FUZZ_TARGETS_H_
