// The cusp contact step: free motion, then correction.
#include "step/step.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/contact_rows.h"
#include "collide/detect.h"
#include "config/params.h"
#include "step/reduction_island.h"
#include "solver/lcp.h"  // cusp_now: the solve timer

//---------------------------------- workspace ------------------------------------------------------

cuspConditionOptions cusp_step_condition_options(const cuspConfig* cfg) {
  cuspConditionOptions opt = cusp_condition_default_options();
  opt.rank_select = cfg->rank_selection;
  opt.eps_rank = cfg->eps_rank;
  opt.ruiz = cfg->ruiz;
  opt.ruiz_passes = cfg->ruiz_passes;
  opt.tikhonov = cfg->tikhonov;
  opt.eps_w = cfg->eps_w;
  opt.estimate_condition = 0;
  static const cuspLcpBackendId backend[5] = {CUSP_LCP_CHAIN, CUSP_LCP_FBNEWTON, CUSP_LCP_LEMKE,
                                              CUSP_LCP_PGS, CUSP_LCP_NCPSMOOTH};
  opt.backend = backend[cfg->solver];
  opt.lcp.tol = cfg->tolerance;
  opt.lcp.max_iter = cfg->max_iterations;
  opt.lcp.warm_start = cfg->warm_start;
  opt.fallback = cfg->fallback;
  opt.finish = cfg->finish;
  return opt;
}

static void free_buffers(cuspStepWork* w) {
  free(w->contacts);
  free(w->prev_pair);
  free(w->prev_fn);
  free(w->prev_beta);
  free(w->prev_gamma);
  free(w->Jn_r);
  free(w->Jto_r);
  free(w->bn);
  free(w->vn);
  free(w->failed);
  free(w->failed_keep);
  free(w->bt);
  free(w->mu);
  free(w->fn);
  free(w->beta);
  free(w->gamma);
  free(w->keep);
  free(w->pair);
  free(w->sorted);
  free(w->solver_work);
}

// (re)allocate the per-contact buffers for `capacity` contacts, keeping the previous step's
// warm-start data and this step's detected contacts
static int grow(cuspStepWork* w, int capacity) {
  int r = w->r, nv = w->nv;
  cuspStepWork old = *w;
  size_t c = (size_t)capacity;
  w->contacts = (cuspContact*)calloc(c, sizeof(cuspContact));
  w->prev_pair = (int*)calloc(3 * c, sizeof(int));
  w->prev_fn = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->prev_beta = (mjtNum*)calloc(c * r + 1, sizeof(mjtNum));
  w->prev_gamma = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->Jn_r = (mjtNum*)calloc(c * nv + 1, sizeof(mjtNum));
  w->Jto_r = (mjtNum*)calloc(c * 2 * nv + 1, sizeof(mjtNum));
  w->bn = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->vn = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->failed = (mjtNum*)calloc(c * (r + 3) + 1, sizeof(mjtNum));
  w->failed_keep = (int*)calloc(c, sizeof(int));
  w->bt = (mjtNum*)calloc(c * r + 1, sizeof(mjtNum));
  w->mu = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->fn = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->beta = (mjtNum*)calloc(c * r + 1, sizeof(mjtNum));
  w->gamma = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->keep = (int*)calloc(c, sizeof(int));
  w->pair = (int*)calloc(c, sizeof(int));
  w->sorted = (cuspContact*)calloc(c, sizeof(cuspContact));
  w->solver_bytes = cusp_contact_worksize(nv, capacity, r, &w->cond_opt);
  w->solver_work = malloc(w->solver_bytes);
  int ok = w->contacts && w->prev_pair && w->prev_fn && w->prev_beta && w->prev_gamma &&
           w->Jn_r && w->Jto_r && w->bn && w->vn && w->failed && w->failed_keep && w->bt &&
           w->mu && w->fn && w->beta && w->gamma && w->keep && w->pair && w->sorted &&
           w->solver_work;
  if (ok && old.capacity) {
    memcpy(w->contacts, old.contacts, old.capacity * sizeof(cuspContact));
    memcpy(w->prev_pair, old.prev_pair, 3 * old.nprev * sizeof(int));
    memcpy(w->prev_fn, old.prev_fn, old.nprev * sizeof(mjtNum));
    memcpy(w->prev_beta, old.prev_beta, (size_t)old.nprev * r * sizeof(mjtNum));
    memcpy(w->prev_gamma, old.prev_gamma, old.nprev * sizeof(mjtNum));
  }
  if (!ok) {
    // keep the old buffers and capacity: a failed growth leaves a consistent workspace
    free_buffers(w);
    *w = old;
    return -1;
  }
  w->capacity = capacity;
  if (old.capacity) free_buffers(&old);
  return 0;
}

int cusp_step_init(cuspStepWork* w, const mjModel* m, const cuspConfig* cfg) {
  memset(w, 0, sizeof(*w));
  w->r = cfg->friction_directions;
  w->nv = m->nv;
  w->jac = (mjtNum*)calloc(6 * (size_t)m->nv + 1, sizeof(mjtNum));
  w->g = (mjtNum*)calloc(m->nv + 1, sizeof(mjtNum));
  w->dv = (mjtNum*)calloc(m->nv + 1, sizeof(mjtNum));
  w->dv_drift = (mjtNum*)calloc(m->nv + 1, sizeof(mjtNum));
  w->q_start = (mjtNum*)calloc(m->nq + 1, sizeof(mjtNum));
  w->q_euler = (mjtNum*)calloc(m->nq + 1, sizeof(mjtNum));
  if (!w->q_start || !w->q_euler) return -1;
  w->cone = (mjtNum*)calloc(2 * (size_t)w->r, sizeof(mjtNum));
  w->island_contact = (int*)calloc((size_t)m->ntree + 2, sizeof(int));
  w->island_patch = (int*)calloc((size_t)m->ntree + 2, sizeof(int));
  w->island_flag = (int*)calloc((size_t)m->ntree + 2, sizeof(int));
  w->island_cursor = (int*)calloc((size_t)m->ntree + 2, sizeof(int));
  if (!w->island_flag || !w->island_cursor ||!w->jac || !w->g || !w->dv || !w->dv_drift || !w->cone || !w->island_contact ||
      !w->island_patch) {
    return -1;
  }
  for (int k = 0; k < w->r; k++) {
    w->cone[2 * k] = cos(2 * mjPI * k / w->r);
    w->cone[2 * k + 1] = sin(2 * mjPI * k / w->r);
  }
  if (cusp_islands_init(&w->isl, m)) return -1;
  if (cusp_params_init(&w->params, cfg, m)) return -1;
  if (cusp_broadphase_init(&w->bp, m, &w->params)) return -1;
  if (cfg->npatch_body && cusp_patch_work_init(&w->patch, m)) return -1;
  w->cond_opt = cusp_step_condition_options(cfg);
  // a first guess: four contacts per disk
  int guess = 4 * (cfg->ndisk > 0 ? cfg->ndisk : 1);
  return grow(w, guess);
}

void cusp_step_free(cuspStepWork* w) {
  if (w->capacity) free_buffers(w);
  free(w->jac);
  free(w->g);
  free(w->dv);
  free(w->dv_drift);
  free(w->q_start);
  free(w->q_euler);
  free(w->cone);
  free(w->island_contact);
  free(w->island_patch);
  free(w->island_flag);
  free(w->island_cursor);
  for (int k = 0; k < w->ndyn; k++) cusp_dynamics_free(w->dyn + k);
  free(w->dyn);
  cusp_islands_free(&w->isl);
  cusp_params_free(&w->params);
  cusp_broadphase_free(&w->bp);
  cusp_patch_work_free(&w->patch);
  memset(w, 0, sizeof(*w));
}

void cusp_step_reset(cuspStepWork* w) {
  w->solve_seconds = 0;
  w->ncontact = 0;
  w->nprev = 0;
  w->patch.nprev = 0;
  w->patch.set.npatch = 0;
}

void cusp_step_record_start(cuspStepWork* w, const mjModel* m, const mjData* d) {
  if (m->opt.integrator != mjINT_RK4 || (w->have_start && d->time > w->t_start)) return;
  mju_copy(w->q_start, d->qpos, m->nq);
  w->t_start = d->time;
  w->have_start = 1;
}

void cusp_step_forget_start(cuspStepWork* w) { w->have_start = 0; }

// RK4: the trees of this step's candidate pairs take q = q_start (+) h v* (see
// cusp_step_record_start). Returns 1 if a configuration changed (kinematics to recompute).
static int semi_implicit_positions(cuspStepWork* w, const cuspConfig* cfg, const mjModel* m,
                                   mjData* d) {
  mjtNum h = m->opt.timestep;
  if (m->opt.integrator != mjINT_RK4 || !w->have_start || w->bp.ncand == 0 ||
      fabs(w->t_start + h - d->time) > 1e-9 * fmax(1, fabs(d->time))) {
    return 0;
  }
  int* tree = w->island_cursor;  // (ntree) scratch until group(): tree takes the position
  for (int t = 0; t < m->ntree; t++) tree[t] = 0;
  for (int i = 0; i < w->bp.ncand; i++) {
    const cuspCandidate* c = w->bp.cand + i;
    int b0 = c->kind == CUSP_BP_DISK ? m->geom_bodyid[cfg->disk_geoms[c->index]]
                                     : cfg->patch_bodies[c->index];
    int b1 = c->other_kind == CUSP_BP_GEOM ? m->geom_bodyid[c->other]
                                           : cfg->patch_bodies[c->other];
    if (m->body_treeid[b0] >= 0) tree[m->body_treeid[b0]] = 1;
    if (m->body_treeid[b1] >= 0) tree[m->body_treeid[b1]] = 1;
  }
  mju_copy(w->q_euler, w->q_start, m->nq);
  mj_integratePos(m, w->q_euler, d->qvel, h);
  int changed = 0;
  for (int j = 0; j < m->njnt; j++) {
    if (!tree[m->body_treeid[m->jnt_bodyid[j]]]) continue;
    int adr = m->jnt_qposadr[j];
    int n = m->jnt_type[j] == mjJNT_FREE ? 7 : (m->jnt_type[j] == mjJNT_BALL ? 4 : 1);
    for (int k = adr; k < adr + n; k++) {
      changed |= d->qpos[k] != w->q_euler[k];
      d->qpos[k] = w->q_euler[k];
    }
  }
  return changed;
}

// dynamics slot of island k, created on first use (sized by the island; grown by the update)
static cuspDynamics* island_dynamics(cuspStepWork* w, const mjModel* m, int k, int ndof) {
  if (k >= w->ndyn) {
    int n = 2 * k + 2;
    cuspDynamics* a = (cuspDynamics*)realloc(w->dyn, n * sizeof(cuspDynamics));
    if (!a) return NULL;
    w->dyn = a;
    for (int i = w->ndyn; i < n; i++) memset(w->dyn + i, 0, sizeof(cuspDynamics));
    w->ndyn = n;
  }
  if (!w->dyn[k].dofs) {
    if (cusp_dynamics_init(w->dyn + k, m, ndof)) return NULL;
    w->dyn[k].eq_compliant = w->params.eq_compliant;
  }
  return w->dyn + k;
}

int cusp_step_copy_history(cuspStepWork* dst, const cuspStepWork* src) {
  int need = src->nprev > src->ncontact ? src->nprev : src->ncontact;
  if (dst->r != src->r || (need > dst->capacity && grow(dst, need))) return -1;
  size_t r = (size_t)src->r;
  memcpy(dst->contacts, src->contacts, (size_t)src->ncontact * sizeof(cuspContact));
  dst->ncontact = src->ncontact;
  memcpy(dst->prev_pair, src->prev_pair, 3 * (size_t)src->nprev * sizeof(int));
  memcpy(dst->prev_fn, src->prev_fn, (size_t)src->nprev * sizeof(mjtNum));
  memcpy(dst->prev_beta, src->prev_beta, (size_t)src->nprev * r * sizeof(mjtNum));
  memcpy(dst->prev_gamma, src->prev_gamma, (size_t)src->nprev * sizeof(mjtNum));
  dst->nprev = src->nprev;
  dst->info = src->info;
  const cuspPatchWork* ps = &src->patch;
  cuspPatchWork* pd = &dst->patch;
  if (ps->cap_patch) {
    int np = ps->set.npatch > ps->nprev ? ps->set.npatch : ps->nprev;
    if (!pd->cap_patch || cusp_patch_work_reserve(pd, np, pd->cap_rows, pd->cap_z)) return -1;
    memcpy(pd->set.patch, ps->set.patch, (size_t)ps->set.npatch * sizeof(cuspPatch));
    memcpy(pd->prev, ps->prev, (size_t)ps->nprev * sizeof(cuspPatch));
    pd->set.npatch = ps->set.npatch;
    pd->nprev = ps->nprev;
    pd->info = ps->info;
    pd->solves = ps->solves;
    pd->failures = ps->failures;
  }
  return 0;
}

//---------------------------------- detection ------------------------------------------------------

// disk contacts of the broad phase's disk candidates (the candidate list is sorted, disks first)
static int detect(cuspStepWork* w, const mjModel* m, const mjData* d, const cuspConfig* cfg) {
  w->ncontact = 0;
  for (int i = 0; i < w->bp.ncand && w->bp.cand[i].kind == CUSP_BP_DISK; i++) {
    int disk = cfg->disk_geoms[w->bp.cand[i].index], g = w->bp.cand[i].other;
    if (w->ncontact + CUSP_MAX_DISK_POINTS > w->capacity && grow(w, 2 * w->capacity)) {
      return -1;
    }
    cuspContact* c = w->contacts + w->ncontact;
    int found = cusp_detect_disk(c, m, d, disk, g, cfg->margin);
    for (int k = 0; k < found; k++) c[k].mu = cusp_pair_friction(&w->params, disk, g);
    w->ncontact += found;
  }
  return 0;
}

//---------------------------------- assembly -------------------------------------------------------

// Rows of the island's contacts c[0 .. n) in its reduced coordinates: the relative point Jacobian
// (3 x nv) is reduced once (3 x nr, J N) and the normal and r friction-direction rows are
// combinations of its 3 rows; the right-hand sides use the relative velocity of the free motion.
// Rows go to the start of Jn_r, Jto_r, bn, bt, mu (one island at a time).
static void assemble(cuspStepWork* w, cuspDynamics* dyn, const cuspContact* cs, int n,
                     const mjModel* m, const mjData* d, const cuspConfig* cfg) {
  int nv = dyn->nv, nr = dyn->nr, r = w->r;
  mjtNum h = m->opt.timestep;
  mjtNum* jrel = w->jac;             // (3 x nv)
  mjtNum* scratch = w->jac + 3 * nv; // (3 x nv)
  mjtNum* jred = dyn->identity ? jrel : w->jac + 3 * nv;  // (3 x nr), after scratch is done
  mjtNum* vloc = w->g;               // (nv) the island's free velocity; g is free until the solve
  cusp_dynamics_gather(vloc, dyn, d->qvel);
  for (int i = 0; i < n; i++) {
    const cuspContact* c = cs + i;
    cusp_relative_jac(jrel, NULL, scratch, dyn, m, d, c->pos, c->body[0], c->body[1], 0, nv);
    mjtNum vrel[3];  // m/s, velocity of the registered geom's point relative to the other
    mju_mulMatVec(vrel, jrel, vloc, 3, nv);
    if (!dyn->identity) cusp_dynamics_reduce(jred, dyn, jrel, 3);  // N = I: jred is jrel
    const mjtNum* t = c->frame;
    const mjtNum* o = c->frame + 3;
    const mjtNum* nn = c->frame + 6;
    mju_mulMatTVec(w->Jn_r + (size_t)i * nr, jred, nn, 3, nr);
    // free normal velocity plus gap term (speculative gaps exactly, penetration recovered)
    w->vn[i] = mju_dot3(vrel, nn);
    w->bn[i] =
        cusp_normal_rhs(w->vn[i], c->gap, h, cfg->gap_alpha, cfg->pushout_speed, 0, 0);
    w->mu[i] = c->mu;
    // the tangent rows; friction direction k is cone[2k] t + cone[2k+1] o (the solver combines)
    mju_mulMatTVec(w->Jto_r + (size_t)2 * i * nr, jred, t, 3, nr);
    mju_mulMatTVec(w->Jto_r + ((size_t)2 * i + 1) * nr, jred, o, 3, nr);
    mjtNum vt = mju_dot3(vrel, t), vo = mju_dot3(vrel, o);
    for (int k = 0; k < r; k++) w->bt[i * r + k] = w->cone[2 * k] * vt + w->cone[2 * k + 1] * vo;
  }
}

// warm start of every contact from the previous step's impulses of the same (disk, geom, sub)
static void warm_start(cuspStepWork* w) {
  int r = w->r;
  for (int i = 0; i < w->ncontact; i++) {
    const cuspContact* c = w->contacts + i;
    w->fn[i] = 0;
    w->gamma[i] = 0;
    mju_zero(w->beta + (size_t)i * r, r);
    for (int j = 0; j < w->nprev; j++) {
      const int* pair = w->prev_pair + 3 * j;
      if (pair[0] == c->geom[0] && pair[1] == c->geom[1] && pair[2] == c->sub) {
        w->fn[i] = w->prev_fn[j];
        w->gamma[i] = w->prev_gamma[j];
        mju_copy(w->beta + (size_t)i * r, w->prev_beta + (size_t)j * r, r);
        break;
      }
    }
  }
}

static void remember(cuspStepWork* w) {
  int r = w->r;
  for (int i = 0; i < w->ncontact; i++) {
    w->prev_pair[3 * i] = w->contacts[i].geom[0];
    w->prev_pair[3 * i + 1] = w->contacts[i].geom[1];
    w->prev_pair[3 * i + 2] = w->contacts[i].sub;
    w->prev_fn[i] = w->fn[i];
    w->prev_gamma[i] = w->gamma[i];
    mju_copy(w->prev_beta + (size_t)i * r, w->beta + (size_t)i * r, r);
  }
  w->nprev = w->ncontact;
}

//---------------------------------- one island -----------------------------------------------------

static int all_finite(const mjtNum* x, int n) {
  for (int i = 0; i < n; i++) {
    if (!isfinite(x[i])) return 0;
  }
  return 1;
}

// the outcome of one island's solve, summed into the step's published state
typedef struct IslandResult_ {
  int status;           // cuspLcpStatus (0 solved)
  int iterations;
  int kept;             // contacts kept by the conditioning
  mjtNum rcond_before, rcond_after;
  mjtNum max_pen;       // m
  int reduced;          // 1: solved in the contact-space basis (reduction_basis)
  int reduction_fallback;  // 1: reduction configured, but the full problem was solved
} IslandResult;

// A failed disk island whose penetrating contacts ask for push-out (the gap stabilisation, not the
// physics) may have no solution because of it: a carrier squeezed between the floor and a pusher
// that cannot move along the normal is asked to leave both. Solved once more with the push-out of
// every contact at most max_depth (m) deep dropped (held at its depth: bn = its free normal
// velocity vn); kept if that solves it, the failed answer and bn restored otherwise. Returns 1 if
// kept. The shallow ones first: a contact whose push-out is dropped keeps its depth.
static int drop_disk_pushout(IslandResult* res, cuspStepWork* w, const cuspContactLcp* lcp,
                             const cuspConditionOptions* opt, int c0, int n, mjtNum h,
                             mjtNum max_depth) {
  const cuspContact* ct = w->contacts + c0;
  int r = w->r, dropped = 0;
  mjtNum* bn = w->failed;  // (n) the island's bn, then its failed fn (n), beta (n r), gamma (n)
  mjtNum* fn = bn + n;
  mjtNum* beta = fn + n;
  mjtNum* gamma = beta + (size_t)n * r;
  memcpy(bn, w->bn, sizeof(mjtNum) * n);
  for (int i = 0; i < n; i++) {
    mjtNum depth = -cusp_start_gap(ct[i].gap, w->vn[i], h);  // m, penetration if > 0
    if (depth > 0 && depth <= max_depth && w->bn[i] != w->vn[i]) {
      w->bn[i] = w->vn[i];
      dropped++;
    }
  }
  if (!dropped) return 0;
  memcpy(fn, w->fn + c0, sizeof(mjtNum) * n);
  memcpy(beta, w->beta + (size_t)c0 * r, sizeof(mjtNum) * n * r);
  memcpy(gamma, w->gamma + c0, sizeof(mjtNum) * n);
  memcpy(w->failed_keep, w->keep + c0, sizeof(int) * n);
  cuspConditionInfo failed_info = w->info;
  cuspLcpStatus status = cusp_contact_solve(w->fn + c0, w->beta + (size_t)c0 * r, w->gamma + c0,
                                            w->keep + c0, &w->info, lcp, opt, w->solver_work,
                                            w->solver_bytes);
  res->iterations += w->info.lcp.iterations;
  if (status == CUSP_LCP_SOLVED) {
    res->status = status;
    res->kept = w->info.kept;
    res->rcond_before = w->info.rcond_before;
    res->rcond_after = w->info.rcond_after;
    return 1;
  }
  memcpy(w->bn, bn, sizeof(mjtNum) * n);
  memcpy(w->fn + c0, fn, sizeof(mjtNum) * n);
  memcpy(w->beta + (size_t)c0 * r, beta, sizeof(mjtNum) * n * r);
  memcpy(w->gamma + c0, gamma, sizeof(mjtNum) * n);
  memcpy(w->keep + c0, w->failed_keep, sizeof(int) * n);
  w->info = failed_info;
  return 0;
}

// Disk contacts c0 .. c0 + n of one island without patch rows: the conditioned LCP with the
// configured backend; the correction goes into w->dv at the island's dofs.
static void solve_disk_island(IslandResult* res, cuspStepWork* w, cuspDynamics* dyn, int c0, int n,
                              const mjModel* m, const mjData* d, const cuspConfig* cfg,
                              const cuspConditionOptions* cond_opt) {
  int r = w->r, nr = dyn->nr;
  mjtNum h = m->opt.timestep;
  assemble(w, dyn, w->contacts + c0, n, m, d, cfg);
  mjtNum* fn = w->fn + c0;
  mjtNum* beta = w->beta + (size_t)c0 * r;
  mjtNum* gamma = w->gamma + c0;
  // geom-pair groups: a pair's contacts are consecutive (detected together)
  const cuspContact* ct = w->contacts + c0;
  for (int i = 0; i < n; i++) {
    int same = i > 0 && ct[i].geom[0] == ct[i - 1].geom[0] && ct[i].geom[1] == ct[i - 1].geom[1];
    w->pair[i] = same ? w->pair[i - 1] : i;
  }
  cuspContactLcp lcp = {
      .nv = nr, .m = n, .r = r, .Meff = dyn->L, .meff_is_factor = 1,
      .Jn = w->Jn_r, .Jt = NULL, .mu = w->mu, .bn = w->bn, .bt = w->bt,
      .Jto = w->Jto_r, .dirs = w->cone, .pair = w->pair};
  // the solve's wall time: the reduction's and the full solve's (which times itself)
  double t0 = cfg->reduction.k ? cusp_now() : 0;
  // contact-space reduction first when configured; its fallback is the full solve below
  cuspReductionIslandInfo red = {.outcome = CUSP_REDUCTION_OUTSIDE};
  if (cfg->reduction.k) {
    cusp_reduction_island_solve(fn, beta, gamma, &red, &lcp, w->contacts + c0, n, cfg, h,
                                (mjData*)d);  // the arena only: d's state is not changed
  }
  res->reduced = red.outcome == CUSP_REDUCTION_ACCEPTED;
  res->reduction_fallback = cfg->reduction.k && !res->reduced;
  if (res->reduced) {
    res->status = CUSP_LCP_SOLVED;
    res->iterations = red.iterations;
    res->kept = n;
    res->rcond_before = res->rcond_after = 0;
    for (int i = 0; i < n; i++) w->keep[c0 + i] = 1;
  } else {
    cuspConditionOptions opt = *cond_opt;
    opt.lcp.work_pool = &w->work_left;  // one budget for the step's backend runs
    res->status = cusp_contact_solve(fn, beta, gamma, w->keep + c0, &w->info, &lcp, &opt,
                                     w->solver_work, w->solver_bytes);
    res->iterations = w->info.lcp.iterations;
    res->kept = w->info.kept;
    res->rcond_before = w->info.rcond_before;
    res->rcond_after = w->info.rcond_after;
    if (res->status != CUSP_LCP_SOLVED && cfg->finish) {
      const mjtNum rest = CUSP_SLIP_SPEED * h;  // m: a depth recovered at the rest speed
      if (!drop_disk_pushout(res, w, &lcp, &opt, c0, n, h, rest)) {
        drop_disk_pushout(res, w, &lcp, &opt, c0, n, h, INFINITY);
      }
    }
  }
  w->solve_seconds += cfg->reduction.k ? cusp_now() - t0 : w->info.lcp.seconds;
  res->max_pen = 0;
  if (!all_finite(fn, n) || !all_finite(beta, n * r)) {
    // nothing usable: no correction, contacts unloaded, no warm start from this
    if (res->status == CUSP_LCP_SOLVED) res->status = CUSP_LCP_NUMERICAL;
    for (int i = 0; i < n; i++) {
      fn[i] = gamma[i] = 0;
      mju_zero(beta + (size_t)i * r, r);
    }
  }

  // correction: du = Mr^-1 (Jn_r^T fn + Jt_r^T beta), dv = N du at the island's dofs; the
  // friction rows enter through the tangential resultant (sum_k beta_k cos_k, sum_k beta_k sin_k)
  mju_zero(w->g, nr);
  for (int i = 0; i < n; i++) {
    if (fn[i] != 0) mju_addToScl(w->g, w->Jn_r + (size_t)i * nr, fn[i], nr);
    mjtNum tau[2] = {0, 0};
    for (int k = 0; k < r; k++) {
      tau[0] += beta[i * r + k] * w->cone[2 * k];
      tau[1] += beta[i * r + k] * w->cone[2 * k + 1];
    }
    for (int x = 0; x < 2; x++) {
      if (tau[x] != 0) mju_addToScl(w->g, w->Jto_r + ((size_t)2 * i + x) * nr, tau[x], nr);
    }
    w->contacts[c0 + i].impulse_t[0] = tau[0];  // the tangential impulse (N s) in (t, o)
    w->contacts[c0 + i].impulse_t[1] = tau[1];
  }
  cusp_dynamics_solve(w->g, dyn, w->g);
  cusp_dynamics_expand(w->dv, dyn, w->g);

  // results: impulses, slip after the correction, post-correction (linearised) penetration
  for (int i = 0; i < n; i++) {
    cuspContact* c = w->contacts + c0 + i;
    c->impulse_n = fn[i];
    // slip after the correction: v_k = bt_k + Jt_r,k du along d_k = cos_k t + sin_k o; for r >= 3
    // equally spaced directions sum_k d_k d_k^T = (r/2) I on the tangent plane, so the tangential
    // velocity is (2/r) sum_k v_k d_k
    mjtNum slip[2] = {0, 0};
    mjtNum dt = r ? mju_dot(w->Jto_r + (size_t)2 * i * nr, w->g, nr) : 0;
    mjtNum dto = r ? mju_dot(w->Jto_r + ((size_t)2 * i + 1) * nr, w->g, nr) : 0;
    for (int k = 0; k < r; k++) {
      mjtNum vk = w->bt[i * r + k] + w->cone[2 * k] * dt + w->cone[2 * k + 1] * dto;
      slip[0] += vk * w->cone[2 * k];
      slip[1] += vk * w->cone[2 * k + 1];
    }
    c->slip = 2.0 / r * mju_sqrt(slip[0] * slip[0] + slip[1] * slip[1]);
    mjtNum gap_after = c->gap + h * mju_dot(w->Jn_r + (size_t)i * nr, w->g, nr);
    if (-gap_after > res->max_pen) res->max_pen = -gap_after;
  }
}

// Patches p0 .. p0 + n of one island (its surface patches and rigid point contacts, then its disk
// contacts as point patches): the MCP over all its rows.
static void solve_patch_island(IslandResult* res, cuspStepWork* w, cuspDynamics* dyn, int p0,
                               int n, const mjModel* m, const mjData* d, const cuspConfig* cfg) {
  cuspPatchWork* pw = &w->patch;
  res->status = cusp_patch_solve(pw, w->dv, &res->max_pen, p0, n, cfg, m, d, dyn,
                                 m->opt.timestep);
  res->iterations = pw->info.iterations;
  res->kept = n;
  res->rcond_before = res->rcond_after = 0;
  int nonfinite = 0;
  for (int a = 0; a < dyn->nv; a++) nonfinite |= !isfinite(w->dv[dyn->dofs[a]]);
  if (nonfinite) {
    for (int a = 0; a < dyn->nv; a++) w->dv[dyn->dofs[a]] = 0;
    if (res->status == CUSP_LCP_SOLVED) res->status = CUSP_LCP_NUMERICAL;
  }
  // disk contacts solved as point patches get their results
  for (int i = p0; i < p0 + n; i++) {
    const cuspPatch* P = pw->set.patch + i;
    if (P->source < 0) continue;
    cuspContact* c = w->contacts + P->source;
    w->fn[P->source] = P->Ln;  // warm start of the LCP, should the contact leave the island
    w->gamma[P->source] = 0;
    mju_zero(w->beta + (size_t)P->source * w->r, w->r);
    c->impulse_n = P->Ln;
    c->impulse_t[0] = P->L[0];
    c->impulse_t[1] = P->L[1];
    c->slip = P->sigma;
  }
}

// Largest linearised penetration (m, >= 0) of disk contacts c0 .. c0 + n after the island's
// correction du (w->g, reduced coordinates) applied over time hs (h, or h s for a correction scaled
// by s): max over contacts of -(gap + hs Jn_r du), the geometry's distance at the new
// configuration to first order.
static mjtNum disk_penetration(const cuspStepWork* w, const cuspDynamics* dyn, int c0, int n,
                               mjtNum hs) {
  mjtNum pen = 0;
  for (int i = 0; i < n; i++) {
    mjtNum after = w->contacts[c0 + i].gap + hs * mju_dot(w->Jn_r + (size_t)i * dyn->nr, w->g,
                                                            dyn->nr);
    if (-after > pen) pen = -after;
  }
  return pen;
}

// Largest penetration (m, >= 0) of this step's disk contact pairs at d's current qpos: kinematics
// there (the driver restores MuJoCo's arrays afterwards) and detection of every pair again.
static mjtNum disk_penetration_at(cuspStepWork* w, const mjModel* m, mjData* d,
                                  const cuspConfig* cfg) {
  cuspContact probe[CUSP_MAX_DISK_POINTS];
  mjtNum pen = 0;
  mj_kinematics(m, d);
  for (int i = 0; i < w->ncontact; i++) {
    const cuspContact* c = w->contacts + i;
    if (i > 0 && c->geom[0] == c[-1].geom[0] && c->geom[1] == c[-1].geom[1]) continue;  // pair done
    int found = cusp_detect_disk(probe, m, d, c->geom[0], c->geom[1], cfg->margin);
    for (int k = 0; k < found; k++) {
      if (-probe[k].gap > pen) pen = -probe[k].gap;
    }
  }
  return pen;
}

//---------------------------------- failed solves --------------------------------------------------

// Kinetic energy (J) that pushing one penetrating normal row out needs at most: the row alone
// brought to its recovery speed s = min(gap_alpha |gap| / h, pushout_speed) (m/s) through its
// Delassus diagonal wnn (1/kg): s^2 / (2 wnn). Zero for a row that is not penetrating.
static mjtNum pushout_energy(mjtNum gap, mjtNum wnn, mjtNum h, const cuspConfig* cfg) {
  if (gap >= 0 || !(wnn > 0)) return 0;
  mjtNum s = cusp_pushout(-gap, h, cfg->gap_alpha, cfg->pushout_speed);
  return 0.5 * s * s / wnn;
}

// A failed solve's best iterate is not a solution: its correction may add energy (a failed PGS
// or Newton iterate can push bodies apart or spin them up). The correction dv of island k is
// scaled by the largest s in [0, 1] for which the kinetic-energy change
//   dK(s) = s v*^T M dv + s^2 dv^T M dv / 2   (M: MuJoCo's mass matrix at time t)
// stays within what recovering the island's penetrations needs (pushout_energy summed over its
// normal rows); impulses are scaled with it, so what is published is what was applied. A
// correction that only dissipates (every correct answer of the contact problem) is kept whole.
// Returns s.
static mjtNum limit_failed_correction(cuspStepWork* w, cuspDynamics* dyn, int k, int patches,
                                      const mjModel* m, const mjData* d, const cuspConfig* cfg) {
  mjtNum h = m->opt.timestep;
  int c0 = w->island_contact[k], nck = w->island_contact[k + 1] - c0;
  int p0 = w->island_patch[k], npk = w->island_patch[k + 1] - p0;
  int nr = dyn->nr, r = w->r;
  mjtNum allowance = 0;  // J
  if (patches) {
    const cuspPatchWork* pw = &w->patch;
    for (int i = 0; i < npk; i++) {
      const cuspPatch* P = pw->set.patch + p0 + i;
      for (int v = 0; v < P->nvert; v++) {
        int row = pw->row_of[i] + v;
        allowance += pushout_energy(P->gap[v], pw->W[(size_t)row * pw->nrows + row], h, cfg);
      }
    }
  } else {
    mjtNum* x = w->jac;  // (nr) Mr^-1 Jn_r,i
    for (int i = 0; i < nck; i++) {
      const mjtNum* row = w->Jn_r + (size_t)i * nr;
      cusp_dynamics_solve(x, dyn, row);
      allowance += pushout_energy(w->contacts[c0 + i].gap, mju_dot(row, x, nr), h, cfg);
    }
  }
  // a = v*^T M dv, b = dv^T M dv over the island's dofs (dv is zero elsewhere)
  mjtNum* dv = w->dv_drift;  // (nv_model) scratch: the island's correction alone
  mjtNum* Mdv = w->jac;      // (nv_model)
  mju_zero(dv, m->nv);
  for (int a = 0; a < dyn->nv; a++) dv[dyn->dofs[a]] = w->dv[dyn->dofs[a]];
  mj_mulM(m, d, Mdv, dv);
  mjtNum a = 0, b = 0;
  for (int j = 0; j < dyn->nv; j++) {
    int dof = dyn->dofs[j];
    a += d->qvel[dof] * Mdv[dof];
    b += dv[dof] * Mdv[dof];
  }
  if (a + 0.5 * b <= allowance || !(b > 0)) return 1;
  // largest s with s a + s^2 b / 2 = allowance (allowance >= 0, so the root is real and >= 0)
  mjtNum s = (-a + sqrt(a * a + 2 * b * allowance)) / b;
  s = s < 0 ? 0 : (s > 1 ? 1 : s);
  for (int j = 0; j < dyn->nv; j++) w->dv[dyn->dofs[j]] *= s;
  for (int i = c0; i < c0 + nck; i++) {
    cuspContact* c = w->contacts + i;
    c->impulse_n *= s;
    c->impulse_t[0] *= s;
    c->impulse_t[1] *= s;
    w->fn[i] *= s;
    mju_scl(w->beta + (size_t)i * r, w->beta + (size_t)i * r, s, r);
  }
  if (patches) {
    for (int i = p0; i < p0 + npk; i++) {
      cuspPatch* P = w->patch.set.patch + i;
      P->Ln *= s;
      mju_scl(P->L, P->L, s, 3);
      mju_scl(P->lambda, P->lambda, s, P->nvert);
    }
  }
  return s;
}

//---------------------------------- islands --------------------------------------------------------

// Group this step's disk contacts and patches into islands; reorder both so that every island's
// contacts are contiguous (w->island_contact) and its patches are followed by its disk contacts
// as point patches when it has any patch row (w->island_patch). Returns the island count or -1.
static int group(cuspStepWork* w, const mjModel* m, const mjData* d, int npatch) {
  cuspIslands* isl = &w->isl;
  cuspPatchWork* pw = &w->patch;
  cusp_islands_begin(isl, m, d);
  for (int i = 0; i < w->ncontact; i++) {
    cusp_islands_join(isl, m, w->contacts[i].body[0], w->contacts[i].body[1]);
  }
  for (int i = 0; i < npatch; i++) {
    cusp_islands_join(isl, m, pw->set.patch[i].body[0], pw->set.patch[i].body[1]);
  }
  for (int i = 0; i < w->ncontact; i++) {
    cusp_islands_mark(isl, m, w->contacts[i].body[0], w->contacts[i].body[1]);
  }
  for (int i = 0; i < npatch; i++) {
    cusp_islands_mark(isl, m, pw->set.patch[i].body[0], pw->set.patch[i].body[1]);
  }
  cusp_islands_finish(isl, m);
  int ni = isl->nisland;

  // disk contacts by island (counting sort, stable); island -1 (nothing movable) last
  int* cc = w->island_contact;
  for (int k = 0; k <= ni + 1; k++) cc[k] = 0;
  for (int i = 0; i < w->ncontact; i++) {
    cuspContact* c = w->contacts + i;
    c->island = cusp_islands_of(isl, m, c->body[0], c->body[1]);
    cc[(c->island >= 0 ? c->island : ni) + 1]++;
  }
  for (int k = 0; k <= ni; k++) cc[k + 1] += cc[k];
  for (int i = 0; i < w->ncontact; i++) {
    const cuspContact* c = w->contacts + i;
    w->sorted[cc[c->island >= 0 ? c->island : ni]++] = *c;
  }
  memcpy(w->contacts, w->sorted, w->ncontact * sizeof(cuspContact));
  for (int k = ni; k > 0; k--) cc[k] = cc[k - 1];  // back to first contact of each island
  cc[0] = 0;

  // patches by island, each island's disk contacts appended as point patches if it has patches
  int* pc = w->island_patch;
  int* has_patch = w->island_flag;
  int* cursor = w->island_cursor;
  for (int k = 0; k <= ni + 1; k++) pc[k] = has_patch[k] = 0;
  for (int i = 0; i < npatch; i++) {
    cuspPatch* P = pw->set.patch + i;
    P->island = cusp_islands_of(isl, m, P->body[0], P->body[1]);
    if (P->island >= 0) has_patch[P->island] = 1;
    pc[(P->island >= 0 ? P->island : ni) + 1]++;
  }
  for (int k = 0; k < ni; k++) {
    if (has_patch[k]) pc[k + 1] += cc[k + 1] - cc[k];
  }
  for (int k = 0; k <= ni; k++) pc[k + 1] += pc[k];
  int total = pc[ni + 1];
  if (cusp_patch_work_reserve(pw, total, pw->cap_rows, pw->cap_z)) return -1;
  for (int k = 0; k <= ni; k++) cursor[k] = pc[k];
  for (int i = 0; i < npatch; i++) {
    const cuspPatch* P = pw->set.patch + i;
    pw->sorted[cursor[P->island >= 0 ? P->island : ni]++] = *P;
  }
  for (int k = 0; k < ni; k++) {
    if (!has_patch[k]) continue;
    for (int i = cc[k]; i < cc[k + 1]; i++) {
      cuspPatch* P = pw->sorted + cursor[k]++;
      cusp_patch_point(P, w->contacts + i, i);
      P->island = k;
    }
  }
  if (total) memcpy(pw->set.patch, pw->sorted, total * sizeof(cuspPatch));
  pw->set.npatch = total;
  return ni;
}

//---------------------------------- the step -------------------------------------------------------

// contacts c0 .. c0 + n without a correction: zero impulses, mode break
static void unload(cuspContact* c, int n) {
  for (int i = 0; i < n; i++) {
    c[i].impulse_n = c[i].impulse_t[0] = c[i].impulse_t[1] = 0;
    c[i].slip = 0;
  }
}

// One mode rule for every contact, disk or patch: break when the normal impulse is at most
// break_impulse, else slide when the contact point moves along the surface after the correction
// (slip above CUSP_SLIP_SPEED), else stick.
static int contact_mode(mjtNum impulse_n, mjtNum slip, const cuspConfig* cfg) {
  if (impulse_n <= cfg->break_impulse) return CUSP_MODE_BREAK;
  return slip > CUSP_SLIP_SPEED ? CUSP_MODE_SLIDE : CUSP_MODE_STICK;
}

// The arrays mj_kinematics and mj_comPos write (world poses of bodies, joint axes, geoms and sites;
// subtree centres of mass, composite inertias, motion dofs). The step computes them at the free
// configuration q* for detection; MuJoCo's own step leaves those of the state it started from, and
// so does cusp_step (saved before, restored after): what the viewer, sensors read later and user
// code see after mj_step is what stock MuJoCo gives them.
// mjData's arrays from xpos to cinert in its layout order (mjxmacro.h), all of them written by
// mj_kinematics and mj_comPos or by the camera and light stage (xiquat, geom_xquat and site_xquat
// included: MuJoCo's kinematics write them too)
#define CUSP_NKINEMATIC 21
static int kinematic_arrays(mjtNum* arr[CUSP_NKINEMATIC], size_t len[CUSP_NKINEMATIC],
                            const mjModel* m, mjData* d) {
  mjtNum* a[CUSP_NKINEMATIC] = {
      d->xpos,      d->xquat,      d->xmat,      d->xipos,      d->xiquat,    d->ximat,
      d->xanchor,   d->xaxis,      d->geom_xpos, d->geom_xquat, d->geom_xmat, d->site_xpos,
      d->site_xquat, d->site_xmat, d->cam_xpos,  d->cam_xmat,   d->light_xpos, d->light_xdir,
      d->subtree_com, d->cdof,     d->cinert};
  size_t n[CUSP_NKINEMATIC] = {3, 4, 9, 3, 4, 9, 3, 3, 3, 4, 9, 3, 4, 9, 3, 9, 3, 3, 3, 6, 10};
  size_t count[CUSP_NKINEMATIC] = {
      m->nbody, m->nbody, m->nbody, m->nbody, m->nbody, m->nbody, m->njnt,
      m->njnt,  m->ngeom, m->ngeom, m->ngeom, m->nsite, m->nsite, m->nsite,
      m->ncam,  m->ncam,  m->nlight, m->nlight, m->nbody, m->nv,  m->nbody};
  for (int i = 0; i < CUSP_NKINEMATIC; i++) {
    arr[i] = a[i];
    len[i] = n[i] * count[i];
  }
  return CUSP_NKINEMATIC;
}

// 1 if the n arrays lie in this order in memory without overlap, each after the last's end by
// less than mjData's 64-byte alignment (its one buffer): then the span from the first to the end
// of the last holds them and alignment padding only, and is saved and restored by one copy
// (*len: its length in mjtNum) (empty arrays, which may have no address, are skipped)
static int kinematic_span(size_t* len, mjtNum* const arr[], const size_t alen[], int n) {
  const mjtNum* end = arr[0] + alen[0];
  for (int i = 1; i < n; i++) {
    if (alen[i] == 0) continue;
    if (end > arr[i] || arr[i] - end >= (ptrdiff_t)(64 / sizeof(mjtNum))) return 0;
    end = arr[i] + alen[i];
  }
  *len = (size_t)(end - arr[0]);
  return 1;
}

static int step_at_free_configuration(cuspStepWork* w, mjtNum* state, const mjModel* m, mjData* d,
                                      const cuspConfig* cfg);

int cusp_step(cuspStepWork* w, mjtNum* state, const mjModel* m, mjData* d, const cuspConfig* cfg) {
  mjtNum* arr[CUSP_NKINEMATIC];
  size_t len[CUSP_NKINEMATIC], total = 0;
  int n = 1;
  if (w->kin_buffer != d->buffer) {  // the layout of this mjData's buffer, looked at once
    n = kinematic_arrays(arr, len, m, d);
    if (!kinematic_span(&w->kin_span, arr, len, n)) w->kin_span = 0;
    w->kin_buffer = d->buffer;
  }
  if (w->kin_span) {
    arr[0] = d->xpos, len[0] = w->kin_span;
  } else {
    n = kinematic_arrays(arr, len, m, d);
  }
  for (int i = 0; i < n; i++) total += len[i];
  mj_markStack(d);
  mjtNum* saved = mj_stackAllocNum(d, total + 1);
  for (int i = 0, at = 0; i < n; at += (int)len[i], i++) {
    if (len[i]) memcpy(saved + at, arr[i], sizeof(mjtNum) * len[i]);
  }
  int rc = step_at_free_configuration(w, state, m, d, cfg);
  for (int i = 0, at = 0; i < n; at += (int)len[i], i++) {
    if (len[i]) memcpy(arr[i], saved + at, sizeof(mjtNum) * len[i]);
  }
  mj_freeStack(d);
  return rc;
}

// the totals of one step's islands, published in the state
typedef struct StepTotals_ {
  int failed;               // islands whose solve failed
  int worst;                // cuspLcpStatus of the last failure
  int iterations, kept, reduced, fallbacks;
  mjtNum max_pen;           // m, deepest penetration of the disk islands (and unmoved patches)
  mjtNum max_pen_patch;     // m, of the patch islands
  mjtNum rcond_before, rcond_after;  // smallest over the disk islands
} StepTotals;

// Kinematics at the free configuration q* (again at the semi-implicit positions if they moved),
// the broad phase and the detection of disks and patch bodies. Returns the number of patches, or
// -1 on a failure.
static int detect_at_free_configuration(cuspStepWork* w, const mjModel* m, mjData* d,
                                        const cuspConfig* cfg) {
  mj_kinematics(m, d);
  mj_comPos(m, d);
  if (cusp_broadphase(&w->bp, cfg, &w->params, m, d) < 0) return -1;
  if (semi_implicit_positions(w, cfg, m, d)) {
    mj_kinematics(m, d);
    mj_comPos(m, d);
    if (cusp_broadphase(&w->bp, cfg, &w->params, m, d) < 0) return -1;
  }
  if (detect(w, m, d, cfg)) return -1;
  int npatch = 0;
  if (cfg->npatch_body) {
    npatch = cusp_patch_detect(&w->patch.set, cfg, &w->params, &w->bp, m, d);
    if (npatch < 0) return -1;
  }
  return npatch;
}

// An island nothing can move (rc: Mr not positive definite, a failure; or every dof held by
// equalities, a tool welded to the world, and the step is MuJoCo's alone): its contacts and
// patches unloaded; the penetration reported is the geometry's at q*, where the step ends.
static void unmoved_island(StepTotals* tot, cuspStepWork* w, int k, int rc) {
  int c0 = w->island_contact[k], nck = w->island_contact[k + 1] - c0;
  int p0 = w->island_patch[k], npk = w->island_patch[k + 1] - p0;
  unload(w->contacts + c0, nck);
  for (int i = c0; i < c0 + nck; i++) {
    w->fn[i] = w->gamma[i] = 0;
    if (-w->contacts[i].gap > tot->max_pen) tot->max_pen = -w->contacts[i].gap;
  }
  if (w->island_flag[k]) {
    for (int i = p0; i < p0 + npk; i++) {
      cuspPatch* P = w->patch.set.patch + i;
      P->Ln = 0;
      for (int v = 0; v < P->nvert; v++) {
        if (-P->gap[v] > tot->max_pen) tot->max_pen = -P->gap[v];
      }
    }
  }
  if (rc) {
    tot->failed++;
    tot->worst = CUSP_LCP_NUMERICAL;
  }
}

// Island k: its dynamics, the equality drift of its free velocity removed, its contacts solved
// (the patch MCP if it has patch rows, else the disk LCP); the correction into w->dv, the outcome
// into tot.
static void step_island(StepTotals* tot, cuspStepWork* w, int k, const mjModel* m, mjData* d,
                        const cuspConfig* cfg, const cuspConditionOptions* cond_opt) {
  mjtNum h = m->opt.timestep;
  int ndof = w->isl.dofadr[k + 1] - w->isl.dofadr[k];
  const int* dofs = w->isl.dofs + w->isl.dofadr[k];
  int c0 = w->island_contact[k], nck = w->island_contact[k + 1] - c0;
  int p0 = w->island_patch[k], npk = w->island_patch[k + 1] - p0;
  int patches = w->island_flag[k];  // patch rows: the MCP over the island
  // 4. dynamics of the island
  cuspDynamics* dyn = island_dynamics(w, m, k, ndof);
  int rc = dyn ? cusp_dynamics_update(dyn, m, d, dofs, ndof) : -2;
  if (rc || dyn->nr == 0) {
    unmoved_island(tot, w, k, rc);
    return;
  }
  // equality drift of the free velocity removed first (see cusp_dynamics_project), so that the
  // contact correction below only dissipates; positions stay at q* (the gaps were measured there)
  if (!dyn->identity) {
    cusp_dynamics_project(w->dv_drift, dyn, d->qvel);
    for (int a = 0; a < ndof; a++) d->qvel[dofs[a]] += w->dv_drift[dofs[a]];
  }
  // 5-6. assemble and solve the island
  IslandResult res = {0};
  if (patches) solve_patch_island(&res, w, dyn, p0, npk, m, d, cfg);
  else solve_disk_island(&res, w, dyn, c0, nck, m, d, cfg, cond_opt);
  tot->iterations += res.iterations;
  tot->kept += res.kept;
  tot->reduced += res.reduced;
  tot->fallbacks += res.reduction_fallback;
  if (!patches) {
    if (res.rcond_before < tot->rcond_before) tot->rcond_before = res.rcond_before;
    if (res.rcond_after < tot->rcond_after) tot->rcond_after = res.rcond_after;
  }
  if (res.status != CUSP_LCP_SOLVED) {
    tot->failed++;
    tot->worst = res.status;
    // the penetration published is that of the correction applied: a failed iterate scaled
    // down (even to nothing) leaves the bodies where the scaled correction puts them
    mjtNum s = limit_failed_correction(w, dyn, k, patches, m, d, cfg);
    if (s < 1) {
      res.max_pen = patches ? cusp_patch_penetration(&w->patch, dyn, w->dv, h)
                            : disk_penetration(w, dyn, c0, nck, s * h);
    }
  }
  if (patches) {
    if (res.max_pen > tot->max_pen_patch) tot->max_pen_patch = res.max_pen;
  } else if (res.max_pen > tot->max_pen) {
    tot->max_pen = res.max_pen;
  }
}

// 8. publish: one mode rule for every contact and patch, the counts, the penetration, the
// totals, the per-body observables; the contacts and patches kept as the next step's history
static void publish_step(mjtNum* state, cuspStepWork* w, const StepTotals* tot, int npatch,
                         const cuspConfig* cfg) {
  int nc = w->ncontact;
  int nmode[3] = {0, 0, 0};  // break, stick, slide (cuspContactMode)
  for (int i = 0; i < nc; i++) {
    cuspContact* c = w->contacts + i;
    c->mode = contact_mode(c->impulse_n, c->slip, cfg);
    nmode[c->mode]++;
  }
  for (int i = 0; i < w->patch.set.npatch; i++) {
    cuspPatch* P = w->patch.set.patch + i;
    if (P->source >= 0) {
      P->mode = w->contacts[P->source].mode;  // a disk contact, counted above
    } else {
      P->mode = contact_mode(P->Ln, P->sigma, cfg);
      nmode[P->mode]++;
    }
  }
  state[CUSP_STATE_NCONTACT] = nc + npatch;
  state[CUSP_STATE_NKEPT] = tot->kept;
  state[CUSP_STATE_NSTICK] = nmode[CUSP_MODE_STICK];
  state[CUSP_STATE_NSLIDE] = nmode[CUSP_MODE_SLIDE];
  state[CUSP_STATE_NBREAK] = nmode[CUSP_MODE_BREAK];
  state[CUSP_STATE_ITERATIONS] = tot->iterations;
  state[CUSP_STATE_STATUS] = tot->worst;
  state[CUSP_STATE_MAX_PENETRATION] = tot->max_pen;
  state[CUSP_STATE_SOLVER_FAILURES] += tot->failed;
  state[CUSP_STATE_RCOND_BEFORE] = isfinite(tot->rcond_before) ? tot->rcond_before : 0;
  state[CUSP_STATE_RCOND_AFTER] = isfinite(tot->rcond_after) ? tot->rcond_after : 0;
  state[CUSP_STATE_REDUCED_ISLANDS] = tot->reduced;
  state[CUSP_STATE_REDUCTION_FALLBACKS] += tot->fallbacks;
  w->solve_work = cfg->step_work_budget - w->work_left;
  if (cfg->npatch_body) cusp_patch_publish_bodies(state + CUSP_NSTATE, &w->patch, cfg);
  remember(w);
  if (w->patch.set.npatch) memcpy(w->patch.prev, w->patch.set.patch, w->patch.set.npatch * sizeof(cuspPatch));
  w->patch.nprev = w->patch.set.npatch;
}

static int step_at_free_configuration(cuspStepWork* w, mjtNum* state, const mjModel* m, mjData* d,
                                      const cuspConfig* cfg) {
  int nv = m->nv;
  mjtNum h = m->opt.timestep;
  for (int s = CUSP_STATE_NCONTACT; s <= CUSP_STATE_STATUS; s++) state[s] = 0;
  state[CUSP_STATE_MAX_PENETRATION] = 0;
  state[CUSP_STATE_RCOND_BEFORE] = state[CUSP_STATE_RCOND_AFTER] = 0;
  state[CUSP_STATE_REDUCED_ISLANDS] = 0;
  state[CUSP_STATE_STEPS] += 1;
  w->work_left = cfg->step_work_budget;
  w->solve_work = 0;

  // 1-2. kinematics at the free configuration q*, detection of disks and patch bodies
  int npatch = detect_at_free_configuration(w, m, d, cfg);
  if (npatch < 0) return -1;
  int nc = w->ncontact;
  if (nc + npatch == 0) {
    w->nprev = 0;
    w->patch.set.npatch = w->patch.nprev = 0;
    if (cfg->npatch_body) cusp_patch_publish_bodies(state + CUSP_NSTATE, &w->patch, cfg);
    return 0;
  }

  // 3. islands, 4-6. each solved
  int ni = group(w, m, d, npatch);
  if (ni < 0) return -1;
  warm_start(w);
  mju_zero(w->dv, nv);
  StepTotals tot = {.worst = CUSP_LCP_SOLVED, .rcond_before = INFINITY, .rcond_after = INFINITY};
  for (int k = 0; k < ni; k++) step_island(&tot, w, k, m, d, cfg, &w->cond_opt);
  // contacts on nothing movable (a disk of a static body) stay unloaded
  unload(w->contacts + w->island_contact[ni], nc - w->island_contact[ni]);

  // 7. correction of every island at once: v = v* + dv, q = q* (+) h dv
  mju_addTo(d->qvel, w->dv, nv);
  mj_integratePos(m, d->qpos, w->dv, h);
  // a failed step's penetration is measured again where the bodies now are: its correction (a
  // scaled failed iterate) can turn a disk far enough that the deepest point is none of the
  // contact points detected at q*
  if (tot.failed && nc) tot.max_pen = disk_penetration_at(w, m, d, cfg);
  if (tot.max_pen_patch > tot.max_pen) tot.max_pen = tot.max_pen_patch;
  publish_step(state, w, &tot, npatch, cfg);
  return tot.failed ? -1 : 0;
}
