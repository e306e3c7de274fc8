// Sweep and prune along world x (see broadphase.h).
#include "collide/broadphase.h"

#include <stdlib.h>
#include <string.h>

static int bounded(const mjModel* m, int g) {
  return m->geom_type[g] != mjGEOM_PLANE && m->geom_type[g] != mjGEOM_HFIELD &&
         m->geom_rbound[g] > 0;
}

int cusp_broadphase_init(cuspBroadphase* bp, const mjModel* m, const cuspParams* p) {
  memset(bp, 0, sizeof(*bp));
  int cap = (int)m->ngeom + (int)m->nbody + 1;
  bp->box = (cuspAabb*)malloc(cap * sizeof(cuspAabb));
  bp->order = (int*)malloc(cap * sizeof(int));
  bp->unbounded = (int*)malloc(((size_t)m->ngeom + 1) * sizeof(int));
  bp->cap_box = cap;
  bp->cap_cand = 4 * cap;
  bp->cand = (cuspCandidate*)malloc(bp->cap_cand * sizeof(cuspCandidate));
  if (!bp->box || !bp->order || !bp->unbounded || !bp->cand) {
    cusp_broadphase_free(bp);
    return -1;
  }
  for (int g = 0; g < m->ngeom; g++) {
    if (p->obstacle[g] && p->object_of_geom[g] < 0 && !bounded(m, g)) {
      bp->unbounded[bp->nunbounded++] = g;
    }
  }
  return 0;
}

void cusp_broadphase_free(cuspBroadphase* bp) {
  free(bp->box);
  free(bp->order);
  free(bp->unbounded);
  free(bp->cand);
  memset(bp, 0, sizeof(*bp));
}

// box of geom g's bounding sphere grown by pad
static void geom_box(cuspAabb* b, const mjModel* m, const mjData* d, int g, mjtNum pad) {
  mjtNum r = m->geom_rbound[g] + pad;
  for (int k = 0; k < 3; k++) {
    b->lo[k] = d->geom_xpos[3 * g + k] - r;
    b->hi[k] = d->geom_xpos[3 * g + k] + r;
  }
}

static void merge_box(cuspAabb* b, const cuspAabb* c) {
  for (int k = 0; k < 3; k++) {
    if (c->lo[k] < b->lo[k]) b->lo[k] = c->lo[k];
    if (c->hi[k] > b->hi[k]) b->hi[k] = c->hi[k];
  }
}

static int add_candidate(cuspBroadphase* bp, int kind, int index, int other_kind, int other) {
  if (bp->ncand == bp->cap_cand) {
    int cap = 2 * bp->cap_cand;
    cuspCandidate* c = (cuspCandidate*)realloc(bp->cand, cap * sizeof(cuspCandidate));
    if (!c) return -1;
    bp->cand = c;
    bp->cap_cand = cap;
  }
  cuspCandidate* c = bp->cand + bp->ncand++;
  c->kind = kind;
  c->index = index;
  c->other_kind = other_kind;
  c->other = other;
  return 0;
}

// whether a geom of registered body i (its own or welded to it) touches geom g
static int object_touches(const cuspParams* p, const mjModel* m, const cuspConfig* cfg, int i,
                          int g) {
  const int* geoms;
  int ng = cusp_config_object_geoms(&geoms, cfg, i);
  for (int j = 0; j < ng; j++) {
    if (cusp_touches(p, m, geoms[j], g)) return 1;
  }
  return 0;
}

// candidates ordered as a plain double loop would meet them: disks before bodies, by index, the
// geoms of an object before the bodies, by id
static int cand_less(const cuspCandidate* x, const cuspCandidate* y) {
  if (x->kind != y->kind) return x->kind < y->kind;
  if (x->index != y->index) return x->index < y->index;
  if (x->other_kind != y->other_kind) return x->other_kind > y->other_kind;  // geoms first
  return x->other < y->other;
}

static void sift_down(cuspCandidate* c, int root, int n) {
  for (;;) {
    int child = 2 * root + 1;
    if (child >= n) return;
    if (child + 1 < n && cand_less(c + child, c + child + 1)) child++;
    if (!cand_less(c + root, c + child)) return;
    cuspCandidate t = c[root];
    c[root] = c[child];
    c[child] = t;
    root = child;
  }
}

// heap sort: in place, no allocation, O(n log n); the order is total, so the result is unique
static void sort_candidates(cuspCandidate* c, int n) {
  for (int i = n / 2 - 1; i >= 0; i--) sift_down(c, i, n);
  for (int end = n - 1; end > 0; end--) {
    cuspCandidate t = c[0];
    c[0] = c[end];
    c[end] = t;
    sift_down(c, 0, end);
  }
}

// insertion sort of the box order by lo[0] (ties: creation order); boxes are created in model
// order, which for resting or slowly moving bodies is mostly sorted along x already
static void sort_order(int* order, const cuspAabb* box, int n) {
  for (int i = 1; i < n; i++) {
    int key = order[i];
    int j = i - 1;
    while (j >= 0 && (box[order[j]].lo[0] > box[key].lo[0] ||
                      (box[order[j]].lo[0] == box[key].lo[0] && order[j] > key))) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = key;
  }
}

int cusp_broadphase(cuspBroadphase* bp, const cuspConfig* cfg, const cuspParams* p,
                    const mjModel* m, const mjData* d) {
  int n = 0;
  mjtNum pad = cfg->margin;
  for (int i = 0; i < cfg->ndisk; i++) {
    cuspAabb* b = bp->box + n++;
    geom_box(b, m, d, cfg->disk_geoms[i], pad);
    b->kind = CUSP_BP_DISK;
    b->index = i;
  }
  for (int i = 0; i < cfg->npatch_body; i++) {
    const int* geoms;  // the body's geoms and those welded to it
    int ng = cusp_config_object_geoms(&geoms, cfg, i);
    if (ng == 0) continue;
    cuspAabb* b = bp->box + n++;
    geom_box(b, m, d, geoms[0], pad);
    for (int j = 1; j < ng; j++) {
      cuspAabb c;
      geom_box(&c, m, d, geoms[j], pad);
      merge_box(b, &c);
    }
    b->kind = CUSP_BP_BODY;
    b->index = i;
  }
  for (int g = 0; g < m->ngeom; g++) {
    if (!p->obstacle[g] || p->object_of_geom[g] >= 0 || !bounded(m, g)) continue;
    cuspAabb* b = bp->box + n++;
    geom_box(b, m, d, g, 0);
    b->kind = CUSP_BP_GEOM;
    b->index = g;
  }
  for (int i = 0; i < n; i++) bp->order[i] = i;
  sort_order(bp->order, bp->box, n);

  bp->ncand = 0;
  for (int a = 0; a < n; a++) {
    const cuspAabb* A = bp->box + bp->order[a];
    for (int c = a + 1; c < n; c++) {
      const cuspAabb* B = bp->box + bp->order[c];
      if (B->lo[0] > A->hi[0]) break;
      if (B->lo[1] > A->hi[1] || A->lo[1] > B->hi[1] || B->lo[2] > A->hi[2] ||
          A->lo[2] > B->hi[2]) {
        continue;
      }
      // registered object first; geoms do not pair with geoms
      const cuspAabb* R = A->kind <= B->kind ? A : B;
      const cuspAabb* O = A->kind <= B->kind ? B : A;
      if (R->kind == CUSP_BP_GEOM) continue;
      int rc = 0;
      if (O->kind == CUSP_BP_DISK) {
        // two disks (the self-contact rule): detected once, from the disk of the lower index
        int lo = R->index < O->index ? R->index : O->index;
        int hi = R->index < O->index ? O->index : R->index;
        if (!cusp_touches(p, m, cfg->disk_geoms[lo], cfg->disk_geoms[hi])) continue;
        rc = add_candidate(bp, CUSP_BP_DISK, lo, CUSP_BP_GEOM, cfg->disk_geoms[hi]);
      } else if (O->kind == CUSP_BP_GEOM) {
        int touch = R->kind == CUSP_BP_DISK
                        ? cusp_touches(p, m, cfg->disk_geoms[R->index], O->index)
                        : object_touches(p, m, cfg, R->index, O->index);
        if (!touch) continue;
        rc = add_candidate(bp, R->kind, R->index, CUSP_BP_GEOM, O->index);
      } else if (R->kind == CUSP_BP_DISK) {
        // a disk and a registered body: the disk detects against each of the body's geoms
        const int* geoms;
        int ng = cusp_config_object_geoms(&geoms, cfg, O->index);
        for (int j = 0; j < ng && !rc; j++) {
          if (cusp_touches(p, m, cfg->disk_geoms[R->index], geoms[j])) {
            rc = add_candidate(bp, CUSP_BP_DISK, R->index, CUSP_BP_GEOM, geoms[j]);
          }
        }
      } else {
        // two registered bodies, unless MuJoCo's body-pair filter parts them (a body and its
        // parent: one object's links)
        int lo = R->index < O->index ? R->index : O->index;
        int hi = R->index < O->index ? O->index : R->index;
        if (cusp_bodies_filtered(p, m, cfg->patch_bodies[lo], cfg->patch_bodies[hi])) continue;
        rc = add_candidate(bp, CUSP_BP_BODY, lo, CUSP_BP_BODY, hi);
      }
      if (rc) return -1;
    }
  }
  // unbounded obstacles (planes, heightfields) are candidates of every registered object
  for (int u = 0; u < bp->nunbounded; u++) {
    int g = bp->unbounded[u];
    for (int i = 0; i < cfg->ndisk; i++) {
      if (cusp_touches(p, m, cfg->disk_geoms[i], g) &&
          add_candidate(bp, CUSP_BP_DISK, i, CUSP_BP_GEOM, g)) {
        return -1;
      }
    }
    for (int i = 0; i < cfg->npatch_body; i++) {
      if (object_touches(p, m, cfg, i, g) &&
          add_candidate(bp, CUSP_BP_BODY, i, CUSP_BP_GEOM, g)) {
        return -1;
      }
    }
  }
  sort_candidates(bp->cand, bp->ncand);
  return bp->ncand;
}
