// Guards around the contact step: see guard.h.
#include "step/guard.h"

#include "state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/lcp.h"

int cusp_guard_init(cuspGuard* g, const mjModel* m) {
  g->nq = m->nq;
  g->nv = m->nv;
  g->qpos = (mjtNum*)calloc((size_t)m->nq + 1, sizeof(mjtNum));
  g->qvel = (mjtNum*)calloc((size_t)m->nv + 1, sizeof(mjtNum));
  return g->qpos && g->qvel ? 0 : -1;
}

void cusp_guard_free(cuspGuard* g) {
  free(g->qpos);
  free(g->qvel);
  memset(g, 0, sizeof(*g));
}

static int first_nonfinite(const mjtNum* x, int n) {
  for (int i = 0; i < n; i++) {
    if (!isfinite(x[i])) return i;
  }
  return -1;
}

static int refuse(mjtNum* state, cuspLcpStatus status) {
  for (int s = CUSP_STATE_NCONTACT; s <= CUSP_STATE_STATUS; s++) state[s] = 0;
  state[CUSP_STATE_MAX_PENETRATION] = 0;
  state[CUSP_STATE_STATUS] = status;
  state[CUSP_STATE_SOLVER_FAILURES] += 1;
  state[CUSP_STATE_STEPS] += 1;
  return -1;
}

// geom g's size: finite, and > 0 in its first `positive` entries
static int bad_size(const mjModel* m, int g, int positive, const char* role, char* why,
                    int why_sz) {
  const mjtNum* s = m->geom_size + 3 * g;
  for (int k = 0; k < 3; k++) {
    if (!isfinite(s[k]) || (k < positive && !(s[k] > 0))) {
      const char* name = mj_id2name(m, mjOBJ_GEOM, g);
      snprintf(why, why_sz,
               "%s geom '%s' has size[%d] = %g (needs a finite number%s); contact step skipped",
               role, name ? name : "(unnamed)", k, s[k], k < positive ? " > 0" : "");
      return 1;
    }
  }
  return 0;
}

int cusp_guard_before(cuspGuard* g, mjtNum* state, const mjModel* m, const mjData* d,
                      const cuspConfig* cfg, char* why, int why_sz) {
  for (int i = 0; i < cfg->ndisk; i++) {
    // a cylinder disk: radius and half-thickness
    if (bad_size(m, cfg->disk_geoms[i], 2, "disk", why, why_sz)) {
      return refuse(state, CUSP_LCP_BAD_INPUT);
    }
  }
  for (int i = 0; i < cfg->nenv; i++) {
    if (bad_size(m, cfg->environment_geoms[i], 0, "environment", why, why_sz)) {
      return refuse(state, CUSP_LCP_BAD_INPUT);
    }
  }
  for (int i = 0; i < cfg->npatch_body; i++) {
    const int* geoms;  // the body's geoms and those welded to it
    int ng = cusp_config_object_geoms(&geoms, cfg, i);
    for (int k = 0; k < ng; k++) {
      if (bad_size(m, geoms[k], 0, "patch body", why, why_sz)) {
        return refuse(state, CUSP_LCP_BAD_INPUT);
      }
    }
  }
  int i = first_nonfinite(d->qpos, m->nq);
  int j = first_nonfinite(d->qvel, m->nv);
  if (i >= 0 || j >= 0) {
    snprintf(why, why_sz, "non-finite %s[%d] = %g entering the contact step; step skipped",
             i >= 0 ? "qpos" : "qvel", i >= 0 ? i : j, i >= 0 ? d->qpos[i] : d->qvel[j]);
    return refuse(state, CUSP_LCP_BAD_INPUT);
  }
  memcpy(g->qpos, d->qpos, sizeof(mjtNum) * m->nq);
  memcpy(g->qvel, d->qvel, sizeof(mjtNum) * m->nv);
  return 0;
}

int cusp_guard_after(cuspGuard* g, mjtNum* state, const mjModel* m, mjData* d, char* why,
                     int why_sz) {
  int i = first_nonfinite(d->qpos, m->nq);
  int j = first_nonfinite(d->qvel, m->nv);
  if (i < 0 && j < 0) return 0;
  snprintf(why, why_sz,
           "the contact correction made %s[%d] non-finite; the step was undone (free motion "
           "kept)",
           i >= 0 ? "qpos" : "qvel", i >= 0 ? i : j);
  memcpy(d->qpos, g->qpos, sizeof(mjtNum) * m->nq);
  memcpy(d->qvel, g->qvel, sizeof(mjtNum) * m->nv);
  if (state[CUSP_STATE_STATUS] == CUSP_LCP_SOLVED) state[CUSP_STATE_SOLVER_FAILURES] += 1;
  state[CUSP_STATE_STATUS] = CUSP_LCP_NUMERICAL;
  return -1;
}
