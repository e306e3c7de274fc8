// Fuzz target: the Siconos LCP file reader (plugin/solver/lcp_file.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/lcp_file.h"
#include "targets.h"

int cusp_fuzz_lcp_file(const uint8_t* data, size_t size) {
  char* text = (char*)malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  cuspLcpFileData lcp;
  char err[256];
  int ok = cusp_lcp_file_parse(&lcp, err, sizeof(err), text, "fuzz") == 0;
  if (ok) {
    // contract: a parsed problem is complete and finite
    if (lcp.n < 1 || !lcp.M || !lcp.q) abort();
    for (size_t k = 0; k < (size_t)lcp.n * lcp.n; k++) {
      if (!isfinite(lcp.M[k])) abort();
    }
    for (int i = 0; i < lcp.n; i++) {
      if (!isfinite(lcp.q[i])) abort();
    }
  } else if (!memchr(err, 0, sizeof(err)) || !err[0]) {
    abort();  // a failure always says why
  }
  cusp_lcp_file_free(&lcp);
  free(text);
  return ok;
}
