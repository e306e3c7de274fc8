// cusp.inverse: configuration (keys, the modelled trees, dofs and actuators) and the actuator
// plugin callbacks; the controller's model of a step is built in inverse_model.c and solved in
// inverse_solve.c.
#include "control/inverse.h"

#include <stdio.h>
#include <stdlib.h>

#include "control/control_plugin.h"

#define INVERSE_NAME "cusp.inverse"

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

static int out_of_memory(char* err, int err_sz) {
  snprintf(err, err_sz, INVERSE_NAME ": out of memory");
  return -1;
}

// a refusal of key `key` (its value as configured) for the reason `why`; returns -1
static int refuse(char* err, int err_sz, const mjModel* m, int instance, const char* key,
                  const char* why) {
  const char* value = mj_getPluginConfig(m, instance, key);
  cusp_key_fail(err, err_sz, INVERSE_NAME, key, value ? value : "", why);
  return -1;
}

// effectors, one target per effector, one weight per effector or none (then all 1)
static int check_effectors(cuspInverse* inv, const mjModel* m, int instance, char* err,
                           int err_sz) {
  char why[320];
  if (!inv->neff) {
    cusp_key_fail(err, err_sz, INVERSE_NAME, "effectors", "", "required: name effector sites");
    return -1;
  }
  if (inv->ntarget != inv->neff) {
    snprintf(why, sizeof(why), "%d targets for %d effectors: one body per effector", inv->ntarget,
             inv->neff);
    return refuse(err, err_sz, m, instance, "targets", why);
  }
  if (inv->nweight && inv->nweight != inv->neff) {
    snprintf(why, sizeof(why), "%d weights for %d effectors: one per effector, or none",
             inv->nweight, inv->neff);
    return refuse(err, err_sz, m, instance, "weights", why);
  }
  if (!inv->nweight) {
    inv->weights = (mjtNum*)malloc(inv->neff * sizeof(mjtNum));
    if (!inv->weights) return out_of_memory(err, err_sz);
    for (int e = 0; e < inv->neff; e++) inv->weights[e] = 1;
    inv->nweight = inv->neff;
  }
  return 0;
}

// the robot's kinematic tree: that of the first actuator's transmission that acts on a tree, else
// that of the first effector's body
static int robot_tree(const cuspInverse* inv, const mjModel* m, int instance) {
  int tree = -1;
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
  return tree;
}

// the modelled trees: the robot's, then one per object (each on a tree of its own); every
// effector on one of them
static int model_trees(cuspInverse* inv, const mjModel* m, int instance, char* err, int err_sz) {
  char why[320];
  int tree = inv->tree = robot_tree(inv, m, instance);
  inv->trees = (int*)calloc(inv->nobject + 1, sizeof(int));
  if (!inv->trees) return out_of_memory(err, err_sz);
  inv->trees[inv->ntree++] = tree;
  for (int k = 0; k < inv->nobject; k++) {
    int t = m->body_treeid[inv->objects[k]];
    const char* why_not = t < 0 ? "is static (no dofs of its own)"
                          : cusp_inverse_models_tree(inv, t) ? "shares a kinematic tree with the "
                                                              "robot or another object"
                          : NULL;
    if (why_not) {
      snprintf(why, sizeof(why), "body '%s' %s", name_of(m, mjOBJ_BODY, inv->objects[k]), why_not);
      return refuse(err, err_sz, m, instance, "objects", why);
    }
    inv->trees[inv->ntree++] = t;
  }
  for (int e = 0; e < inv->neff; e++) {
    int t = m->body_treeid[m->site_bodyid[inv->effectors[e]]];
    if (tree < 0 || !cusp_inverse_models_tree(inv, t)) {
      snprintf(why, sizeof(why), "site '%s' is %s", name_of(m, mjOBJ_SITE, inv->effectors[e]),
               t < 0 ? "on a static body" : "neither on the robot nor on one of the objects");
      return refuse(err, err_sz, m, instance, "effectors", why);
    }
  }
  return 0;
}

// the model's dofs: every dof of the robot's and the objects' trees, ascending; their dynamics
static int model_dofs(cuspInverse* inv, const mjModel* m, char* err, int err_sz) {
  for (int i = 0; i < m->nv; i++) inv->ndof += cusp_inverse_models_tree(inv, m->dof_treeid[i]);
  inv->dofs = (int*)calloc(inv->ndof + 1, sizeof(int));
  if (!inv->dofs) return out_of_memory(err, err_sz);
  for (int i = 0, k = 0; i < m->nv; i++) {
    if (cusp_inverse_models_tree(inv, m->dof_treeid[i])) inv->dofs[k++] = i;
  }
  if (cusp_dynamics_init(&inv->dyn, m, inv->ndof)) return out_of_memory(err, err_sz);
  return 0;
}

// the actuators: any transmission acting on the tree, a force range for the box
static int model_actuators(cuspInverse* inv, const mjModel* m, int instance, char* err,
                           int err_sz) {
  for (int i = 0; i < m->nu; i++) inv->nact += m->actuator_plugin[i] == instance;
  if (!inv->nact) {
    snprintf(err, err_sz, INVERSE_NAME ": instance %d drives no actuator; declare "
             "<actuator><plugin instance=... tendon=... forcelimited=\"true\" forcerange=.../>",
             instance);
    return -1;
  }
  inv->actuators = (int*)calloc(inv->nact, sizeof(int));
  inv->lo = (mjtNum*)calloc(inv->nact, sizeof(mjtNum));
  inv->hi = (mjtNum*)calloc(inv->nact, sizeof(mjtNum));
  if (!inv->actuators || !inv->lo || !inv->hi) return out_of_memory(err, err_sz);
  for (int i = 0, k = 0; i < m->nu; i++) {
    if (m->actuator_plugin[i] != instance) continue;
    if (!m->actuator_forcelimited[i] || m->actuator_actnum[i] != 0) {
      snprintf(err, err_sz, INVERSE_NAME ": actuator '%s' needs forcelimited=\"true\" with a "
               "forcerange (the box of its force) and no activation",
               name_of(m, mjOBJ_ACTUATOR, i));
      return -1;
    }
    inv->actuators[k] = i;
    inv->lo[k] = m->actuator_forcerange[2 * i];
    inv->hi[k] = m->actuator_forcerange[2 * i + 1];
    k++;
  }
  return 0;
}

cuspInverse* cusp_inverse_create(const mjModel* m, int instance, char* err, int err_sz) {
  cuspInverse* inv = (cuspInverse*)calloc(1, sizeof(cuspInverse));
  if (!inv) {
    out_of_memory(err, err_sz);
    return NULL;
  }
  int rc = cusp_keys_parse(inv, &inverse_keys, m, instance, err, err_sz);
  if (!rc) rc = check_effectors(inv, m, instance, err, err_sz);
  if (!rc) rc = model_trees(inv, m, instance, err, err_sz);
  if (!rc) {
    inv->contact_instance = find_contact_instance(m);
    if (inv->contact == CUSP_INVERSE_CONTACT_CUSP && inv->contact_instance < 0) {
      cusp_key_fail(err, err_sz, INVERSE_NAME, "contact", "cusp",
                    "the model has no cusp.contact instance (use 'ignore')");
      rc = -1;
    }
  }
  if (!rc) rc = model_dofs(inv, m, err, err_sz);
  if (!rc) rc = model_actuators(inv, m, instance, err, err_sz);
  if (rc) {
    cusp_inverse_free(inv);
    return NULL;
  }
  return inv;
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
