// Helpers shared by the LCP backends (not part of the public API).
#ifndef CUSP_SOLVER_LCP_INTERNAL_H_
#define CUSP_SOLVER_LCP_INTERNAL_H_

#include <math.h>
#include <stddef.h>

#include "solver/lcp.h"

// Round a byte count up so the next block stays aligned for mjtNum.
#define CUSP_ALIGN(bytes) (((bytes) + 15u) & ~(size_t)15u)

static inline mjtNum cusp_lo(const cuspLcpProblem* p, int i) { return p->lo ? p->lo[i] : 0; }
static inline mjtNum cusp_hi(const cuspLcpProblem* p, int i) {
  return p->hi ? p->hi[i] : INFINITY;
}
static inline mjtNum cusp_mid(mjtNum lo, mjtNum hi, mjtNum x) {
  return x < lo ? lo : (x > hi ? hi : x);
}

// Validate sizes and bounds; on failure fills info (status BAD_INPUT) and returns 0.
// need_bytes is compared with work_bytes.
int cusp_lcp_check(cuspLcpInfo* info, const cuspLcpProblem* prob, size_t need_bytes,
                   size_t work_bytes, const char* backend);

// Start an info record (status NUMERICAL until a backend says otherwise).
void cusp_lcp_info_begin(cuspLcpInfo* info, const char* backend);

// Finish: compute residuals into w (n), status SOLVED if residual <= tol (overrides `status`
// only when it is MAX_ITER or NUMERICAL from a stalled iteration), stamp time.
cuspLcpStatus cusp_lcp_info_end(cuspLcpInfo* info, cuspLcpStatus status, mjtNum* w,
                                const mjtNum* z, const cuspLcpProblem* prob,
                                const cuspLcpOptions* opt, double t0);

// 1 if every bound is the standard one (lo = 0, hi = +inf).
int cusp_lcp_standard_bounds(const cuspLcpProblem* prob);

#endif  // CUSP_SOLVER_LCP_INTERNAL_H_
