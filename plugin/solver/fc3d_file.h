// Reader for Siconos Numerics' FrictionContactProblem text files (3D frictional contact, FC3D;
// numerics/src/FrictionContact/test/data): u = W r + q with nc contacts of 3 rows each (normal
// first), friction coefficients mu. Layout, as Siconos writes it (frictionContact_printInFile):
//   dimension (3) | nc | W (NumericsMatrix) | q (3 nc numbers) | mu (nc numbers) | anything
// and the matrix (NM_write_in_file):
//   storage | size0 | size1 | then
//   dense (0):         size0 size1 | size0 * size1 entries, column by column
//   sparse block (1):  nbblocks (0: W = 0, nothing else follows) | row block count | column block
//                      count | cumulative row block sizes | cumulative column block sizes |
//                      row pointer count (row blocks + 1) | block count | block row pointers |
//                      block column indices | per block: its number, then its entries column by
//                      column
// Storage 2 (compressed sparse column) is refused. W is always returned dense. Malformed input
// (truncated, non-numbers, inconsistent block structure, negative mu, sizes out of range) is
// refused with a one-line message; nothing is read past the end of the text.
// Allocates: a tool/test path, never called inside a simulation step.
#ifndef CUSP_SOLVER_FC3D_FILE_H_
#define CUSP_SOLVER_FC3D_FILE_H_

#include <stddef.h>

#include <mujoco/mjtype.h>

#ifdef __cplusplus
extern "C" {
#endif

// W is dense: 3 nc <= 11583 keeps it within 1 GiB
#define CUSP_FC3D_FILE_MAX_CONTACTS 3861

typedef struct cuspFc3dFileData_ {
  int nc;       // number of contacts (>= 1)
  int storage;  // storage of W in the file: 0 dense, 1 sparse block
  int nblocks;  // blocks stored in the file (sparse block), 0 for dense
  mjtNum* W;    // (3 nc x 3 nc) column-major Delassus matrix, malloc'd
  mjtNum* q;    // (3 nc) free velocity, malloc'd
  mjtNum* mu;   // (nc) friction coefficients, malloc'd
} cuspFc3dFileData;

// Returns 0 on success; on failure returns -1, leaves *out empty and writes
// "PATH:LINE: what went wrong" into err (errlen bytes).
int cusp_fc3d_file_read(cuspFc3dFileData* out, char* err, size_t errlen, const char* path);

// Same from text already in memory (NUL-terminated); `name` is used in messages.
int cusp_fc3d_file_parse(cuspFc3dFileData* out, char* err, size_t errlen, const char* text,
                         const char* name);

void cusp_fc3d_file_free(cuspFc3dFileData* data);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_FC3D_FILE_H_
