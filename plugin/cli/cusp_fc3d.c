// cusp-fc3d: solve one Siconos FC3D problem file and print one JSON line.
//   cusp-fc3d FILE.dat [--tol 1e-8] [--print-r]
// {"file", "nc", "status", "iterations", "residual", "seconds", ...}; with --print-r also "r" (3
// per contact, normal first). seconds: the solve alone (the file read beforehand).
// Exit code: 0 solved, 1 not solved (status in the JSON), 2 usage or file error (one line on
// stderr).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/fc3d.h"
#include "solver/fc3d_file.h"

static void usage(FILE* f) { fprintf(f, "usage: cusp-fc3d FILE.dat [--tol T] [--print-r]\n"); }

static void json_number(double x) {
  if (isfinite(x)) {
    printf("%.17g", x);
  } else {
    printf("null");
  }
}

static void json_string(const char* s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') {
      putchar('\\');
      putchar(*s);
    } else if ((unsigned char)*s < 0x20) {
      printf("\\u%04x", *s);
    } else {
      putchar(*s);
    }
  }
  putchar('"');
}

int main(int argc, char** argv) {
  const char* path = NULL;
  int print_r = 0;
  cuspFc3dOptions opt = cusp_fc3d_default_options();
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--tol") && i + 1 < argc) {
      char* end;
      opt.tol = strtod(argv[++i], &end);
      if (*end || !(opt.tol > 0) || !isfinite(opt.tol)) {
        fprintf(stderr, "cusp-fc3d: --tol needs a positive number, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--print-r")) {
      print_r = 1;
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' || path) {
      fprintf(stderr, "cusp-fc3d: unexpected argument '%s' (usage: cusp-fc3d FILE.dat [--tol T] "
                      "[--print-r])\n", argv[i]);
      return 2;
    } else {
      path = argv[i];
    }
  }
  if (!path) {
    fprintf(stderr, "cusp-fc3d: no problem file (usage: cusp-fc3d FILE.dat [--tol T] "
                    "[--print-r])\n");
    return 2;
  }
  cuspFc3dFileData data;
  char err[512];
  if (cusp_fc3d_file_read(&data, err, sizeof(err), path)) {
    fprintf(stderr, "cusp-fc3d: %s\n", err);
    return 2;
  }
  int n = 3 * data.nc;
  cuspFc3dProblem prob = {data.nc, data.W, n, data.q, data.mu};
  size_t bytes = cusp_fc3d_worksize(data.nc);
  void* work = malloc(bytes);
  mjtNum* r = (mjtNum*)calloc((size_t)n, sizeof(mjtNum));
  mjtNum* u = (mjtNum*)calloc((size_t)n, sizeof(mjtNum));
  if (!work || !r || !u) {
    fprintf(stderr, "cusp-fc3d: %s: out of memory for %d contacts\n", path, data.nc);
    free(work);
    free(r);
    free(u);
    cusp_fc3d_file_free(&data);
    return 2;
  }
  cuspFc3dInfo info;
  cusp_fc3d_solve(r, u, &info, &prob, &opt, work, bytes);
  const char* base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  printf("{\"file\": ");
  json_string(base);
  printf(", \"nc\": %d, \"status\": ", data.nc);
  json_string(cusp_lcp_status_string(info.status));
  printf(", \"iterations\": %d, \"residual\": ", info.iterations);
  json_number(info.residual);
  printf(", \"seconds\": ");
  json_number(info.seconds);
  printf(", \"error\": ");
  json_number(info.error);
  printf(", \"outer\": %d, \"islands\": %d, \"largest_island\": %d, \"polish\": %d, \"message\": ",
         info.outer, info.islands, info.largest, info.polish);
  json_string(info.message ? info.message : "");
  if (print_r) {
    printf(", \"r\": [");
    for (int i = 0; i < n; i++) {
      if (i) printf(", ");
      json_number(r[i]);
    }
    printf("]");
  }
  printf("}\n");
  int rc = info.status == CUSP_LCP_SOLVED ? 0 : 1;
  free(work);
  free(r);
  free(u);
  cusp_fc3d_file_free(&data);
  return rc;
}
