// The cusp contact step (design.md section 2): free motion, then correction.
#include "step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "instance.h"

//---------------------------------- workspace ------------------------------------------------------

static cuspConditionOptions condition_options(const cuspConfig* cfg) {
  cuspConditionOptions opt = cusp_condition_default_options();
  opt.rank_select = cfg->rank_selection;
  opt.eps_rank = cfg->eps_rank;
  opt.ruiz = cfg->ruiz;
  opt.ruiz_passes = cfg->ruiz_passes;
  opt.tikhonov = cfg->tikhonov;
  opt.eps_w = cfg->eps_w;
  opt.estimate_condition = 0;
  static const cuspLcpBackendId backend[4] = {CUSP_LCP_CHAIN, CUSP_LCP_FBNEWTON, CUSP_LCP_LEMKE,
                                              CUSP_LCP_PGS};
  opt.backend = backend[cfg->solver];
  opt.lcp.tol = cfg->tolerance;
  opt.lcp.max_iter = cfg->max_iterations;
  opt.lcp.warm_start = cfg->warm_start;
  opt.fallback = cfg->fallback;
  return opt;
}

static void free_buffers(cuspStepWork* w) {
  free(w->contacts);
  free(w->prev_pair);
  free(w->prev_fn);
  free(w->prev_beta);
  free(w->prev_gamma);
  free(w->Jn_r);
  free(w->Jt_r);
  free(w->bn);
  free(w->bt);
  free(w->mu);
  free(w->fn);
  free(w->beta);
  free(w->gamma);
  free(w->keep);
  free(w->solver_work);
}

// (re)allocate the per-contact buffers for `capacity` contacts, keeping the previous step's
// warm-start data and this step's detected contacts
static int grow(cuspStepWork* w, int capacity, const cuspConfig* cfg) {
  int r = w->r, nv = w->nv;
  cuspStepWork old = *w;
  size_t c = (size_t)capacity;
  w->contacts = (cuspContact*)calloc(c, sizeof(cuspContact));
  w->prev_pair = (int*)calloc(3 * c, sizeof(int));
  w->prev_fn = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->prev_beta = (mjtNum*)calloc(c * r + 1, sizeof(mjtNum));
  w->prev_gamma = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->Jn_r = (mjtNum*)calloc(c * nv + 1, sizeof(mjtNum));
  w->Jt_r = (mjtNum*)calloc(c * r * nv + 1, sizeof(mjtNum));
  w->bn = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->bt = (mjtNum*)calloc(c * r + 1, sizeof(mjtNum));
  w->mu = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->fn = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->beta = (mjtNum*)calloc(c * r + 1, sizeof(mjtNum));
  w->gamma = (mjtNum*)calloc(c, sizeof(mjtNum));
  w->keep = (int*)calloc(c, sizeof(int));
  cuspConditionOptions opt = condition_options(cfg);
  w->solver_bytes = cusp_contact_worksize(nv, capacity, r, &opt);
  w->solver_work = malloc(w->solver_bytes);
  w->capacity = capacity;
  int ok = w->contacts && w->prev_pair && w->prev_fn && w->prev_beta && w->prev_gamma &&
           w->Jn_r && w->Jt_r && w->bn && w->bt && w->mu && w->fn && w->beta &&
           w->gamma && w->keep && w->solver_work;
  if (ok && old.capacity) {
    memcpy(w->contacts, old.contacts, old.capacity * sizeof(cuspContact));
    memcpy(w->prev_pair, old.prev_pair, 3 * old.nprev * sizeof(int));
    memcpy(w->prev_fn, old.prev_fn, old.nprev * sizeof(mjtNum));
    memcpy(w->prev_beta, old.prev_beta, (size_t)old.nprev * r * sizeof(mjtNum));
    memcpy(w->prev_gamma, old.prev_gamma, old.nprev * sizeof(mjtNum));
  }
  if (old.capacity) free_buffers(&old);
  return ok ? 0 : -1;
}

int cusp_step_init(cuspStepWork* w, const mjModel* m, const cuspConfig* cfg) {
  memset(w, 0, sizeof(*w));
  w->r = cfg->friction_directions;
  w->nv = m->nv;
  w->jac = (mjtNum*)calloc(6 * (size_t)m->nv + 1, sizeof(mjtNum));
  w->g = (mjtNum*)calloc(m->nv + 1, sizeof(mjtNum));
  w->dv = (mjtNum*)calloc(m->nv + 1, sizeof(mjtNum));
  w->cone = (mjtNum*)calloc(2 * (size_t)w->r, sizeof(mjtNum));
  if (!w->jac || !w->g || !w->dv || !w->cone) return -1;
  for (int k = 0; k < w->r; k++) {
    w->cone[2 * k] = cos(2 * mjPI * k / w->r);
    w->cone[2 * k + 1] = sin(2 * mjPI * k / w->r);
  }
  if (cusp_dynamics_init(&w->dyn, m)) return -1;
  if (cfg->npatch_body && cusp_patch_work_init(&w->patch, m)) return -1;  // patch contact (issue 6)
  // a first guess: four contacts per disk
  int guess = 4 * (cfg->ndisk > 0 ? cfg->ndisk : 1);
  return grow(w, guess, cfg);
}

void cusp_step_free(cuspStepWork* w) {
  if (w->capacity) free_buffers(w);
  free(w->jac);
  free(w->g);
  free(w->dv);
  free(w->cone);
  cusp_dynamics_free(&w->dyn);
  cusp_patch_work_free(&w->patch);  // patch contact (issue 6)
  memset(w, 0, sizeof(*w));
}

void cusp_step_reset(cuspStepWork* w) {
  w->ncontact = 0;
  w->nprev = 0;
  w->patch.nprev = 0;  // patch contact (issue 6)
}

int cusp_step_copy_history(cuspStepWork* dst, const cuspStepWork* src, const cuspConfig* cfg) {
  int need = src->nprev > src->ncontact ? src->nprev : src->ncontact;
  if (dst->r != src->r || (need > dst->capacity && grow(dst, need, cfg))) return -1;
  size_t r = (size_t)src->r;
  memcpy(dst->contacts, src->contacts, (size_t)src->ncontact * sizeof(cuspContact));
  dst->ncontact = src->ncontact;
  memcpy(dst->prev_pair, src->prev_pair, 3 * (size_t)src->nprev * sizeof(int));
  memcpy(dst->prev_fn, src->prev_fn, (size_t)src->nprev * sizeof(mjtNum));
  memcpy(dst->prev_beta, src->prev_beta, (size_t)src->nprev * r * sizeof(mjtNum));
  memcpy(dst->prev_gamma, src->prev_gamma, (size_t)src->nprev * sizeof(mjtNum));
  dst->nprev = src->nprev;
  dst->info = src->info;
  const cuspPatchWork* ps = &src->patch;  // patch contact (issue 6)
  cuspPatchWork* pd = &dst->patch;
  if (ps->cap_patch) {
    int np = ps->npatch > ps->nprev ? ps->npatch : ps->nprev;
    if (!pd->cap_patch || cusp_patch_work_reserve(pd, np, pd->cap_rows, pd->cap_z)) return -1;
    memcpy(pd->patch, ps->patch, (size_t)ps->npatch * sizeof(cuspPatch));
    memcpy(pd->prev, ps->prev, (size_t)ps->nprev * sizeof(cuspPatch));
    pd->npatch = ps->npatch;
    pd->nprev = ps->nprev;
    pd->info = ps->info;
    pd->solves = ps->solves;
    pd->failures = ps->failures;
  }
  return 0;
}

//---------------------------------- detection ------------------------------------------------------

static mjtNum pair_friction(const mjModel* m, const cuspConfig* cfg, int g1, int g2) {
  if (cfg->friction >= 0) return cfg->friction;
  return mju_max(m->geom_friction[3 * g1], m->geom_friction[3 * g2]);
}

static int detect(cuspStepWork* w, const mjModel* m, const mjData* d, const cuspConfig* cfg) {
  w->ncontact = 0;
  for (int i = 0; i < cfg->ndisk; i++) {
    int disk = cfg->disk_geoms[i];
    for (int g = 0; g < m->ngeom; g++) {
      if (!cusp_detect_is_environment(m, disk, g, cfg->environment_geoms, cfg->nenv)) continue;
      if (w->ncontact + CUSP_MAX_DISK_POINTS > w->capacity &&
          grow(w, 2 * w->capacity, cfg)) {
        return -1;
      }
      cuspContact* c = w->contacts + w->ncontact;
      int found = cusp_detect_disk(c, m, d, disk, g, cfg->margin);
      for (int k = 0; k < found; k++) c[k].mu = pair_friction(m, cfg, disk, g);
      w->ncontact += found;
    }
  }
  return 0;
}

//---------------------------------- assembly -------------------------------------------------------

// relative point Jacobian (3 x nv, row-major) of contact point c: body[0] minus body[1]
static void relative_jacobian(mjtNum* jrel, mjtNum* scratch, const mjModel* m, const mjData* d,
                              const cuspContact* c) {
  int nv = m->nv;
  mj_jac(m, d, jrel, NULL, c->pos, c->body[0]);
  if (c->body[1] > 0) {
    mj_jac(m, d, scratch, NULL, c->pos, c->body[1]);
    mju_subFrom(jrel, scratch, 3 * nv);
  }
}

// Rows of contact i in reduced coordinates: the relative point Jacobian (3 x nv) is reduced once
// (3 x nr, J N) and the normal and r friction-direction rows are combinations of its 3 rows; the
// right-hand sides use the relative velocity of the free motion.
static void assemble(cuspStepWork* w, const mjModel* m, const mjData* d, const cuspConfig* cfg) {
  int nv = m->nv, nr = w->dyn.nr, r = w->r;
  mjtNum h = m->opt.timestep;
  mjtNum* jrel = w->jac;             // (3 x nv)
  mjtNum* scratch = w->jac + 3 * nv; // (3 x nv)
  mjtNum* jred = w->jac + 3 * nv;    // (3 x nr), after scratch is done with
  for (int i = 0; i < w->ncontact; i++) {
    const cuspContact* c = w->contacts + i;
    relative_jacobian(jrel, scratch, m, d, c);
    mjtNum vrel[3];  // m/s, velocity of the registered geom's point relative to the other
    mju_mulMatVec(vrel, jrel, d->qvel, 3, nv);
    cusp_dynamics_reduce(jred, &w->dyn, jrel, 3);
    const mjtNum* t = c->frame;
    const mjtNum* o = c->frame + 3;
    const mjtNum* n = c->frame + 6;
    mju_mulMatTVec(w->Jn_r + (size_t)i * nr, jred, n, 3, nr);
    // free normal velocity plus gap term (speculative gaps exactly, penetration recovered)
    w->bn[i] = cusp_normal_rhs(mju_dot3(vrel, n), c->gap, h, cfg->gap_alpha,
                               cfg->pushout_speed);
    w->mu[i] = c->mu;
    for (int k = 0; k < r; k++) {
      mjtNum dir[3];
      mju_scl3(dir, t, w->cone[2 * k]);
      mju_addToScl3(dir, o, w->cone[2 * k + 1]);
      mju_mulMatTVec(w->Jt_r + ((size_t)i * r + k) * nr, jred, dir, 3, nr);
      w->bt[i * r + k] = mju_dot3(vrel, dir);
    }
  }
}

// warm start from the previous step's impulses of the same (disk, geom) pair
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

//---------------------------------- the step -------------------------------------------------------

// contacts of a step without a correction: zero impulses, mode break, penetration at q*
static void publish_unloaded(cuspStepWork* w, mjtNum* state) {
  mjtNum max_pen = 0;
  for (int i = 0; i < w->ncontact; i++) {
    cuspContact* c = w->contacts + i;
    c->impulse_n = c->impulse_t[0] = c->impulse_t[1] = 0;
    c->mode = CUSP_MODE_BREAK;
    c->slip = 0;
    if (-c->gap > max_pen) max_pen = -c->gap;
  }
  state[CUSP_STATE_NBREAK] = w->ncontact;
  state[CUSP_STATE_MAX_PENETRATION] = max_pen;
  w->nprev = 0;
}

static int all_finite(const mjtNum* x, int n) {
  for (int i = 0; i < n; i++) {
    if (!isfinite(x[i])) return 0;
  }
  return 1;
}

int cusp_step(cuspStepWork* w, mjtNum* state, const mjModel* m, mjData* d, const cuspConfig* cfg) {
  int nv = m->nv, r = w->r;
  mjtNum h = m->opt.timestep;
  for (int s = CUSP_STATE_NCONTACT; s <= CUSP_STATE_STATUS; s++) state[s] = 0;
  state[CUSP_STATE_MAX_PENETRATION] = 0;
  state[CUSP_STATE_STEPS] += 1;

  // 1-2. kinematics at the free configuration q*, detection
  mj_kinematics(m, d);
  mj_comPos(m, d);
  if (detect(w, m, d, cfg)) return -1;
  int nc = w->ncontact;
  state[CUSP_STATE_NCONTACT] = nc;

  // ---- patch contact (issue 6) ----
  // Registered rigid bodies: detect patches and rigid point contacts; if there are any, this step's
  // problem is one MCP over them and the disk contacts above (as point contacts with a circular
  // cone), solved by FB Newton, and the LCP path below is skipped.
  if (cfg->npatch_body) {
    int rc = cusp_patch_step(&w->patch, state, m, d, cfg, &w->dyn, w->contacts, nc);
    if (rc != 1) {
      w->nprev = 0;
      return rc;
    }
  }
  // ---- end patch contact (issue 6) ----
  if (nc == 0) {
    w->nprev = 0;
    return 0;
  }

  // 3-5. dynamics and assembly
  if (cusp_dynamics_update(&w->dyn, m, d)) {
    state[CUSP_STATE_STATUS] = CUSP_LCP_NUMERICAL;
    state[CUSP_STATE_SOLVER_FAILURES] += 1;
    return -1;
  }
  if (w->dyn.nr == 0) {
    // every degree of freedom is held by equality constraints (a tool welded to a mocap body):
    // no contact impulse can move anything, so the step is MuJoCo's alone; the contacts are
    // published unloaded, with their penetration
    publish_unloaded(w, state);
    return 0;
  }
  // equality drift of the free velocity removed first (see cusp_dynamics_project), so that the
  // contact correction below only dissipates; positions stay at q* (the gaps were measured there)
  if (!w->dyn.identity) {
    cusp_dynamics_project(w->dv, &w->dyn, d->qvel);
    mju_addTo(d->qvel, w->dv, nv);
  }
  assemble(w, m, d, cfg);

  // 6. condition and solve
  warm_start(w);
  cuspContactLcp lcp = {
      .nv = w->dyn.nr, .m = nc, .r = r, .Meff = w->dyn.L, .meff_is_factor = 1,
      .Jn = w->Jn_r, .Jt = w->Jt_r, .mu = w->mu, .bn = w->bn, .bt = w->bt};
  cuspConditionOptions opt = condition_options(cfg);
  cuspLcpStatus status = cusp_contact_solve(w->fn, w->beta, w->gamma, w->keep, &w->info, &lcp,
                                            &opt, w->solver_work, w->solver_bytes);
  state[CUSP_STATE_ITERATIONS] = w->info.lcp.iterations;
  state[CUSP_STATE_STATUS] = status;
  state[CUSP_STATE_NKEPT] = w->info.kept;
  state[CUSP_STATE_RCOND_BEFORE] = w->info.rcond_before;
  state[CUSP_STATE_RCOND_AFTER] = w->info.rcond_after;
  int usable = all_finite(w->fn, nc) && all_finite(w->beta, nc * r);
  if (status != CUSP_LCP_SOLVED) state[CUSP_STATE_SOLVER_FAILURES] += 1;
  if (!usable) {
    w->nprev = 0;
    return -1;
  }

  // 7. correction: dv = N Mr^-1 (Jn_r^T fn + Jt_r^T beta); v = v* + dv, q = q* (+) h dv
  int nr = w->dyn.nr;
  mju_zero(w->g, nr);
  for (int i = 0; i < nc; i++) {
    if (w->fn[i] != 0) mju_addToScl(w->g, w->Jn_r + (size_t)i * nr, w->fn[i], nr);
    for (int k = 0; k < r; k++) {
      mjtNum b = w->beta[i * r + k];
      if (b != 0) mju_addToScl(w->g, w->Jt_r + ((size_t)i * r + k) * nr, b, nr);
    }
  }
  cusp_dynamics_solve(w->g, &w->dyn, w->g);
  cusp_dynamics_expand(w->dv, &w->dyn, w->g);
  mju_addTo(d->qvel, w->dv, nv);
  mj_integratePos(m, d->qpos, w->dv, h);

  // 8. publish: impulses, modes, post-correction (linearised) penetration
  int nstick = 0, nslide = 0, nbreak = 0;
  mjtNum max_pen = 0;
  for (int i = 0; i < nc; i++) {
    cuspContact* c = w->contacts + i;
    c->impulse_n = w->fn[i];
    c->impulse_t[0] = c->impulse_t[1] = 0;
    // slip after the correction: v_k = bt_k + Jt_r,k du along d_k = cos_k t + sin_k o; for r >= 3
    // equally spaced directions sum_k d_k d_k^T = (r/2) I on the tangent plane, so the tangential
    // velocity is (2/r) sum_k v_k d_k
    mjtNum slip[2] = {0, 0};
    for (int k = 0; k < r; k++) {
      mjtNum b = w->beta[i * r + k];
      c->impulse_t[0] += b * w->cone[2 * k];
      c->impulse_t[1] += b * w->cone[2 * k + 1];
      mjtNum vk = w->bt[i * r + k] + mju_dot(w->Jt_r + ((size_t)i * r + k) * nr, w->g, nr);
      slip[0] += vk * w->cone[2 * k];
      slip[1] += vk * w->cone[2 * k + 1];
    }
    c->slip = 2.0 / r * mju_sqrt(slip[0] * slip[0] + slip[1] * slip[1]);
    if (c->impulse_n <= cfg->break_impulse) {
      c->mode = CUSP_MODE_BREAK;
      nbreak++;
    } else if (c->slip > CUSP_SLIP_SPEED) {
      c->mode = CUSP_MODE_SLIDE;
      nslide++;
    } else {
      // not moving at the contact: sticking, also when the friction is saturated (on the verge)
      c->mode = CUSP_MODE_STICK;
      nstick++;
    }
    mjtNum gap_after = c->gap + h * mju_dot(w->Jn_r + (size_t)i * nr, w->g, nr);  // dv = N du
    if (-gap_after > max_pen) max_pen = -gap_after;
  }
  state[CUSP_STATE_NSTICK] = nstick;
  state[CUSP_STATE_NSLIDE] = nslide;
  state[CUSP_STATE_NBREAK] = nbreak;
  state[CUSP_STATE_MAX_PENETRATION] = max_pen;
  remember(w);
  return status == CUSP_LCP_SOLVED ? 0 : -1;
}
