// Contact parameter tables (see params.h).
#include "config/params.h"

#include <stdlib.h>
#include <string.h>

// 1 if body b is a registered patch body or welded to one (no joint between them)
static int object_body(const cuspParams* p, const mjModel* m, int b) {
  return b > 0 && p->patch_of_body[m->body_weldid[b]] >= 0;
}

// 1 if equality e stays MuJoCo's soft constraint in the contact correction (cuspParams.eq_compliant):
// a weld or connect naming a registered object's body (or a site on one), a joint equality naming
// one of its joints, and a weld or connect to a mocap body. The last: a mocap target is a drive
// through a soft spring, not a tie of the mechanism. Condensed as a hard tie, the hand it moves
// yielded to no contact: Fetch's gripper, welded to its mocap, drove its pads down the block on
// the table at the weld's lag speed, sliding at the edge of their friction balls, and the closing
// pads of Meta-World's gripper struck the puck without give (failed solves, hundreds of Newton
// steps a step: bench/RESULTS.md)
static int equality_compliant(const cuspParams* p, const mjModel* m, int e) {
  int obj[2] = {m->eq_obj1id[e], m->eq_obj2id[e]};
  for (int k = 0; k < 2; k++) {
    int o = obj[k], b = -1;
    if (o < 0) continue;
    switch (m->eq_type[e]) {
      case mjEQ_WELD:
      case mjEQ_CONNECT: b = m->eq_objtype[e] == mjOBJ_SITE ? m->site_bodyid[o] : o; break;
      case mjEQ_JOINT: b = m->jnt_bodyid[o]; break;
      default: break;  // tendon and flex equalities stay hard ties
    }
    if (b >= 0 && object_body(p, m, b)) return 1;
    if (b >= 0 && m->eq_type[e] != mjEQ_JOINT && m->body_mocapid[b] >= 0) return 1;
  }
  return 0;
}

//---------------------------------- pair parameters -----------------------------------------------
// MuJoCo's combination of two geoms' contact parameters (mj_contactParam): the geom of higher
// priority alone, else the larger of each; computed here only, at init

static int pair_condim(const mjModel* m, int g1, int g2) {
  int p1 = m->geom_priority[g1], p2 = m->geom_priority[g2];
  if (p1 != p2) return m->geom_condim[p1 > p2 ? g1 : g2];
  return m->geom_condim[g1] > m->geom_condim[g2] ? m->geom_condim[g1] : m->geom_condim[g2];
}

static void pair_geom_friction(mjtNum friction[3], const mjModel* m, int g1, int g2) {
  int p1 = m->geom_priority[g1], p2 = m->geom_priority[g2];
  const mjtNum* f1 = m->geom_friction + 3 * g1;
  const mjtNum* f2 = m->geom_friction + 3 * g2;
  for (int i = 0; i < 3; i++) {
    if (p1 != p2) friction[i] = p1 > p2 ? f1[i] : f2[i];
    else friction[i] = f1[i] > f2[i] ? f1[i] : f2[i];
  }
}

// the parameters of the pair g1, g2 (params.h cusp_pair)
static cuspPairParams pair_params(const cuspConfig* cfg, const mjModel* m, int g1, int g2) {
  cuspPairParams q;
  memset(&q, 0, sizeof(q));
  mjtNum friction[3];
  pair_geom_friction(friction, m, g1, g2);
  q.condim = pair_condim(m, g1, g2);
  q.mu = q.condim == 1 ? 0 : cfg->friction >= 0 ? cfg->friction : friction[0];
  q.torsion = q.condim < 4 || !(q.mu > 0) ? 0 : friction[1];
  return q;
}

// 1 if geoms g1 and g2 have the same priority, condim and friction (bitwise): every pair they
// make has the same parameters
static int same_class(const mjModel* m, int g1, int g2) {
  return m->geom_priority[g1] == m->geom_priority[g2] &&
         m->geom_condim[g1] == m->geom_condim[g2] &&
         !memcmp(m->geom_friction + 3 * g1, m->geom_friction + 3 * g2, 3 * sizeof(mjtNum));
}

// geom g's class: an existing one of a geom the same in every parameter, else a new one;
// first[c] is class c's first geom
static int class_of(cuspParams* p, int* first, const mjModel* m, int g) {
  if (p->pair_class[g] >= 0) return p->pair_class[g];
  int c = 0;
  while (c < p->npair_class && !same_class(m, first[c], g)) c++;
  if (c == p->npair_class) first[p->npair_class++] = g;
  return p->pair_class[g] = c;
}

// the pair table: the classes of the registered geoms (disks, then the registered bodies' geoms)
// first, those of the other geoms after; one row per registered class. 0, or -1 out of memory
static int pair_table_init(cuspParams* p, const cuspConfig* cfg, const mjModel* m) {
  p->pair_class = (int*)malloc(((size_t)m->ngeom + 1) * sizeof(int));
  int* first = (int*)malloc(((size_t)m->ngeom + 1) * sizeof(int));
  if (!p->pair_class || !first) {
    free(first);
    return -1;
  }
  for (int g = 0; g < m->ngeom; g++) p->pair_class[g] = -1;
  for (int i = 0; i < cfg->ndisk; i++) class_of(p, first, m, cfg->disk_geoms[i]);
  for (int g = 0; g < m->ngeom; g++) {
    if (p->object_of_geom[g] >= 0) class_of(p, first, m, g);
  }
  p->npair_row = p->npair_class;
  for (int g = 0; g < m->ngeom; g++) class_of(p, first, m, g);
  p->pair = (cuspPairParams*)malloc(
      ((size_t)p->npair_row * p->npair_class + 1) * sizeof(cuspPairParams));
  if (!p->pair) {
    free(first);
    return -1;
  }
  for (int r = 0; r < p->npair_row; r++) {
    for (int c = 0; c < p->npair_class; c++) {
      p->pair[(size_t)r * p->npair_class + c] = pair_params(cfg, m, first[r], first[c]);
    }
  }
  free(first);
  return 0;
}

// the `limit_surface` key's values by registered body (0: the default); the key names only
// registered bodies, each once (config.c)
static int limit_surface_init(cuspParams* p, const cuspConfig* cfg) {
  p->limit_surface = (mjtNum*)calloc(3 * (size_t)cfg->npatch_body + 1, sizeof(mjtNum));
  if (!p->limit_surface) return -1;
  for (int i = 0; i < cfg->nlimit_surface; i++) {
    int k = p->patch_of_body[cfg->limit_surface[i].body];
    if (k < 0) continue;
    for (int j = 0; j < 3; j++) {
      if (cfg->limit_surface[i].e[j] > 0) p->limit_surface[3 * k + j] = cfg->limit_surface[i].e[j];
    }
  }
  return 0;
}

int cusp_params_init(cuspParams* p, const cuspConfig* cfg, const mjModel* m) {
  memset(p, 0, sizeof(*p));
  p->self_contact_neighbours = cfg->self_contact_neighbours;
  p->disk_of_geom = (int*)malloc(((size_t)m->ngeom + 1) * sizeof(int));
  p->patch_of_body = (int*)malloc(((size_t)m->nbody + 1) * sizeof(int));
  p->object_of_geom = (int*)malloc(((size_t)m->ngeom + 1) * sizeof(int));
  p->filterparent = !(m->opt.disableflags & mjDSBL_FILTERPARENT);
  p->obstacle = (unsigned char*)calloc((size_t)m->ngeom + 1, 1);
  p->body_depth = (int*)calloc((size_t)m->nbody + 1, sizeof(int));
  p->disk_depth = (int*)calloc((size_t)m->nbody + 1, sizeof(int));
  p->disk_body = (unsigned char*)calloc((size_t)m->nbody + 1, 1);
  p->eq_compliant = (unsigned char*)calloc((size_t)m->neq + 1, 1);
  if (!p->disk_of_geom || !p->patch_of_body || !p->object_of_geom || !p->obstacle ||
      !p->body_depth || !p->disk_depth || !p->disk_body || !p->eq_compliant) {
    cusp_params_free(p);
    return -1;
  }
  for (int g = 0; g < m->ngeom; g++) p->disk_of_geom[g] = -1;
  for (int b = 0; b < m->nbody; b++) p->patch_of_body[b] = -1;
  for (int i = 0; i < cfg->ndisk; i++) {
    p->disk_of_geom[cfg->disk_geoms[i]] = i;
    p->disk_body[m->geom_bodyid[cfg->disk_geoms[i]]] = 1;
  }
  for (int i = 0; i < cfg->npatch_body; i++) p->patch_of_body[cfg->patch_bodies[i]] = i;
  for (int g = 0; g < m->ngeom; g++) p->object_of_geom[g] = -1;
  for (int i = 0; i < cfg->npatch_body; i++) {
    const int* geoms;
    int ng = cusp_config_object_geoms(&geoms, cfg, i);
    for (int j = 0; j < ng; j++) p->object_of_geom[geoms[j]] = i;
  }
  // bodies are ordered parents first, so one pass fills the depths
  for (int b = 1; b < m->nbody; b++) {
    int parent = m->body_parentid[b];
    p->body_depth[b] = p->body_depth[parent] + 1;
    p->disk_depth[b] = p->disk_depth[parent] + p->disk_body[b];
  }
  for (int g = 0; g < m->ngeom; g++) {
    if (p->disk_of_geom[g] >= 0) continue;  // disks touch disks by the self-contact rule
    if (p->object_of_geom[g] >= 0) {
      p->obstacle[g] = 1;  // registered bodies are solid whatever their contype
    } else if (!cfg->nenv) {
      p->obstacle[g] = m->geom_contype[g] || m->geom_conaffinity[g];
    }
  }
  for (int i = 0; i < cfg->nenv; i++) {
    int g = cfg->environment_geoms[i];
    if (p->disk_of_geom[g] < 0) p->obstacle[g] = 1;
  }
  for (int e = 0; e < m->neq; e++) p->eq_compliant[e] = (unsigned char)equality_compliant(p, m, e);
  if (pair_table_init(p, cfg, m) || limit_surface_init(p, cfg)) {
    cusp_params_free(p);
    return -1;
  }
  return 0;
}

void cusp_params_free(cuspParams* p) {
  free(p->disk_of_geom);
  free(p->patch_of_body);
  free(p->object_of_geom);
  free(p->eq_compliant);
  free(p->obstacle);
  free(p->body_depth);
  free(p->disk_depth);
  free(p->disk_body);
  free(p->pair_class);
  free(p->pair);
  free(p->limit_surface);
  memset(p, 0, sizeof(*p));
}

int cusp_disks_apart(const cuspParams* p, const mjModel* m, int body_a, int body_b) {
  int a = body_a, b = body_b;
  while (p->body_depth[a] > p->body_depth[b]) a = m->body_parentid[a];
  while (p->body_depth[b] > p->body_depth[a]) b = m->body_parentid[b];
  while (a != b) {
    a = m->body_parentid[a];
    b = m->body_parentid[b];
  }
  int lca = a;
  if (lca == 0) return -1;  // only the world joins them: different robots
  // disk bodies on (lca, body_a] and (lca, body_b]; the path from a to b counts b, not a, and
  // counts the common ancestor when it carries a disk and is neither end
  int apart = p->disk_depth[body_a] + p->disk_depth[body_b] - 2 * p->disk_depth[lca];
  if (lca != body_a && lca != body_b && !p->disk_body[lca]) apart--;
  return apart;
}

int cusp_bodies_filtered(const cuspParams* p, const mjModel* m, int b1, int b2) {
  int w1 = m->body_weldid[b1], w2 = m->body_weldid[b2];
  if (w1 == w2) return 1;
  if (p->filterparent && w1 && w2 &&
      (w1 == m->body_weldid[m->body_parentid[w2]] || w2 == m->body_weldid[m->body_parentid[w1]])) {
    return 1;
  }
  // <contact><exclude>: signatures (lower body id << 16) + higher body id, sorted
  int lo = b1 < b2 ? b1 : b2, hi = b1 < b2 ? b2 : b1, sig = (lo << 16) + hi;
  int a = 0, b = m->nexclude - 1;
  while (a <= b) {
    int mid = (a + b) / 2;
    if (m->exclude_signature[mid] == sig) return 1;
    if (m->exclude_signature[mid] < sig) a = mid + 1;
    else b = mid - 1;
  }
  return 0;
}
