// Siconos LCP text format reader (see lcp_file.h). Layout, as written by Siconos' matrix printer:
//   n | storage | size0 | size1 | then
//   dense (0):  size0 size1 | n*n values of M column by column | n values of q
//   block (1):  nbblocks | nrowblocks | ncolblocks | cumulative row block sizes (nrowblocks) |
//               cumulative column block sizes (ncolblocks) | filled1 | filled2 |
//               block row pointers (filled1) | block column indices (filled2) |
//               for each block: its number, then its entries column by column | q (n)
#include "solver/lcp_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char* s;
  const char* name;
  int line;
  char* err;
  size_t errlen;
} lexer;

static int lex_number(double* x, lexer* lx, const char* what) {
  while (*lx->s && strchr(" \t\r\n", *lx->s)) {
    if (*lx->s == '\n') lx->line++;
    lx->s++;
  }
  if (!*lx->s) {
    snprintf(lx->err, lx->errlen, "%s:%d: unexpected end of file while reading %s", lx->name,
             lx->line, what);
    return -1;
  }
  char* end;
  errno = 0;
  double v = strtod(lx->s, &end);
  if (end == lx->s || (*end && !strchr(" \t\r\n", *end))) {
    char tok[24];
    int k = 0;
    while (lx->s[k] && !strchr(" \t\r\n", lx->s[k]) && k < 20) {
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

static int lex_int(int* v, lexer* lx, const char* what, int lo, int hi) {
  double x;
  if (lex_number(&x, lx, what)) return -1;
  if (x != floor(x) || x < lo || x > hi) {
    snprintf(lx->err, lx->errlen, "%s:%d: %s must be an integer in [%d, %d], got %g", lx->name,
             lx->line, what, lo, hi, x);
    return -1;
  }
  *v = (int)x;
  return 0;
}

void cusp_lcp_file_free(cuspLcpFileData* d) {
  if (!d) return;
  free(d->M);
  free(d->q);
  d->M = d->q = NULL;
  d->n = 0;
}

#define CUSP_FAIL(...)                                               \
  do {                                                               \
    snprintf(err, errlen, __VA_ARGS__);                              \
    goto fail;                                                       \
  } while (0)

int cusp_lcp_file_parse(cuspLcpFileData* out, char* err, size_t errlen, const char* text,
                        const char* name) {
  lexer lx = {text, name, 1, err, errlen};
  int* ints = NULL;
  memset(out, 0, sizeof(*out));
  int n, storage, s0, s1;
  // M is returned dense: n <= 11585 keeps it within 1 GiB (a fuzzed header asked for 8 GiB)
  if (lex_int(&n, &lx, "n", 1, 11585)) goto fail;
  if (lex_int(&storage, &lx, "storage type", 0, 1)) goto fail;
  if (lex_int(&s0, &lx, "row count", n, n)) goto fail;
  if (lex_int(&s1, &lx, "column count", n, n)) goto fail;
  // every number takes at least one character and one separator: refuse a file too short to
  // hold q (and, dense, M) before allocating for it
  size_t needed = (size_t)n + (storage == 0 ? (size_t)n * n + 2 : 0);
  if (strlen(lx.s) < 2 * needed - 1) {
    CUSP_FAIL("%s:%d: file too short for n = %d (needs at least %zu more numbers)", name, lx.line,
              n, needed);
  }
  out->n = n;
  out->storage = storage;
  out->M = (mjtNum*)calloc((size_t)n * n, sizeof(mjtNum));
  out->q = (mjtNum*)calloc((size_t)n, sizeof(mjtNum));
  if (!out->M || !out->q) CUSP_FAIL("%s: out of memory for n = %d", name, n);
  if (storage == 0) {
    if (lex_int(&s0, &lx, "row count", n, n) || lex_int(&s1, &lx, "column count", n, n)) {
      goto fail;
    }
    for (size_t k = 0; k < (size_t)n * n; k++) {
      if (lex_number(&out->M[k], &lx, "an entry of M")) goto fail;
    }
  } else {
    int nb, nr, nc, f1, f2;
    if (lex_int(&nb, &lx, "block count", 1, n * n)) goto fail;
    if (lex_int(&nr, &lx, "row block count", 1, n)) goto fail;
    if (lex_int(&nc, &lx, "column block count", 1, n)) goto fail;
    ints = (int*)calloc((size_t)(2 * n + 2 * nb + nr + 4), sizeof(int));
    if (!ints) CUSP_FAIL("%s: out of memory", name);
    int* rsz = ints;          // (nr) cumulative row sizes
    int* csz = rsz + nr;      // (nc) cumulative column sizes
    int* rptr = csz + nc;     // (nr + 1)
    int* cidx = rptr + nr + 1;  // (nb)
    for (int k = 0; k < nr; k++) {
      if (lex_int(&rsz[k], &lx, "row block size", k ? rsz[k - 1] + 1 : 1, n)) goto fail;
    }
    if (rsz[nr - 1] != n) CUSP_FAIL("%s:%d: row blocks cover %d rows, not n = %d", name, lx.line, rsz[nr - 1], n);
    for (int k = 0; k < nc; k++) {
      if (lex_int(&csz[k], &lx, "column block size", k ? csz[k - 1] + 1 : 1, n)) goto fail;
    }
    if (csz[nc - 1] != n) CUSP_FAIL("%s:%d: column blocks cover %d columns, not n = %d", name, lx.line, csz[nc - 1], n);
    if (lex_int(&f1, &lx, "row pointer count", nr + 1, nr + 1)) goto fail;
    if (lex_int(&f2, &lx, "block index count", nb, nb)) goto fail;
    for (int k = 0; k <= nr; k++) {
      if (lex_int(&rptr[k], &lx, "block row pointer", k ? rptr[k - 1] : 0, nb)) goto fail;
    }
    if (rptr[nr] != nb) CUSP_FAIL("%s:%d: block row pointers end at %d, not %d blocks", name, lx.line, rptr[nr], nb);
    for (int k = 0; k < nb; k++) {
      if (lex_int(&cidx[k], &lx, "block column index", 0, nc - 1)) goto fail;
    }
    int rb = 0;
    for (int k = 0; k < nb; k++) {
      int label;
      while (rptr[rb + 1] <= k) rb++;
      if (lex_int(&label, &lx, "block number", 0, nb - 1)) goto fail;
      int r0 = rb ? rsz[rb - 1] : 0, r1 = rsz[rb];
      int cb = cidx[k];
      int c0 = cb ? csz[cb - 1] : 0, c1 = csz[cb];
      for (int j = c0; j < c1; j++) {
        for (int i = r0; i < r1; i++) {
          if (lex_number(&out->M[i + (size_t)j * n], &lx, "a block entry")) goto fail;
        }
      }
    }
  }
  for (int i = 0; i < n; i++) {
    if (lex_number(&out->q[i], &lx, "an entry of q")) goto fail;
  }
  free(ints);
  return 0;
fail:
  free(ints);
  cusp_lcp_file_free(out);
  return -1;
}

int cusp_lcp_file_read(cuspLcpFileData* out, char* err, size_t errlen, const char* path) {
  memset(out, 0, sizeof(*out));
  FILE* f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s:0: cannot open (%s)", path, strerror(errno));
    return -1;
  }
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = (char*)malloc((size_t)(len > 0 ? len : 0) + 1);
  if (!text) {
    fclose(f);
    snprintf(err, errlen, "%s:0: out of memory", path);
    return -1;
  }
  size_t got = fread(text, 1, (size_t)(len > 0 ? len : 0), f);
  fclose(f);
  text[got] = 0;
  int rc = cusp_lcp_file_parse(out, err, errlen, text, path);
  free(text);
  return rc;
}
