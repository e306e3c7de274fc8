// The contact-space basis file of the `reduction_basis` config key (written by
// `python -m cusp reduction basis`): a non-negative basis B (npair x k) of the normal impulses of
// the contact pairs (registered geom, touched geom) that carried load in the snapshot runs.
//
// Text format (lines starting with '#' are comments):
//   cusp-reduction-basis NPAIR K
//   GEOM1 GEOM2 B_1 ... B_K          (NPAIR lines; geom names of the model, values >= 0)
#ifndef CUSP_PLUGIN_REDUCTION_BASIS_H_
#define CUSP_PLUGIN_REDUCTION_BASIS_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspReductionBasis_ {
  int npair, k;  // rows (contact pairs) and modes; 0, 0: no reduction
  int* pair;     // (2 npair) geom ids, rows sorted by (geom1, geom2) for the lookup
  mjtNum* B;     // (npair x k) row-major: row p holds the pair's entry in each mode
} cuspReductionBasis;

// Reads and checks the basis file `path` against model m. Returns 0, or -1 with a one-line reason
// in why (the caller names the config key and value): cannot open, malformed header, a geom name
// the model does not have, a value negative, non-finite or missing, a pair listed twice.
int cusp_reduction_basis_load(cuspReductionBasis* rb, const char* path, const mjModel* m, char* why,
                              int why_sz);
void cusp_reduction_basis_free(cuspReductionBasis* rb);
int cusp_reduction_basis_copy(cuspReductionBasis* dst, const cuspReductionBasis* src);

// Row of the pair (g1, g2) (either order), or -1 when the snapshot never saw it.
int cusp_reduction_basis_row(const cuspReductionBasis* rb, int g1, int g2);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_REDUCTION_BASIS_H_
