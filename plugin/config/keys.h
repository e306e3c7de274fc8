// The key-table parser of every plugin of the library (cusp.contact, cusp.avoid, cusp.inverse).
// A plugin lists each MJCF <config key= value=> key once: type, default, range, unit, meaning and
// the field of its struct the value sets. The same table drives parsing and validation, the
// refusal messages, the attributes the plugin declares to MuJoCo, and the key tables of
// mjcf/README.md (tests keep the two in step).
#ifndef CUSP_PLUGIN_CONFIG_KEYS_H_
#define CUSP_PLUGIN_CONFIG_KEYS_H_

#include <stddef.h>

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cuspKeyType_ {  // and the field it sets
  CUSP_KEY_REAL = 0,    // a finite number in [min, max]: mjtNum (an int field gets it truncated)
  CUSP_KEY_INT,         // an integer in [min, max]: int
  CUSP_KEY_BOOL,        // true/false (also 1/0): int
  CUSP_KEY_CHOICE,      // one word out of a '|'-separated list: int, its position in the list
  CUSP_KEY_GEOMS,       // space-separated geom names that must exist: int* ids, int count
  CUSP_KEY_BODIES,      // space-separated body names that must exist: int* ids, int count
  CUSP_KEY_BODY_PARAMS, // "body:v1,v2,v3; body:..." (per-body numbers): read by the key's check
  CUSP_KEY_FILE,        // a file path (absolute, or relative to the working directory), "" none:
                        // read by the key's check
  CUSP_KEY_SITES,       // space-separated site names that must exist: int* ids, int count
  CUSP_KEY_SITE,        // one site name that must exist: int id
  CUSP_KEY_BODY,        // one body name that must exist: int id
  CUSP_KEY_REALS        // space-separated finite numbers, each in [min, max]: mjtNum*, int count
} cuspKeyType;

struct cuspKey_;

// What a key asks beyond its type (and for BODY_PARAMS and FILE the reading itself), run right
// after the key is parsed, in table order: obj is the plugin's struct, value the key's text. 0, or
// -1 with the refusal in err.
typedef int (*cuspKeyCheck)(void* obj, const mjModel* m, int instance, const struct cuspKey_* key,
                            const char* value, char* err, int err_sz);

typedef struct cuspKey_ {
  const char* key;            // config key as written in MJCF
  cuspKeyType type;
  const char* default_value;  // as text; "" for an empty list or a required name
  double min, max;            // range for REAL, INT, REALS, BODY_PARAMS (inclusive)
  const char* choices;        // for CHOICE: "a|b|c"
  const char* unit;           // unit, or "-" for dimensionless
  const char* doc;            // one-line description
  int optional;               // an empty default is documented as "(empty)" (1) or "(required)" (0)
  size_t field, size;         // offset and size of the field it sets (CUSP_FIELD); size 0: none
  size_t count;               // lists: offset of their int count (CUSP_LIST)
  cuspKeyCheck check;         // NULL, or run after the key is parsed
} cuspKey;

// The field a key sets in the plugin's struct `type`, and a list with its count.
#define CUSP_FIELD(type, member) offsetof(type, member), sizeof(((type*)0)->member), 0
#define CUSP_LIST(type, member, n) \
  offsetof(type, member), sizeof(((type*)0)->member), offsetof(type, n)
#define CUSP_NO_FIELD 0, 0, 0

typedef struct cuspKeyTable_ {
  const char* plugin;  // the plugin's name: the first word of every refusal
  const cuspKey* keys; // terminated by {NULL}
  // a key's text (cusp.contact: its process-wide overrides first); NULL: the MJCF's, or the
  // default when that is empty
  const char* (*value)(const mjModel* m, int instance, const cuspKey* key);
} cuspKeyTable;

int cusp_key_count(const cuspKey* keys);
const cuspKey* cusp_key_named(const cuspKey* keys, const char* name);  // NULL if none
int cusp_key_words(const char* s);  // number of whitespace-separated words (0 for NULL)

// "plugin: config key 'K' has value 'V': why" on one line into err (a value longer than 200
// characters shown by its start and its length); returns -1
int cusp_key_fail(char* err, int err_sz, const char* plugin, const char* key, const char* value,
                  const char* why);

// Parse and validate every key of the table for instance `instance`, in table order, into the
// fields of obj. 0, or -1 with the refusal in err: the lists set so far stay in obj (the plugin's
// free releases them).
int cusp_keys_parse(void* obj, const cuspKeyTable* table, const mjModel* m, int instance,
                    char* err, int err_sz);

// The key table as a Markdown table (mjcf/README.md); returns its length (as snprintf)
int cusp_keys_markdown(char* out, int out_sz, const cuspKey* keys);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CONFIG_KEYS_H_
