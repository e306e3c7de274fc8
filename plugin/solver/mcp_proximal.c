// Proximal-point outer loop around cusp_mcp_fbnewton (see mcp_proximal.h).
//
// Why it converges where plain FB Newton crawls: with W singular (redundant contacts) the FB
// Newton matrix is singular on the whole solution set, Newton steps are replaced by small
// Levenberg-Marquardt steps, and the iterates creep along the flat directions. The regularised
// problem F + rho scale (z - a) has a nonsingular Jacobian (W + rho scale I is positive definite on
// a PSD W), so each inner solve converges quadratically; the outer map a -> z(a) is the proximal
// map of the monotone operator, which converges to a solution of the original problem (linearly,
// at a rate of about rho scale / (lambda + rho scale) for the smallest nonzero eigenvalue lambda
// involved), and the anchor follows, so the original residual at z(a) goes to 0 with it.
#include "solver/mcp_proximal.h"

#include <math.h>
#include <string.h>

#include "solver/lcp_internal.h"

//---------------------------------- measures of the original problem ----------------------------

// phi(a, b) = sqrt(a^2 + b^2) - a - b (Fischer-Burmeister), in its cancellation-free form
static mjtNum fb_phi(mjtNum a, mjtNum b) {
  mjtNum r = hypot(a, b);
  if (a > 0 && b > 0) return -2 * a * b / (r + a + b);
  return r - a - b;
}

// Natural residual max_i |z_i - mid(lo_i, hi_i, z_i - F_i)| (INFINITY if not finite) and, in
// *merit, the FB merit 0.5 ||Phi||^2 of mcp.h (Billups' composition for two-sided boxes).
static mjtNum measure(mjtNum* merit, const mjtNum* z, const mjtNum* F, const mjtNum* lo,
                      const mjtNum* hi, int n) {
  mjtNum res = 0, psi = 0;
  for (int i = 0; i < n; i++) {
    mjtNum l = lo ? lo[i] : 0, u = hi ? hi[i] : INFINITY;
    mjtNum x = z[i], f = F[i], p;
    if (l > -INFINITY && u == INFINITY) {
      p = fb_phi(x - l, f);
    } else if (l == -INFINITY && u < INFINITY) {
      p = -fb_phi(u - x, -f);
    } else if (l == -INFINITY) {
      p = f;
    } else {
      p = fb_phi(x - l, fb_phi(u - x, -f));
    }
    psi += p * p;
    mjtNum r = fabs(x - cusp_mid(l, u, x - f));
    if (!(r <= res)) res = isnan(r) ? INFINITY : r;
  }
  *merit = isfinite(psi) ? 0.5 * psi : INFINITY;
  return res;
}

//---------------------------------- options and workspace ---------------------------------------

cuspMcpProxOptions cusp_mcp_proximal_default_options(void) {
  cuspMcpProxOptions o;
  o.rho0 = 1e-3;
  o.rho_min = 1e-10;
  o.rho_per_residual = 0;
  o.rho_max = 1e3;
  o.rho_decrease = 10;
  o.rho_increase = 10;
  o.rho_decrease_after_failure = 2;
  o.max_outer = 60;
  o.stall_outer = 0;
  o.stall_factor = 0.5;
  o.inner_tol_factor = 0.1;
  o.inner_tol_rel = 1e-2;
  o.inner_max_iter = 30;
  o.max_iterations = 400;
  o.plain_first_iter = 0;
  o.polish_iter = 0;
  o.plain_last_iter = 0;
  return o;
}

size_t cusp_mcp_proximal_worksize(int n) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  return CUSP_ALIGN(cusp_mcp_worksize(n)) + CUSP_ALIGN(5 * nn * sizeof(mjtNum));
}

size_t cusp_mcp_proximal_problem_worksize(const cuspMcpProblem* prob) {
  size_t nn = (size_t)(prob->n > 0 ? prob->n : 1);
  return CUSP_ALIGN(cusp_mcp_problem_worksize(prob)) + CUSP_ALIGN(5 * nn * sizeof(mjtNum));
}

//---------------------------------- plain Newton on the original problem -----------------------

// At most max_iter FB Newton steps on the original problem from z; the result replaces z (and the
// best iterate) if it lowers the natural residual; *status := SOLVED if it meets opt->tol.
static void plain_newton(mjtNum* z, mjtNum* nat, mjtNum* merit, mjtNum* best_nat,
                         mjtNum* best_merit, mjtNum* zbest, mjtNum* F_out, cuspLcpStatus* status,
                         cuspMcpProxInfo* info, const cuspMcpProblem* prob,
                         const cuspMcpOptions* opt, int max_iter, mjtNum* zin, mjtNum* F,
                         void* work, size_t inner_bytes) {
  if (max_iter <= 0) return;
  const int n = prob->n;
  cuspMcpOptions o = *opt;
  o.warm_start = 1;
  o.max_iter = max_iter;
  memcpy(zin, z, sizeof(mjtNum) * n);
  cuspMcpInfo in;
  cusp_mcp_fbnewton(zin, NULL, &in, prob, &o, work, inner_bytes);
  info->inner_iterations += in.iterations;
  info->mcp.lm_steps += in.lm_steps;
  info->mcp.structured_steps += in.structured_steps;
  info->mcp.evaluations += in.evaluations + 1;
  if (in.status == CUSP_LCP_BAD_INPUT || prob->residual(F, zin, n, prob->user)) return;
  mjtNum m;
  mjtNum r = measure(&m, zin, F, prob->lo, prob->hi, n);
  if (!(r < *nat)) return;
  memcpy(z, zin, sizeof(mjtNum) * n);
  *nat = r;
  *merit = m;
  if (r < *best_nat) {
    *best_nat = r;
    *best_merit = m;
    memcpy(zbest, zin, sizeof(mjtNum) * n);
    if (F_out) memcpy(F_out, F, sizeof(mjtNum) * n);
  }
  if (r <= opt->tol) *status = CUSP_LCP_SOLVED;
}

//---------------------------------- the outer loop ----------------------------------------------

cuspLcpStatus cusp_mcp_proximal(mjtNum* z, mjtNum* F_out, cuspMcpProxInfo* info,
                                const cuspMcpProblem* prob, cuspMcpProxFn prox,
                                const cuspMcpOptions* opt, const cuspMcpProxOptions* popt,
                                void* work, size_t work_bytes) {
  double t0 = cusp_now();
  memset(info, 0, sizeof(*info));
  cuspMcpInfo* out = &info->mcp;
  out->residual = out->merit = INFINITY;
  out->status = CUSP_LCP_BAD_INPUT;
  if (!prob || prob->n < 0 || !prob->residual || !(prob->jacobian || prob->jacobian_band) ||
      !prox || !opt) {
    out->message = "bad size or missing callback";
    return out->status;
  }
  const int n = prob->n;
  if (work_bytes < cusp_mcp_proximal_problem_worksize(prob)) {
    out->message = "workspace too small";
    return out->status;
  }
  const mjtNum* lo = prob->lo;
  const mjtNum* hi = prob->hi;
  for (int i = 0; i < n; i++) {
    mjtNum l = lo ? lo[i] : 0, u = hi ? hi[i] : INFINITY;
    if (!(l <= u) || l == INFINITY || u == -INFINITY) {
      out->message = "lower bound above upper bound";
      return out->status;
    }
  }
  cuspMcpProxOptions po = popt ? *popt : cusp_mcp_proximal_default_options();
  if (!(po.rho_min > 0)) po.rho_min = 1e-10;
  if (!(po.rho_max >= po.rho_min)) po.rho_max = fmax(1e3, po.rho_min);
  if (!(po.rho_decrease > 1)) po.rho_decrease = 10;
  if (!(po.rho_increase > 1)) po.rho_increase = 10;
  if (!(po.rho_decrease_after_failure > 1)) po.rho_decrease_after_failure = 2;
  if (po.max_outer <= 0) po.max_outer = 60;
  if (po.stall_outer < 0) po.stall_outer = 0;
  if (!(po.stall_factor > 0 && po.stall_factor < 1)) po.stall_factor = 0.5;
  if (po.inner_max_iter <= 0) po.inner_max_iter = 30;
  if (po.max_iterations <= 0) po.max_iterations = 400;
  if (po.plain_first_iter < 0) po.plain_first_iter = 0;
  if (po.polish_iter < 0) po.polish_iter = 0;
  if (po.plain_last_iter < 0) po.plain_last_iter = 0;
  const int polish = po.polish_iter < po.max_iterations / 4 ? po.polish_iter : po.max_iterations / 4;
  if (!(po.inner_tol_factor > 0 && po.inner_tol_factor <= 1)) po.inner_tol_factor = 0.1;
  if (!(po.inner_tol_rel >= 0)) po.inner_tol_rel = 1e-2;

  size_t nn = (size_t)(n > 0 ? n : 1);
  size_t inner_bytes = CUSP_ALIGN(cusp_mcp_problem_worksize(prob));
  mjtNum* anchor = (mjtNum*)((char*)work + inner_bytes);  // (n) anchor of the outer step
  mjtNum* zin = anchor + nn;                              // (n) inner iterate
  mjtNum* F = zin + nn;                                   // (n) original F at zin
  mjtNum* zbest = F + nn;                                 // (n) best iterate (original residual)
  mjtNum* zstart = zbest + nn;                            // (n) the starting point

  // the original problem at the starting point: a warm start that solves it costs one evaluation
  prox(prob->user, 0, NULL);
  for (int i = 0; i < n; i++) {
    mjtNum l = lo ? lo[i] : 0, u = hi ? hi[i] : INFINITY;
    z[i] = cusp_mid(l, u, opt->warm_start && isfinite(z[i]) ? z[i] : 0);
  }
  out->evaluations = 1;
  if (prob->residual(F, z, n, prob->user)) {
    out->status = CUSP_LCP_NUMERICAL;
    out->message = "residual callback failed";
    out->seconds = cusp_now() - t0;
    return out->status;
  }
  mjtNum merit;
  mjtNum nat = measure(&merit, z, F, lo, hi, n);
  mjtNum best_nat = nat, best_merit = merit;
  const mjtNum start_nat = nat, start_merit = merit;
  memcpy(zbest, z, sizeof(mjtNum) * n);
  memcpy(zstart, z, sizeof(mjtNum) * n);
  if (F_out) memcpy(F_out, F, sizeof(mjtNum) * n);

  cuspLcpStatus status = nat <= opt->tol ? CUSP_LCP_SOLVED : CUSP_LCP_MAX_ITER;
  const char* message = "";
  cuspMcpOptions in_opt = *opt;
  in_opt.warm_start = 1;
  mjtNum rho_failed = 0;  // the last rho whose inner solve failed (0: none yet)
  mjtNum window_best = best_nat;  // the best residual when the current stall window began
  int window_start = 0;           // the outer step it began after
  mjtNum rho = po.rho0 > 0 ? fmin(fmax(po.rho0, po.rho_min), po.rho_max) : 1e-3;
  if (po.rho_per_residual > 0 && isfinite(nat)) {
    rho = fmax(fmin(rho, po.rho_per_residual * nat), po.rho_min);
  }
  if (status == CUSP_LCP_MAX_ITER && isfinite(nat) && po.plain_first_iter > 0) {
    plain_newton(z, &nat, &merit, &best_nat, &best_merit, zbest, F_out, &status, info, prob,
                 opt, po.plain_first_iter < po.max_iterations - polish
                              ? po.plain_first_iter : po.max_iterations - polish,
                 zin, F, work, inner_bytes);
  }
  while (status == CUSP_LCP_MAX_ITER) {
    if (!isfinite(nat)) {
      status = CUSP_LCP_NUMERICAL;
      message = "non-finite residual";
      break;
    }
    if (info->outer >= po.max_outer) {
      message = "outer iteration limit reached";
      break;
    }
    int left = po.max_iterations - polish - info->inner_iterations;
    if (left <= 0) {
      message = "iteration limit reached";
      break;
    }
    info->outer++;
    // inner solve of the problem regularised about the current iterate; its tolerance follows
    // the original residual (inexact proximal point: loose while far, tol-tight at the end)
    memcpy(anchor, z, sizeof(mjtNum) * n);
    memcpy(zin, z, sizeof(mjtNum) * n);
    in_opt.tol = fmax(po.inner_tol_factor * opt->tol, po.inner_tol_rel * nat);
    in_opt.max_iter = po.inner_max_iter < left ? po.inner_max_iter : left;
    cuspMcpInfo in;
    prox(prob->user, rho, anchor);
    cusp_mcp_fbnewton(zin, NULL, &in, prob, &in_opt, work, inner_bytes);
    prox(prob->user, 0, NULL);
    info->rho = rho;
    info->rho_peak = fmax(info->rho_peak, rho);
    info->inner_iterations += in.iterations;
    out->lm_steps += in.lm_steps;
    out->structured_steps += in.structured_steps;
    out->evaluations += in.evaluations + 1;
    if (in.status == CUSP_LCP_BAD_INPUT) {
      status = CUSP_LCP_BAD_INPUT;
      message = in.message;
      break;
    }
    // the original problem at the inner answer
    if (prob->residual(F, zin, n, prob->user)) {
      status = CUSP_LCP_NUMERICAL;
      message = "residual callback failed";
      break;
    }
    mjtNum merit_in;
    mjtNum nat_in = measure(&merit_in, zin, F, lo, hi, n);
    if (nat_in < best_nat) {
      best_nat = nat_in;
      best_merit = merit_in;
      memcpy(zbest, zin, sizeof(mjtNum) * n);
      if (F_out) memcpy(F_out, F, sizeof(mjtNum) * n);
    }
    if (nat_in <= opt->tol) {
      status = CUSP_LCP_SOLVED;
      break;
    }
    if (po.stall_outer > 0 && info->outer - window_start >= po.stall_outer) {
      if (!(best_nat < po.stall_factor * window_best)) {
        message = "stalled";
        break;
      }
      window_best = best_nat;
      window_start = info->outer;
    }
    if (in.status == CUSP_LCP_SOLVED) {
      // a proximal step: re-anchor; a well-posed inner problem allows less regularisation
      memcpy(z, zin, sizeof(mjtNum) * n);
      nat = nat_in;
      rho = fmax(rho / (rho_failed > 0 && rho >= rho_failed ? po.rho_decrease_after_failure
                                                             : po.rho_decrease),
                 po.rho_min);
    } else {
      // the inner problem was too hard (too little regularisation, or a kink of the Coulomb
      // map): retry from the same anchor with more regularisation (the best iterate is kept
      // apart: re-anchoring at a failed iterate of lower residual undoes the proximal steps
      // towards an answer whose residual is not reached monotonically)
      info->inner_failures++;
      rho_failed = rho;
      if (rho >= po.rho_max) {
        status = CUSP_LCP_NUMERICAL;
        message = "inner solve failed at the largest regularisation";
        break;
      }
      rho = fmin(rho * po.rho_increase, po.rho_max);
    }
  }
  if ((status == CUSP_LCP_MAX_ITER || status == CUSP_LCP_NUMERICAL) && isfinite(best_nat) &&
      polish > 0) {
    // Newton polish of the best iterate: where the proximal steps stall at the rounding floor of
    // a nearly singular problem, the plain Newton's Levenberg-Marquardt steps may still finish
    memcpy(z, zbest, sizeof(mjtNum) * n);
    nat = best_nat;
    plain_newton(z, &nat, &merit, &best_nat, &best_merit, zbest, F_out, &status, info, prob,
                 opt, polish, zin, F, work, inner_bytes);
  }
  if ((status == CUSP_LCP_MAX_ITER || status == CUSP_LCP_NUMERICAL) && isfinite(start_nat) &&
      po.plain_last_iter > 0) {
    memcpy(z, zstart, sizeof(mjtNum) * n);
    nat = start_nat;
    merit = start_merit;
    plain_newton(z, &nat, &merit, &best_nat, &best_merit, zbest, F_out, &status, info, prob,
                 opt, po.plain_last_iter, zin, F, work, inner_bytes);
  }
  if (status != CUSP_LCP_SOLVED && message[0] == 0) message = "iteration limit reached";
  // a Newton iterate may end a little outside the box (within the tolerance): hand back its
  // projection when that meets the tolerance as well, so a solution is feasible and a warm start
  // from it is returned unchanged
  int outside = 0;
  for (int i = 0; i < n; i++) {
    mjtNum l = lo ? lo[i] : 0, u = hi ? hi[i] : INFINITY;
    zin[i] = cusp_mid(l, u, zbest[i]);
    outside |= zin[i] != zbest[i];
  }
  if (outside && status != CUSP_LCP_BAD_INPUT) {
    out->evaluations++;
    if (prob->residual(F, zin, n, prob->user) == 0) {
      mjtNum merit_p;
      mjtNum nat_p = measure(&merit_p, zin, F, lo, hi, n);
      if (nat_p <= fmax(opt->tol, best_nat)) {
        memcpy(zbest, zin, sizeof(mjtNum) * n);
        best_nat = nat_p;
        best_merit = merit_p;
        if (F_out) memcpy(F_out, F, sizeof(mjtNum) * n);
      }
    }
  }
  // hand back the best iterate of the original problem (the last one when it solved)
  memcpy(z, zbest, sizeof(mjtNum) * n);
  out->status = status;
  out->message = status == CUSP_LCP_SOLVED ? "" : message;
  out->iterations = info->inner_iterations;
  out->residual = best_nat;
  out->merit = best_merit;
  out->seconds = cusp_now() - t0;
  return status;
}
