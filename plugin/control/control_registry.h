// Ownership of controller plugin instances (cusp.avoid, cusp.inverse): a process-wide registry
// of the per-mjData objects, found by (mjData, plugin instance index). d->plugin_data is a raw
// pointer that pickling and byte copies carry to other mjData, so callbacks never read through
// it; they look the object up here and repair d->plugin_data (the same rule as cusp.contact,
// instance.h).
#ifndef CUSP_PLUGIN_CONTROL_REGISTRY_H_
#define CUSP_PLUGIN_CONTROL_REGISTRY_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*cuspControlFreeFn)(void* object);

// Register `object` as owned by (d, index), replacing (and freeing) one it had. 0, or -1 (out of
// memory; the object is then freed).
int cusp_control_registry_add(const mjData* d, int index, void* object, cuspControlFreeFn free_fn);

// The object owned by (d, index), NULL if none.
void* cusp_control_registry_find(const mjData* d, int index);

// 1 the first time it is asked for the object owned by (d, index) (its one warning), else 0 (and
// 0 if none is registered).
int cusp_control_registry_first_warning(const mjData* d, int index);

// Unregister and free the object owned by (d, index), if any.
void cusp_control_registry_remove(const mjData* d, int index);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CONTROL_REGISTRY_H_
