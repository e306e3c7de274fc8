// The key-table parser of every plugin of the library (keys.h).
#include "config/keys.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cusp_key_count(const cuspKey* keys) {
  int n = 0;
  while (keys[n].key) n++;
  return n;
}

const cuspKey* cusp_key_named(const cuspKey* keys, const char* name) {
  for (const cuspKey* k = keys; k->key; k++) {
    if (!strcmp(k->key, name)) return k;
  }
  return NULL;
}

int cusp_key_words(const char* s) {
  int n = 0, in = 0;
  for (; s && *s; s++) {
    if (isspace((unsigned char)*s)) {
      in = 0;
    } else if (!in) {
      in = 1;
      n++;
    }
  }
  return n;
}

int cusp_key_fail(char* err, int err_sz, const char* plugin, const char* key, const char* value,
                  const char* why) {
  size_t len = strlen(value);
  if (len > 200) {
    snprintf(err, err_sz, "%s: config key '%s' has value '%.120s...' (%zu characters): %s", plugin,
             key, value, len, why);
  } else {
    snprintf(err, err_sz, "%s: config key '%s' has value '%s': %s", plugin, key, value, why);
  }
  return -1;
}

//---------------------------------- one value ------------------------------------------------------

// what the parse of one key needs to refuse it
typedef struct keyContext_ {
  const cuspKeyTable* table;
  const cuspKey* key;
  const char* value;
  char* err;
  int err_sz;
} keyContext;

static int refuse(const keyContext* c, const char* why) {
  return cusp_key_fail(c->err, c->err_sz, c->table->plugin, c->key->key, c->value, why);
}

static int is_blank(const char* s) {
  while (*s && isspace((unsigned char)*s)) s++;
  return *s == 0;
}

// a finite number and nothing after it but blanks
static int parse_real(double* out, const char* s) {
  char* end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno == ERANGE || !is_blank(end) || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

static const char* object_word(mjtObj obj) {
  return obj == mjOBJ_SITE ? "site" : obj == mjOBJ_GEOM ? "geom" : "body";
}

// whitespace-separated names of objects of type obj -> ids (allocated in *ids, *n of them);
// `single`: exactly one name
static int parse_names(int** ids, int* n, const keyContext* c, const mjModel* m, mjtObj obj,
                       int single) {
  int words = cusp_key_words(c->value);
  if (single && words != 1) {
    return refuse(c, words ? "expected one name" : "required: name an object of the model");
  }
  *n = 0;
  *ids = words ? (int*)calloc(words, sizeof(int)) : NULL;
  if (words && !*ids) return refuse(c, "out of memory");
  const char* s = c->value;
  char why[400];
  for (int i = 0; i < words; i++) {
    while (isspace((unsigned char)*s)) s++;
    char name[256];
    int len = 0;
    while (s[len] && !isspace((unsigned char)s[len])) len++;
    if (len >= (int)sizeof(name)) {
      return refuse(c, "a name longer than 255 characters; shorten it");
    }
    memcpy(name, s, len);
    name[len] = 0;
    s += len;
    int id = mj_name2id(m, obj, name);
    if (id < 0) {
      snprintf(why, sizeof(why), "no %s named '%s' in the model; name an existing %s (names "
               "are case-sensitive)", object_word(obj), name, object_word(obj));
      return refuse(c, why);
    }
    for (int j = 0; j < i; j++) {
      if ((*ids)[j] == id) {
        snprintf(why, sizeof(why), "'%s' is listed twice; list it once", name);
        return refuse(c, why);
      }
    }
    (*ids)[(*n)++] = id;
  }
  return 0;
}

// space-separated finite numbers in [min, max] -> *reals (allocated, *n of them)
static int parse_reals(mjtNum** reals, int* n, const keyContext* c) {
  const cuspKey* k = c->key;
  int words = cusp_key_words(c->value);
  *n = 0;
  *reals = words ? (mjtNum*)calloc(words, sizeof(mjtNum)) : NULL;
  if (words && !*reals) return refuse(c, "out of memory");
  const char* s = c->value;
  for (int i = 0; i < words; i++) {
    char* end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(x) || (*end && !isspace((unsigned char)*end))) {
      return refuse(c, "not a list of numbers");
    }
    if (x < k->min || x > k->max) {
      char why[256];
      snprintf(why, sizeof(why), "%g out of range [%g, %g]; write values within it", x, k->min,
               k->max);
      return refuse(c, why);
    }
    (*reals)[(*n)++] = x;
    s = end;
  }
  return 0;
}

// the position of value in the '|'-separated choices, -1 if none
static int choice_index(const char* choices, const char* value) {
  size_t len = strlen(value);
  int index = 0;
  for (const char* c = choices; c && *c; index++) {
    const char* bar = strchr(c, '|');
    size_t clen = bar ? (size_t)(bar - c) : strlen(c);
    if (clen == len && !strncmp(c, value, len)) return index;
    c = bar ? bar + 1 : NULL;
  }
  return -1;
}

// the size of the field a key of type t sets (0: none, its check reads it)
static size_t field_size(const cuspKey* k) {
  switch (k->type) {
    case CUSP_KEY_REAL: return k->size == sizeof(int) ? sizeof(int) : sizeof(mjtNum);
    case CUSP_KEY_INT:
    case CUSP_KEY_BOOL:
    case CUSP_KEY_CHOICE:
    case CUSP_KEY_SITE:
    case CUSP_KEY_BODY: return sizeof(int);
    case CUSP_KEY_GEOMS:
    case CUSP_KEY_BODIES:
    case CUSP_KEY_SITES: return sizeof(int*);
    case CUSP_KEY_REALS: return sizeof(mjtNum*);
    case CUSP_KEY_BODY_PARAMS:
    case CUSP_KEY_FILE: return 0;
  }
  return 0;
}

// parse one key's value into its field of obj
static int parse_value(char* obj, const keyContext* c, const mjModel* m) {
  const cuspKey* k = c->key;
  const char* value = c->value;
  if (k->size != field_size(k) || (!k->size && !k->check)) {
    return refuse(c, "internal: the key table gives no field of its type for this key");
  }
  char* field = obj + k->field;
  int* count = (int*)(obj + k->count);
  char why[256];
  double real;
  int index;
  switch (k->type) {
    case CUSP_KEY_REAL:
      if (parse_real(&real, value)) {
        snprintf(why, sizeof(why), "not a number; write a number in [%g, %g]", k->min, k->max);
        return refuse(c, why);
      }
      if (real < k->min || real > k->max) {
        snprintf(why, sizeof(why), "out of range [%g, %g]; write a value within it", k->min,
                 k->max);
        return refuse(c, why);
      }
      if (k->size == sizeof(int)) {
        *(int*)field = (int)real;
      } else {
        *(mjtNum*)field = real;
      }
      return 0;
    case CUSP_KEY_INT: {
      char* end;
      errno = 0;
      long v = strtol(value, &end, 10);
      if (end == value || errno || !is_blank(end)) {
        snprintf(why, sizeof(why), "not an integer; write an integer in [%g, %g]", k->min,
                 k->max);
        return refuse(c, why);
      }
      if (v < k->min || v > k->max) {
        snprintf(why, sizeof(why), "out of range [%g, %g]; write a value within it", k->min,
                 k->max);
        return refuse(c, why);
      }
      *(int*)field = (int)v;
      return 0;
    }
    case CUSP_KEY_BOOL:
      if (!strcmp(value, "true") || !strcmp(value, "1")) {
        *(int*)field = 1;
      } else if (!strcmp(value, "false") || !strcmp(value, "0")) {
        *(int*)field = 0;
      } else {
        return refuse(c, "expected true or false; write one of them");
      }
      return 0;
    case CUSP_KEY_CHOICE:
      index = choice_index(k->choices, value);
      if (index < 0) {
        snprintf(why, sizeof(why), "expected one of %s; write one of them", k->choices);
        return refuse(c, why);
      }
      *(int*)field = index;
      return 0;
    case CUSP_KEY_GEOMS: return parse_names((int**)field, count, c, m, mjOBJ_GEOM, 0);
    case CUSP_KEY_BODIES: return parse_names((int**)field, count, c, m, mjOBJ_BODY, 0);
    case CUSP_KEY_SITES: return parse_names((int**)field, count, c, m, mjOBJ_SITE, 0);
    case CUSP_KEY_SITE:
    case CUSP_KEY_BODY: {
      int* ids = NULL;
      int n = 0;
      int rc = parse_names(&ids, &n, c, m, k->type == CUSP_KEY_SITE ? mjOBJ_SITE : mjOBJ_BODY, 1);
      if (!rc) *(int*)field = ids[0];
      free(ids);
      return rc;
    }
    case CUSP_KEY_REALS: return parse_reals((mjtNum**)field, count, c);
    case CUSP_KEY_BODY_PARAMS:
    case CUSP_KEY_FILE: return 0;  // the key's check reads them
  }
  return refuse(c, "internal: unknown key type");
}

int cusp_keys_parse(void* obj, const cuspKeyTable* table, const mjModel* m, int instance,
                    char* err, int err_sz) {
  for (const cuspKey* key = table->keys; key->key; key++) {
    const char* value;
    if (table->value) {
      value = table->value(m, instance, key);
    } else {
      value = mj_getPluginConfig(m, instance, key->key);
      if (!value || !value[0]) value = key->default_value;
    }
    keyContext c = {table, key, value, err, err_sz};
    if (parse_value((char*)obj, &c, m)) return -1;
    if (key->check && key->check(obj, m, instance, key, value, err, err_sz)) return -1;
  }
  return 0;
}

//---------------------------------- documentation --------------------------------------------------

static const char* type_name(cuspKeyType t) {
  switch (t) {
    case CUSP_KEY_REAL: return "real";
    case CUSP_KEY_INT: return "integer";
    case CUSP_KEY_BOOL: return "bool";
    case CUSP_KEY_CHOICE: return "choice";
    case CUSP_KEY_GEOMS: return "geom names";
    case CUSP_KEY_BODIES: return "body names";
    case CUSP_KEY_BODY_PARAMS: return "body:numbers";
    case CUSP_KEY_FILE: return "file";
    case CUSP_KEY_SITES: return "site names";
    case CUSP_KEY_SITE: return "site name";
    case CUSP_KEY_BODY: return "body name";
    case CUSP_KEY_REALS: return "reals";
  }
  return "?";
}

int cusp_keys_markdown(char* out, int out_sz, const cuspKey* keys) {
  int len = snprintf(out, out_sz, "| key | type | unit | default | range | meaning |\n"
                                  "| --- | --- | --- | --- | --- | --- |\n");
  for (const cuspKey* k = keys; k->key; k++) {
    char range[128] = "-";
    if (k->type == CUSP_KEY_REAL || k->type == CUSP_KEY_INT || k->type == CUSP_KEY_REALS) {
      snprintf(range, sizeof(range), "[%g, %g]", k->min, k->max);
    } else if (k->type == CUSP_KEY_CHOICE) {
      snprintf(range, sizeof(range), "%s", k->choices);
      for (char* c = range; *c; c++) {
        if (*c == '|') *c = '/';  // '|' would split the Markdown cell
      }
    } else if (k->type == CUSP_KEY_BOOL) {
      snprintf(range, sizeof(range), "true, false");
    } else if (k->type == CUSP_KEY_BODY_PARAMS) {
      snprintf(range, sizeof(range), "0 or [%g, %g]", k->min, k->max);
    }
    const char* shown = k->default_value[0] ? k->default_value
                        : k->optional      ? "(empty)"
                                           : "(required)";
    len += snprintf(out + (len < out_sz ? len : out_sz), len < out_sz ? out_sz - len : 0,
                    "| `%s` | %s | %s | `%s` | %s | %s |\n", k->key, type_name(k->type), k->unit,
                    shown, range, k->doc);
  }
  return len;
}
