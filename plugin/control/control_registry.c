// Process-wide registry of controller plugin objects by (mjData, instance index).
#include "control/control_registry.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct cuspControlEntry_ {
  const mjData* owner;
  int index;
  void* object;
  cuspControlFreeFn free_fn;
  int warned;  // the object's one warning was given
} cuspControlEntry;

// a linear scan under one mutex: few mjData hold a controller (one per rollout thread), and a
// lookup costs far less than the control step around it
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cuspControlEntry* entries = NULL;  // (cap)
static int n = 0, cap = 0;

static int find_locked(const mjData* d, int index) {
  for (int i = 0; i < n; i++) {
    if (entries[i].owner == d && entries[i].index == index) return i;
  }
  return -1;
}

int cusp_control_registry_add(const mjData* d, int index, void* object,
                              cuspControlFreeFn free_fn) {
  void* old = NULL;
  cuspControlFreeFn old_free = NULL;
  int rc = 0;
  pthread_mutex_lock(&lock);
  int i = find_locked(d, index);
  if (i >= 0) {
    old = entries[i].object;
    old_free = entries[i].free_fn;
  } else {
    if (n == cap) {
      int c = cap ? 2 * cap : 16;
      cuspControlEntry* e = (cuspControlEntry*)realloc(entries, (size_t)c * sizeof(*e));
      if (e) {
        entries = e;
        cap = c;
      } else {
        rc = -1;
      }
    }
    if (!rc) i = n++;
  }
  if (!rc) entries[i] = (cuspControlEntry){d, index, object, free_fn, 0};
  pthread_mutex_unlock(&lock);
  if (old && old_free) old_free(old);
  if (rc && free_fn) free_fn(object);
  return rc;
}

void* cusp_control_registry_find(const mjData* d, int index) {
  pthread_mutex_lock(&lock);
  int i = find_locked(d, index);
  void* object = i >= 0 ? entries[i].object : NULL;
  pthread_mutex_unlock(&lock);
  return object;
}

int cusp_control_registry_first_warning(const mjData* d, int index) {
  pthread_mutex_lock(&lock);
  int i = find_locked(d, index);
  int first = i >= 0 && !entries[i].warned;
  if (first) entries[i].warned = 1;
  pthread_mutex_unlock(&lock);
  return first;
}

void cusp_control_registry_remove(const mjData* d, int index) {
  void* object = NULL;
  cuspControlFreeFn free_fn = NULL;
  pthread_mutex_lock(&lock);
  int i = find_locked(d, index);
  if (i >= 0) {
    object = entries[i].object;
    free_fn = entries[i].free_fn;
    entries[i] = entries[--n];
  }
  if (!n) {
    free(entries);  // nothing left: no allocation stays behind
    entries = NULL;
    cap = 0;
  }
  pthread_mutex_unlock(&lock);
  if (object && free_fn) free_fn(object);
}
