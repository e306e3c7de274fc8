// Sanitizer builds only (CUSP_SANITIZE, CUSP_FUZZ). Compiled with AddressSanitizer, MuJoCo's
// header (mjsan.h) turns mj_markStack / mj_freeStack into inline wrappers around mj__markStack /
// mj__freeStack, which only MuJoCo's own ASan build exports; the pinned release wheel exports the
// plain functions. These two forward to them, so that code using MuJoCo's arena links and runs
// under the sanitizers. mujoco.h is not included here: its inline mj_markStack would clash with
// the symbol the forwards bind to.
typedef struct mjData_ mjData;

void cusp_wheel_mark_stack(mjData* d) __asm__("mj_markStack");
void cusp_wheel_free_stack(mjData* d) __asm__("mj_freeStack");
void mj__markStack(mjData* d);
void mj__freeStack(mjData* d);

void mj__markStack(mjData* d) { cusp_wheel_mark_stack(d); }
void mj__freeStack(mjData* d) { cusp_wheel_free_stack(d); }
