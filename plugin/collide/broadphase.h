// Broad phase: which registered objects (contact disks, registered patch bodies) may be within
// the margin of which geoms, by sweep and prune of axis-aligned boxes along world x. Geoms without
// a finite bound (planes, heightfields' rbound 0) are candidates of every registered object.
// The candidate list is sorted (object, other), so the narrow phase runs in the same order as a
// plain double loop and the step stays deterministic. Cost O(n log n + pairs), not O(n^2).
#ifndef CUSP_PLUGIN_BROADPHASE_H_
#define CUSP_PLUGIN_BROADPHASE_H_

#include <mujoco/mujoco.h>

#include "config/config.h"
#include "config/params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspAabb_ {
  mjtNum lo[3], hi[3];  // m, world
  int kind;             // CUSP_BP_DISK, CUSP_BP_BODY (registered), CUSP_BP_GEOM (obstacle)
  int index;            // disk index, patch body index (config order), or geom id
} cuspAabb;

enum { CUSP_BP_DISK = 0, CUSP_BP_BODY = 1, CUSP_BP_GEOM = 2 };

// A candidate: registered object (kind, index) with another object (kind, index).
typedef struct cuspCandidate_ {
  int kind, index;            // CUSP_BP_DISK or CUSP_BP_BODY
  int other_kind, other;      // CUSP_BP_GEOM (geom id), or CUSP_BP_BODY (patch body index)
} cuspCandidate;

typedef struct cuspBroadphase_ {
  int cap_box, cap_cand;
  cuspAabb* box;        // (cap_box)
  int* order;           // (cap_box) boxes sorted by lo[0]
  int* unbounded;       // (ngeom) obstacle geoms without a finite bound
  int nunbounded;
  cuspCandidate* cand;  // (cap_cand)
  int ncand;
} cuspBroadphase;

int cusp_broadphase_init(cuspBroadphase* bp, const mjModel* m, const cuspParams* p);
void cusp_broadphase_free(cuspBroadphase* bp);

// Candidates of this step at the kinematics in d: every disk and registered body with every
// obstacle geom (cusp_touches) and every other registered body whose boxes, grown by the margin,
// overlap; two disks pair when the self-contact rule lets them (cusp_disks_touch) as (disk of the
// lower index, geom of the other). Fills bp->cand (sorted); returns their count or -1 (out
// of memory).
int cusp_broadphase(cuspBroadphase* bp, const cuspConfig* cfg, const cuspParams* p,
                    const mjModel* m, const mjData* d);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_BROADPHASE_H_
