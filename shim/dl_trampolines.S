/* dl_trampolines.S: the exported dlopen/dlmopen/dlclose/dlsym/dlvsym.
 *
 * glibc takes the *caller* of these functions from the return address
 * (RETURN_ADDRESS(0)): dlopen searches the caller's RPATH/RUNPATH ($ORIGIN),
 * dlsym(RTLD_NEXT) and dlsym(RTLD_DEFAULT) search relative to the caller's object
 * and namespace. A C wrapper that calls the real function would make cudashim the
 * caller: torch's dlopen("libnvrtc.so.13") through its $ORIGIN RUNPATH would fail.
 * So each entry point asks a C function what to do, then *jumps* to the real one
 * with the caller's own return address still on the stack.
 *
 * Contract of the C side (shim/dl_hooks.cpp):
 *   dlopen/dlmopen/dlclose: cudashim_X_enter(args..., caller) returns the real X.
 *   dlsym/dlvsym: cudashim_X_decide(args..., caller, &answer) returns the real X to
 *   jump to, or NULL when it answered itself (the answer is then returned).
 */
#if defined(__x86_64__)
	.text

	.globl	dlopen
	.type	dlopen, @function
dlopen:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	movq	24(%rsp), %rdx          /* caller's return address */
	call	cudashim_dlopen_enter
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	dlopen, .-dlopen

	.globl	dlmopen
	.type	dlmopen, @function
dlmopen:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	subq	$16, %rsp
	.cfi_adjust_cfa_offset 16
	movq	40(%rsp), %rcx
	call	cudashim_dlmopen_enter
	addq	$16, %rsp
	.cfi_adjust_cfa_offset -16
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	dlmopen, .-dlmopen

	.globl	dlclose
	.type	dlclose, @function
dlclose:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	movq	8(%rsp), %rsi
	call	cudashim_dlclose_enter
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	jmp	*%rax
	.cfi_endproc
	.size	dlclose, .-dlclose

	.globl	dlsym
	.type	dlsym, @function
dlsym:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$24, %rsp                /* 0(%rsp): the answer slot */
	.cfi_adjust_cfa_offset 24
	movq	40(%rsp), %rdx
	movq	%rsp, %rcx
	call	cudashim_dlsym_decide
	movq	(%rsp), %rdx
	addq	$24, %rsp
	.cfi_adjust_cfa_offset -24
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testq	%rax, %rax
	jz	1f
	jmp	*%rax
1:	movq	%rdx, %rax
	ret
	.cfi_endproc
	.size	dlsym, .-dlsym

	.globl	dlvsym
	.type	dlvsym, @function
dlvsym:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	pushq	%rdx
	.cfi_adjust_cfa_offset 8
	subq	$16, %rsp
	.cfi_adjust_cfa_offset 16
	movq	40(%rsp), %rcx
	movq	%rsp, %r8
	call	cudashim_dlvsym_decide
	movq	(%rsp), %r9
	addq	$16, %rsp
	.cfi_adjust_cfa_offset -16
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testq	%rax, %rax
	jz	2f
	jmp	*%rax
2:	movq	%r9, %rax
	ret
	.cfi_endproc
	.size	dlvsym, .-dlvsym

	.section .note.GNU-stack,"",@progbits
#else
#error "cudashim's dl trampolines are written for x86-64 only"
#endif
