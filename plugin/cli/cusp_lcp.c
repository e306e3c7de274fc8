// cusp-lcp: solve one Siconos LCP file and print one JSON line.
//   cusp-lcp [--solver NAME] [--tol T] [--max-iter K] [--print-z] FILE.dat
// Exit code: 0 solved, 1 not solved (status in the JSON), 2 usage or file error.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/lcp.h"
#include "solver/lcp_file.h"

static void usage(FILE* f) {
  fprintf(f,
          "usage: cusp-lcp [--solver NAME] [--tol T] [--max-iter K] [--print-z] FILE.dat\n"
          "  NAME: lemke | pgs | fbnewton | chain (default chain)\n");
}

static void json_string(const char* s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') putchar('\\');
    putchar(*s);
  }
  putchar('"');
}

static void json_number(double x) {
  if (isfinite(x)) {
    printf("%.17g", x);
  } else {
    printf("null");
  }
}

int main(int argc, char** argv) {
  const char* solver = "chain";
  const char* path = NULL;
  int print_z = 0;
  cuspLcpOptions opt = cusp_lcp_default_options();
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--solver") && i + 1 < argc) {
      solver = argv[++i];
    } else if (!strcmp(argv[i], "--tol") && i + 1 < argc) {
      char* end;
      opt.tol = strtod(argv[++i], &end);
      if (*end || !(opt.tol > 0)) {
        fprintf(stderr, "cusp-lcp: --tol needs a positive number, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--max-iter") && i + 1 < argc) {
      opt.max_iter = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--print-z")) {
      print_z = 1;
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' || path) {
      fprintf(stderr, "cusp-lcp: unexpected argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else {
      path = argv[i];
    }
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  const cuspLcpBackend* b = cusp_lcp_backend_find(solver);
  if (!b) {
    fprintf(stderr, "cusp-lcp: unknown solver '%s'\n", solver);
    usage(stderr);
    return 2;
  }
  cuspLcpFileData data;
  char err[512];
  if (cusp_lcp_file_read(&data, err, sizeof(err), path)) {
    fprintf(stderr, "cusp-lcp: %s\n", err);
    return 2;
  }
  int n = data.n;
  cuspLcpProblem prob = {n, data.M, n, data.q, NULL, NULL};
  size_t bytes = b->worksize(n);
  void* work = malloc(bytes);
  mjtNum* z = (mjtNum*)calloc((size_t)n, sizeof(mjtNum));
  mjtNum* w = (mjtNum*)calloc((size_t)n, sizeof(mjtNum));
  if (!work || !z || !w) {
    fprintf(stderr, "cusp-lcp: out of memory\n");
    return 2;
  }
  cuspLcpInfo info;
  b->solve(z, w, &info, &prob, &opt, work, bytes);
  printf("{\"file\": ");
  json_string(path);
  printf(", \"n\": %d, \"solver\": ", n);
  json_string(solver);
  printf(", \"backend\": ");
  json_string(info.backend ? info.backend : solver);
  printf(", \"status\": ");
  json_string(cusp_lcp_status_string(info.status));
  printf(", \"message\": ");
  json_string(info.message ? info.message : "");
  printf(", \"iterations\": %d, \"residual\": ", info.iterations);
  json_number(info.residual);
  printf(", \"siconos_error\": ");
  json_number(info.siconos_error);
  printf(", \"seconds\": ");
  json_number(info.seconds);
  if (print_z) {
    printf(", \"z\": [");
    for (int i = 0; i < n; i++) {
      if (i) printf(", ");
      json_number(z[i]);
    }
    printf("]");
  }
  printf("}\n");
  int rc = info.status == CUSP_LCP_SOLVED ? 0 : 1;
  free(work);
  free(z);
  free(w);
  cusp_lcp_file_free(&data);
  return rc;
}
