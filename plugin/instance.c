// Ownership of cusp.contact instances: a process-wide registry of live instances and the mjData
// each belongs to (see instance.h), creation, copying and destruction.
#include "instance.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/lcp.h"


//---------------------------------- registry
//-------------------------------------------------------

// Live instances, unordered. A linear scan under one mutex: a process holds few mjData with a
// cusp instance (one per thread of a rollout), and one lookup per callback costs far less than the
// step around it.
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static cuspInstance** registry = NULL;  // (registry_cap)
static int registry_n = 0, registry_cap = 0;

static int registry_add(cuspInstance* inst) {
  pthread_mutex_lock(&registry_lock);
  int rc = 0;
  if (registry_n == registry_cap) {
    int cap = registry_cap ? 2 * registry_cap : 16;
    cuspInstance** a = (cuspInstance**)realloc(registry, (size_t)cap * sizeof(*a));
    if (a) {
      registry = a;
      registry_cap = cap;
    } else {
      rc = -1;
    }
  }
  if (!rc) registry[registry_n++] = inst;
  pthread_mutex_unlock(&registry_lock);
  return rc;
}

// removes and returns the instance of (d, index), NULL if none
static cuspInstance* registry_take(const mjData* d, int index) {
  cuspInstance* found = NULL;
  pthread_mutex_lock(&registry_lock);
  for (int i = 0; i < registry_n; i++) {
    if (registry[i]->owner == d && registry[i]->index == index) {
      found = registry[i];
      registry[i] = registry[--registry_n];
      break;
    }
  }
  if (!registry_n) {
    free(registry);  // nothing left: leave no allocation behind (leak checkers, dlclose)
    registry = NULL;
    registry_cap = 0;
  }
  pthread_mutex_unlock(&registry_lock);
  return found;
}

cuspInstance* cusp_instance_find(const mjData* d, int index) {
  cuspInstance* found = NULL;
  pthread_mutex_lock(&registry_lock);
  for (int i = 0; i < registry_n && !found; i++) {
    if (registry[i]->owner == d && registry[i]->index == index) found = registry[i];
  }
  pthread_mutex_unlock(&registry_lock);
  return found;
}

cuspInstance* cusp_instance_find_state(const mjModel* m, const mjtNum* state, int index) {
  cuspInstance* found = NULL;
  pthread_mutex_lock(&registry_lock);
  for (int i = 0; i < registry_n && !found; i++) {
    // owners are alive while registered (their destroy callback unregisters them first)
    const cuspInstance* r = registry[i];
    if (r->index == index && r->owner->plugin_state + m->plugin_stateadr[index] == state) {
      found = registry[i];
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return found;
}

int cusp_instance_count(void) {
  pthread_mutex_lock(&registry_lock);
  int n = registry_n;
  pthread_mutex_unlock(&registry_lock);
  return n;
}

//---------------------------------- life cycle
//-----------------------------------------------------

static void instance_free(cuspInstance* inst) {
  cusp_guard_free(&inst->guard);
  cusp_step_free(&inst->work);
  cusp_config_free(&inst->cfg);
  free(inst);
}

// allocate the step workspace and guard for inst->cfg; 0 or -1 (out of memory, err written)
static int instance_alloc(cuspInstance* inst, const mjModel* m, char* err, int err_sz) {
  if (cusp_step_init(&inst->work, m, &inst->cfg) || cusp_guard_init(&inst->guard, m)) {
    snprintf(err, err_sz, "cusp.contact: out of memory for the step workspace");
    return -1;
  }
  return 0;
}

cuspInstance* cusp_instance_create(const mjModel* m, const mjData* d, int index, char* err,
                                   int err_sz) {
  cuspInstance* inst = (cuspInstance*)calloc(1, sizeof(cuspInstance));
  if (!inst) {
    snprintf(err, err_sz, "cusp.contact: out of memory");
    return NULL;
  }
  if (cusp_config_parse(&inst->cfg, m, index, err, err_sz)) {
    free(inst);
    return NULL;
  }
  if (cusp_sensor_validate(m, index, &inst->cfg, err, err_sz) ||
      instance_alloc(inst, m, err, err_sz)) {
    instance_free(inst);
    return NULL;
  }
  inst->owner = d;
  inst->index = index;
  if (registry_add(inst)) {
    snprintf(err, err_sz, "cusp.contact: out of memory for the instance registry");
    instance_free(inst);
    return NULL;
  }
  return inst;
}

cuspInstance* cusp_instance_get(const mjModel* m, mjData* d, int index, char* err, int err_sz) {
  cuspInstance* inst = cusp_instance_find(d, index);
  if (!inst) inst = cusp_instance_create(m, d, index, err, err_sz);
  // repair a pointer copied from another mjData (or process); never read through it
  d->plugin_data[index] = (uintptr_t)inst;
  return inst;
}

int cusp_instance_copy(cuspInstance* dst, const mjModel* m, const cuspInstance* src) {
  if (dst == src) return 0;
  // built aside with src's configuration (process-wide overrides may have made it differ from what
  // dst's init parsed) and what the next step reads; swapped in only when complete, so that on
  // failure dst stays a working instance that starts cold
  cuspInstance tmp;
  memset(&tmp, 0, sizeof(tmp));
  char err[128];
  int rc = cusp_config_copy(&tmp.cfg, &src->cfg);
  if (!rc) rc = instance_alloc(&tmp, m, err, sizeof(err));
  if (!rc) rc = cusp_step_copy_history(&tmp.work, &src->work);
  if (rc) {
    cusp_guard_free(&tmp.guard);
    cusp_step_free(&tmp.work);
    cusp_config_free(&tmp.cfg);
    cusp_step_reset(&dst->work);
    dst->last_steps = -1;  // matches no published step count: the next step starts cold
    return -1;
  }
  cusp_guard_free(&dst->guard);
  cusp_step_free(&dst->work);
  cusp_config_free(&dst->cfg);
  dst->cfg = tmp.cfg;
  dst->work = tmp.work;
  dst->guard = tmp.guard;
  dst->warned = src->warned;
  dst->last_steps = src->last_steps;
  dst->next_time = src->next_time;
  return 0;
}

void cusp_instance_note_step(cuspInstance* inst, const mjtNum* state, mjtNum failures_before,
                             mjtNum time) {
  cuspFailureLog* log = &inst->unreported;
  log->steps += 1;
  mjtNum added = state[CUSP_STATE_SOLVER_FAILURES] - failures_before;
  if (added <= 0) return;
  int status = (int)state[CUSP_STATE_STATUS];
  if (status == CUSP_LCP_SOLVED) status = CUSP_LCP_NUMERICAL;  // counted, hence failed
  if (log->failures == 0) {
    log->first_time = time;
    log->first_status = status;
  }
  if (status > log->worst_status) log->worst_status = status;
  log->failures += added;
}

int cusp_failure_line(char* out, int out_sz, mjtNum failures, mjtNum steps, mjtNum first_time,
                      int first_status, int worst_status) {
  if (out_sz > 0) out[0] = 0;
  if (failures <= 0) return 0;
  int n = snprintf(out, out_sz,
                   "cusp.contact: %.0f failed contact solve%s in %.0f steps (solver_failures); "
                   "the first at t = %.6g s (%s), the worst %s",
                   failures, failures == 1 ? "" : "s", steps, first_time,
                   cusp_lcp_status_string((cuspLcpStatus)first_status),
                   cusp_lcp_status_string((cuspLcpStatus)worst_status));
  return n < 0 ? 0 : n;
}

void cusp_instance_destroy(mjData* d, int index) {
  cuspInstance* inst = registry_take(d, index);
  if (inst) instance_free(inst);
  d->plugin_data[index] = 0;
}
