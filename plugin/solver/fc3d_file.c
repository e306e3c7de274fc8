// Siconos FC3D text format reader (layout in fc3d_file.h).
#include "solver/fc3d_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//---------------------------------- tokens ------------------------------------------------------

typedef struct Lexer_ {
  const char* s;     // next character
  const char* name;  // file name for messages
  int line;          // line of s (1-based)
  char* err;
  size_t errlen;
} Lexer;

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static void skip_space(Lexer* lx) {
  while (*lx->s && is_space(*lx->s)) {
    if (*lx->s == '\n') lx->line++;
    lx->s++;
  }
}

// next whitespace-separated number (finite) into *x; what: the field, for the message
static int next_number(double* x, Lexer* lx, const char* what) {
  skip_space(lx);
  if (!*lx->s) {
    snprintf(lx->err, lx->errlen, "%s:%d: unexpected end of file while reading %s", lx->name,
             lx->line, what);
    return -1;
  }
  char* end;
  double v = strtod(lx->s, &end);
  if (end == lx->s || (*end && !is_space(*end))) {
    char tok[24];
    int k = 0;
    while (lx->s[k] && !is_space(lx->s[k]) && k < 20) {
      tok[k] = lx->s[k];
      k++;
    }
    tok[k] = 0;
    snprintf(lx->err, lx->errlen, "%s:%d: expected a number for %s, got '%s'", lx->name,
             lx->line, what, tok);
    return -1;
  }
  if (!isfinite(v)) {
    snprintf(lx->err, lx->errlen, "%s:%d: non-finite value for %s", lx->name, lx->line, what);
    return -1;
  }
  lx->s = end;
  *x = v;
  return 0;
}

// next integer in [lo, hi]
static int next_int(int* v, Lexer* lx, const char* what, long lo, long hi) {
  double x;
  if (next_number(&x, lx, what)) return -1;
  if (x != floor(x) || x < (double)lo || x > (double)hi) {
    snprintf(lx->err, lx->errlen, "%s:%d: %s must be an integer in [%ld, %ld], got %.17g",
             lx->name, lx->line, what, lo, hi, x);
    return -1;
  }
  *v = (int)x;
  return 0;
}

// numbers left in the text, counted up to `want` (a cheap bound before allocating for them)
static size_t count_numbers(const char* s, size_t want) {
  size_t count = 0;
  while (*s && count < want) {
    while (*s && is_space(*s)) s++;
    if (!*s) break;
    count++;
    while (*s && !is_space(*s)) s++;
  }
  return count;
}

//---------------------------------- the problem -------------------------------------------------

void cusp_fc3d_file_free(cuspFc3dFileData* d) {
  if (!d) return;
  free(d->W);
  free(d->q);
  free(d->mu);
  memset(d, 0, sizeof(*d));
}

#define FAIL(...)                        \
  do {                                   \
    snprintf(err, errlen, __VA_ARGS__);  \
    goto fail;                           \
  } while (0)

// the sparse-block matrix after its storage and size lines, into out->W (n x n, zeroed)
static int parse_sparse_block(cuspFc3dFileData* out, Lexer* lx, int n) {
  char* err = lx->err;
  size_t errlen = lx->errlen;
  const char* name = lx->name;
  int* ints = NULL;
  int nb, nr, ncb, f1, f2;
  if (next_int(&nb, lx, "block count", 0, (long)n * n)) return -1;
  out->nblocks = nb;
  if (nb == 0) return 0;  // Siconos writes nothing more for an empty matrix: W = 0
  if (next_int(&nr, lx, "row block count", 1, n)) return -1;
  if (next_int(&ncb, lx, "column block count", 1, n)) return -1;
  if (nb > nr * ncb) {
    snprintf(err, errlen, "%s:%d: %d blocks do not fit a %d x %d block grid", name, lx->line, nb,
             nr, ncb);
    return -1;
  }
  // each block takes at least its number and one entry
  if (count_numbers(lx->s, (size_t)nr + ncb + 2 + nr + 1 + 3 * (size_t)nb) <
      (size_t)nr + ncb + 2 + nr + 1 + 3 * (size_t)nb) {
    snprintf(err, errlen, "%s:%d: file too short for %d blocks", name, lx->line, nb);
    return -1;
  }
  ints = (int*)calloc((size_t)nr + ncb + nr + 1 + nb + ncb, sizeof(int));
  if (!ints) FAIL("%s: out of memory", name);
  int* rsz = ints;             // (nr) cumulative row block sizes
  int* csz = rsz + nr;         // (ncb) cumulative column block sizes
  int* rptr = csz + ncb;       // (nr + 1) first block of each block row
  int* cidx = rptr + nr + 1;   // (nb) block column of each block
  int* seen = cidx + nb;       // (ncb) last block row + 1 that used each block column
  for (int k = 0; k < nr; k++) {
    if (next_int(&rsz[k], lx, "cumulative row block size", k ? rsz[k - 1] + 1 : 1, n)) goto fail;
  }
  if (rsz[nr - 1] != n) FAIL("%s:%d: row blocks cover %d rows, not %d", name, lx->line, rsz[nr - 1], n);
  for (int k = 0; k < ncb; k++) {
    if (next_int(&csz[k], lx, "cumulative column block size", k ? csz[k - 1] + 1 : 1, n)) {
      goto fail;
    }
  }
  if (csz[ncb - 1] != n) {
    FAIL("%s:%d: column blocks cover %d columns, not %d", name, lx->line, csz[ncb - 1], n);
  }
  if (next_int(&f1, lx, "row pointer count", nr + 1, nr + 1)) goto fail;
  if (next_int(&f2, lx, "block index count", nb, nb)) goto fail;
  for (int k = 0; k <= nr; k++) {
    if (next_int(&rptr[k], lx, "block row pointer", k ? rptr[k - 1] : 0, k ? nb : 0)) goto fail;
  }
  if (rptr[nr] != nb) FAIL("%s:%d: block row pointers end at %d, not %d", name, lx->line, rptr[nr], nb);
  for (int rb = 0; rb < nr; rb++) {
    for (int k = rptr[rb]; k < rptr[rb + 1]; k++) {
      if (next_int(&cidx[k], lx, "block column index", 0, ncb - 1)) goto fail;
      if (seen[cidx[k]] == rb + 1) {
        FAIL("%s:%d: block (%d, %d) stored twice", name, lx->line, rb, cidx[k]);
      }
      seen[cidx[k]] = rb + 1;
    }
  }
  for (int rb = 0; rb < nr; rb++) {
    int r0 = rb ? rsz[rb - 1] : 0, r1 = rsz[rb];
    for (int k = rptr[rb]; k < rptr[rb + 1]; k++) {
      int label;
      if (next_int(&label, lx, "block number", 0, nb - 1)) goto fail;
      if (label != k) FAIL("%s:%d: block number %d where block %d was expected", name, lx->line, label, k);
      int cb = cidx[k];
      int c0 = cb ? csz[cb - 1] : 0, c1 = csz[cb];
      for (int j = c0; j < c1; j++) {
        for (int i = r0; i < r1; i++) {
          if (next_number(&out->W[i + (size_t)j * n], lx, "a block entry")) goto fail;
        }
      }
    }
  }
  free(ints);
  return 0;
fail:
  free(ints);
  return -1;
}

int cusp_fc3d_file_parse(cuspFc3dFileData* out, char* err, size_t errlen, const char* text,
                         const char* name) {
  Lexer lx = {text, name, 1, err, errlen};
  memset(out, 0, sizeof(*out));
  int dim, nc, storage, s0, s1;
  if (next_int(&dim, &lx, "dimension", 2, 3)) goto fail;
  if (dim != 3) FAIL("%s:%d: dimension %d (2D friction) is not supported, only 3", name, lx.line, dim);
  if (next_int(&nc, &lx, "contact count", 1, CUSP_FC3D_FILE_MAX_CONTACTS)) goto fail;
  int n = 3 * nc;
  if (next_int(&storage, &lx, "storage type of W", 0, 2)) goto fail;
  if (storage == 2) {
    FAIL("%s:%d: storage 2 (compressed sparse W) is not supported, only 0 dense and 1 sparse "
         "block", name, lx.line);
  }
  if (next_int(&s0, &lx, "row count of W", n, n)) goto fail;
  if (next_int(&s1, &lx, "column count of W", n, n)) goto fail;
  // refuse a text too short to hold q, mu (and dense W) before allocating for them
  size_t needed = (size_t)n + nc + (storage == 0 ? (size_t)n * n + 2 : 1);
  if (count_numbers(lx.s, needed) < needed) {
    FAIL("%s:%d: file too short for %d contacts (needs at least %zu more numbers)", name, lx.line,
         nc, needed);
  }
  out->nc = nc;
  out->storage = storage;
  out->W = (mjtNum*)calloc((size_t)n * n, sizeof(mjtNum));
  out->q = (mjtNum*)calloc((size_t)n, sizeof(mjtNum));
  out->mu = (mjtNum*)calloc((size_t)nc, sizeof(mjtNum));
  if (!out->W || !out->q || !out->mu) FAIL("%s: out of memory for %d contacts", name, nc);
  if (storage == 0) {
    if (next_int(&s0, &lx, "row count of W", n, n) ||
        next_int(&s1, &lx, "column count of W", n, n)) {
      goto fail;
    }
    for (size_t k = 0; k < (size_t)n * n; k++) {
      if (next_number(&out->W[k], &lx, "an entry of W")) goto fail;
    }
  } else if (parse_sparse_block(out, &lx, n)) {
    goto fail;
  }
  for (int i = 0; i < n; i++) {
    if (next_number(&out->q[i], &lx, "an entry of q")) goto fail;
  }
  for (int i = 0; i < nc; i++) {
    if (next_number(&out->mu[i], &lx, "a friction coefficient")) goto fail;
    if (out->mu[i] < 0) FAIL("%s:%d: friction coefficient %d is negative (%g)", name, lx.line, i, out->mu[i]);
  }
  return 0;  // whatever follows mu (solver notes of some files) is not part of the problem
fail:
  cusp_fc3d_file_free(out);
  return -1;
}

int cusp_fc3d_file_read(cuspFc3dFileData* out, char* err, size_t errlen, const char* path) {
  memset(out, 0, sizeof(*out));
  FILE* f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s:0: cannot open (%s)", path, strerror(errno));
    return -1;
  }
  size_t cap = 1 << 16, len = 0;
  char* text = (char*)malloc(cap);
  while (text) {
    len += fread(text + len, 1, cap - 1 - len, f);
    if (len < cap - 1) break;
    char* grown = (char*)realloc(text, 2 * cap);
    if (!grown) {
      free(text);
      text = NULL;
      break;
    }
    text = grown;
    cap *= 2;
  }
  int read_error = ferror(f);
  fclose(f);
  if (!text || read_error) {
    snprintf(err, errlen, "%s:0: %s", path, text ? "read error" : "out of memory");
    free(text);
    return -1;
  }
  text[len] = 0;
  if (strlen(text) != len) {
    free(text);
    snprintf(err, errlen, "%s:0: not a text file (NUL byte)", path);
    return -1;
  }
  int rc = cusp_fc3d_file_parse(out, err, errlen, text, path);
  free(text);
  return rc;
}
