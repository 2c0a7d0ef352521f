/* unwind_frame_lib.S - a library function that calls malloc from a frame
 * of FRAME bytes without a frame pointer, described by its CFI
 * (test_rt_unwind.py).  Built twice, FRAME=8 and FRAME=24: the two
 * libraries have the same layout, so when the second is loaded where the
 * first was, the return address into alloc_in_lib is the same PC with
 * another rule.  The store puts 0 where the first library's rule would
 * look for the return address in the second's frame, so using a stale
 * rule ends the stack there. */
        .text
        .globl  alloc_in_lib
        .type   alloc_in_lib, @function
alloc_in_lib:
        .cfi_startproc
        subq    $FRAME, %rsp
        .cfi_def_cfa_offset FRAME + 8
        movq    $0, (FRAME - 16)(%rsp)
        call    malloc@PLT
        addq    $FRAME, %rsp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size   alloc_in_lib, .-alloc_in_lib
        .section .note.GNU-stack,"",@progbits
