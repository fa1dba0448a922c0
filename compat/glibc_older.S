/* glibc_older.S: __wrap_NAME for each CUDASHIM_GLIBC_OLDER row of glibc_2_28.def, a
 * tail jump to NAME@VERSION, the older version of the same function that glibc 2.28
 * and every later glibc export. The arguments and the return address are untouched.
 * On glibc 2.28 to 2.33 the pthread and dl symbols live in libpthread.so.0 and
 * libdl.so.2: the binaries name both in DT_NEEDED (compat/CMakeLists.txt). */
#define CUDASHIM_GLIBC_OWN(name)
#if defined(__x86_64__)
#define CUDASHIM_GLIBC_OLDER(name, x86_64_version, aarch64_version) \
	.globl __wrap_##name ;                   \
	.hidden __wrap_##name ;                  \
	.type __wrap_##name, @function ;         \
__wrap_##name: ;                                 \
	.cfi_startproc ;                         \
	jmp cudashim_older_##name@PLT ;          \
	.cfi_endproc ;                           \
	.size __wrap_##name, . - __wrap_##name ; \
	.symver cudashim_older_##name, name@x86_64_version ;
	.text
#include "glibc_2_28.def"
	.section .note.GNU-stack,"",@progbits
#elif defined(__aarch64__)
/* AArch64: `b` to a symbol of another object goes through a PLT entry the linker makes
 * (R_AARCH64_JUMP26); x0-x7 and x30 are untouched, so the older function returns to
 * our caller. */
#define CUDASHIM_GLIBC_OLDER(name, x86_64_version, aarch64_version) \
	.globl __wrap_##name ;                   \
	.hidden __wrap_##name ;                  \
	.type __wrap_##name, %function ;         \
	.p2align 2 ;                             \
__wrap_##name: ;                                 \
	.cfi_startproc ;                         \
	b cudashim_older_##name ;                \
	.cfi_endproc ;                           \
	.size __wrap_##name, . - __wrap_##name ; \
	.symver cudashim_older_##name, name@aarch64_version ;
	.text
#include "glibc_2_28.def"
	.section .note.GNU-stack,"",%progbits
#else
#error "compat/glibc_older.S: tail jumps for x86-64 and AArch64 only"
#endif
