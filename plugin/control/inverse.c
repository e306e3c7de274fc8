// cusp.inverse: configuration, the one-step box LCP in (actuation, contact impulses), and the
// actuator plugin callbacks.
#include "control/inverse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/condition.h"
#include "collide/contact.h"
#include "control/control_plugin.h"
#include "collide/detect.h"
#include "publish/contacts_api.h"
#include "step/step.h"

#define INVERSE_NAME "cusp.inverse"
#define CUSP_INVERSE_TOUCH 1e-4  // m, gap under which a released contact counts as touching

// Work budget (solver/lcp.h) of one control solve of n unknowns: 200 Newton steps of its size,
// what its Newton solves are allowed in iterations (the contact step's default pays for 8 steps of
// the 142 unknowns of a parcel held against a wall, which then dropped), and never less than that
// default. Finite whatever the contact instance's max_iterations say: about 0.1 s at n = 140.
static mjtNum control_budget(int n) {
  return fmax(CUSP_SOLVE_WORK_BUDGET, 200 * cusp_solve_iteration_cost(CUSP_ITER_NEWTON, n, 0));
}

//---------------------------------- configuration --------------------------------------------------

// the field of cuspInverse a key sets, and a list with its count (optional: may be empty)
#define AT(member) 0, CUSP_FIELD(cuspInverse, member), NULL
#define LIST(member, n, optional) optional, CUSP_LIST(cuspInverse, member, n), NULL

const cuspKey cusp_inverse_keys[] = {
  {"effectors", CUSP_KEY_SITES, "", 0, 0, NULL, "-",
   "effector sites, on the robot (the kinematic tree its actuators move) or on objects",
   LIST(effectors, neff, 0)},
  {"targets", CUSP_KEY_BODIES, "", 0, 0, NULL, "-",
   "one body per effector whose position is its target (mocap bodies to move them)",
   LIST(targets, ntarget, 0)},
  {"weights", CUSP_KEY_REALS, "", 0, 1e6, NULL, "-",
   "one weight per effector on its tracking term; empty: all 1", LIST(weights, nweight, 1)},
  {"contact", CUSP_KEY_CHOICE, "cusp", 0, 0, "cusp|ignore", "-",
   "cusp: the model holds the contacts of the scene's cusp.contact instance; ignore: none",
   AT(contact)},
  {"bandwidth", CUSP_KEY_REAL, "5", 0, 1e4, NULL, "1/s",
   "desired effector speed per metre of target error", AT(bandwidth)},
  {"max_speed", CUSP_KEY_REAL, "0.1", 1e-6, 100, NULL, "m/s",
   "cap on the desired effector speed", AT(max_speed)},
  {"horizon", CUSP_KEY_REAL, "0.05", 1e-6, 10, NULL, "s",
   "H of the controller's model: velocities implicit over H in inertia and damping (the soft "
   "arms' quasi-static flow when H is of the damping's time scale)", AT(horizon)},
  {"effort", CUSP_KEY_REAL, "1e-6", 0, 1, NULL, "-",
   "weight of the squared actuation norm relative to the largest diagonal of the tracking term "
   "(picks one actuation among redundant ones)", AT(effort)},
  {"iterations", CUSP_KEY_REAL, "20", 1, 1000, NULL, "-",
   "rounds of the block Gauss-Seidel between actuation and contact impulses per step",
   AT(iterations)},
  {"sticking", CUSP_KEY_CHOICE, "modes", 0, 0, "modes|off|all", "-",
   "modes: contacts keep the last step's mode (Coevoet's QP, exact while it holds), the "
   "Gauss-Seidel only when that QP fails; off: always the Gauss-Seidel; all: every touching "
   "contact is held sticking (Coevoet's grasp: the actuation keeps each in its friction cone)",
   AT(sticking)},
  {"objects", CUSP_KEY_BODIES, "", 0, 0, NULL, "-",
   "bodies the robot handles (each on its own kinematic tree, e.g. with a free joint): their "
   "dofs and contacts (with the robot and with the environment) join the controller's model, "
   "and effectors may sit on them; empty: the robot alone", LIST(objects, nobject, 1)},
  {"cone_margin", CUSP_KEY_REAL, "0", 0, 0.9, NULL, "-",
   "fraction of mu the sticking QP holds back: a held contact's friction stays within "
   "(1 - cone_margin) mu, a reserve against the gap between the controller's model and the "
   "simulation", AT(cone_margin)},
  {"grip", CUSP_KEY_REAL, "0", 0, 1e4, NULL, "N",
   "least total normal force of the held contacts between the robot and the objects in the "
   "sticking QP (Coevoet's squeeze: the grasp presses before its friction is needed)", AT(grip)},
  {NULL, 0, NULL, 0, 0, NULL, NULL, NULL, 0, CUSP_NO_FIELD, NULL},
};

static const cuspKeyTable inverse_keys = {INVERSE_NAME, cusp_inverse_keys, NULL};

void cusp_inverse_free(void* object) {
  cuspInverse* inv = (cuspInverse*)object;
  if (!inv) return;
  free(inv->actuators);
  free(inv->lo);
  free(inv->hi);
  free(inv->effectors);
  free(inv->targets);
  free(inv->weights);
  free(inv->objects);
  free(inv->dofs);
  free(inv->trees);
  cusp_dynamics_free(&inv->dyn);
  free(inv);
}

int cusp_inverse_models_tree(const cuspInverse* inv, int tree) {
  for (int i = 0; tree >= 0 && i < inv->ntree; i++) {
    if (inv->trees[i] == tree) return 1;
  }
  return 0;
}

static const char* name_of(const mjModel* m, mjtObj obj, int id) {
  const char* name = mj_id2name(m, obj, id);
  return name ? name : "(unnamed)";
}

// plugin instance index of the model's cusp.contact, -1 if none
static int find_contact_instance(const mjModel* m) {
  int slot = -1;
  if (!mjp_getPlugin("cusp.contact", &slot)) return -1;
  for (int i = 0; i < m->nplugin; i++) {
    if (m->plugin[i] == slot) return i;
  }
  return -1;
}

cuspInverse* cusp_inverse_create(const mjModel* m, int instance, char* err, int err_sz) {
  cuspInverse* inv = (cuspInverse*)calloc(1, sizeof(cuspInverse));
  if (!inv) {
    snprintf(err, err_sz, INVERSE_NAME ": out of memory");
    return NULL;
  }
  if (cusp_keys_parse(inv, &inverse_keys, m, instance, err, err_sz)) goto fail;
  const char* value;
  char why[320];

  if (!inv->neff) {
    cusp_key_fail(err, err_sz, INVERSE_NAME, "effectors", "", "required: name effector sites");
    goto fail;
  }
  if (inv->ntarget != inv->neff) {
    value = mj_getPluginConfig(m, instance, "targets");
    snprintf(why, sizeof(why), "%d targets for %d effectors: one body per effector", inv->ntarget,
             inv->neff);
    cusp_key_fail(err, err_sz, INVERSE_NAME, "targets", value ? value : "", why);
    goto fail;
  }
  if (inv->nweight && inv->nweight != inv->neff) {
    value = mj_getPluginConfig(m, instance, "weights");
    snprintf(why, sizeof(why), "%d weights for %d effectors: one per effector, or none",
             inv->nweight, inv->neff);
    cusp_key_fail(err, err_sz, INVERSE_NAME, "weights", value ? value : "", why);
    goto fail;
  }
  if (!inv->nweight) {
    inv->weights = (mjtNum*)malloc(inv->neff * sizeof(mjtNum));
    if (!inv->weights) goto oom;
    for (int e = 0; e < inv->neff; e++) inv->weights[e] = 1;
    inv->nweight = inv->neff;
  }
  // the modelled trees: the robot's (the actuators' tree), then one per object
  int tree = inv->tree = -1;
  for (int i = 0; i < m->nu && tree < 0; i++) {
    if (m->actuator_plugin[i] != instance) continue;
    int id = m->actuator_trnid[2 * i];
    switch (m->actuator_trntype[i]) {
      case mjTRN_TENDON: {
        int adr = m->tendon_adr[id];
        for (int w = adr; w < adr + m->tendon_num[id] && tree < 0; w++) {
          if (m->wrap_type[w] == mjWRAP_JOINT) tree = m->dof_treeid[m->jnt_dofadr[m->wrap_objid[w]]];
        }
        break;
      }
      case mjTRN_JOINT:
      case mjTRN_JOINTINPARENT: tree = m->dof_treeid[m->jnt_dofadr[id]]; break;
      case mjTRN_SITE: tree = m->body_treeid[m->site_bodyid[id]]; break;
      case mjTRN_BODY: tree = m->body_treeid[id]; break;
      default: break;
    }
  }
  if (tree < 0) tree = m->body_treeid[m->site_bodyid[inv->effectors[0]]];
  inv->tree = tree;
  inv->trees = (int*)calloc(inv->nobject + 1, sizeof(int));
  if (!inv->trees) goto oom;
  inv->trees[inv->ntree++] = tree;
  for (int k = 0; k < inv->nobject; k++) {
    int t = m->body_treeid[inv->objects[k]];
    const char* why_not = t < 0 ? "is static (no dofs of its own)"
                          : cusp_inverse_models_tree(inv, t) ? "shares a kinematic tree with the "
                                                              "robot or another object"
                          : NULL;
    if (why_not) {
      value = mj_getPluginConfig(m, instance, "objects");
      snprintf(why, sizeof(why), "body '%s' %s", name_of(m, mjOBJ_BODY, inv->objects[k]), why_not);
      cusp_key_fail(err, err_sz, INVERSE_NAME, "objects", value ? value : "", why);
      goto fail;
    }
    inv->trees[inv->ntree++] = t;
  }
  for (int e = 0; e < inv->neff; e++) {
    int t = m->body_treeid[m->site_bodyid[inv->effectors[e]]];
    if (tree < 0 || !cusp_inverse_models_tree(inv, t)) {
      value = mj_getPluginConfig(m, instance, "effectors");
      snprintf(why, sizeof(why), "site '%s' is %s", name_of(m, mjOBJ_SITE, inv->effectors[e]),
               t < 0 ? "on a static body" : "neither on the robot nor on one of the objects");
      cusp_key_fail(err, err_sz, INVERSE_NAME, "effectors", value ? value : "", why);
      goto fail;
    }
  }
  inv->contact_instance = find_contact_instance(m);
  if (inv->contact == CUSP_INVERSE_CONTACT_CUSP && inv->contact_instance < 0) {
    cusp_key_fail(err, err_sz, INVERSE_NAME, "contact", "cusp",
                      "the model has no cusp.contact instance (use 'ignore')");
    goto fail;
  }

  // the model: every dof of the robot's and the objects' trees, ascending
  for (int i = 0; i < m->nv; i++) inv->ndof += cusp_inverse_models_tree(inv, m->dof_treeid[i]);
  inv->dofs = (int*)calloc(inv->ndof + 1, sizeof(int));
  if (!inv->dofs) goto oom;
  for (int i = 0, k = 0; i < m->nv; i++) {
    if (cusp_inverse_models_tree(inv, m->dof_treeid[i])) inv->dofs[k++] = i;
  }
  if (cusp_dynamics_init(&inv->dyn, m, inv->ndof)) goto oom;

  // actuators: any transmission acting on the tree, a force range for the box
  for (int i = 0; i < m->nu; i++) inv->nact += m->actuator_plugin[i] == instance;
  if (!inv->nact) {
    snprintf(err, err_sz, INVERSE_NAME ": instance %d drives no actuator; declare "
             "<actuator><plugin instance=... tendon=... forcelimited=\"true\" forcerange=.../>",
             instance);
    goto fail;
  }
  inv->actuators = (int*)calloc(inv->nact, sizeof(int));
  inv->lo = (mjtNum*)calloc(inv->nact, sizeof(mjtNum));
  inv->hi = (mjtNum*)calloc(inv->nact, sizeof(mjtNum));
  if (!inv->actuators || !inv->lo || !inv->hi) goto oom;
  for (int i = 0, k = 0; i < m->nu; i++) {
    if (m->actuator_plugin[i] != instance) continue;
    if (!m->actuator_forcelimited[i] || m->actuator_actnum[i] != 0) {
      snprintf(err, err_sz, INVERSE_NAME ": actuator '%s' needs forcelimited=\"true\" with a "
               "forcerange (the box of its force) and no activation",
               name_of(m, mjOBJ_ACTUATOR, i));
      goto fail;
    }
    inv->actuators[k] = i;
    inv->lo[k] = m->actuator_forcerange[2 * i];
    inv->hi[k] = m->actuator_forcerange[2 * i + 1];
    k++;
  }

  return inv;
oom:
  snprintf(err, err_sz, INVERSE_NAME ": out of memory");
fail:
  cusp_inverse_free(inv);
  return NULL;
}

//---------------------------------- one control step -----------------------------------------------

// 1 if a contact between bodies b0 and b1 touches the controller's model (robot or object)
static int models_pair(const cuspInverse* inv, const mjModel* m, int b0, int b1) {
  return cusp_inverse_models_tree(inv, m->body_treeid[b0]) ||
         (b1 > 0 && cusp_inverse_models_tree(inv, m->body_treeid[b1]));
}

// The tracking term's Hessian in the actuation, A^T A + eps I with eps = effort x its largest
// diagonal (1 if zero), into the leading nu x nu block of the column-major M (leading dimension
// ld); A (ne x nu, row-major): the effectors' velocity per unit of actuation.
static void tracking_hessian(mjtNum* M, int ld, const mjtNum* A, int ne, int nu, mjtNum effort) {
  mjtNum diag = 0;
  for (int a = 0; a < nu; a++) {
    for (int b = 0; b < nu; b++) {
      mjtNum v = 0;
      for (int e = 0; e < ne; e++) v += A[e * nu + a] * A[e * nu + b];
      M[a + (size_t)b * ld] = v;
    }
    diag = mju_max(diag, M[a + (size_t)a * ld]);
  }
  for (int a = 0; a < nu; a++) M[a + (size_t)a * ld] += effort * (diag > 0 ? diag : 1);
}

// Solve the box LCP (M, q, lo, hi) of n unknowns whose first nu are the actuation: Ruiz
// equilibration (condition.h, stage 2: actuation, impulse and velocity rows differ by orders of
// magnitude; the scaled unknowns z / dc keep scaled boxes; M, q, lo, hi are scaled in place),
// then FB Newton from zero impulses and the actuation nearest zero in its box. On success z
// holds the unscaled answer. Scratch from d's arena (the caller's mark).
static cuspLcpStatus solve_scaled_box_lcp(mjtNum* z, mjtNum* M, mjtNum* q, mjtNum* lo, mjtNum* hi,
                                          int n, int nu, int max_iter, mjData* d) {
  mjtNum* dr = mj_stackAllocNum(d, n);
  mjtNum* dc = mj_stackAllocNum(d, n);
  mjtNum* ruiz_scratch = mj_stackAllocNum(d, 2 * (size_t)n);  // cusp_ruiz: 2 n
  cusp_ruiz(M, q, dr, dc, n, n, 5, ruiz_scratch);
  for (int i = 0; i < n; i++) {
    lo[i] /= dc[i];
    hi[i] /= dc[i];
  }
  cuspLcpProblem prob = {n, M, n, q, lo, hi};
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.tol = 1e-10;
  opt.max_iter = max_iter;
  opt.work_budget = control_budget(n);
  size_t bytes = cusp_lcp_fbnewton_worksize(n);
  void* work = mj_stackAllocByte(d, bytes, sizeof(mjtNum));
  cuspLcpInfo info;
  mju_zero(z, n);
  for (int a = 0; a < nu; a++) z[a] = mju_clip(0, lo[a], hi[a]);
  cuspLcpStatus status = cusp_lcp_fbnewton(z, NULL, &info, &prob, &opt, work, bytes);
  if (status == CUSP_LCP_SOLVED) {
    for (int i = 0; i < n; i++) z[i] *= dc[i];
  }
  return status;
}

// The held rows' impulses la (na: per held contact its normal, then t and o if it sticks; arow
// its contact, akind 0 n, 1 t, 2 o) in the layout of the full model's rows, lambda (per contact the
// normal, then the r directions d_k = cone[2k] t + cone[2k+1] o): a friction impulse (t, o) is
// split over the two directions it lies between. Contacts not held get zero.
static void held_to_rows(mjtNum* lambda, const mjtNum* la, const int* arow, const int* akind,
                         int na, int ncontact, int r, const mjtNum* cone) {
  mju_zero(lambda, (size_t)ncontact * (1 + r) + 1);
  for (int i = 0; i < na; i++) {
    if (akind[i] == 0) lambda[arow[i] * (1 + r)] = la[i];
  }
  for (int c = 0; c < ncontact; c++) {
    int i = -1;
    for (int q = 0; q < na; q++) {
      if (arow[q] == c && akind[q] == 1) i = q;
    }
    if (i < 0) continue;
    mjtNum lt = la[i], lo = la[i + 1];
    mjtNum th = atan2(lo, lt), mag = mju_sqrt(lt * lt + lo * lo);
    if (th < 0) th += 2 * mjPI;
    int k0 = (int)floor(th / (2 * mjPI / r)) % r, k1 = (k0 + 1) % r;
    // mag (cos th, sin th) = a d_k0 + b d_k1
    mjtNum x0 = cone[2 * k0], y0 = cone[2 * k0 + 1];
    mjtNum x1 = cone[2 * k1], y1 = cone[2 * k1 + 1];
    mjtNum det = x0 * y1 - x1 * y0;
    mjtNum fx = mag * cos(th), fy = mag * sin(th);
    lambda[c * (1 + r) + 1 + k0] = (fx * y1 - fy * x1) / det;
    lambda[c * (1 + r) + 1 + k1] = (x0 * fy - y0 * fx) / det;
  }
}

// 1 if a contact is a grasp: between the robot and one of the objects
static int is_grasp(const cuspInverse* inv, const mjModel* m, const cuspContact* c) {
  int t0 = m->body_treeid[c->body[0]], t1 = c->body[1] > 0 ? m->body_treeid[c->body[1]] : -1;
  if (t0 < 0 || t1 < 0) return 0;
  return (t0 == inv->tree && t1 != inv->tree && cusp_inverse_models_tree(inv, t1)) ||
         (t1 == inv->tree && t0 != inv->tree && cusp_inverse_models_tree(inv, t0));
}

// Of the contacts of cusp.contact's last step as point contacts (contacts API,
// cusp_contacts_points: disk and point contacts as they are, a patch as one point per vertex with
// the patch's frame and friction: the controller models the patch's friction by the polyhedral
// cone at its vertices, the simulation by the ellipsoidal limit surface at the ECP), those that
// touch the model, kept in order in the first of points; returns their number.
static int keep_model_contacts(cuspContact* points, int n, const cuspInverse* inv,
                               const mjModel* m) {
  int kept = 0;
  for (int k = 0; k < n; k++) {
    if (models_pair(inv, m, points[k].body[0], points[k].body[1])) points[kept++] = points[k];
  }
  return kept;
}

// The controller's model of the arm over one horizon H (`horizon`, s): implicit in the inertia
// and every damping (dof and tendon), v_H = Mh^-1 (M v + H (f + B u) + J^T lambda) with
// Mh = M + H D on the equality-condensed coordinates (dynamics.h: v = N vr). The soft arms are
// overdamped, so over a horizon of the damping's time scale this is their quasi-static flow:
// the one-step model of the simulation (H = h) would make the control a deadbeat on the inertia.
// Returns 0, or -1 if Mh is not positive definite.
static int horizon_inertia(mjtNum* Mr, mjtNum* Mfull, const cuspInverse* inv,
                           const cuspDynamics* dyn, const mjModel* m, mjData* d, mjtNum H) {
  int nv = inv->ndof, nr = dyn->nr, nvm = m->nv;
  mj_fullM(m, d, Mfull);  // (nvm x nvm), kept for M v
  mjtNum* A = mj_stackAllocNum(d, (size_t)nv * nv);
  for (int i = 0; i < nv; i++) {
    for (int j = 0; j < nv; j++) A[i + (size_t)j * nv] = Mfull[inv->dofs[i] * nvm + inv->dofs[j]];
    A[i + (size_t)i * nv] += H * m->dof_damping[inv->dofs[i]];
  }
  for (int t = 0; t < m->ntendon; t++) {
    mjtNum damp = m->tendon_damping[t];
    if (damp <= 0) continue;
    int adr = m->ten_J_rowadr[t], nnz = m->ten_J_rownnz[t];
    for (int a = 0; a < nnz; a++) {
      int ia = dyn->local[m->ten_J_colind[adr + a]];
      if (ia < 0) continue;
      for (int b = 0; b < nnz; b++) {
        int ib = dyn->local[m->ten_J_colind[adr + b]];
        if (ib >= 0) A[ia + (size_t)ib * nv] += H * damp * d->ten_J[adr + a] * d->ten_J[adr + b];
      }
    }
  }
  if (dyn->identity) {
    mju_copy(Mr, A, (size_t)nv * nv);
  } else {  // Mr = N^T A N
    mjtNum* AN = mj_stackAllocNum(d, (size_t)nv * nr);
    for (int c = 0; c < nr; c++) {
      for (int i = 0; i < nv; i++) {
        mjtNum v = 0;
        for (int k = 0; k < nv; k++) v += A[i + (size_t)k * nv] * dyn->N[k + (size_t)c * nv];
        AN[i + (size_t)c * nv] = v;
      }
    }
    for (int a = 0; a < nr; a++) {
      for (int b = 0; b < nr; b++) {
        Mr[a * nr + b] = mju_dot(dyn->N + (size_t)a * nv, AN + (size_t)b * nv, nv);
      }
    }
  }
  return mju_cholFactor(Mr, nr, mjMINVAL) == nr ? 0 : -1;
}

cuspLcpStatus cusp_inverse_solve(mjtNum* u, mjtNum* state, cuspInverse* inv, const mjModel* m,
                                 mjData* d) {
  int nu = inv->nact, nv = inv->ndof, ne = 3 * inv->neff;
  mjtNum H = inv->horizon;
  cuspDynamics* dyn = &inv->dyn;
  mju_zero(u, nu);
  if (cusp_dynamics_update(dyn, m, d, inv->dofs, nv)) return CUSP_LCP_NUMERICAL;
  int nr = dyn->nr;

  // the contacts cusp resolved last step on the model's trees (the contacts API)
  const cuspConfig* ccfg = NULL;  // the contact instance's configuration
  const mjtNum* cone = NULL;      // (2 r) its friction directions
  int r = 0, ncontact = 0, npoint = 0;
  if (inv->contact == CUSP_INVERSE_CONTACT_CUSP) {
    ccfg = cusp_contacts_config(m, d, inv->contact_instance);
    if (ccfg) {
      r = cusp_contacts_cone(m, d, inv->contact_instance, &cone);
      npoint = cusp_contacts_points(m, d, inv->contact_instance, NULL, 0);
    }
  }

  mj_markStack(d);
  cuspContact* points = (cuspContact*)mj_stackAllocByte(
      d, sizeof(cuspContact) * (npoint + 1), sizeof(mjtNum));
  if (ccfg) {
    cusp_contacts_points(m, d, inv->contact_instance, points, npoint);
    ncontact = keep_model_contacts(points, npoint, inv, m);
  }
  int nc = ncontact * (1 + r);    // contact velocity rows (normal, r directions)
  int nrow = ne + nc;             // effector rows then contact rows
  mjtNum* Mr = mj_stackAllocNum(d, (size_t)nr * nr);
  mjtNum* Mfull = mj_stackAllocNum(d, (size_t)m->nv * m->nv);
  if (horizon_inertia(Mr, Mfull, inv, dyn, m, d, H)) {
    mj_freeStack(d);
    return CUSP_LCP_NUMERICAL;
  }
  mjtNum* J = mj_stackAllocNum(d, (size_t)(nrow + 1) * nv);  // rows, island columns (+ spare)
  mjtNum* Jr = mj_stackAllocNum(d, (size_t)(nrow + 1) * nr); // reduced rows (+ spare)
  mjtNum* Br = mj_stackAllocNum(d, (size_t)nu * nr);         // reduced actuator moments (rows)
  mjtNum* T = mj_stackAllocNum(d, (size_t)(nrow + nu) * nr); // Mr^-1 of each reduced row
  mjtNum* jac = mj_stackAllocNum(d, 3 * (size_t)nv);
  mjtNum* rowv = mj_stackAllocNum(d, nrow);
  mjtNum* vdes = mj_stackAllocNum(d, ne);
  const cuspContact** used = (const cuspContact**)mj_stackAllocByte(
      d, sizeof(cuspContact*) * (ncontact + 1), sizeof(void*));

  // effector rows and desired velocities over the horizon: bandwidth x error, capped
  mjtNum track_error = 0;
  for (int e = 0; e < inv->neff; e++) {
    int site = inv->effectors[e];
    cusp_dynamics_jac(J + (size_t)3 * e * nv, NULL, dyn, m, d, d->site_xpos + 3 * site,
                      m->site_bodyid[site]);
    mjtNum err[3];
    mju_sub3(err, d->xpos + 3 * inv->targets[e], d->site_xpos + 3 * site);
    mjtNum len = mju_norm3(err);
    if (len > track_error) track_error = len;
    mju_scl3(vdes + 3 * e, err, inv->bandwidth);
    mjtNum speed = mju_norm3(vdes + 3 * e);
    if (speed > inv->max_speed) mju_scl3(vdes + 3 * e, vdes + 3 * e, inv->max_speed / speed);
    // the weight scales the effector's rows and its desired velocity alike (weight^2 on its
    // squared tracking error)
    mju_scl(J + (size_t)3 * e * nv, J + (size_t)3 * e * nv, inv->weights[e], 3 * (size_t)nv);
    mju_scl3(vdes + 3 * e, vdes + 3 * e, inv->weights[e]);
  }
  // contact rows: normal, then the r directions d_k = cos t + sin o (the simulation's cone), on
  // the velocity of geom[0] relative to geom[1] (a body outside the model counts as fixed)
  mjtNum* jac1 = mj_stackAllocNum(d, 3 * (size_t)nv);
  for (int c = 0; c < ncontact; c++) {
    const cuspContact* ct = used[c] = points + c;
    cusp_dynamics_jac(jac, NULL, dyn, m, d, ct->pos, ct->body[0]);
    cusp_dynamics_jac(jac1, NULL, dyn, m, d, ct->pos, ct->body[1]);
    mju_subFrom(jac, jac1, 3 * (size_t)nv);
    mjtNum* rn = J + (size_t)(ne + c * (1 + r)) * nv;
    const mjtNum* t = ct->frame;
    const mjtNum* o = ct->frame + 3;
    const mjtNum* nn = ct->frame + 6;
    for (int j = 0; j < nv; j++) {
      rn[j] = nn[0] * jac[j] + nn[1] * jac[nv + j] + nn[2] * jac[2 * nv + j];
    }
    for (int q = 0; q < r; q++) {
      mjtNum dir[3];
      for (int i = 0; i < 3; i++) {
        dir[i] = cone[2 * q] * t[i] + cone[2 * q + 1] * o[i];
      }
      mjtNum* rt = rn + (size_t)(1 + q) * nv;
      for (int j = 0; j < nv; j++) {
        rt[j] = dir[0] * jac[j] + dir[1] * jac[nv + j] + dir[2] * jac[2 * nv + j];
      }
    }
  }
  // the free flow's generalized impulse M v + H (f + D v), f = passive - bias + applied: the
  // damping forces f holds are implicit in Mh (spare last row of J)
  mjtNum* g = J + (size_t)nrow * nv;
  for (int i = 0; i < nv; i++) {
    int dof = inv->dofs[i];
    mjtNum mv = 0;
    for (int j = 0; j < nv; j++) mv += Mfull[dof * m->nv + inv->dofs[j]] * d->qvel[inv->dofs[j]];
    g[i] = mv + H * (d->qfrc_passive[dof] - d->qfrc_bias[dof] + d->qfrc_applied[dof] +
                     m->dof_damping[dof] * d->qvel[dof]);
  }
  for (int t = 0; t < m->ntendon; t++) {  // + H tendon damping J^T (J v)
    mjtNum damp = m->tendon_damping[t];
    if (damp <= 0) continue;
    int adr = m->ten_J_rowadr[t], nnz = m->ten_J_rownnz[t];
    mjtNum vel = 0;
    for (int a = 0; a < nnz; a++) vel += d->ten_J[adr + a] * d->qvel[m->ten_J_colind[adr + a]];
    for (int a = 0; a < nnz; a++) {
      int ia = dyn->local[m->ten_J_colind[adr + a]];
      if (ia >= 0) g[ia] += H * damp * d->ten_J[adr + a] * vel;
    }
  }
  cusp_dynamics_reduce(Jr, dyn, J, nrow + 1);
  mjtNum* vr = Jr + (size_t)nrow * nr;  // reduced free-flow velocity
  mju_cholSolve(vr, Mr, vr, nr);
  for (int i = 0; i < nrow; i++) rowv[i] = mju_dot(Jr + (size_t)i * nr, vr, nr);

  // actuator moments on the island, reduced: Br row a = (B column a)^T N
  mjtNum* brow = mj_stackAllocNum(d, nv);
  for (int a = 0; a < nu; a++) {
    int out = m->actuator_outadr[inv->actuators[a]];
    mju_zero(brow, nv);
    for (int k = 0; k < d->moment_rownnz[out]; k++) {
      int adr = d->moment_rowadr[out] + k;
      int col = dyn->local[d->moment_colind[adr]];
      if (col >= 0) brow[col] = d->actuator_moment[adr];
    }
    cusp_dynamics_reduce(Br + (size_t)a * nr, dyn, brow, 1);
  }
  // T := Mh^-1 applied to every reduced row (effector, contact, then actuator rows)
  for (int i = 0; i < nrow; i++) mju_cholSolve(T + (size_t)i * nr, Mr, Jr + (size_t)i * nr, nr);
  for (int a = 0; a < nu; a++) {
    mju_cholSolve(T + (size_t)(nrow + a) * nr, Mr, Br + (size_t)a * nr, nr);
  }

  // effector couplings: Ae = H Je Mh^-1 B (ne x nu), Ce = Je Mh^-1 Jc^T (ne x nc); contact
  // couplings G = H Jc Mh^-1 B (nc x nu)
  mjtNum* Ae = mj_stackAllocNum(d, (size_t)ne * nu);
  mjtNum* Ce = mj_stackAllocNum(d, (size_t)ne * (nc + 1));
  mjtNum* G = mj_stackAllocNum(d, (size_t)(nc + 1) * nu);
  for (int i = 0; i < ne; i++) {
    for (int a = 0; a < nu; a++) {
      Ae[i * nu + a] = H * mju_dot(Jr + (size_t)i * nr, T + (size_t)(nrow + a) * nr, nr);
    }
    for (int k = 0; k < nc; k++) {
      Ce[i * nc + k] = mju_dot(Jr + (size_t)i * nr, T + (size_t)(ne + k) * nr, nr);
    }
  }
  for (int k = 0; k < nc; k++) {
    for (int a = 0; a < nu; a++) {
      G[k * nu + a] = H * mju_dot(Jr + (size_t)(ne + k) * nr, T + (size_t)(nrow + a) * nr, nr);
    }
  }

  // actuation block: (Ae^T Ae + eps I) u + Ae^T (Ce lambda + Je v_H0 - vdes) in the box, an SPD
  // box LCP (column-major)
  mjtNum* Q = mj_stackAllocNum(d, (size_t)nu * nu);
  mjtNum* qu = mj_stackAllocNum(d, nu);
  mjtNum* ue = mj_stackAllocNum(d, ne);  // Ce lambda + Je v_H0 - vdes
  tracking_hessian(Q, nu, Ae, ne, nu, inv->effort);
  cuspLcpProblem uprob = {nu, Q, nu, qu, inv->lo, inv->hi};
  cuspLcpOptions uopt = cusp_lcp_default_options();
  uopt.work_budget = control_budget(nu);
  mjtNum range = 0;  // N, the largest force range: tolerances relative to it
  for (int a = 0; a < nu; a++) range = mju_max(range, inv->hi[a] - inv->lo[a]);
  uopt.tol = 1e-10 * mju_max(range, 1);
  uopt.warm_start = 1;
  size_t ubytes = cusp_lcp_fbnewton_worksize(nu);
  void* uwork = mj_stackAllocByte(d, ubytes, sizeof(mjtNum));

  // contact block: the simulation's conditioned contact LCP (condition.h) on Mh, with the
  // free velocities the actuation gives; the cone rows of the scene's cusp.contact settings
  mjtNum* Lc = mj_stackAllocNum(d, (size_t)nr * nr);  // column-major lower factor of Mh
  for (int i = 0; i < nr; i++) {
    for (int j = 0; j < nr; j++) Lc[i + (size_t)j * nr] = j <= i ? Mr[i * nr + j] : 0;
  }
  mjtNum* Jn = mj_stackAllocNum(d, (size_t)(ncontact + 1) * nr);
  mjtNum* Jt = mj_stackAllocNum(d, (size_t)(ncontact * r + 1) * nr);
  mjtNum* mu = mj_stackAllocNum(d, ncontact + 1);
  mjtNum* bn = mj_stackAllocNum(d, ncontact + 1);
  mjtNum* bt = mj_stackAllocNum(d, (size_t)ncontact * r + 1);
  mjtNum* fn = mj_stackAllocNum(d, ncontact + 1);
  mjtNum* beta = mj_stackAllocNum(d, (size_t)ncontact * r + 1);
  mjtNum* gamma = mj_stackAllocNum(d, ncontact + 1);
  mjtNum* lambda = mj_stackAllocNum(d, nc + 1);  // (fn, beta) per contact, the rows' order
  for (int c = 0; c < ncontact; c++) {
    mju_copy(Jn + (size_t)c * nr, Jr + (size_t)(ne + c * (1 + r)) * nr, nr);
    mju_copy(Jt + (size_t)c * r * nr, Jr + (size_t)(ne + c * (1 + r) + 1) * nr, (size_t)r * nr);
    mu[c] = used[c]->mu;
  }
  cuspContactLcp clcp = {.nv = nr, .m = ncontact, .r = r, .Meff = Lc, .meff_is_factor = 1,
                         .Jn = Jn, .Jt = Jt, .mu = mu, .bn = bn, .bt = bt};
  cuspConditionOptions copt = cusp_condition_default_options();
  size_t cbytes = 0;
  void* cwork = NULL;
  if (ncontact) {
    // the contact instance's conditioning and tolerances; the chain with fallback, no warm start
    // (the controller's problem has no history of its own)
    copt = cusp_step_condition_options(ccfg);
    copt.lcp.warm_start = cusp_condition_default_options().lcp.warm_start;
    copt.backend = CUSP_LCP_CHAIN;
    copt.fallback = 1;
    copt.lcp.work_budget = control_budget(ncontact * (r + 2));
    cbytes = cusp_contact_worksize(nr, ncontact, r, &copt);
    cwork = mj_stackAllocByte(d, cbytes, sizeof(mjtNum));
  }

  // ---- sticking contacts (Coevoet's QP): the contacts loaded in the last step hold their mode:
  // a sticking contact is bilateral in n, t, o, a sliding one in n alone, so the impulses are
  // affine in the actuation, lambda(u) = l0 + L u from (W_A + eps I) lambda = -(b_A + G_A u), and
  // the tracking is a box QP in u under lambda_n(u) >= 0 and the friction pyramid
  // |lambda_t|, |lambda_o| <= mu lambda_n: with multipliers mu_i, the monotone box LCP
  //   [Q  -(C L)^T; C L  0] (u, mu) + (q, C l0),  u in its box, mu >= 0.
  // It is exact for a mode that holds; when the QP fails or a predicted impulse leaves the
  // last mode, the block Gauss-Seidel on the full complementarity below decides.
  int stick_done = 0;
  int na = 0, ncon = 0;  // bilateral rows, inequality rows
  int* arow = mj_stackAllocInt(d, 3 * (size_t)ncontact + 1);  // contact of each bilateral row
  int* akind = mj_stackAllocInt(d, 3 * (size_t)ncontact + 1); // 0 n, 1 t, 2 o
  for (int c = 0; c < ncontact; c++) {
    // hysteresis: a contact released in the last step but still touching (gap within
    // CUSP_INVERSE_TOUCH) stays in the model as sticking; leaving it out let the actuation press
    // freely, the next step stick, and the two alternate from step to step
    int touching = used[c]->gap <= CUSP_INVERSE_TOUCH;
    if (used[c]->mode == CUSP_MODE_BREAK && !touching) continue;
    int stick =
        (inv->sticking == CUSP_INVERSE_STICK_ALL || used[c]->mode != CUSP_MODE_SLIDE) && r >= 2;
    for (int e = 0; e < (stick ? 3 : 1); e++) {
      arow[na] = c;
      akind[na] = e;
      na++;
    }
    ncon += stick ? 5 : 1;
  }
  if (na && inv->sticking != CUSP_INVERSE_STICK_OFF) {
    // reduced rows of the bilateral set and their Mh^-1: n, t = d_0, o = (d_1 - cos t) / sin
    mjtNum* Ar = mj_stackAllocNum(d, (size_t)na * nr);
    mjtNum* AT = mj_stackAllocNum(d, (size_t)na * nr);
    mjtNum* av = mj_stackAllocNum(d, na);  // free velocity of each row (+ gap / H for normals)
    mjtNum* aG = mj_stackAllocNum(d, (size_t)na * nu);
    mjtNum c1 = r >= 2 ? cone[2] : 0, s1 = r >= 2 ? cone[3] : 1;
    for (int i = 0; i < na; i++) {
      int base = ne + arow[i] * (1 + r);  // the contact's normal row
      const mjtNum* j0 = Jr + (size_t)(base + (akind[i] ? 1 : 0)) * nr;
      const mjtNum* t0 = T + (size_t)(base + (akind[i] ? 1 : 0)) * nr;
      mjtNum v0 = rowv[base + (akind[i] ? 1 : 0)];
      mju_copy(Ar + (size_t)i * nr, j0, nr);
      mju_copy(AT + (size_t)i * nr, t0, nr);
      av[i] = v0;
      mju_copy(aG + (size_t)i * nu, G + (size_t)(base - ne + (akind[i] ? 1 : 0)) * nu, nu);
      if (akind[i] == 2) {  // o from d_1 and t
        mjtNum* ar = Ar + (size_t)i * nr;
        mjtNum* at = AT + (size_t)i * nr;
        const mjtNum* j1 = Jr + (size_t)(base + 2) * nr;
        const mjtNum* t1 = T + (size_t)(base + 2) * nr;
        for (int k = 0; k < nr; k++) {
          ar[k] = (j1[k] - c1 * ar[k]) / s1;
          at[k] = (t1[k] - c1 * at[k]) / s1;
        }
        av[i] = (rowv[base + 2] - c1 * av[i]) / s1;
        mjtNum* g = aG + (size_t)i * nu;
        const mjtNum* g1 = G + (size_t)(base - ne + 2) * nu;
        for (int a = 0; a < nu; a++) g[a] = (g1[a] - c1 * g[a]) / s1;
      }
      if (akind[i] == 0) av[i] += mju_max(used[arow[i]]->gap, 0) / H;  // close an open gap
    }
    if (inv->ntree == 1) {
      // the robot alone: its held rows are independent in practice (a few contacts on many dofs),
      // so the impulses are eliminated, lambda(u) = l0 + L u, and the QP is in u alone
      // W_A (na x na) + Tikhonov, factor; l0 = -W^-1 av, L = -W^-1 G_A
      mjtNum* WA = mj_stackAllocNum(d, (size_t)na * na);
      mjtNum wmax = 0;
      for (int i = 0; i < na; i++) {
        for (int k = 0; k < na; k++) {
          WA[i * na + k] = mju_dot(Ar + (size_t)i * nr, AT + (size_t)k * nr, nr);
        }
        wmax = mju_max(wmax, WA[i * na + i]);
      }
      for (int i = 0; i < na; i++) WA[i * na + i] += 1e-9 * wmax;
      mjtNum* l0 = mj_stackAllocNum(d, na);
      mjtNum* L = mj_stackAllocNum(d, (size_t)na * nu);  // column a at L[a * na]
      mjtNum* col = mj_stackAllocNum(d, na);
      if (mju_cholFactor(WA, na, mjMINVAL) == na) {
        mju_scl(col, av, -1, na);
        mju_cholSolve(l0, WA, col, na);
        for (int a = 0; a < nu; a++) {
          for (int i = 0; i < na; i++) col[i] = -aG[(size_t)i * nu + a];
          mju_cholSolve(L + (size_t)a * na, WA, col, na);
        }
        // effector: Je v = rowv + Ae u + Ce_A lambda(u); Ce_A row i = Je Mh^-1 A_i^T
        mjtNum* At_ = mj_stackAllocNum(d, (size_t)ne * nu);  // effective Ae
        mjtNum* rt = mj_stackAllocNum(d, ne);                 // effective rowv - vdes
        for (int e = 0; e < ne; e++) {
          mjtNum* ce = col;  // reuse: Ce_A row e (na)
          for (int i = 0; i < na; i++) {
            ce[i] = mju_dot(Jr + (size_t)e * nr, AT + (size_t)i * nr, nr);
          }
          rt[e] = rowv[e] - vdes[e] + mju_dot(ce, l0, na);
          for (int a = 0; a < nu; a++) {
            At_[e * nu + a] = Ae[e * nu + a] + mju_dot(ce, L + (size_t)a * na, na);
          }
        }
        // inequality rows on lambda: C (ncon x na) applied to l0 and L
        int n2 = nu + ncon;
        mjtNum* M2 = mj_stackAllocNum(d, (size_t)n2 * n2);
        mjtNum* q2 = mj_stackAllocNum(d, n2);
        mjtNum* lo2 = mj_stackAllocNum(d, n2);
        mjtNum* hi2 = mj_stackAllocNum(d, n2);
        mjtNum* z2 = mj_stackAllocNum(d, n2);
        mju_zero(M2, (size_t)n2 * n2);
        tracking_hessian(M2, n2, At_, ne, nu, inv->effort);
        for (int a = 0; a < nu; a++) {
          mjtNum v = 0;
          for (int e = 0; e < ne; e++) v += At_[e * nu + a] * rt[e];
          q2[a] = v;
          lo2[a] = inv->lo[a];
          hi2[a] = inv->hi[a];
        }
        // constraint k: sum_i coef_i lambda_i >= 0 over the contact's rows
        int k = 0;
        for (int i = 0; i < na; i++) {
          if (akind[i] != 0) continue;  // one group per contact, starting at its normal row
          int stick = i + 2 < na && arow[i + 1] == arow[i] && akind[i + 1] == 1;
          mjtNum mu = used[arow[i]]->mu * (1 - inv->cone_margin);  // the cone held back
          // rows: n; mu n - t; mu n + t; mu n - o; mu n + o
          for (int g = 0; g < (stick ? 5 : 1); g++) {
            mjtNum cn = g == 0 ? 1 : mu, ct = 0, co = 0;
            if (g == 1) ct = -1;
            if (g == 2) ct = 1;
            if (g == 3) co = -1;
            if (g == 4) co = 1;
            int row = nu + k;
            mjtNum c0 = cn * l0[i] + (stick ? ct * l0[i + 1] + co * l0[i + 2] : 0);
            q2[row] = c0;
            for (int a = 0; a < nu; a++) {
              const mjtNum* La = L + (size_t)a * na;
              mjtNum v = cn * La[i] + (stick ? ct * La[i + 1] + co * La[i + 2] : 0);
              M2[row + (size_t)a * n2] = v;    // C L
              M2[a + (size_t)row * n2] = -v;   // -(C L)^T
            }
            lo2[row] = 0;
            hi2[row] = INFINITY;
            k++;
          }
        }
        cuspLcpProblem p2 = {n2, M2, n2, q2, lo2, hi2};
        cuspLcpOptions o2 = cusp_lcp_default_options();
        o2.tol = 1e-10 * mju_max(range, 1);
        o2.max_iter = 200;
        o2.work_budget = control_budget(n2);
        size_t b2 = cusp_lcp_fbnewton_worksize(n2);
        void* w2 = mj_stackAllocByte(d, b2, sizeof(mjtNum));
        cuspLcpInfo i2;
        mju_zero(z2, n2);
        for (int a = 0; a < nu; a++) z2[a] = mju_clip(0, inv->lo[a], inv->hi[a]);
        if (cusp_lcp_fbnewton(z2, NULL, &i2, &p2, &o2, w2, b2) == CUSP_LCP_SOLVED) {
          mju_copy(u, z2, nu);
          for (int i = 0; i < na; i++) {  // the held rows' impulses l0 + L u
            col[i] = l0[i];
            for (int a = 0; a < nu; a++) col[i] += L[(size_t)a * na + i] * u[a];
          }
          held_to_rows(lambda, col, arow, akind, na, ncontact, r, cone);
          stick_done = 1;
        }
      }
    } else {
      // with objects: a held object has more rows than dofs (a face on a wall, the grasp) and
      // W_A is singular: the impulses stay unknowns
      // W_A (na x na) = A Mh^-1 A^T and Ce_A (ne x na) = Je Mh^-1 A^T
      mjtNum* WA = mj_stackAllocNum(d, (size_t)na * na);
      mjtNum* CeA = mj_stackAllocNum(d, (size_t)ne * na);
      mjtNum wmax = 0;
      for (int i = 0; i < na; i++) {
        for (int k = 0; k < na; k++) {
          WA[i * na + k] = mju_dot(Ar + (size_t)i * nr, AT + (size_t)k * nr, nr);
        }
        wmax = mju_max(wmax, WA[i * na + i]);
      }
      for (int e = 0; e < ne; e++) {
        for (int i = 0; i < na; i++) {
          CeA[e * na + i] = mju_dot(Jr + (size_t)e * nr, AT + (size_t)i * nr, nr);
        }
      }
      // the QP in (u, lambda) with the held rows as equalities (lambda unknowns: a held object's
      // rows are many more than its dofs, W_A is singular and lambda = -W_A^-1 (...) does not
      // exist), as the monotone box LCP of its KKT conditions, z = (u, lambda, nu, kappa):
      //   F_u      = Q u + Ae^T CeA lambda + G_A^T nu + Ae^T (Je v0 - vdes)        u in its box
      //   F_lambda = CeA^T Ae u + (CeA^T CeA + dl) lambda + W_A nu - C^T kappa
      //              + CeA^T (Je v0 - vdes)
      //   F_nu     = -(G_A u + W_A lambda + av) + dn nu = 0   (the held rows do not move)
      //   F_kappa  = C lambda - c >= 0   (normals, friction pyramids, the grip)
      int grip_row = 0;
      for (int i = 0; i < na && inv->grip > 0; i++) {
        grip_row |= akind[i] == 0 && is_grasp(inv, m, used[arow[i]]);
      }
      int nk = ncon + grip_row, ul = nu, un = nu + na, uk = nu + 2 * na;
      int n2 = nu + 2 * na + nk;
      mjtNum* M2 = mj_stackAllocNum(d, (size_t)n2 * n2);
      mjtNum* q2 = mj_stackAllocNum(d, n2);
      mjtNum* lo2 = mj_stackAllocNum(d, n2);
      mjtNum* hi2 = mj_stackAllocNum(d, n2);
      mjtNum* z2 = mj_stackAllocNum(d, n2);
      mju_zero(M2, (size_t)n2 * n2);
    #define AT2(i, j) M2[(i) + (size_t)(j) * n2]
      mjtNum ldiag = 0;
      tracking_hessian(M2, n2, Ae, ne, nu, inv->effort);
      for (int a = 0; a < nu; a++) {
        for (int i = 0; i < na; i++) {
          mjtNum v = 0;
          for (int e = 0; e < ne; e++) v += Ae[e * nu + a] * CeA[e * na + i];
          AT2(a, ul + i) = AT2(ul + i, a) = v;
          AT2(a, un + i) = aG[(size_t)i * nu + a];
          AT2(un + i, a) = -aG[(size_t)i * nu + a];
        }
        mjtNum v = 0;
        for (int e = 0; e < ne; e++) v += Ae[e * nu + a] * (rowv[e] - vdes[e]);
        q2[a] = v;
        lo2[a] = inv->lo[a];
        hi2[a] = inv->hi[a];
      }
      for (int i = 0; i < na; i++) {
        for (int k = 0; k < na; k++) {
          mjtNum v = 0;
          for (int e = 0; e < ne; e++) v += CeA[e * na + i] * CeA[e * na + k];
          AT2(ul + i, ul + k) = v;
          AT2(ul + i, un + k) = WA[i * na + k];
          AT2(un + i, ul + k) = -WA[i * na + k];
        }
        ldiag = mju_max(ldiag, AT2(ul + i, ul + i));
        mjtNum v = 0;
        for (int e = 0; e < ne; e++) v += CeA[e * na + i] * (rowv[e] - vdes[e]);
        q2[ul + i] = v;
        q2[un + i] = -av[i];
        lo2[ul + i] = lo2[un + i] = -INFINITY;
        hi2[ul + i] = hi2[un + i] = INFINITY;
      }
      // regularisation: lambda (the least impulses among those that hold), nu (redundant rows)
      mjtNum dl = 1e-9 * (ldiag + wmax * wmax > 0 ? ldiag + wmax * wmax : 1);
      for (int i = 0; i < na; i++) {
        AT2(ul + i, ul + i) += dl;
        AT2(un + i, un + i) += 1e-9;
      }
      // constraint rows on lambda: per held contact n >= 0, and if sticking the pyramid
      // mu n -+ t >= 0, mu n -+ o >= 0 (mu held back by cone_margin); then the grip
      int k = 0;
      for (int i = 0; i < na; i++) {
        if (akind[i] != 0) continue;  // one group per contact, starting at its normal row
        int stick = i + 2 < na && arow[i + 1] == arow[i] && akind[i + 1] == 1;
        mjtNum mu = used[arow[i]]->mu * (1 - inv->cone_margin);
        for (int g = 0; g < (stick ? 5 : 1); g++) {
          mjtNum cn = g == 0 ? 1 : mu, ct = g == 1 ? -1 : g == 2 ? 1 : 0;
          mjtNum co = g == 3 ? -1 : g == 4 ? 1 : 0;
          int row = uk + k;
          AT2(row, ul + i) = cn;
          AT2(ul + i, row) = -cn;
          if (stick) {
            AT2(row, ul + i + 1) = ct;
            AT2(ul + i + 1, row) = -ct;
            AT2(row, ul + i + 2) = co;
            AT2(ul + i + 2, row) = -co;
          }
          q2[row] = 0;
          lo2[row] = 0;
          hi2[row] = INFINITY;
          k++;
        }
      }
      if (grip_row) {
        int row = uk + k;
        for (int i = 0; i < na; i++) {
          if (akind[i] != 0 || !is_grasp(inv, m, used[arow[i]])) continue;
          AT2(row, ul + i) = 1;
          AT2(ul + i, row) = -1;
        }
        q2[row] = -inv->grip * H;
        lo2[row] = 0;
        hi2[row] = INFINITY;
      }
    #undef AT2
      if (solve_scaled_box_lcp(z2, M2, q2, lo2, hi2, n2, nu, 200, d) == CUSP_LCP_SOLVED) {
        mju_copy(u, z2, nu);
        held_to_rows(lambda, z2 + ul, arow, akind, na, ncontact, r, cone);
        stick_done = 1;
      }
    }
  }

  // ---- the whole complementarity as one box LCP (when the modes do not hold): actuation
  // optimality and the contacts' rows together, (u, per contact fn, beta (r), gamma), Ruiz-scaled
  // and solved by FB Newton; the block Gauss-Seidel below only if this fails
  int mono_done = 0;
  if (!stick_done && ncontact) {
    int s = r + 2, n = nu + ncontact * s;
    // the box LCP, column-major (n x n): unknowns u (nu), then per contact (fn, beta (r), gamma)
    mjtNum* M = mj_stackAllocNum(d, (size_t)n * n);
    mjtNum* q = mj_stackAllocNum(d, n);
    mjtNum* lo = mj_stackAllocNum(d, n);
    mjtNum* hi = mj_stackAllocNum(d, n);
    mjtNum* z = mj_stackAllocNum(d, n);
    mju_zero(M, (size_t)n * n);
  #define UNKNOWN(k) (nu + ((k) / (1 + r)) * s + ((k) % (1 + r)))
    // u rows: Ae^T Ae u + eps u + Ae^T Ce lambda + Ae^T (Je v_H0 - vdes)
    tracking_hessian(M, n, Ae, ne, nu, inv->effort);
    for (int a = 0; a < nu; a++) {
      for (int k = 0; k < nc; k++) {
        mjtNum v = 0;
        for (int i = 0; i < ne; i++) v += Ae[i * nu + a] * Ce[i * nc + k];
        M[a + (size_t)UNKNOWN(k) * n] = v;
      }
      mjtNum v = 0;
      for (int i = 0; i < ne; i++) v += Ae[i * nu + a] * (rowv[i] - vdes[i]);
      q[a] = v;
      lo[a] = inv->lo[a];
      hi[a] = inv->hi[a];
    }
    // contact rows, as the simulation writes them (CUSP 10-13), over the horizon
    for (int c = 0; c < ncontact; c++) {
      const cuspContact* ct = used[c];
      for (int e = 0; e < 1 + r; e++) {
        int k = c * (1 + r) + e;  // contact velocity row
        int row = UNKNOWN(k);
        const mjtNum* jr = Jr + (size_t)(ne + k) * nr;
        for (int a = 0; a < nu; a++) {
          M[row + (size_t)a * n] = H * mju_dot(jr, T + (size_t)(nrow + a) * nr, nr);
        }
        for (int k2 = 0; k2 < nc; k2++) {
          M[row + (size_t)UNKNOWN(k2) * n] = mju_dot(jr, T + (size_t)(ne + k2) * nr, nr);
        }
        mjtNum vfree = rowv[ne + k];
        q[row] = e == 0 ? cusp_normal_rhs(vfree, ct->gap + H * vfree, H, ccfg->gap_alpha,
                                          ccfg->pushout_speed)
                        : vfree;
        if (e > 0) M[row + (size_t)(nu + c * s + r + 1) * n] = 1;  // + gamma
        lo[row] = 0;
        hi[row] = INFINITY;
      }
      int gr = nu + c * s + r + 1;  // cone row: mu fn - sum beta
      M[gr + (size_t)(nu + c * s) * n] = ct->mu;
      for (int e = 1; e <= r; e++) M[gr + (size_t)(nu + c * s + e) * n] = -1;
      q[gr] = 0;
      lo[gr] = 0;
      hi[gr] = INFINITY;
    }
  #undef UNKNOWN

    if (solve_scaled_box_lcp(z, M, q, lo, hi, n, nu, 100, d) == CUSP_LCP_SOLVED) {
      mju_copy(u, z, nu);
      for (int c = 0; c < ncontact; c++) mju_copy(lambda + c * (1 + r), z + nu + c * s, 1 + r);
      mono_done = 1;
    }


  }

  // block Gauss-Seidel between the two: u for the impulses, the impulses for u, until u settles
  // (at most `iterations` rounds); a contact-free model needs one round
  if (mono_done) stick_done = 1;  // the Gauss-Seidel is not needed
  if (!stick_done) {
    mju_zero(lambda, nc + 1);
    for (int a = 0; a < nu; a++) u[a] = mju_clip(0, inv->lo[a], inv->hi[a]);
  }
  cuspLcpStatus status = CUSP_LCP_SOLVED, last = CUSP_LCP_SOLVED;
  int rounds = 0, settled = 0;
  mjtNum* ugood = mj_stackAllocNum(d, nu);     // the last actuation whose solves all succeeded
  mjtNum* lgood = mj_stackAllocNum(d, nc + 1); // and its impulses
  mjtNum* uold = mj_stackAllocNum(d, nu);
  for (rounds = 0; rounds < inv->iterations && !stick_done; rounds++) {
    mju_copy(uold, u, nu);
    for (int i = 0; i < ne; i++) {
      ue[i] = rowv[i] - vdes[i] + (nc ? mju_dot(Ce + (size_t)i * nc, lambda, nc) : 0);
    }
    for (int a = 0; a < nu; a++) {
      mjtNum v = 0;
      for (int i = 0; i < ne; i++) v += Ae[i * nu + a] * ue[i];
      qu[a] = v;
    }
    cuspLcpInfo uinfo;
    last = cusp_lcp_fbnewton(u, NULL, &uinfo, &uprob, &uopt, uwork, ubytes);
    if (last != CUSP_LCP_SOLVED) break;
    if (!ncontact) {
      mju_copy(ugood, u, nu);
      settled = 1;
      break;
    }
    for (int c = 0; c < ncontact; c++) {  // free contact velocities with this actuation
      for (int e = 0; e <= r; e++) {
        int k = c * (1 + r) + e;
        mjtNum v = rowv[ne + k] + mju_dot(G + (size_t)k * nu, u, nu);
        if (e == 0) {
          // the published gap is the current one (the last step's, at its q*): the end of the
          // horizon sees gap + H v, the gap the simulation's rule takes
          bn[c] = cusp_normal_rhs(v, used[c]->gap + H * v, H, ccfg->gap_alpha,
                                  ccfg->pushout_speed);
        } else {
          bt[c * r + e - 1] = v;
        }
      }
    }
    cuspConditionInfo cinfo;
    last = cusp_contact_solve(fn, beta, gamma, NULL, &cinfo, &clcp, &copt, cwork, cbytes);
    if (last != CUSP_LCP_SOLVED) break;
    // under-relaxed: the two blocks pull against each other where the actuation presses into a
    // contact, and the plain alternation then cycles
    mjtNum w = rounds ? 0.5 : 1;
    for (int c = 0; c < ncontact; c++) {
      lambda[c * (1 + r)] += w * (fn[c] - lambda[c * (1 + r)]);
      for (int e = 0; e < r; e++) {
        lambda[c * (1 + r) + 1 + e] += w * (beta[(size_t)c * r + e] - lambda[c * (1 + r) + 1 + e]);
      }
    }
    mjtNum change = 0;
    for (int a = 0; a < nu; a++) change = mju_max(change, fabs(u[a] - uold[a]));
    mju_copy(ugood, u, nu);
    mju_copy(lgood, lambda, nc);
    if (rounds > 0 && change <= 1e-9 * range) {
      settled = 1;
      break;
    }
  }
  // a failed solve in a later round keeps the last round that solved; only a first round that
  // fails is a failed step (the actuators then hold zero force)
  int have = settled || rounds > 0 || stick_done;
  if (rounds == inv->iterations) rounds--;  // ran out of rounds: report the last one
  status = have ? CUSP_LCP_SOLVED : last;
  if (have && !stick_done) {
    mju_copy(u, ugood, nu);
    mju_copy(lambda, lgood, nc);
  }

  mjtNum force = 0, speed_error = 0;
  if (status == CUSP_LCP_SOLVED) {
    for (int c = 0; c < ncontact; c++) force += lambda[c * (1 + r)] / H;  // N: impulse / H
    for (int i = 0; i < ne; i++) {  // predicted Je v_H - vdes
      mjtNum v = rowv[i] - vdes[i] + mju_dot(Ae + (size_t)i * nu, u, nu);
      if (nc) v += mju_dot(Ce + (size_t)i * nc, lambda, nc);
      speed_error += v * v;
    }
  } else {
    mju_zero(u, nu);
  }
  mj_freeStack(d);
  if (state) {
    state[CUSP_INVERSE_STATE_CONTACTS] = ncontact;
    state[CUSP_INVERSE_STATE_NORMAL_FORCE] = force;
    state[CUSP_INVERSE_STATE_TRACK_ERROR] = track_error;
    state[CUSP_INVERSE_STATE_SPEED_ERROR] = mju_sqrt(speed_error);
    state[CUSP_INVERSE_STATE_STATUS] = status;
    state[CUSP_INVERSE_STATE_ROUNDS] = stick_done ? 0 : rounds + 1;
    state[CUSP_INVERSE_STATE_LAST_FAILED] = status != CUSP_LCP_SOLVED;
  }
  return status;
}

//---------------------------------- plugin callbacks -----------------------------------------------

// the actuator forces of this step
static void inverse_compute(void* object, const mjModel* m, mjData* d, int instance) {
  cuspInverse* inv = (cuspInverse*)object;
  mjtNum* state = d->plugin_state + m->plugin_stateadr[instance];
  mj_markStack(d);
  mjtNum* u = mj_stackAllocNum(d, inv->nact);
  cusp_inverse_solve(u, state, inv, m, d);
  for (int a = 0; a < inv->nact; a++) {
    d->actuator_force[m->actuator_outadr[inv->actuators[a]]] = u[a];
  }
  mj_freeStack(d);
}

static void* inverse_create(const mjModel* m, int instance, char* err, int err_sz) {
  return cusp_inverse_create(m, instance, err, err_sz);
}

static const cuspControlPlugin inverse_plugin = {
  INVERSE_NAME, cusp_inverse_keys, CUSP_INVERSE_NSTATE, inverse_create, cusp_inverse_free,
  -1, CUSP_INVERSE_STATE_STEPS, CUSP_INVERSE_STATE_FAILURES, CUSP_INVERSE_STATE_STATUS,
  CUSP_INVERSE_STATE_LAST_FAILED,
  "control LCP", "the actuators held zero force", inverse_compute, NULL,
};

void cusp_inverse_register(void) { cusp_control_plugin_register(&inverse_plugin); }
