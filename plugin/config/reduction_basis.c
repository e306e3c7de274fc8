// Contact-space basis file (see reduction_basis.h). Read at load time only.
#include "config/reduction_basis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cusp_reduction_basis_free(cuspReductionBasis* rb) {
  free(rb->pair);
  free(rb->B);
  memset(rb, 0, sizeof(*rb));
}

int cusp_reduction_basis_copy(cuspReductionBasis* dst, const cuspReductionBasis* src) {
  memset(dst, 0, sizeof(*dst));
  if (!src->npair) return 0;
  dst->pair = (int*)malloc(2 * (size_t)src->npair * sizeof(int));
  dst->B = (mjtNum*)malloc((size_t)src->npair * src->k * sizeof(mjtNum));
  if (!dst->pair || !dst->B) {
    cusp_reduction_basis_free(dst);
    return -1;
  }
  memcpy(dst->pair, src->pair, 2 * (size_t)src->npair * sizeof(int));
  memcpy(dst->B, src->B, (size_t)src->npair * src->k * sizeof(mjtNum));
  dst->npair = src->npair;
  dst->k = src->k;
  return 0;
}

// next line that is neither blank nor a comment into buf; 0 at end of file
static int next_line(char* buf, int size, FILE* f, int* lineno) {
  while (fgets(buf, size, f)) {
    (*lineno)++;
    char* s = buf;
    while (*s == ' ' || *s == '\t') s++;
    if (*s && *s != '#' && *s != '\n' && *s != '\r') return 1;
  }
  return 0;
}

static int pair_less(const int* a, const int* b) {
  return a[0] != b[0] ? a[0] < b[0] : a[1] < b[1];
}

int cusp_reduction_basis_load(cuspReductionBasis* rb, const char* path, const mjModel* m, char* why,
                              int why_sz) {
  memset(rb, 0, sizeof(*rb));
  FILE* f = fopen(path, "r");
  if (!f) {
    snprintf(why, why_sz, "cannot open the basis file; give its path, absolute or relative to the "
             "working directory");
    return -1;
  }
  int lineno = 0, rc = -1;
  size_t cap = 4096;
  char* line = NULL;
  int npair = 0, k = 0;
  // a row holds two names and k numbers: the line buffer grows with k (read once at load)
  line = (char*)malloc(cap);
  if (!line) {
    snprintf(why, why_sz, "out of memory");
    goto done;
  }
  if (!next_line(line, (int)cap, f, &lineno) ||
      sscanf(line, "cusp-reduction-basis %d %d", &npair, &k) != 2 || npair < 1 || k < 1) {
    snprintf(why, why_sz, "line %d: expected 'cusp-reduction-basis NPAIR K' with NPAIR, K >= 1",
             lineno);
    goto done;
  }
  size_t need = (size_t)k * 32 + 512;
  if (need > cap) {
    char* grown = (char*)realloc(line, need);
    if (!grown) {
      snprintf(why, why_sz, "out of memory");
      goto done;
    }
    line = grown;
    cap = need;
  }
  rb->pair = (int*)malloc(2 * (size_t)npair * sizeof(int));
  rb->B = (mjtNum*)malloc((size_t)npair * k * sizeof(mjtNum));
  if (!rb->pair || !rb->B) {
    snprintf(why, why_sz, "out of memory");
    goto done;
  }
  for (int p = 0; p < npair; p++) {
    if (!next_line(line, (int)cap, f, &lineno)) {
      snprintf(why, why_sz, "ends after %d of %d pair rows", p, npair);
      goto done;
    }
    char* save = NULL;
    char* tok[2] = {strtok_r(line, " \t\r\n", &save), NULL};
    tok[1] = tok[0] ? strtok_r(NULL, " \t\r\n", &save) : NULL;
    for (int s = 0; s < 2; s++) {
      int g = tok[s] ? mj_name2id(m, mjOBJ_GEOM, tok[s]) : -1;
      if (g < 0) {
        snprintf(why, why_sz, "line %d: '%s' is not a geom of the model; write the basis for this "
                 "model (python -m cusp reduction basis)", lineno,
                 tok[s] ? tok[s] : "");
        goto done;
      }
      rb->pair[2 * p + s] = g;
    }
    if (rb->pair[2 * p] >
        rb->pair[2 * p + 1]) {  // stored in ascending order: either order finds it
      int t = rb->pair[2 * p];
      rb->pair[2 * p] = rb->pair[2 * p + 1];
      rb->pair[2 * p + 1] = t;
    }
    for (int j = 0; j < k; j++) {
      char* t = strtok_r(NULL, " \t\r\n", &save);
      char* end = NULL;
      double v = t ? strtod(t, &end) : NAN;
      if (!t || *end || !isfinite(v) || v < 0) {
        snprintf(why, why_sz, "line %d: value %d is %s'%s' (expected a finite number >= 0)", lineno,
                 j + 1, t ? "" : "missing ", t ? t : "");
        goto done;
      }
      rb->B[(size_t)p * k + j] = v;
    }
    if (strtok_r(NULL, " \t\r\n", &save)) {
      snprintf(why, why_sz, "line %d: more than %d values", lineno, k);
      goto done;
    }
  }
  rb->npair = npair;
  rb->k = k;
  // insertion sort of the rows by pair (load time; the file is usually sorted already)
  mjtNum* row = (mjtNum*)malloc((size_t)k * sizeof(mjtNum));
  if (!row) {
    snprintf(why, why_sz, "out of memory");
    goto done;
  }
  for (int i = 1; i < npair; i++) {
    int key[2] = {rb->pair[2 * i], rb->pair[2 * i + 1]};
    memcpy(row, rb->B + (size_t)i * k, (size_t)k * sizeof(mjtNum));
    int j = i - 1;
    while (j >= 0 && pair_less(key, rb->pair + 2 * j)) {
      rb->pair[2 * (j + 1)] = rb->pair[2 * j];
      rb->pair[2 * (j + 1) + 1] = rb->pair[2 * j + 1];
      memcpy(rb->B + (size_t)(j + 1) * k, rb->B + (size_t)j * k, (size_t)k * sizeof(mjtNum));
      j--;
    }
    rb->pair[2 * (j + 1)] = key[0];
    rb->pair[2 * (j + 1) + 1] = key[1];
    memcpy(rb->B + (size_t)(j + 1) * k, row, (size_t)k * sizeof(mjtNum));
  }
  free(row);
  for (int i = 1; i < npair; i++) {
    if (rb->pair[2 * i] == rb->pair[2 * i - 2] && rb->pair[2 * i + 1] == rb->pair[2 * i - 1]) {
      snprintf(why, why_sz, "pair '%s' '%s' is listed twice",
               mj_id2name(m, mjOBJ_GEOM, rb->pair[2 * i]),
               mj_id2name(m, mjOBJ_GEOM, rb->pair[2 * i + 1]));
      goto done;
    }
  }
  rc = 0;
done:
  free(line);
  fclose(f);
  if (rc) cusp_reduction_basis_free(rb);
  return rc;
}

int cusp_reduction_basis_row(const cuspReductionBasis* rb, int g1, int g2) {
  int key[2] = {g1 < g2 ? g1 : g2, g1 < g2 ? g2 : g1};
  int lo = 0, hi = rb->npair - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    const int* p = rb->pair + 2 * mid;
    if (p[0] == key[0] && p[1] == key[1]) return mid;
    if (pair_less(p, key))
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}
