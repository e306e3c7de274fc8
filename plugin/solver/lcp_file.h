// Reader for Siconos' LCP text files (numerics/src/LCP/test/data): dense (storage 0) and
// sparse-block (storage 1). Dense M is stored column by column. Everything after q is a comment.
// Allocates (this is a tool/test path, never called inside a simulation step).
#ifndef CUSP_SOLVER_LCP_FILE_H_
#define CUSP_SOLVER_LCP_FILE_H_

#include <stddef.h>

#include <mujoco/mjtype.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspLcpFileData_ {
  int n;       // problem size
  int storage; // 0 dense, 1 sparse-block (as read; M is always returned dense)
  mjtNum* M;   // (n x n) column-major, ldm = n; malloc'd
  mjtNum* q;   // (n) malloc'd
} cuspLcpFileData;

// Returns 0 on success; on failure returns -1, leaves *out empty and writes
// "PATH:LINE: what went wrong" into err (errlen bytes).
int cusp_lcp_file_read(cuspLcpFileData* out, char* err, size_t errlen, const char* path);

// Same from text already in memory; `name` is used in messages.
int cusp_lcp_file_parse(cuspLcpFileData* out, char* err, size_t errlen, const char* text,
                        const char* name);

void cusp_lcp_file_free(cuspLcpFileData* data);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_LCP_FILE_H_
