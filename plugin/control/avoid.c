// cusp.avoid: configuration, the avoidance projection, and the actuator plugin callbacks.
#include "control/avoid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/condition.h"
#include "control/control_plugin.h"
#include "collide/point_distance.h"

#define AVOID_NAME "cusp.avoid"

//---------------------------------- configuration --------------------------------------------------

// the field of cuspAvoid a key sets, and a list with its count
#define AT(member) 0, CUSP_FIELD(cuspAvoid, member), NULL
#define LIST(member, n) 0, CUSP_LIST(cuspAvoid, member, n), NULL

const cuspKey cusp_avoid_keys[] = {
  {"spheres", CUSP_KEY_SITES, "", 0, 0, NULL, "-",
   "robot proxy spheres: sphere sites on the links (centre and radius from the site)",
   LIST(spheres, nsphere)},
  {"obstacles", CUSP_KEY_GEOMS, "", 0, 0, NULL, "-",
   "geoms the spheres keep clear of: plane, sphere, capsule, box or cylinder",
   LIST(obstacles, nobstacle)},
  {"tool", CUSP_KEY_SITE, "", 0, 0, NULL, "-", "site that tracks the target", AT(tool)},
  {"target", CUSP_KEY_BODY, "", 0, 0, NULL, "-",
   "body whose position is the tool's target (a mocap body to move it)", AT(target)},
  {"clearance", CUSP_KEY_REAL, "0.02", 0, 1, NULL, "m",
   "smallest sphere-obstacle distance the controller allows", AT(clearance)},
  {"influence", CUSP_KEY_REAL, "0.05", 1e-6, 10, NULL, "m",
   "pairs closer than clearance + influence enter the avoidance LCP", AT(influence)},
  {"gain", CUSP_KEY_REAL, "50", 1e-3, 1e6, NULL, "1/s",
   "k of the separation rows: a step closes at most min(k h, 1) of the distance to the clearance",
   AT(gain)},
  {"track_gain", CUSP_KEY_REAL, "20", 0, 1e6, NULL, "1/s",
   "tool speed per metre of target error (nominal increment)", AT(track_gain)},
  {"max_speed", CUSP_KEY_REAL, "0.5", 1e-6, 100, NULL, "m/s",
   "cap on the nominal tool speed", AT(max_speed)},
  {"damping", CUSP_KEY_REAL, "0.01", 0, 10, NULL, "m",
   "damped least squares: lambda in J^T (J J^T + lambda^2 I)^-1", AT(damping)},
  {"kp", CUSP_KEY_REAL, "2000", 0, 1e9, NULL, "N m/rad (N/m)",
   "position servo stiffness of each controlled joint", AT(kp)},
  {"kv", CUSP_KEY_REAL, "20", 0, 1e9, NULL, "N m s/rad (N s/m)",
   "position servo damping of each controlled joint", AT(kv)},
  {"eps_rank", CUSP_KEY_REAL, "0", 0, 0.5, NULL, "-",
   "rank selection of the separation rows (conditioning stage 1): a row dependent on the kept "
   "ones within this relative tolerance is dropped (and may then be violated); 0: off",
   AT(eps_rank)},
  {"regularization", CUSP_KEY_REAL, "1e-10", 0, 1e-2, NULL, "-",
   "Tikhonov shift of the scaled H H^T diagonal (conditioning stage 3); 0: off",
   AT(regularization)},
  {"solver", CUSP_KEY_CHOICE, "lemke", 0, 0, "lemke|fbnewton|pgs|chain", "-",
   "LCP backend of the solver core; when it fails, the chain runs from the same start", AT(solver)},
  {NULL, 0, NULL, 0, 0, NULL, NULL, NULL, 0, CUSP_NO_FIELD, NULL},
};

static const int solver_backend[] = {CUSP_LCP_LEMKE, CUSP_LCP_FBNEWTON, CUSP_LCP_PGS,
                                     CUSP_LCP_CHAIN};  // by position in the `solver` choices

static const cuspKeyTable avoid_keys = {AVOID_NAME, cusp_avoid_keys, NULL};

void cusp_avoid_free(void* object) {
  cuspAvoid* a = (cuspAvoid*)object;
  if (!a) return;
  free(a->actuators);
  free(a->dofs);
  free(a->qposadr);
  free(a->spheres);
  free(a->obstacles);
  free(a);
}

static const char* name_of(const mjModel* m, mjtObj obj, int id) {
  const char* name = mj_id2name(m, obj, id);
  return name ? name : "(unnamed)";
}

// the instance's actuators: joint transmission on a hinge or slide, gear 1, actdim 1
static int collect_actuators(cuspAvoid* a, const mjModel* m, int instance, char* err,
                             int err_sz) {
  for (int i = 0; i < m->nu; i++) a->nact += m->actuator_plugin[i] == instance;
  if (!a->nact) {
    snprintf(err, err_sz, AVOID_NAME ": instance %d drives no actuator; declare "
             "<actuator><plugin instance=... joint=... actdim=\"1\"/></actuator> per joint",
             instance);
    return -1;
  }
  a->actuators = (int*)calloc(a->nact, sizeof(int));
  a->dofs = (int*)calloc(a->nact, sizeof(int));
  a->qposadr = (int*)calloc(a->nact, sizeof(int));
  if (!a->actuators || !a->dofs || !a->qposadr) {
    snprintf(err, err_sz, AVOID_NAME ": out of memory");
    return -1;
  }
  int k = 0;
  for (int i = 0; i < m->nu; i++) {
    if (m->actuator_plugin[i] != instance) continue;
    const char* name = name_of(m, mjOBJ_ACTUATOR, i);
    int j = m->actuator_trnid[2 * i];
    if (m->actuator_trntype[i] != mjTRN_JOINT ||
        (m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE)) {
      snprintf(err, err_sz, AVOID_NAME ": actuator '%s' must act on a hinge or slide joint",
               name);
      return -1;
    }
    const mjtNum* gear = m->actuator_gear + 6 * i;
    if (gear[0] != 1) {
      snprintf(err, err_sz, AVOID_NAME ": actuator '%s' has gear %g; the servo needs gear 1",
               name, gear[0]);
      return -1;
    }
    if (m->actuator_actnum[i] != 1 || m->actuator_dyntype[i] != mjDYN_NONE) {
      snprintf(err, err_sz, AVOID_NAME ": actuator '%s' has actdim %d; add actdim=\"1\" (the "
               "servo reference) and no dyntype", name, m->actuator_actnum[i]);
      return -1;
    }
    for (int p = 0; p < k; p++) {
      if (a->dofs[p] == m->jnt_dofadr[j]) {
        snprintf(err, err_sz, AVOID_NAME ": joint '%s' is driven by two actuators",
                 name_of(m, mjOBJ_JOINT, j));
        return -1;
      }
    }
    a->actuators[k] = i;
    a->dofs[k] = m->jnt_dofadr[j];
    a->qposadr[k] = m->jnt_qposadr[j];
    k++;
  }
  return 0;
}

cuspAvoid* cusp_avoid_create(const mjModel* m, int instance, char* err, int err_sz) {
  cuspAvoid* a = (cuspAvoid*)calloc(1, sizeof(cuspAvoid));
  if (!a) {
    snprintf(err, err_sz, AVOID_NAME ": out of memory");
    return NULL;
  }
  if (cusp_keys_parse(a, &avoid_keys, m, instance, err, err_sz)) goto fail;
  a->backend = solver_backend[a->solver];

  const char* value;
  char why[320];
  if (!a->nsphere) {
    cusp_key_fail(err, err_sz, AVOID_NAME, "spheres", "", "required: name sphere sites");
    goto fail;
  }
  for (int s = 0; s < a->nsphere; s++) {
    if (m->site_type[a->spheres[s]] != mjGEOM_SPHERE) {
      value = mj_getPluginConfig(m, instance, "spheres");
      snprintf(why, sizeof(why), "site '%s' is not a sphere site",
               name_of(m, mjOBJ_SITE, a->spheres[s]));
      cusp_key_fail(err, err_sz, AVOID_NAME, "spheres", value ? value : "", why);
      goto fail;
    }
  }
  if (!a->nobstacle) {
    cusp_key_fail(err, err_sz, AVOID_NAME, "obstacles", "", "required: name obstacle geoms");
    goto fail;
  }
  for (int o = 0; o < a->nobstacle; o++) {
    if (!cusp_point_distance_supported(m->geom_type[a->obstacles[o]])) {
      value = mj_getPluginConfig(m, instance, "obstacles");
      snprintf(why, sizeof(why),
               "geom '%s' is not a plane, sphere, capsule, box or cylinder (no distance query)",
               name_of(m, mjOBJ_GEOM, a->obstacles[o]));
      cusp_key_fail(err, err_sz, AVOID_NAME, "obstacles", value ? value : "", why);
      goto fail;
    }
  }
  if (collect_actuators(a, m, instance, err, err_sz)) goto fail;
  return a;
fail:
  cusp_avoid_free(a);
  return NULL;
}

//---------------------------------- one control step -----------------------------------------------

// columns `dofs` (n) of a row-major (3 x nv) Jacobian -> (3 x n) row-major
static void take_columns(mjtNum* out, const mjtNum* jac, const int* dofs, int n, int nv) {
  for (int r = 0; r < 3; r++) {
    for (int j = 0; j < n; j++) out[r * n + j] = jac[r * nv + dofs[j]];
  }
}

// nominal increment: h J^T (J J^T + lambda^2 I)^-1 v, v = track_gain e capped at max_speed
static void nominal_increment(mjtNum* dq, mjtNum* track_error, const cuspAvoid* a,
                              const mjModel* m, mjData* d, const mjtNum* jac_full,
                              mjtNum* jt /* (3 x n) */) {
  int n = a->nact;
  mjtNum e[3];
  mju_sub3(e, d->xpos + 3 * a->target, d->site_xpos + 3 * a->tool);
  *track_error = mju_norm3(e);
  mjtNum v[3];
  mju_scl3(v, e, a->track_gain);
  mjtNum speed = mju_norm3(v);
  if (speed > a->max_speed) mju_scl3(v, v, a->max_speed / speed);
  take_columns(jt, jac_full, a->dofs, n, m->nv);
  mjtNum A[9];  // J J^T + lambda^2 I
  for (int r = 0; r < 3; r++) {
    for (int c = 0; c < 3; c++) A[3 * r + c] = mju_dot(jt + r * n, jt + c * n, n);
    A[4 * r] += a->damping * a->damping;
  }
  mjtNum y[3] = {0, 0, 0};
  if (mju_cholFactor(A, 3, mjMINVAL) == 3) mju_cholSolve(y, A, v, 3);
  for (int j = 0; j < n; j++) {
    dq[j] = m->opt.timestep * (jt[j] * y[0] + jt[n + j] * y[1] + jt[2 * n + j] * y[2]);
  }
}

cuspLcpStatus cusp_avoid_increment(mjtNum* dq, cuspAvoidReport* report, const cuspAvoid* a,
                                   const mjModel* m, mjData* d, const mjtNum* qref) {
  int n = a->nact, nv = m->nv;
  mjtNum h = m->opt.timestep;
  mjtNum close = mju_min(a->gain * h, 1);  // fraction of the excess distance one step may close
  memset(report, 0, sizeof(*report));
  report->min_distance = mjMAXVAL;
  mj_markStack(d);
  mjtNum* jac = mj_stackAllocNum(d, 3 * nv);
  mjtNum* jac_obstacle = mj_stackAllocNum(d, 3 * nv);
  mjtNum* jt = mj_stackAllocNum(d, 3 * n);
  mjtNum* nominal = mj_stackAllocNum(d, n);

  // nominal: the current reference's offset from q, plus the tracking increment
  mj_jacSite(m, d, jac, NULL, a->tool);
  nominal_increment(nominal, &report->track_error, a, m, d, jac, jt);
  for (int j = 0; j < n; j++) nominal[j] += qref[j] - d->qpos[a->qposadr[j]];

  // separation rows: H (rows x n, row-major), rhs (rows)
  int maxrow = a->nsphere * a->nobstacle;
  mjtNum* H = mj_stackAllocNum(d, (size_t)maxrow * n);
  mjtNum* rhs = mj_stackAllocNum(d, maxrow);
  int rows = 0;
  for (int s = 0; s < a->nsphere; s++) {
    int site = a->spheres[s];
    const mjtNum* centre = d->site_xpos + 3 * site;
    mjtNum radius = m->site_size[3 * site];
    int have_jac = 0;
    for (int o = 0; o < a->nobstacle; o++) {
      int g = a->obstacles[o];
      mjtNum normal[3], closest[3];
      mjtNum dist = cusp_point_geom_distance(normal, closest, m, d, g, centre) - radius;
      if (dist < report->min_distance) report->min_distance = dist;
      mjtNum excess = dist - a->clearance;
      if (excess > a->influence) continue;
      if (!have_jac) {
        mj_jacSite(m, d, jac, NULL, site);
        take_columns(jt, jac, a->dofs, n, nv);
        have_jac = 1;
      }
      mjtNum* row = H + (size_t)rows * n;
      for (int j = 0; j < n; j++) {
        row[j] = normal[0] * jt[j] + normal[1] * jt[n + j] + normal[2] * jt[2 * n + j];
      }
      mjtNum approach = 0;  // n^T v_o h: the obstacle's own motion towards the sphere
      int body = m->geom_bodyid[g];
      if (m->body_weldid[body] != 0) {
        // a moving obstacle: its points move with the controlled joints (self-avoidance: the
        // row becomes relative) and with the others (their velocity enters the right side)
        mj_jac(m, d, jac_obstacle, NULL, closest, body);
        mjtNum vel[3];
        mju_mulMatVec(vel, jac_obstacle, d->qvel, 3, nv);
        for (int j = 0; j < n; j++) {
          mjtNum ncol = normal[0] * jac_obstacle[a->dofs[j]] +
                        normal[1] * jac_obstacle[nv + a->dofs[j]] +
                        normal[2] * jac_obstacle[2 * nv + a->dofs[j]];
          row[j] -= ncol;
          approach -= ncol * d->qvel[a->dofs[j]];  // controlled part moves with dq instead
        }
        approach += mju_dot3(normal, vel);
      }
      rhs[rows] = -close * excess + h * approach;
      rows++;
    }
  }
  report->rows = rows;

  // LCP: 0 <= eta _|_ (H H^T) eta + (H nominal - rhs) >= 0, a frictionless contact LCP with
  // unit inertia: the solver core conditions it (dependent rows dropped, violated rows first;
  // Ruiz; Tikhonov) and solves it with the chosen backend, the chain as fallback
  cuspLcpStatus status = CUSP_LCP_SOLVED;
  mju_copy(dq, nominal, n);
  if (rows) {
    mjtNum* bn = mj_stackAllocNum(d, rows);
    int trivial = 1;
    for (int i = 0; i < rows; i++) {
      bn[i] = mju_dot(H + (size_t)i * n, nominal, n) - rhs[i];
      if (bn[i] < 0) trivial = 0;
    }
    if (!trivial) {  // else eta = 0: the nominal increment keeps every row
      mjtNum* identity = mj_stackAllocNum(d, (size_t)n * n);
      mjtNum* eta = mj_stackAllocNum(d, rows);
      mju_zero(identity, n * n);
      for (int j = 0; j < n; j++) identity[j * (n + 1)] = 1;
      cuspContactLcp lcp = {.nv = n, .m = rows, .r = 0, .Meff = identity, .meff_is_factor = 1,
                            .Jn = H, .bn = bn};
      cuspConditionOptions opt = cusp_condition_default_options();
      opt.rank_select = a->eps_rank > 0;
      opt.eps_rank = a->eps_rank;
      opt.eps_w = a->regularization;
      opt.tikhonov = a->regularization > 0;
      opt.estimate_condition = 0;
      opt.backend = (cuspLcpBackendId)a->backend;
      opt.fallback = 1;
      opt.lcp.tol = 1e-12;
      size_t bytes = cusp_contact_worksize(n, rows, 0, &opt);
      void* work = mj_stackAllocByte(d, bytes, sizeof(mjtNum));
      cuspConditionInfo info;
      mju_zero(eta, rows);
      status = cusp_contact_solve(eta, NULL, NULL, NULL, &info, &lcp, &opt, work, bytes);
      report->iterations = info.lcp.iterations;
      report->dropped = info.dropped;
      if (status == CUSP_LCP_SOLVED) {
        for (int i = 0; i < rows; i++) {
          if (eta[i] > 0) {
            report->active++;
            mju_addToScl(dq, H + (size_t)i * n, eta[i], n);
          }
        }
      } else {
        mju_zero(dq, n);  // hold still: the reference becomes the current pose
      }
    }
  }
  report->status = status;
  mj_freeStack(d);
  return status;
}

//---------------------------------- plugin callbacks -----------------------------------------------

// act_dot of the servo references: the reference after this step is q + dq
static void avoid_act_dot(void* object, const mjModel* m, mjData* d, int instance) {
  const cuspAvoid* a = (const cuspAvoid*)object;
  mjtNum* state = d->plugin_state + m->plugin_stateadr[instance];
  mj_markStack(d);
  mjtNum* qref = mj_stackAllocNum(d, a->nact);
  mjtNum* dq = mj_stackAllocNum(d, a->nact);
  for (int j = 0; j < a->nact; j++) {
    // before the first step the reference is the pose itself (act starts at 0 on reset)
    qref[j] = state[CUSP_AVOID_STATE_STARTED] ? d->act[m->actuator_actadr[a->actuators[j]]]
                                              : d->qpos[a->qposadr[j]];
  }
  cuspAvoidReport report;
  cuspLcpStatus status = cusp_avoid_increment(dq, &report, a, m, d, qref);
  for (int j = 0; j < a->nact; j++) {
    int adr = m->actuator_actadr[a->actuators[j]];
    d->act_dot[adr] = (d->qpos[a->qposadr[j]] + dq[j] - d->act[adr]) / m->opt.timestep;
  }
  mj_freeStack(d);
  // observables of this step (recomputing the same step writes the same values)
  state[CUSP_AVOID_STATE_ROWS] = report.rows;
  state[CUSP_AVOID_STATE_ACTIVE] = report.active;
  state[CUSP_AVOID_STATE_MIN_DISTANCE] = report.min_distance;
  state[CUSP_AVOID_STATE_TRACK_ERROR] = report.track_error;
  state[CUSP_AVOID_STATE_STATUS] = status;
  state[CUSP_AVOID_STATE_LAST_FAILED] = status != CUSP_LCP_SOLVED;
}

// the servos: force = kp (reference after the step - q) - kv qdot
static void avoid_compute(void* object, const mjModel* m, mjData* d, int instance) {
  (void)instance;
  const cuspAvoid* a = (const cuspAvoid*)object;
  for (int j = 0; j < a->nact; j++) {
    int i = a->actuators[j];
    int adr = m->actuator_actadr[i];
    mjtNum ref = d->act[adr] + m->opt.timestep * d->act_dot[adr];  // the reference after the step
    mjtNum q = d->qpos[a->qposadr[j]];
    d->actuator_force[m->actuator_outadr[i]] = a->kp * (ref - q) - a->kv * d->qvel[a->dofs[j]];
  }
}

static void* avoid_create(const mjModel* m, int instance, char* err, int err_sz) {
  return cusp_avoid_create(m, instance, err, err_sz);
}

static const cuspControlPlugin avoid_plugin = {
  AVOID_NAME, cusp_avoid_keys, CUSP_AVOID_NSTATE, avoid_create, cusp_avoid_free,
  CUSP_AVOID_STATE_STARTED, CUSP_AVOID_STATE_STEPS, CUSP_AVOID_STATE_FAILURES,
  CUSP_AVOID_STATE_STATUS, CUSP_AVOID_STATE_LAST_FAILED,
  "avoidance LCP", "the joints held their pose", avoid_compute, avoid_act_dot,
};

void cusp_avoid_register(void) { cusp_control_plugin_register(&avoid_plugin); }
