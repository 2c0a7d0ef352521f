/* unwind_rbp_lib.S - a function whose CFA is %rbp-based but whose frame is
 * not the frame-pointer record (test_rt_unwind.py): a word is pushed
 * before %rbp, so CFA = %rbp + 24 and the word above the saved %rbp is
 * 0x1234, not a return address.  An early exit after the epilogue uses
 * remember_state / restore_state. */
        .text
        .globl  alloc_rbp_frame
        .type   alloc_rbp_frame, @function
alloc_rbp_frame:
        .cfi_startproc
        pushq   $0x1234
        .cfi_def_cfa_offset 16
        pushq   %rbp
        .cfi_def_cfa_offset 24
        .cfi_offset %rbp, -24
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        subq    $8, %rsp
        testq   %rdi, %rdi
        je      .Lzero
        call    malloc@PLT
.Lout:
        .cfi_remember_state
        movq    %rbp, %rsp
        popq    %rbp
        .cfi_def_cfa %rsp, 16
        .cfi_restore %rbp
        addq    $8, %rsp
        .cfi_def_cfa_offset 8
        ret
.Lzero:
        .cfi_restore_state
        xorl    %eax, %eax
        jmp     .Lout
        .cfi_endproc
        .size   alloc_rbp_frame, .-alloc_rbp_frame
        .section .note.GNU-stack,"",@progbits
