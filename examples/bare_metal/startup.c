/*===- startup.c - reset, vector table and C library hooks (Cortex-M) -----===*
 *
 * What runs before main on a bare Cortex-M4: the vector table (initial
 * stack pointer and handlers), the FPU switched on, .data copied from
 * flash, .bss cleared. The C library's two hooks that the firmware can
 * reach are here too: _sbrk (its heap, between .bss and the stack) and
 * _exit (through semihosting, which ends the QEMU run).
 *===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "semihosting.h"

extern uint32_t __stack_top, __data_start, __data_end, __data_load;
extern uint32_t __bss_start, __bss_end;
extern unsigned char __heap_start, __heap_end;

int main(void);
void reset_handler(void);
void start_c(void);
void fault_handler(void);
void *_sbrk(ptrdiff_t increment);
void _exit(int status);

/* A fault ends the run with an error instead of hanging. */
void fault_handler(void) {
  semihosting_write0("firmware: fault (HardFault, MemManage, BusFault or "
                     "UsageFault)\n");
  semihosting_exit(1);
}

typedef void (*vector_t)(void);
__attribute__((section(".vectors"), used)) static const vector_t vectors[16] = {
    (vector_t)(uintptr_t)&__stack_top, /* initial stack pointer */
    reset_handler,
    fault_handler, /* NMI */
    fault_handler, /* HardFault */
    fault_handler, /* MemManage */
    fault_handler, /* BusFault */
    fault_handler, /* UsageFault */
};

/* The FPU (coprocessors 10 and 11 in CPACR) before any compiled code, which
 * may use floating-point registers anywhere. */
__attribute__((naked)) void reset_handler(void) {
  __asm__ volatile("ldr r0, =0xE000ED88\n"
                   "ldr r1, [r0]\n"
                   "orr r1, r1, #(0xF << 20)\n"
                   "str r1, [r0]\n"
                   "dsb\n"
                   "isb\n"
                   "b start_c\n");
}

void start_c(void) {
  memcpy(&__data_start, &__data_load,
         (size_t)((char *)&__data_end - (char *)&__data_start));
  memset(&__bss_start, 0, (size_t)((char *)&__bss_end - (char *)&__bss_start));
  _exit(main());
}

void *_sbrk(ptrdiff_t increment) {
  static unsigned char *top = &__heap_start;
  unsigned char *old = top;
  if (increment > &__heap_end - top)
    return (void *)-1;
  top += increment;
  return old;
}

void _exit(int status) {
  semihosting_exit(status);
  for (;;) {
  }
}
