// Synthetic problems with known structure, for tests and benchmarks (deterministic, seeded).
#ifndef CUSP_SOLVER_LCP_SYNTH_H_
#define CUSP_SOLVER_LCP_SYNTH_H_

#include <stdint.h>

#include <mujoco/mjtype.h>

#include "solver/condition.h"

#ifdef __cplusplus
extern "C" {
#endif

// Uniform in [0, 1) from a 64-bit state (splitmix64).
mjtNum cusp_synth_uniform(uint64_t* state);

// LCP with a known solution: M = B B^T + shift I with B (n x rank), z* >= 0 and w* >= 0
// complementary (about half the entries active), q = w* - M z*.
//   M (n x n, ld n), q (n), zstar (n), wstar (n) out; work: n*rank mjtNum.
void cusp_synth_lcp(mjtNum* M, mjtNum* q, mjtNum* zstar, mjtNum* wstar, int n, int rank,
                    mjtNum shift, uint64_t seed, mjtNum* work);

// Contact LCP data in caller arrays (see cuspContactLcp), nv dofs, m contacts, r directions.
// Meff: SPD with masses spread over two decades. Contacts listed in dep[0..ndep-1] get a normal
// row a*Jn_0 + b*Jn_1 of the first two independent contacts with a, b > 0, a + b < 1
// (a dynamically redundant contact); every other normal row is generic. nv <= 512.
//   Meff (nv x nv), Jn (m x nv), Jt (m*r x nv), mu (m), bn (m), bt (m*r): out.
void cusp_synth_contact(cuspContactLcp* c, mjtNum* Meff, mjtNum* Jn, mjtNum* Jt, mjtNum* mu,
                        mjtNum* bn, mjtNum* bt, int nv, int m, int r, const int* dep, int ndep,
                        uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_LCP_SYNTH_H_
