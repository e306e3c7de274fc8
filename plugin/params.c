// Contact parameter tables (see params.h).
#include "params.h"

#include <stdlib.h>
#include <string.h>

int cusp_params_init(cuspParams* p, const cuspConfig* cfg, const mjModel* m) {
  memset(p, 0, sizeof(*p));
  p->disk_of_geom = (int*)malloc(((size_t)m->ngeom + 1) * sizeof(int));
  p->patch_of_body = (int*)malloc(((size_t)m->nbody + 1) * sizeof(int));
  p->obstacle = (unsigned char*)calloc((size_t)m->ngeom + 1, 1);
  if (!p->disk_of_geom || !p->patch_of_body || !p->obstacle) {
    cusp_params_free(p);
    return -1;
  }
  for (int g = 0; g < m->ngeom; g++) p->disk_of_geom[g] = -1;
  for (int b = 0; b < m->nbody; b++) p->patch_of_body[b] = -1;
  for (int i = 0; i < cfg->ndisk; i++) p->disk_of_geom[cfg->disk_geoms[i]] = i;
  for (int i = 0; i < cfg->npatch_body; i++) p->patch_of_body[cfg->patch_bodies[i]] = i;
  for (int g = 0; g < m->ngeom; g++) {
    if (p->disk_of_geom[g] >= 0) continue;  // disk-disk contact is not modelled
    if (p->patch_of_body[m->geom_bodyid[g]] >= 0) {
      p->obstacle[g] = 1;  // registered bodies are solid whatever their contype
    } else if (!cfg->nenv) {
      p->obstacle[g] = m->geom_contype[g] || m->geom_conaffinity[g];
    }
  }
  for (int i = 0; i < cfg->nenv; i++) {
    int g = cfg->environment_geoms[i];
    if (p->disk_of_geom[g] < 0) p->obstacle[g] = 1;
  }
  return 0;
}

void cusp_params_free(cuspParams* p) {
  free(p->disk_of_geom);
  free(p->patch_of_body);
  free(p->obstacle);
  memset(p, 0, sizeof(*p));
}
