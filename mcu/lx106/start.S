/* Entry of the LX106 images (mcu/lx106.py): stack at the top of data RAM, call0 ABI, and a
 * semihosting exit with main's return value as QEMU's exit status. The two marks are functions
 * of their own so that their first instruction starts a translation block: mcu/lx106.py times
 * what runs between a lwc_mark_begin block and the next lwc_mark_end block. */
    .section .text.lx106_start, "ax"
    .literal_position
    .global _start
    .align 4
_start:
    movi    a1, __stack_top
    movi    a0, 0
    call0   lx106_main
    mov     a3, a2          /* exit status */
    movi    a2, 1           /* SYS_exit */
    simcall
1:  j       1b

    .section .text.lx106_marks, "ax"
    .global lwc_mark_begin
    .global lwc_mark_end
    .align 4
lwc_mark_begin:
    ret.n
    .align 4
lwc_mark_end:
    ret.n
