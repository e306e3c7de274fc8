// Contact-space reduction of a disk island (config `reduction_basis`, Goury et al.): the island's
// frictionless normal LCP solved for the coefficients of the non-negative basis
// (plugin/solver/reduction.c), each contact taking its pair's basis row (shared equally by the
// points of a pair). The reduced answer is accepted only when every contact of the island has a
// row in the basis and no contact is left penetrating more than `reduction_tolerance` after the
// step; otherwise the caller solves the full problem (the fallback).
#ifndef CUSP_PLUGIN_REDUCTION_ISLAND_H_
#define CUSP_PLUGIN_REDUCTION_ISLAND_H_

#include <mujoco/mujoco.h>

#include "config/config.h"
#include "collide/contact.h"
#include "solver/condition.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cuspReductionOutcome_ {
  CUSP_REDUCTION_ACCEPTED = 0,  // fn from the basis; beta, gamma zero
  CUSP_REDUCTION_OUTSIDE,       // a contact pair the snapshot never saw: full problem
  CUSP_REDUCTION_VIOLATED,      // reduced answer leaves penetration above tolerance: full problem
  CUSP_REDUCTION_FAILED         // the reduced LCP was not solved, or its scratch would not fit in
                                // d's arena: full problem
} cuspReductionOutcome;

typedef struct cuspReductionIslandInfo_ {
  cuspReductionOutcome outcome;
  int modes;           // basis modes active on the island (nonzero on one of its contacts)
  mjtNum penetration;  // m, deepest penetration the reduced answer leaves after the step
  int iterations;      // of the reduced LCP
} cuspReductionIslandInfo;

// Contacts c[0 .. n) of one island with their rows assembled in lcp (Meff given as its Cholesky
// factor). On CUSP_REDUCTION_ACCEPTED writes fn (n) and zeroes beta (n r) and gamma (n); else
// leaves them as they were. Scratch from d's arena (mj_markStack / mj_freeStack).
cuspReductionOutcome cusp_reduction_island_solve(mjtNum* fn, mjtNum* beta, mjtNum* gamma,
                                                 cuspReductionIslandInfo* info,
                                                 const cuspContactLcp* lcp, const cuspContact* c,
                                                 int n, const cuspConfig* cfg, mjtNum h, mjData* d);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_REDUCTION_ISLAND_H_
