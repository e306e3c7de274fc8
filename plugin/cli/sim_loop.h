// The cusp-sim run: step a scene, record one CSV row per step and a JSON summary. One
// implementation for the cusp-sim tool and for Python (cusp.run, python -m cusp run, through
// ctypes on libcusp.so, which this file is compiled into), so that a controller written in Python
// drives the very same loop.
#ifndef CUSP_PLUGIN_CLI_SIM_LOOP_H_
#define CUSP_PLUGIN_CLI_SIM_LOOP_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

// Called before every mj_step with the caller's argument (controllers, progress bars): returns 0
// to go on, nonzero to stop the run (then cusp_sim_run returns -2, e.g. an exception in Python).
typedef int (*cuspSimHook)(void* arg);

// mask (ngeom): 1 for every geom the first cusp.contact instance of m registers (its disks and
// every geom of its patch bodies), read from the compiled cusp scene (the stock twin keeps the
// geom ids). Returns 0, or -1 if the instance's config does not parse.
int cusp_sim_registered_geoms(char* mask, const mjModel* m);

// Before mj_makeData: the timestep override (s; <= 0 keeps the scene's) and MuJoCo's energy.
void cusp_sim_prepare_model(mjModel* m, double timestep);

// Runs d (fresh from mj_makeData of m after cusp_sim_prepare_model) for `seconds` of simulated
// time from the scene's first keyframe (if any): hook (may be NULL) then mj_step, every step.
// Writes the CSV to csv_path (NULL: none) and the one-line JSON summary (no newline) to json.
// stock: m is the stock twin (contact columns from MuJoCo's contacts on registered geoms).
// Returns 0; -1 with a message in err; -2 when the hook stopped the run.
int cusp_sim_run(char* json, int json_sz, char* err, int err_sz, const mjModel* m, mjData* d,
                 const char* registered, int stock, const char* scene, double seconds,
                 const char* csv_path, cuspSimHook hook, void* hook_arg);

// After cusp_sim_run (in the same thread): one line summarising the failed contact solves of
// the run (count, the first one's time and status, the worst status; instance.h's
// cusp_failure_line), for the caller to print once. Returns its length, 0 (out = "") when every
// solve succeeded or the scene has no cusp.contact instance.
int cusp_sim_failure_line(char* out, int out_sz);

// MuJoCo's error for a scene that does not load or compile, as one line: the lines of the
// message in order, each once (MuJoCo 4.0.0 appends the warnings of a failed compile to its
// error twice), MuJoCo's generic "plugin->init failed" line dropped when a plugin said why, and
// for an unknown cusp.contact config key the list of the valid ones.
void cusp_error_line(char* out, int out_sz, const char* message);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CLI_SIM_LOOP_H_
