// Fuzz target: the plugin's config parser through its init. The bytes are read as lines
// "<key index byte><value bytes>\n": each line becomes <config key="K" value="V"/> with K the
// config-table key chosen by the first byte and V the rest (XML-escaped), in a scene that has a
// registered disk, a patch body and names the values may hit. The model is compiled, an mjData
// made (plugin init parses and validates the config), and stepped 3 times.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "config/config.h"
#include "targets.h"

static void quiet_warning(const char* msg) { (void)msg; }

static void append(char** s, size_t* len, size_t* cap, const char* text, size_t n) {
  if (*len + n + 1 > *cap) {
    size_t want = 2 * (*len + n + 1);
    char* t = (char*)realloc(*s, want);
    if (!t) abort();
    *s = t;
    *cap = want;
  }
  memcpy(*s + *len, text, n);
  *len += n;
  (*s)[*len] = 0;
}

static void append_escaped(char** s, size_t* len, size_t* cap, const uint8_t* v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = (char)v[i];
    if (c == '&') append(s, len, cap, "&amp;", 5);
    else if (c == '<') append(s, len, cap, "&lt;", 4);
    else if (c == '>') append(s, len, cap, "&gt;", 4);
    else if (c == '"') append(s, len, cap, "&quot;", 6);
    else if (c == 0 || (unsigned char)c >= 0x80) append(s, len, cap, "?", 1);
    else append(s, len, cap, &c, 1);
  }
}

static const char* kHead =
    "<mujoco><option timestep=\"0.002\"/>"
    "<extension><plugin plugin=\"cusp.contact\"><instance name=\"c\">";
static const char* kTail =
    "</instance></plugin></extension><worldbody>"
    "<geom name=\"floor\" type=\"plane\" size=\"1 1 .1\"/>"
    "<body name=\"arm\" pos=\"0 0 .011\"><freejoint/>"
    "<geom name=\"d\" type=\"cylinder\" size=\".05 .01\" contype=\"0\" conaffinity=\"0\"/>"
    "<geom name=\"d2\" type=\"cylinder\" size=\".05 .01\" pos=\"0 0 .03\" contype=\"0\" "
    "conaffinity=\"0\"/></body>"
    "<body name=\"block\" pos=\".3 0 .05\"><freejoint/>"
    "<geom name=\"box\" type=\"box\" size=\".05 .05 .05\" contype=\"0\" conaffinity=\"0\"/></body>"
    "<body name=\"ball\" pos=\"-.3 0 .05\"><freejoint/>"
    "<geom name=\"sphere\" type=\"sphere\" size=\".05\"/></body>"
    "</worldbody></mujoco>";

int cusp_fuzz_config(const uint8_t* data, size_t size) {
  int slot = -1;
  if (!mjp_getPlugin("cusp.contact", &slot)) abort();  // libcusp.so not loaded: a harness bug
  mju_user_warning = quiet_warning;
  int nkey = cusp_key_count(cusp_config_keys);
  char* xml = NULL;
  size_t len = 0, cap = 0;
  append(&xml, &len, &cap, kHead, strlen(kHead));
  int used[128] = {0};
  size_t i = 0;
  while (i < size) {
    int k = data[i++] % nkey;
    size_t start = i;
    while (i < size && data[i] != '\n') i++;
    if (!used[k]) {  // MuJoCo refuses a repeated key; keep the first
      used[k] = 1;
      const char* key = cusp_config_keys[k].key;
      append(&xml, &len, &cap, "<config key=\"", 13);
      append(&xml, &len, &cap, key, strlen(key));
      append(&xml, &len, &cap, "\" value=\"", 9);
      append_escaped(&xml, &len, &cap, data + start, i - start);
      append(&xml, &len, &cap, "\"/>", 3);
    }
    i++;  // the newline
  }
  append(&xml, &len, &cap, kTail, strlen(kTail));

  char err[1024] = "";
  int loaded = 0;
  mjSpec* spec = mj_parseXMLString(xml, NULL, err, sizeof(err));
  if (spec) {
    mjModel* m = mj_compile(spec, NULL);
    if (m) {
      mjData* d = mj_makeData(m);
      if (d) {
        loaded = 1;
        for (int s = 0; s < 3; s++) mj_step(m, d);
        mj_deleteData(d);
      }
      mj_deleteModel(m);
    }
    mj_deleteSpec(spec);
  }
  free(xml);
  mju_user_warning = NULL;
  return loaded;
}
