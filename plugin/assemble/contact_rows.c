// Contact rows in an island's coordinates (contact_rows.h).
#include "assemble/contact_rows.h"

void cusp_relative_jac(mjtNum* jacp, mjtNum* jacr, mjtNum* scratch, const cuspDynamics* dyn,
                       const mjModel* m, const mjData* d, const mjtNum point[3], int body0,
                       int body1, int lo, int hi) {
  int nv = dyn->nv;
  cusp_dynamics_jac_span(jacp, jacr, dyn, m, d, point, body0, lo, hi);
  if (body1 <= 0) return;  // the world: fixed
  mjtNum* jp1 = scratch;
  mjtNum* jr1 = jacr ? scratch + 3 * (size_t)nv : NULL;
  cusp_dynamics_jac_span(jp1, jr1, dyn, m, d, point, body1, lo, hi);
  for (int x = 0; x < 3; x++) {
    for (int i = x * nv + lo; i < x * nv + hi; i++) {
      jacp[i] -= jp1[i];
      if (jacr) jacr[i] -= jr1[i];
    }
  }
}

void cusp_direction_row(mjtNum* row, const mjtNum* jac, const mjtNum dir[3], int nv, int lo,
                        int hi) {
  for (int j = lo; j < hi; j++) {
    row[j] = dir[0] * jac[j] + dir[1] * jac[nv + j] + dir[2] * jac[2 * nv + j];
  }
}

void cusp_direction_row_add(mjtNum* row, const mjtNum* jac, const mjtNum dir[3], int nv, int lo,
                            int hi) {
  for (int j = lo; j < hi; j++) {
    row[j] = row[j] + dir[0] * jac[j] + dir[1] * jac[nv + j] + dir[2] * jac[2 * nv + j];
  }
}
