// Internal: the semismooth Fischer-Burmeister Newton core shared by cusp_mcp_fbnewton (user
// callbacks) and cusp_lcp_fbnewton (F = M z + q, constant Jacobian M, affine line search).
#ifndef CUSP_SOLVER_FB_CORE_H_
#define CUSP_SOLVER_FB_CORE_H_

#include "solver/mcp.h"

typedef struct cuspFbCore_ {
  int n;
  const mjtNum* lo;             // (n) or NULL (= 0)
  const mjtNum* hi;             // (n) or NULL (= +inf)
  cuspMcpResidualFn residual;
  cuspMcpJacobianFn jacobian;   // unused when jac_const != NULL
  void* user;
  const mjtNum* jac_const;      // (ld_const x n) constant Jacobian, or NULL
  int ld_const;
  int affine;                   // 1: F(z + t d) = F(z) + t J d (no callback in the line search)
  cuspMcpJacobianBandFn jacobian_band;  // band mode (mcp.h) when set: jacobian unused, no
  int kl, ku;                           // jac_const, no affine
  cuspMcpNewtonSolveFn newton_solve;    // structured Newton step (mcp.h), or NULL
} cuspFbCore;

size_t cusp_fb_core_worksize(int n, int const_jac);
// workspace of the band mode
size_t cusp_fb_core_band_worksize(int n, int kl, int ku);

// z (n) in/out, F (n) out (may be NULL). work of cusp_fb_core_worksize bytes (not checked).
cuspLcpStatus cusp_fb_core(mjtNum* z, mjtNum* F, cuspMcpInfo* info, const cuspFbCore* core,
                           const cuspMcpOptions* opt, void* work);

#endif  // CUSP_SOLVER_FB_CORE_H_
