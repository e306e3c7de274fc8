// libFuzzer entry point; CUSP_FUZZ_TARGET names the target (config, lcp_file, solver).
#include "targets.h"

#define CUSP_CAT_(a, b) a##b
#define CUSP_CAT(a, b) CUSP_CAT_(a, b)

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CUSP_CAT(cusp_fuzz_, CUSP_FUZZ_TARGET)(data, size);
  return 0;
}
