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
#elif defined(__aarch64__)
/* AArch64: the caller's return address is the link register x30 at entry, which glibc's
 * RETURN_ADDRESS(0) reads. Each entry point keeps x29/x30 and the arguments in a frame of
 * its own, asks the C side (caller = x30), restores x30 and the arguments, and branches
 * (br, not blr) to the real function: it returns straight to the caller, as on x86-64.
 * x16 (IP0) carries the target: the procedure-call standard leaves it free at a call
 * boundary, and it is what a PLT stub uses for the same purpose. */
	.text

	.globl	dlopen
	.type	dlopen, %function
	.p2align 2
dlopen:                                 /* dlopen(file, mode) */
	.cfi_startproc
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset x29, -32
	.cfi_offset x30, -24
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	mov	x2, x30                  /* caller's return address */
	bl	cudashim_dlopen_enter
	mov	x16, x0
	ldp	x0, x1, [sp, #16]
	ldp	x29, x30, [sp], #32
	.cfi_restore x29
	.cfi_restore x30
	.cfi_def_cfa_offset 0
	br	x16
	.cfi_endproc
	.size	dlopen, .-dlopen

	.globl	dlmopen
	.type	dlmopen, %function
	.p2align 2
dlmopen:                                /* dlmopen(lmid, file, mode) */
	.cfi_startproc
	stp	x29, x30, [sp, #-48]!
	.cfi_def_cfa_offset 48
	.cfi_offset x29, -48
	.cfi_offset x30, -40
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	str	x2, [sp, #32]
	mov	x3, x30
	bl	cudashim_dlmopen_enter
	mov	x16, x0
	ldp	x0, x1, [sp, #16]
	ldr	x2, [sp, #32]
	ldp	x29, x30, [sp], #48
	.cfi_restore x29
	.cfi_restore x30
	.cfi_def_cfa_offset 0
	br	x16
	.cfi_endproc
	.size	dlmopen, .-dlmopen

	.globl	dlclose
	.type	dlclose, %function
	.p2align 2
dlclose:                                /* dlclose(handle) */
	.cfi_startproc
	stp	x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset x29, -32
	.cfi_offset x30, -24
	mov	x29, sp
	str	x0, [sp, #16]
	mov	x1, x30
	bl	cudashim_dlclose_enter
	mov	x16, x0
	ldr	x0, [sp, #16]
	ldp	x29, x30, [sp], #32
	.cfi_restore x29
	.cfi_restore x30
	.cfi_def_cfa_offset 0
	br	x16
	.cfi_endproc
	.size	dlclose, .-dlclose

	.globl	dlsym
	.type	dlsym, %function
	.p2align 2
dlsym:                                  /* dlsym(handle, name) */
	.cfi_startproc
	stp	x29, x30, [sp, #-48]!
	.cfi_def_cfa_offset 48
	.cfi_offset x29, -48
	.cfi_offset x30, -40
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	str	xzr, [sp, #32]           /* 32(sp): the answer slot */
	mov	x2, x30
	add	x3, sp, #32
	bl	cudashim_dlsym_decide
	mov	x16, x0
	ldr	x9, [sp, #32]
	ldp	x0, x1, [sp, #16]
	ldp	x29, x30, [sp], #48
	.cfi_restore x29
	.cfi_restore x30
	.cfi_def_cfa_offset 0
	cbz	x16, 1f
	br	x16
1:	mov	x0, x9
	ret
	.cfi_endproc
	.size	dlsym, .-dlsym

	.globl	dlvsym
	.type	dlvsym, %function
	.p2align 2
dlvsym:                                 /* dlvsym(handle, name, version) */
	.cfi_startproc
	stp	x29, x30, [sp, #-48]!
	.cfi_def_cfa_offset 48
	.cfi_offset x29, -48
	.cfi_offset x30, -40
	mov	x29, sp
	stp	x0, x1, [sp, #16]
	stp	x2, xzr, [sp, #32]       /* 40(sp): the answer slot */
	mov	x3, x30
	add	x4, sp, #40
	bl	cudashim_dlvsym_decide
	mov	x16, x0
	ldr	x9, [sp, #40]
	ldp	x0, x1, [sp, #16]
	ldr	x2, [sp, #32]
	ldp	x29, x30, [sp], #48
	.cfi_restore x29
	.cfi_restore x30
	.cfi_def_cfa_offset 0
	cbz	x16, 2f
	br	x16
2:	mov	x0, x9
	ret
	.cfi_endproc
	.size	dlvsym, .-dlvsym

	.section .note.GNU-stack,"",%progbits
#else
#error "cudashim's dl trampolines are written for x86-64 and AArch64 only"
#endif
