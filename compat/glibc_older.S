/* glibc_older.S: __wrap_NAME for each CUDASHIM_GLIBC_OLDER row of glibc_2_28.def, a
 * tail jump to NAME@VERSION, the older version of the same function that glibc 2.28
 * and every later glibc export. The arguments and the return address are untouched.
 * On glibc 2.28 to 2.33 the pthread and dl symbols live in libpthread.so.0 and
 * libdl.so.2: the binaries name both in DT_NEEDED (compat/CMakeLists.txt). */
#define CUDASHIM_GLIBC_OWN(name)
#define CUDASHIM_GLIBC_OLDER(name, version) \
	.globl __wrap_##name ;                   \
	.hidden __wrap_##name ;                  \
	.type __wrap_##name, @function ;         \
__wrap_##name: ;                                 \
	.cfi_startproc ;                         \
	jmp cudashim_older_##name@PLT ;          \
	.cfi_endproc ;                           \
	.size __wrap_##name, . - __wrap_##name ; \
	.symver cudashim_older_##name, name@version ;

#if defined(__x86_64__)
	.text
#include "glibc_2_28.def"
#endif
	.section .note.GNU-stack,"",@progbits
