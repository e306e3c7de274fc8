// Controller plugin configuration: parsing and validation of a key table (control_config.h).
#include "config/control_config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cusp_control_nkey(const cuspControlKey* keys) {
  int n = 0;
  while (keys[n].key) n++;
  return n;
}

int cusp_control_fail(char* err, int err_sz, const char* plugin, const char* key,
                      const char* value, const char* why) {
  size_t len = strlen(value);
  if (len > 200) {
    snprintf(err, err_sz, "%s: config key '%s' has value '%.120s...' (%zu characters): %s", plugin,
             key, value, len, why);
  } else {
    snprintf(err, err_sz, "%s: config key '%s' has value '%s': %s", plugin, key, value, why);
  }
  return -1;
}

static int is_blank(const char* s) {
  while (*s && isspace((unsigned char)*s)) s++;
  return *s == 0;
}

static int count_words(const char* s) {
  int n = 0, in = 0;
  for (; *s; s++) {
    if (isspace((unsigned char)*s)) {
      in = 0;
    } else if (!in) {
      in = 1;
      n++;
    }
  }
  return n;
}

static const char* object_word(mjtObj obj) {
  return obj == mjOBJ_SITE ? "site" : obj == mjOBJ_GEOM ? "geom" : "body";
}

// whitespace-separated names of objects of type obj -> ids (allocated in v->ids)
static int parse_names(cuspControlValue* v, const mjModel* m, mjtObj obj, int single,
                       const char* plugin, const char* key, const char* value, char* err,
                       int err_sz) {
  int n = count_words(value);
  if (single && n != 1) {
    return cusp_control_fail(err, err_sz, plugin, key, value,
                             n ? "expected one name" : "required: name an object of the model");
  }
  v->nid = 0;
  v->ids = n ? (int*)calloc(n, sizeof(int)) : NULL;
  if (n && !v->ids) return cusp_control_fail(err, err_sz, plugin, key, value, "out of memory");
  const char* s = value;
  for (int i = 0; i < n; i++) {
    while (isspace((unsigned char)*s)) s++;
    char name[256];
    int len = 0;
    while (s[len] && !isspace((unsigned char)s[len])) len++;
    if (len >= (int)sizeof(name)) {
      return cusp_control_fail(err, err_sz, plugin, key, value, "name too long");
    }
    memcpy(name, s, len);
    name[len] = 0;
    s += len;
    int id = mj_name2id(m, obj, name);
    char why[320];
    if (id < 0) {
      snprintf(why, sizeof(why), "no %s named '%s' in the model", object_word(obj), name);
      return cusp_control_fail(err, err_sz, plugin, key, value, why);
    }
    for (int j = 0; j < i; j++) {
      if (v->ids[j] == id) {
        snprintf(why, sizeof(why), "'%s' is listed twice", name);
        return cusp_control_fail(err, err_sz, plugin, key, value, why);
      }
    }
    v->ids[v->nid++] = id;
  }
  return 0;
}

static int parse_one(cuspControlValue* v, const cuspControlKey* k, const char* plugin,
                     const mjModel* m, const char* value, char* err, int err_sz) {
  char why[256];
  switch (k->type) {
    case CUSP_CONTROL_REAL: {
      char* end;
      errno = 0;
      double x = strtod(value, &end);
      if (end == value || errno == ERANGE || !is_blank(end) || !isfinite(x)) {
        return cusp_control_fail(err, err_sz, plugin, k->key, value,
                                 "not a number; write a decimal number");
      }
      if (x < k->min || x > k->max) {
        snprintf(why, sizeof(why), "out of range [%g, %g]; write a value within it", k->min,
                 k->max);
        return cusp_control_fail(err, err_sz, plugin, k->key, value, why);
      }
      v->real = x;
      return 0;
    }
    case CUSP_CONTROL_CHOICE: {
      size_t len = strlen(value);
      int index = 0;
      for (const char* c = k->choices; c && *c; index++) {
        const char* bar = strchr(c, '|');
        size_t clen = bar ? (size_t)(bar - c) : strlen(c);
        if (clen == len && !strncmp(c, value, len)) {
          v->choice = index;
          return 0;
        }
        c = bar ? bar + 1 : NULL;
      }
      snprintf(why, sizeof(why), "expected one of %s; write one of them", k->choices);
      return cusp_control_fail(err, err_sz, plugin, k->key, value, why);
    }
    case CUSP_CONTROL_SITES:
      return parse_names(v, m, mjOBJ_SITE, 0, plugin, k->key, value, err, err_sz);
    case CUSP_CONTROL_GEOMS:
      return parse_names(v, m, mjOBJ_GEOM, 0, plugin, k->key, value, err, err_sz);
    case CUSP_CONTROL_SITE:
      return parse_names(v, m, mjOBJ_SITE, 1, plugin, k->key, value, err, err_sz);
    case CUSP_CONTROL_BODY:
      return parse_names(v, m, mjOBJ_BODY, 1, plugin, k->key, value, err, err_sz);
    case CUSP_CONTROL_BODIES:
      return parse_names(v, m, mjOBJ_BODY, 0, plugin, k->key, value, err, err_sz);
    case CUSP_CONTROL_REALS: {
      int n = count_words(value);
      v->nreal = 0;
      v->reals = n ? (mjtNum*)calloc(n, sizeof(mjtNum)) : NULL;
      if (n && !v->reals) {
        return cusp_control_fail(err, err_sz, plugin, k->key, value, "out of memory");
      }
      const char* c = value;
      for (int i = 0; i < n; i++) {
        char* end;
        errno = 0;
        double x = strtod(c, &end);
        if (end == c || errno == ERANGE || !isfinite(x) ||
            (*end && !isspace((unsigned char)*end))) {
          return cusp_control_fail(err, err_sz, plugin, k->key, value, "not a list of numbers");
        }
        if (x < k->min || x > k->max) {
          snprintf(why, sizeof(why), "%g out of range [%g, %g]; write values within it", x,
                   k->min, k->max);
          return cusp_control_fail(err, err_sz, plugin, k->key, value, why);
        }
        v->reals[v->nreal++] = x;
        c = end;
      }
      return 0;
    }
  }
  return cusp_control_fail(err, err_sz, plugin, k->key, value, "internal: unknown key type");
}

void cusp_control_values_free(cuspControlValue* values, int nkey) {
  for (int k = 0; k < nkey; k++) {
    free(values[k].ids);
    values[k].ids = NULL;
    values[k].nid = 0;
    free(values[k].reals);
    values[k].reals = NULL;
    values[k].nreal = 0;
  }
}

int cusp_control_parse(cuspControlValue* values, const cuspControlKey* keys, const char* plugin,
                       const mjModel* m, int instance, char* err, int err_sz) {
  int nkey = cusp_control_nkey(keys);
  memset(values, 0, (size_t)nkey * sizeof(*values));
  for (int k = 0; k < nkey; k++) {
    const char* value = mj_getPluginConfig(m, instance, keys[k].key);
    if (!value || !value[0]) value = keys[k].default_value;
    if (parse_one(&values[k], &keys[k], plugin, m, value, err, err_sz)) {
      cusp_control_values_free(values, nkey);
      return -1;
    }
  }
  return 0;
}

static const char* type_name(cuspControlKeyType t) {
  switch (t) {
    case CUSP_CONTROL_REAL: return "real";
    case CUSP_CONTROL_CHOICE: return "choice";
    case CUSP_CONTROL_SITES: return "site names";
    case CUSP_CONTROL_GEOMS: return "geom names";
    case CUSP_CONTROL_SITE: return "site name";
    case CUSP_CONTROL_BODY: return "body name";
    case CUSP_CONTROL_BODIES: return "body names";
    case CUSP_CONTROL_REALS: return "reals";
  }
  return "?";
}

int cusp_control_markdown(char* out, int out_sz, const cuspControlKey* keys) {
  int len = snprintf(out, out_sz, "| key | type | unit | default | range | meaning |\n"
                                  "| --- | --- | --- | --- | --- | --- |\n");
  for (const cuspControlKey* k = keys; k->key; k++) {
    char range[128] = "-";
    if (k->type == CUSP_CONTROL_REAL || k->type == CUSP_CONTROL_REALS) {
      snprintf(range, sizeof(range), "[%g, %g]", k->min, k->max);
    } else if (k->type == CUSP_CONTROL_CHOICE) {
      snprintf(range, sizeof(range), "%s", k->choices);
      for (char* c = range; *c; c++) {
        if (*c == '|') *c = '/';  // '|' would split the Markdown cell
      }
    }
    len += snprintf(out + (len < out_sz ? len : out_sz), len < out_sz ? out_sz - len : 0,
                    "| `%s` | %s | %s | `%s` | %s | %s |\n", k->key, type_name(k->type), k->unit,
                    k->default_value[0] ? k->default_value : k->optional ? "(empty)" : "(required)", range, k->doc);
  }
  return len;
}
