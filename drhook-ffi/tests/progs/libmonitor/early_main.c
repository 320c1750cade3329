/* Linked with early_lib.c: its constructor acts before main; main waits
 * for a child the constructor forked. */
#include <stddef.h>
#include <sys/wait.h>

void early_linked(void);

int main(void)
{
    early_linked();
    while (wait(NULL) > 0) {
    }
    return 0;
}
